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

from noemad.config import load_config
from noemad.errors import ConfigError
from noemad.runtime.sdnotify import Notifier
from noemad.runtime.supervisor import Supervisor

log = logging.getLogger("noemad.reload")


def reload_config(sup: Supervisor, notifier: Notifier) -> bool:
    """Load the config file again; apply it if valid, else keep the old one. Returns whether it applied."""
    notifier.reloading(int(sup.clock.monotonic() * 1_000_000))
    try:
        loaded = load_config(sup.paths.config_file)
    except ConfigError as exc:
        sup.refuse_config(exc.detail)
        log.error("config reload refused: %s", exc.detail)
        notifier.notify("READY=1", f"STATUS=config reload refused: {exc.detail}")
        return False
    sup.apply_config(loaded)
    log.info("config reloaded from %s", loaded.source)
    notifier.notify("READY=1", "STATUS=config reloaded")
    return True


async def watch_config(sup: Supervisor, notifier: Notifier, stop: asyncio.Event) -> None:
    """Reload whenever the config file is written, created or removed."""
    target = sup.paths.config_file
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        log.warning("not watching %s (%s); reload with SIGHUP instead", directory, exc)
        return

    def is_config(_: watchfiles.Change, path: str) -> bool:
        return Path(path).name == target.name

    async for _ in watchfiles.awatch(directory, watch_filter=is_config, stop_event=stop, debounce=200, recursive=False):
        reload_config(sup, notifier)
