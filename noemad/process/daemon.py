"""The daemon: one asyncio loop serving the API on its socket until told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

import uvicorn

from noemad.api import create_app
from noemad.clock import Clock
from noemad.config import LoadedConfig
from noemad.paths import Paths
from noemad.process.listener import Listener, activated_socket, bind_socket, take_lock
from noemad.process.reload import reload_config, start_watching
from noemad.process.sdnotify import Notifier
from noemad.runtime.supervisor import Supervisor
from noemad.store import Store

log = logging.getLogger("noemad")


def _http_impl() -> str:
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


class Daemon:
    """Starts, serves and stops one noemad."""

    def __init__(self, paths: Paths, loaded: LoadedConfig, clock: Clock, notifier: Notifier | None = None) -> None:
        self.paths = paths
        self.loaded = loaded
        self.clock = clock
        self.notifier = notifier or Notifier()
        self._stop = asyncio.Event()

    def request_stop(self) -> None:
        """Begin a graceful stop (SIGTERM, SIGINT)."""
        if not self._stop.is_set():
            log.info("stopping")
            self.notifier.stopping()
            self._stop.set()

    async def serve(self) -> None:
        """Run until a stop is requested; the socket accepts before READY=1 is sent."""
        self.paths.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        data_lock = take_lock(
            self.paths.data_dir / "noemad.lock",
            f"another noemad is already using {self.paths.data_dir}; stop it first, or start this one with another --home",
        )
        listener: Listener | None = None
        store: Store | None = None
        try:
            sock = activated_socket()
            if sock is not None:
                listener = Listener(sock=sock, path=None, activated=True)
            else:
                listener = bind_socket(self.paths.socket, self.loaded.config.daemon.socket_group)
            store = Store(self.paths.db_file)
            sup = Supervisor(self.paths, self.loaded, self.clock, store)
            await sup.start()
            await self._serve(sup, listener)
        finally:
            if listener is not None:
                listener.close()
            os.close(data_lock)

    async def _serve(self, sup: Supervisor, listener: Listener) -> None:
        loop = asyncio.get_running_loop()
        config = uvicorn.Config(
            create_app(sup),
            lifespan="off",
            log_config=None,
            access_log=False,
            http=_http_impl(),
            timeout_graceful_shutdown=5,
        )
        server = uvicorn.Server(config)
        config.load()
        server.lifespan = config.lifespan_class(config)
        # Signals and the config watch are in place before READY=1: a reload
        # asked for the moment the daemon says it is ready is never lost.
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, reload_config, sup, self.notifier)
        tasks: list[asyncio.Task[None]] = []
        try:
            watcher = await start_watching(sup, self.notifier, self._stop)
            if watcher is not None:
                tasks.append(watcher)
            await server.startup(sockets=[listener.sock])
            tasks.append(asyncio.create_task(server.main_loop(), name="uvicorn"))
            where = "the socket systemd passed" if listener.activated else str(listener.path)
            log.info("noemad serving %d minds on %s", len(sup.actors), where)
            self.notifier.ready(f"serving {len(sup.actors)} minds on {where}")
            if self.notifier.watchdog_interval:
                tasks.append(asyncio.create_task(self._watchdog(sup), name="watchdog"))
            await self._stop.wait()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(sig)
            sup.stopping = True
            if sup.bus:
                sup.bus.close()  # ends followers, so their connections can close
            server.should_exit = True
            for task in tasks:
                if task.get_name() != "uvicorn":
                    task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await server.shutdown(sockets=[listener.sock])
            await sup.stop()
            log.info("stopped")

    async def _watchdog(self, sup: Supervisor) -> None:
        interval = self.notifier.watchdog_interval or 1.0
        while True:
            # Ping only while the writer lives: a dead writer means a daemon that cannot store.
            if sup.store.writer.alive:
                self.notifier.watchdog()
            await self.clock.sleep(interval)
