"""The in-process tier: the engine and its API in this process, on a manual clock.

Most API and timing cases need neither a socket nor a process: they build the
same `Store`, `Supervisor` and FastAPI app the daemon builds, and talk to the
app through httpx's ASGI transport. `InProcess` mirrors the daemon fixture's
`Noemad` (`api`, `advance`, `wait_for`), so a test reads the same in either
tier; the daemon tier (conftest's `noemad`) stays for what only a real process
proves: the socket and its permissions, signals, sd_notify, the config file
watcher, and the real noemactl's output and exit codes.

The supervisor runs on its own event loop in a background thread, as it runs
beside the test in the daemon tier, so tests stay synchronous and no pytest
async plugin is needed. Time moves only through `advance` (the manual clock,
moved directly rather than over `POST /clock/advance`), never by sleeping.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from unittest import mock

import httpx

from noemad.api.shared import serve
from noemad.clock import ManualClock, parse_iso
from noemad.config.files import LoadedConfig, load_config
from noemad.connectors.manager import Connectors
from noemad.operator import SCOPE_KEY, Operator
from noemad.paths import Paths, resolve_paths
from noemad.runtime.supervisor import Supervisor
from noemad.store import Store
from noemad.store.writer import Writer
from noemad.wire import dump

START = "2026-01-01T00:00:00Z"  # the daemon tier's NOEMA_CLOCK start, so both tiers see the same times
TIMEOUT = 30.0  # seconds: a bound on a hung engine, not a wait for time to pass
T = TypeVar("T")
ME = Operator.of_uid(os.getuid())  # this test run's user, as a real noemad names the peer of the real noemactl


async def _async_chunks(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


@dataclass
class InProcess:
    """One supervisor and its API, served in this process; the in-process twin of `conftest.Noemad`."""

    home: Path
    paths: Paths
    clock: ManualClock
    sup: Supervisor
    connectors: Connectors
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    client: httpx.AsyncClient
    # The operator the API names as the requests' socket peer. None (the default): a request over no socket, whose
    # actor is the bare `operator`. `ME` makes `ctl` name the actor the real noemactl over a real socket does
    # (`conftest.OPERATOR`); that the daemon reads it from the socket's peer credentials, only the daemon tier proves.
    peer: Operator | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the engine's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(TIMEOUT)

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request to `/api/v1` + `path`, as `Noemad.api` sends it over the socket."""
        content = kwargs.get("content")
        if content is not None and not isinstance(content, (bytes, str)):
            kwargs["content"] = _async_chunks(content)  # a streamed body, as the sync client sends one
        return self.run(self.client.request(method, "/api/v1" + path, **kwargs))

    def ctl(self, *args: str, input: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run noemactl's own code in this process against this engine, as `Noemad.ctl` runs the installed one.

        The command line, its parsing, its renderers and its exit codes are noemactl's; only the
        socket is replaced, by a transport that hands each request to the engine's app. Use the
        daemon tier for what only the process proves: the socket, a terminal, streams, signals,
        the operator a real socket names.
        """
        from noemactl.app import main

        out, err = io.StringIO(), io.StringIO()
        code = 0
        with _noemactl_env({"NO_COLOR": "1", "COLUMNS": "120", **(env or {})}), _bridged(self), \
                mock.patch.object(sys, "argv", ["noemactl", *args]), mock.patch.object(sys, "stdin", io.StringIO(input)), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return subprocess.CompletedProcess(["noemactl", *args], code, out.getvalue(), err.getvalue())

    def ctl_json(self, *args: str) -> Any:
        out = self.ctl("--json", *args)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def advance(self, seconds: float) -> None:
        """Move the manual clock forward and let the woken timers run, as `POST /clock/advance` does."""

        async def move() -> None:
            self.clock.advance(seconds)
            await asyncio.sleep(0)

        self.run(move())

    def wait_for(self, mind: str, kind: str, since: int = 0) -> dict[str, Any]:
        """The first event of `kind` after `since` in a mind's log, waiting for it to be committed.

        Follows the mind as the events stream does (`Supervisor.follow`).
        """
        sup = self.sup

        async def follow() -> dict[str, Any]:
            following = sup.follow(mind, since)
            try:
                async for event in following:
                    if event.kind == kind:
                        return dump(event)
            finally:
                following.close()
            raise AssertionError(f"the bus of {mind} closed before a {kind} event")

        return self.run(follow())

    def settle(self, mind: str) -> None:
        """Wait until the mind has no turn running or waiting, so every event of its last turn is committed.

        A turn's last event is not always the same one (the narrative is
        written only when it changed), so no event marks its end; the actor
        does. This yields to the loop rather than sleeping: no time passes.
        """
        actor = self.sup.actors[mind]

        async def quiet() -> None:
            while not actor.idle:
                await asyncio.sleep(0)

        self.run(quiet())

    def wait_job(self, job_id: int) -> None:
        """Wait until a background job started in this engine has ended and its row says how."""
        self.run(self.sup.jobs.wait(job_id))

    def stop(self) -> None:
        """Stop as the daemon does: no new work, followers ended, then the supervisor and the store."""

        async def stop() -> None:
            self.sup.stopping = True
            if self.sup.bus:
                self.sup.bus.close()
            await self.client.aclose()
            await self.connectors.stop()
            await self.sup.stop()

        try:
            self.run(stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(TIMEOUT)
            self.loop.close()


def fail_first_turn(monkeypatch: Any, message: str = "injected write failure") -> None:
    """Make the engine's next turn fail with `message` (as a write would), and every later one run as usual."""
    from noemad.runtime import actor as actor_module

    real = actor_module.run_turn
    calls = 0

    async def failing_once(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError(message)
        return await real(*args, **kwargs)

    monkeypatch.setattr(actor_module, "run_turn", failing_once)


class HeldWriter(NamedTuple):
    """The writer busy with a job of the test's own (`hold_writer`)."""

    release: threading.Event  # set it to let the job end
    job: concurrent.futures.Future[Any]


def hold_writer(writer: Writer) -> HeldWriter:
    """Occupy the writer with a job that has begun and ends once `release` is set: what is asked meanwhile queues behind it."""
    started, release = threading.Event(), threading.Event()
    job = writer.submit(lambda db: (started.set(), release.wait(TIMEOUT)))
    assert started.wait(TIMEOUT)
    return HeldWriter(release, job)


class HeldTurns:
    """Turns held once started, their stimuli taken, until `release` is set (on the engine's loop)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0  # turns that took their stimuli and wait for `release`


def hold_turns(monkeypatch: Any) -> HeldTurns:
    """Make every turn wait, once it has taken its stimuli, until `release` is set.

    Wait for `started`, not for the actor's `turn_running`: a turn runs from before it
    takes its stimuli (it first lets the writer commit those still being stored), so a
    stimulus said after `turn_running` may still be one of its own.
    """
    from noemad.runtime import actor as actor_module

    held = HeldTurns()
    real = actor_module.run_turn

    async def slow_turn(*args: Any) -> Any:
        held.started += 1
        await held.release.wait()
        return await real(*args)

    monkeypatch.setattr(actor_module, "run_turn", slow_turn)
    return held


class Bridge(httpx.BaseTransport):
    """An httpx transport that answers from the in-process app (noemactl's client, with no socket)."""

    def __init__(self, app: InProcess) -> None:
        self.app = app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # The path as sent (raw_path): decoded, a name such as ".." would be resolved away before it reached the app.
        path = request.url.raw_path.split(b"?", 1)[0].decode("ascii").removeprefix("/api/v1")
        answer = self.app.api(
            request.method, path, params=request.url.params.multi_items(), content=request.read(),
            headers={k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept")},
        )
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)


@contextlib.contextmanager
def _bridged(app: InProcess) -> Iterator[None]:
    """noemactl's `Client` made on a `Bridge` to `app` instead of a Unix socket."""
    from noemactl.client import TIMEOUT, Client

    def made(client: Client, socket: Path, timeout: float = TIMEOUT) -> None:
        client.socket = socket
        client._http = httpx.Client(transport=Bridge(app), base_url="http://noemad", timeout=timeout, headers={"accept": "application/json"})

    with mock.patch.object(Client, "__init__", made):
        yield


@contextlib.contextmanager
def _noemactl_env(env: dict[str, str]) -> Iterator[None]:
    """The environment one noemactl run sees (no NOEMA_HOME, as `Noemad.ctl` has none), put back after it."""
    with mock.patch.dict(os.environ, {"NOEMA_SOCKET": "/nonexistent/in-process.sock", **env}):
        os.environ.pop("NOEMA_HOME", None)
        yield


_template: Path | None = None


def fresh_store(db_file: Path) -> None:
    """Put a new, migrated, empty store at `db_file` unless one is there: a copy of one `Store` made in this process.

    Running every migration on each test's new store was about a quarter of the in-process
    tier's CPU. The copy is the file `Store` would have made (the same schema, the same
    migrations recorded), made by this process's code, so `Store` opens it with nothing to apply.
    """
    global _template
    if db_file.exists():
        return
    if _template is None:
        place = Path(tempfile.mkdtemp(prefix="noema-template-"))
        atexit.register(shutil.rmtree, place, True)
        Store(place / "noema.db").close()  # closing checkpoints the WAL into the file, so the file alone is whole
        _template = place / "noema.db"
    db_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copyfile(_template, db_file)


def start_app(home: Path, config: str | None = None, start: str = START) -> InProcess:
    """Start an engine on `home` (with `config` as its noemad.toml, if given) on a manual clock at `start`."""
    if config is not None:
        (home / "noemad.toml").write_text(config)
    paths = resolve_paths(env={}, home=home)
    loaded: LoadedConfig = load_config(paths.config_file)
    clock = ManualClock(parse_iso(start))
    engine: list[InProcess] = []  # the engine, once made, for `with_peer` to read its `peer`
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="engine", daemon=True)
    thread.start()

    fresh_store(paths.db_file)

    async def begin() -> tuple[Supervisor, Connectors, httpx.AsyncClient]:
        store = Store(paths.db_file)
        sup = Supervisor(paths, loaded, clock, store)
        await sup.start()
        connectors = Connectors(sup)  # as the daemon does: after the supervisor starts, stopped before it stops
        await connectors.start()
        # Like uvicorn, answer an unhandled error with a 500 rather than raise it into the test.
        # The app is built once per process and shared by every engine (`serve`): building it is most of a start.
        served = serve(sup, connectors)

        async def with_peer(scope: Any, receive: Any, send: Any) -> None:
            # Where the daemon's HTTP protocol puts the socket peer's operator (noemad.process.http).
            peer = engine[0].peer if engine else None
            if peer is not None:
                scope = {**scope, "extensions": {**(scope.get("extensions") or {}), SCOPE_KEY: peer}}
            await served(scope, receive, send)

        transport = httpx.ASGITransport(app=with_peer, raise_app_exceptions=False)
        return sup, connectors, httpx.AsyncClient(transport=transport, base_url="http://noemad", timeout=TIMEOUT)

    try:
        sup, connectors, client = asyncio.run_coroutine_threadsafe(begin(), loop).result(TIMEOUT)
    except BaseException:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()
        raise
    engine.append(InProcess(home=home, paths=paths, clock=clock, sup=sup, connectors=connectors, loop=loop, thread=thread, client=client))
    return engine[0]


@contextlib.contextmanager
def scripted_app(home: Path, script: str, config: str, settings: dict[str, Any] | None = None) -> Iterator[InProcess]:
    """An engine whose noemad.toml is `config` ({script}: the path of `script`, the scripted provider's file), with a mind `ada` made with `settings` (conftest's `scripted_noemad`, in process)."""
    (home / "script.toml").write_text(script)
    engine = start_app(home, config.format(script=home / "script.toml"))
    try:
        assert engine.api("POST", "/minds", json={"name": "ada", **({"settings": settings} if settings else {})}).status_code == 201
        yield engine
    finally:
        engine.stop()
