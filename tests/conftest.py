"""Fixtures: a real noemad on a temporary socket, driven by the real noemactl;
and (`app`, tests/inprocess.py) the same engine and API in this process.

The daemon runs on a manual clock (`NOEMA_CLOCK=manual:…`); tests move time
with `Noemad.advance`, never by sleeping. Readiness is read from the daemon's
own sd_notify `READY=1` on a datagram socket the fixture owns.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from homeserver import Homeserver, Limits, People, running_homeserver
from inprocess import InProcess, start_app

# A suite started in the background by a shell without job control (`make test &`)
# inherits SIGINT ignored, and so would every noemactl it starts: the tests that stop
# a follower with Ctrl-C would wait for nothing. A handled signal is reset at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

BIN = Path(sys.executable).parent
NOEMAD = str(BIN / "noemad")
NOEMACTL = str(BIN / "noemactl")
START = "2026-01-01T00:00:00Z"
READY_TIMEOUT = 30.0  # seconds: a bound on a hung daemon, not a wait for time to pass
# What a real noemad records as the actor of this test run's requests (the socket peer's user, noemad.operator).
OPERATOR = f"operator:{pwd.getpwuid(os.getuid()).pw_name}"
os.environ.setdefault("NOEMA_WRITE_GUARD", "1")  # every write job must record an event or be allowlisted (noemad.store.guard)

# In CI the property tests draw the same examples every run (a seed from each test's name), so a landing
# never turns on a draw; at a desk they draw afresh each run, which is where new counterexamples turn up.
if os.environ.get("CI"):
    from hypothesis import settings as hypothesis_settings

    hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    hypothesis_settings.load_profile("ci")

# `make test-fast` (NOEMA_TESTS=fast): the in-process tier alone, for the edit-test loop. A test is
# skipped where it would start a real noemad or noemactl, so the tier needs no list of tests that can
# go stale: what starts a process is found as it starts one. `make test` runs everything.
FAST = os.environ.get("NOEMA_TESTS") == "fast"


def _starts_our_process(args: Any) -> bool:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    words = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in argv]
    return any(w in (NOEMAD, NOEMACTL) for w in words) or any(a == "-m" and b in ("noemad", "noemactl") for a, b in zip(words, words[1:]))


if FAST:
    _popen_init = subprocess.Popen.__init__

    def _in_process_only(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if _starts_our_process(args):
            pytest.skip("runs a real noemad or noemactl; `make test` runs it")
        _popen_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = _in_process_only  # type: ignore[method-assign]


def short_dir() -> Path:
    # Unix socket paths are limited to 108 bytes; pytest's tmp_path can be longer.
    return Path(tempfile.mkdtemp(prefix="nm", dir="/tmp"))


@dataclass
class Noemad:
    """One running daemon and the ways to talk to it."""

    home: Path
    socket: Path
    proc: subprocess.Popen[str]
    notify: socket.socket
    messages: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.HTTPTransport(uds=str(self.socket)), base_url="http://noemad", timeout=30)

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with self.client as c:
            return c.request(method, "/api/v1" + path, **kwargs)

    def ctl(self, *args: str, input: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run the real noemactl against this daemon (stdin is `input`, never the terminal)."""
        full_env = {**os.environ, "NOEMA_SOCKET": str(self.socket), "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
        full_env.pop("NOEMA_HOME", None)
        return subprocess.run([NOEMACTL, *args], capture_output=True, text=True, input=input, env=full_env, timeout=60)

    def ctl_json(self, *args: str) -> Any:
        out = self.ctl("--json", *args)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def advance(self, seconds: float) -> None:
        """Move the daemon's manual clock forward."""
        assert self.api("POST", "/clock/advance", json={"seconds": seconds}).status_code == 200

    def wait_notify(self, prefix: str) -> str:
        """Block until the daemon sends an sd_notify message containing a line starting with `prefix`."""
        for msg in self.messages:
            if any(line.startswith(prefix) for line in msg.splitlines()):
                return msg
        self.notify.settimeout(READY_TIMEOUT)
        while True:
            try:
                msg = self.notify.recv(4096).decode()
            except TimeoutError:
                raise AssertionError(f"noemad sent no {prefix!r}; stderr:\n{self.stderr()}") from None
            self.messages.append(msg)
            if any(line.startswith(prefix) for line in msg.splitlines()):
                return msg

    def wait_for(self, mind: str, kind: str, since: int = 0) -> dict[str, Any]:
        """Follow a mind's events until one of `kind` after `since` is committed; return it."""
        with self.client as c:
            with c.stream("GET", f"/api/v1/minds/{mind}/events/stream", params={"since": since}) as resp:
                assert resp.status_code == 200
                for line in resp.iter_lines():
                    if line.startswith("data: "):
                        event = json.loads(line[6:])
                        if event.get("kind") == kind:
                            return event
        raise AssertionError(f"stream of {mind} ended before a {kind} event")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=READY_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def stderr(self) -> str:
        log = self.home / "noemad.log"
        return log.read_text() if log.exists() else ""


def poll(check: Callable[[], Any], what: str, timeout: float = 60.0, every: float = 0.05) -> Any:
    """Wait until `check()` is truthy (a real process — a homeserver, Litestream, a daemon — working at its own pace); its value.

    `timeout` bounds a process that never answers; it is not a wait for time to pass."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(every)


def start_noemad(
    home: Path, sock: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = (), wait: bool = True
) -> Noemad:
    """Start noemad with its own home and socket; wait for READY=1 unless told not to."""
    notify_path = home / "notify.sock"
    notify_path.unlink(missing_ok=True)  # left by an earlier daemon on this home
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    full_env = {
        **os.environ,
        "NOEMA_HOME": str(home),
        "NOEMA_SOCKET": str(sock),
        "NOEMA_CLOCK": f"manual:{START}",
        "NOTIFY_SOCKET": str(notify_path),
        **(env or {}),
    }
    log = open(home / "noemad.log", "a")
    proc = subprocess.Popen([NOEMAD, *args], env=full_env, stdout=log, stderr=subprocess.STDOUT, text=True)
    log.close()
    daemon = Noemad(home=home, socket=sock, proc=proc, notify=notify, env=full_env)
    if wait:
        daemon.wait_notify("READY=1")
    return daemon


# noemad.toml for a daemon whose respond model is the scripted provider (`{script}`: the script's path, as
# `scripted_noemad` fills it in); tests add their own tables after it.
SCRIPTED_RESPOND = """
[models]
provider = "scripted"

[models.scripted]
file = "{script}"

[models.respond]
model = "claude-haiku-5-5"
"""


@contextmanager
def own_noemad() -> Iterator[Noemad]:
    """A daemon on a fresh home and a short socket path, stopped and removed afterwards (for a module's shared daemon)."""
    place = short_dir()
    (place / "home").mkdir()
    running = start_noemad(place / "home", place / "s.sock")
    try:
        yield running
    finally:
        running.stop()
        running.notify.close()
        shutil.rmtree(place, ignore_errors=True)


@contextmanager
def scripted_noemad(place: Path, script: str, config: str, settings: dict[str, Any] | None = None) -> Iterator[Noemad]:
    """A running daemon whose noemad.toml is `config` ({script}: the path of `script`, the scripted provider's file), with a mind `ada` made with `settings`."""
    home = place / "home"
    home.mkdir()
    (home / "script.toml").write_text(script)
    (home / "noemad.toml").write_text(config.format(script=home / "script.toml"))
    daemon = start_noemad(home, place / "s.sock")
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada", **({"settings": settings} if settings else {})}).status_code == 201
        yield daemon
    finally:
        daemon.stop()
        daemon.notify.close()


@pytest.fixture
def place() -> Iterator[Path]:
    """A short temporary directory for a daemon's home and socket."""
    path = short_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def noemad(place: Path) -> Iterator[Noemad]:
    """A running daemon on a fresh home, stopped after the test."""
    home = place / "home"
    home.mkdir()
    daemon = start_noemad(home, place / "s.sock")
    yield daemon
    daemon.stop()
    daemon.notify.close()
    if os.environ.get("NOEMA_KEEP_LOG"):  # debugging: keep each daemon's log
        shutil.copy(home / "noemad.log", Path(os.environ["NOEMA_KEEP_LOG"]) / f"{place.name}.log")


@pytest.fixture
def mind(request: pytest.FixtureRequest) -> str:
    """A mind named `ada` on the test's engine: the in-process `app` when the test uses it, else the running daemon."""
    engine = request.getfixturevalue("app" if "app" in request.fixturenames else "noemad")
    assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    return "ada"


# The in-process tier (tests/inprocess.py): the engine and its API without a process or a socket.


@pytest.fixture
def app(tmp_path: Path) -> Iterator[InProcess]:
    """An engine and its API in this process on a fresh home and a manual clock, stopped after the test."""
    engine = start_app(tmp_path)
    yield engine
    engine.stop()



# A real Matrix homeserver (tests/homeserver.py): one Synapse per module that asks for it. A module sets
# `HOMESERVER_LIMITS = Limits(...)` for rate limits of its own (the 429 test sets them low).


@pytest.fixture(scope="module")
def homeserver(request: pytest.FixtureRequest) -> Iterator[Homeserver]:
    """A Synapse on loopback for the module's tests, stopped and removed after them."""
    with running_homeserver(getattr(request.module, "HOMESERVER_LIMITS", Limits())) as server:
        yield server


@pytest.fixture
def people(homeserver: Homeserver) -> Iterator[People]:
    """The test's people: `people.add("alice")` registers an account and gives its nio client."""
    crowd = People(homeserver)
    yield crowd
    crowd.close()
