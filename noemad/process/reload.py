"""Config reload: on SIGHUP and whenever noemad.toml changes on disk.

The parent directory is watched, not the file: editors replace a file
atomically (write a new one, rename it over), which a watch on the old
file's inode would miss. A config that fails validation is refused whole; the
running one stays, and the error shows in `noemactl status`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import watchfiles

from noemad.config import file_stamp, load_config
from noemad.errors import ConfigError
from noemad.process.sdnotify import Notifier
from noemad.runtime.supervisor import Supervisor

log = logging.getLogger("noemad.reload")


def reload_config(sup: Supervisor, notifier: Notifier) -> bool:
    """Load the config file again; apply it if valid, else keep the old one. Returns whether it applied."""
    notifier.reloading(int(sup.clock.monotonic() * 1_000_000))
    try:
        loaded = load_config(sup.paths.config_file)
        sup.apply_config(loaded)
    except ConfigError as exc:
        detail = f"{exc.detail} Fix the file; the running config is kept."
        sup.refuse_config(detail, file_stamp(sup.paths.config_file))
        log.error("config reload refused: %s", detail)
        notifier.notify("READY=1", f"STATUS=config reload refused: {detail}")
        return False
    log.info("config reloaded from %s", loaded.source)
    notifier.notify("READY=1", "STATUS=config reloaded")
    return True


async def start_watching(sup: Supervisor, notifier: Notifier, stop: asyncio.Event) -> asyncio.Task[None] | None:
    """Start watching the config file; once this returns, no change can be missed.

    A change made between the first load and the start of the watch is
    noticed by comparing the file with the one that was read.
    """
    target = sup.paths.config_file
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        log.warning("not watching %s (%s); reload with SIGHUP instead", directory, exc)
        return None

    def is_config(_: watchfiles.Change, path: str) -> bool:
        return Path(path).name == target.name

    changes = watchfiles.awatch(directory, watch_filter=is_config, stop_event=stop, debounce=200, recursive=False)

    async def consume() -> None:
        async for _ in changes:
            reload_config(sup, notifier)

    task = asyncio.create_task(consume(), name="config-watch")
    # The inotify watch is set up synchronously when the generator first runs,
    # before its first await: one turn of the loop puts it in place.
    await asyncio.sleep(0)
    if file_stamp(target) != sup.config_stamp:
        reload_config(sup, notifier)
    return task
