"""The daemon: one asyncio loop serving the API on its socket until told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import os
import signal
from pathlib import Path

import uvicorn

from noemad.api import create_app
from noemad.clock import Clock
from noemad.connectors.manager import Connectors
from noemad.config.files import LoadedConfig
from noemad.paths import Paths
from noemad.process.http import BoundedHttpToolsProtocol
from noemad.process.listener import Listener, activated_socket, bind_socket, socket_name, take_lock
from noemad.process.reload import Reloader, start_watching
from noemad.process.sdnotify import Notifier
from noemad.runtime.loglevel import LogLevel
from noemad.runtime.supervisor import Supervisor
from noemad.store.replica.child import Replicator
from noemad.store import Store

log = logging.getLogger("noemad")

FORCE_SIGNALS = 3  # stop signals within FORCE_WINDOW_S that end the process at once
FORCE_WINDOW_S = 5.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def settle_heap() -> None:
    """Once serving: leave what start-up built out of every later collection, and turn the collector back on.

    `noemad.main` turns it off while the daemon starts: the ~110,000 objects
    built then (modules, schemas, routes) live as long as the process. Frozen,
    they are never walked again; without it each full collection walks them all
    (over a tenth of a second of CPU). Turning on a collector that is on changes nothing.
    """
    gc.freeze()
    gc.enable()


class Daemon:
    """Starts, serves and stops one noemad."""

    def __init__(
        self, paths: Paths, loaded: LoadedConfig, clock: Clock, notifier: Notifier | None = None, log_level: LogLevel | None = None
    ) -> None:
        self.log_level = log_level
        self.paths = paths
        self.loaded = loaded
        self.clock = clock
        self.notifier = notifier or Notifier()
        self._stop = asyncio.Event()
        self._signals_at: list[float] = []  # stop signals within the force window, on the daemon's clock

    def request_stop(self, sig: int = signal.SIGTERM) -> None:
        """Begin a graceful stop (SIGTERM, SIGINT); a signal during the stop keeps it, a third in a row forces it.

        The handlers stay in place until the stop is over: a second signal
        (the terminal's Ctrl-C and a script's `kill` in the same moment) must
        not kill a daemon that is closing its store.
        """
        name = signal.Signals(sig).name
        now = self.clock.monotonic()
        if not self._stop.is_set():
            log.info("stopping")
            self.notifier.stopping()
            self._stop.set()
            self._signals_at = [now]
            return
        self._signals_at = [t for t in self._signals_at if now - t < FORCE_WINDOW_S] + [now]
        if len(self._signals_at) >= FORCE_SIGNALS:
            log.warning("%s: %d stop signals within %gs, forcing the stop now (committed events are kept)", name, FORCE_SIGNALS, FORCE_WINDOW_S)
            self.notifier.status(f"forced to stop by {name}")
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            return
        log.info("%s: already stopping; another signal within %gs forces the stop", name, FORCE_WINDOW_S)
        self.notifier.status(f"already stopping ({name})")

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
                passed = socket_name(sock)
                if passed is not None:
                    # `noemactl status` reports where clients really connect, not the path noemad would have bound.
                    self.paths = dataclasses.replace(self.paths, socket=Path(passed))
            else:
                listener = bind_socket(self.paths.socket, self.loaded.config.daemon.socket_group)
            replica = self.loaded.config.replica
            replicator: Replicator | None = None
            if replica is not None:
                # Made before the store opens: a store Litestream will replicate leaves it the checkpoints.
                replicator = Replicator(replica, self.paths.db_file, self.paths.data_dir, self.clock, lambda key, said: sup.replica_trouble(key, said))
            store = Store(self.paths.db_file, replicated=replicator is not None and replicator.available)
            sup = Supervisor(self.paths, self.loaded, self.clock, store)
            sup.replica = replicator
            if self.log_level is not None:
                sup.log_level = self.log_level
            await sup.start()
            connectors = Connectors(sup)  # after the supervisor starts, stopped before it stops (in _serve)
            await connectors.start()
            await self._serve(sup, connectors, listener)
        finally:
            if listener is not None:
                listener.close()
            os.close(data_lock)

    async def _serve(self, sup: Supervisor, connectors: Connectors, listener: Listener) -> None:
        loop = asyncio.get_running_loop()
        config = uvicorn.Config(
            create_app(sup, connectors),
            lifespan="off",
            log_config=None,
            access_log=False,
            http=BoundedHttpToolsProtocol,  # httptools (a dependency), with the request head bounded
            proxy_headers=False,  # a Unix socket has no proxy in front, and the layer would wrap every request
            timeout_graceful_shutdown=5,
        )
        server = uvicorn.Server(config)
        config.load()
        server.lifespan = config.lifespan_class(config)
        # Signals and the config watch are in place before READY=1: a reload
        # asked for the moment the daemon says it is ready is never lost.
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self.request_stop, sig)
        reloader = Reloader(sup, self.notifier)
        sup.reloader = reloader.reload  # `noemactl reload` takes the path SIGHUP takes
        loop.add_signal_handler(signal.SIGHUP, reloader.on_signal)
        tasks: list[asyncio.Task[None]] = []
        try:
            watcher = await start_watching(reloader, self._stop)
            if watcher is not None:
                tasks.append(watcher)
            await server.startup(sockets=[listener.sock])
            tasks.append(asyncio.create_task(server.main_loop(), name="uvicorn"))
            where = f"the socket systemd passed ({sup.paths.socket})" if listener.activated else str(listener.path)
            settle_heap()
            log.info("noemad serving %d minds on %s", len(sup.actors), where)
            self.notifier.ready(f"serving {len(sup.actors)} minds on {where}")
            if self.notifier.watchdog_interval:
                tasks.append(asyncio.create_task(self._watchdog(sup), name="watchdog"))
            await self._stop.wait()
        finally:
            loop.remove_signal_handler(signal.SIGHUP)
            reloader.cancel()
            sup.stopping = True
            if sup.bus:
                sup.bus.close()  # ends followers, so their connections can close
            server.should_exit = True
            for task in tasks:
                # uvicorn's main loop only ticks (the Date header, its limits) and would see
                # should_exit at its next tick, up to 0.1 s on: it is cancelled like the others.
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await server.shutdown(sockets=[listener.sock])
            await connectors.stop()
            await sup.stop()
            log.info("stopped")
            for sig in STOP_SIGNALS:
                # The stop is done: a late signal changes nothing (the loop would hand it back to the default, a kill).
                loop.remove_signal_handler(sig)
                signal.signal(sig, signal.SIG_IGN)

    async def _watchdog(self, sup: Supervisor) -> None:
        interval = self.notifier.watchdog_interval or 1.0
        while True:
            # Ping only while the writer lives: a dead writer means a daemon that cannot store.
            if sup.store.writer.alive:
                self.notifier.watchdog()
            await self.clock.sleep(interval)
