"""Start and stop a real noemad for a benchmark.

The same approach as `tests/conftest.py`: a fresh home and a short socket
path under /tmp (Unix socket paths must stay under 108 bytes), readiness read
from the daemon's own sd_notify `READY=1` on a datagram socket we own. Unlike
the tests, the daemon runs on the real system clock (`NOEMA_CLOCK` is removed
from its environment).

Use it as a context manager; the daemon is stopped and the temporary
directory removed on the way out, even on error:

    with running_daemon() as d:
        with d.client() as c:
            c.get("/api/v1/status")
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
NOEMAD = BIN / "noemad"
NOEMACTL = BIN / "noemactl"
READY_TIMEOUT = 30.0  # seconds: a bound on a hung start, not a wait for time to pass
# Under cProfile on every thread a start runs several times slower; on a loaded 2-core machine
# (the suite runs each bench beside other tests) it passed 30 s.
PROFILED_READY_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so `finally` blocks stop the daemon and remove temp dirs."""

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


class DaemonError(RuntimeError):
    """The benchmark daemon did not start or misbehaved."""


def short_dir(prefix: str = "nb") -> Path:
    """A fresh temporary directory with a short path under /tmp."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


@dataclass
class BenchDaemon:
    """One running noemad and how to reach it."""

    place: Path
    home: Path
    socket: Path
    proc: subprocess.Popen[bytes]
    notify: socket.socket
    env: dict[str, str]

    @property
    def log_path(self) -> Path:
        return self.place / "noemad.log"

    def client(self, timeout: float = 30.0) -> httpx.Client:
        """A new HTTP client over the daemon's socket (base URL `http://noemad`)."""
        return httpx.Client(transport=httpx.HTTPTransport(uds=str(self.socket)), base_url="http://noemad", timeout=timeout)

    def ctl_env(self) -> dict[str, str]:
        """An environment in which `noemactl` talks to this daemon."""
        env = {**os.environ, "NOEMA_SOCKET": str(self.socket), "NO_COLOR": "1", "COLUMNS": "120"}
        env.pop("NOEMA_HOME", None)
        return env

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def create_minds(self, names: list[str]) -> None:
        with self.client() as c:
            for name in names:
                resp = c.post("/api/v1/minds", json={"name": name})
                if resp.status_code != 201:
                    raise DaemonError(f"creating mind {name!r} answered {resp.status_code}: {resp.text}")

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise DaemonError(
                    f"noemad did not send READY=1 (exit code {self.proc.poll()}); its log:\n{self.log_tail()}"
                )
            self.notify.settimeout(min(left, 0.5))
            try:
                msg = self.notify.recv(4096).decode(errors="replace")
            except TimeoutError:
                continue
            if any(line == "READY=1" for line in msg.splitlines()):
                return

    def cpu_seconds(self) -> float:
        """The CPU (user and system) noemad has used so far, from /proc (Linux): the figure load does not inflate as it does wall time."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError as exc:
            raise DaemonError(f"cannot read noemad's CPU time from /proc ({exc}); this measure needs Linux") from exc
        # After the command name: state is field 3 of stat(5), utime and stime are fields 14 and 15.
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> int | None:
        """SIGTERM, wait; SIGKILL if it does not stop in time. Returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@contextlib.contextmanager
def running_daemon(
    args: tuple[str, ...] = (),
    keep: bool = False,
    config: str | None = None,
    profile: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[BenchDaemon]:
    """A noemad on a fresh temporary home (with `config` as its noemad.toml), on the system clock; stopped and removed afterwards.

    `env` adds to (or overrides) the environment noemad runs in.

    With `profile`, noemad runs under cProfile in every thread (bench/_profiled.py) and its stats are written there when it stops.
    """
    if not NOEMAD.exists():
        raise DaemonError(f"{NOEMAD} not found; run the bench with the venv's python (.venv/bin/python)")
    place = short_dir()
    notify: socket.socket | None = None
    daemon: BenchDaemon | None = None
    try:
        home = place / "home"
        home.mkdir()
        if config is not None:
            (home / "noemad.toml").write_text(config)
        sock = place / "s.sock"
        notify_path = place / "n.sock"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(notify_path))
        daemon_env = {**os.environ, "NOEMA_HOME": str(home), "NOEMA_SOCKET": str(sock), "NOTIFY_SOCKET": str(notify_path)}
        daemon_env.pop("NOEMA_CLOCK", None)  # the real system clock
        daemon_env.update(env or {})
        with open(place / "noemad.log", "ab") as log:
            command = [sys.executable, str(Path(__file__).with_name("_profiled.py")), str(profile)] if profile else [str(NOEMAD)]
            proc = subprocess.Popen([*command, *args], env=daemon_env, stdout=log, stderr=subprocess.STDOUT)
        daemon = BenchDaemon(place=place, home=home, socket=sock, proc=proc, notify=notify, env=daemon_env)
        daemon.wait_ready(PROFILED_READY_TIMEOUT if profile else READY_TIMEOUT)
        yield daemon
    finally:
        if daemon is not None:
            code = daemon.stop()
            if code not in (0, None):
                print(f"warning: noemad exited with {code}; log tail:\n{daemon.log_tail()}", file=sys.stderr)
        if notify is not None:
            notify.close()
        if keep:
            print(f"kept {place}", file=sys.stderr)
        else:
            shutil.rmtree(place, ignore_errors=True)
