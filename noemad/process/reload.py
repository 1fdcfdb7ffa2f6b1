"""Config reload: on SIGHUP and whenever noemad.toml changes on disk.

The parent directory is watched, not the file: editors replace a file
atomically (write a new one, rename it over), which a watch on the old
file's inode would miss. When that directory also holds the store (one home
for everything, `--home`), the file is looked at every `POLL_MS` instead:
inotify would wake the watcher's thread for every write to the database and
its WAL, twice per stimulus, and those wake-ups cost the daemon a quarter of
its CPU per stimulus at ingest. A config that fails validation is refused whole; the
running one stays, and the error shows in `noemactl status`. `noemactl reload` asks for the same
reload through the API (`POST /api/v1/reload`) and hears whether it was taken.
A config that sets `[daemon] log_level` sets the log level again on reload
(after a `noemactl log-level` change, too).

The file is read in a worker thread, never on the event loop: a slow disk
must not stall the API, and a FIFO or a device put where noemad.toml was is
refused by `read_regular_file` without waiting on it. Reloads run one at a
time, in the order they were asked for, so the last one read is the one that
stands.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import watchfiles

from noemad.config.files import file_stamp, load_config
from noemad.errors import ConfigError
from noemad.process.sdnotify import Notifier
from noemad.runtime.supervisor import Supervisor

POLL_MS = 300  # how often noemad.toml is looked at when it shares its directory with the store

log = logging.getLogger("noemad.reload")


class Reloader:
    """Reloads the config on SIGHUP and on changes, one at a time, reading the file off the loop."""

    def __init__(self, sup: Supervisor, notifier: Notifier) -> None:
        self.sup = sup
        self.notifier = notifier
        self._turn = asyncio.Lock()
        self._pending: set[asyncio.Task[bool]] = set()

    def on_signal(self) -> None:
        """SIGHUP: start a reload (a signal handler cannot wait for it)."""
        task = asyncio.get_running_loop().create_task(self.reload(), name="config-reload")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def cancel(self) -> None:
        """Drop reloads not yet finished (the daemon is stopping)."""
        for task in self._pending:
            task.cancel()

    async def reload(self) -> bool:
        """Load the config file again; apply it if valid, else keep the old one. Returns whether it applied."""
        async with self._turn:
            sup, notifier = self.sup, self.notifier
            notifier.reloading(int(sup.clock.monotonic() * 1_000_000))
            try:
                loaded = await asyncio.to_thread(load_config, sup.paths.config_file)
                sup.apply_config(loaded)
            except ConfigError as exc:
                detail = f"{exc.detail} Fix the file; the running config is kept."
                sup.refuse_config(detail, await asyncio.to_thread(file_stamp, sup.paths.config_file))
                log.error("config reload refused: %s", detail)
                notifier.notify("READY=1", f"STATUS=config reload refused: {detail}")
                return False
            log.info("config reloaded from %s", loaded.source)
            if "log_level" in loaded.config.daemon.model_fields_set:
                level = loaded.config.daemon.log_level
                if (level, "noemad.toml") != (sup.log_level.state.level, sup.log_level.state.source):
                    sup.log_level.set(level, "noemad.toml")
            notifier.notify("READY=1", "STATUS=config reloaded")
            return True


async def start_watching(reloader: Reloader, stop: asyncio.Event) -> asyncio.Task[None] | None:
    """Start watching the config file; once this returns, no change can be missed.

    A change made between the first load and the start of the watch is
    noticed by comparing the file with the one that was read.
    """
    sup = reloader.sup
    target = sup.paths.config_file
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        log.warning("not watching %s (%s); reload with SIGHUP instead", directory, exc)
        return None

    if directory.resolve() == sup.paths.db_file.parent.resolve():
        task = asyncio.create_task(_poll(reloader, target, stop), name="config-watch")
    else:

        def is_config(_: watchfiles.Change, path: str) -> bool:
            return Path(path).name == target.name

        changes = watchfiles.awatch(directory, watch_filter=is_config, stop_event=stop, debounce=200, recursive=False)

        async def consume() -> None:
            async for _ in changes:
                await reloader.reload()

        task = asyncio.create_task(consume(), name="config-watch")
    # The inotify watch is set up synchronously when the generator first runs,
    # before its first await: one turn of the loop puts it in place.
    await asyncio.sleep(0)
    if await asyncio.to_thread(file_stamp, target) != sup.running.stamp:
        await reloader.reload()
    return task


async def _poll(reloader: Reloader, target: Path, stop: asyncio.Event) -> None:
    """Look at the config file every `POLL_MS`: a version other than the one running (or last refused) is reloaded.

    The file's inode, size and mtime in nanoseconds tell its versions apart, so two
    edits within one second are two reloads (watchfiles' own polling missed the second).
    """
    while True:
        try:
            await asyncio.wait_for(stop.wait(), POLL_MS / 1000)
            return
        except TimeoutError:
            pass
        if await asyncio.to_thread(file_stamp, target) != reloader.sup.running.stamp:
            await reloader.reload()
