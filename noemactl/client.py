"""Talking to noemad: socket resolution and an HTTP client over its Unix socket.

Every method returns the daemon's JSON unchanged, or raises a `CtlError`:
`DaemonUnreachable` when the socket cannot be reached, `ApiError` carrying the
problem+json `detail` when noemad refuses a request.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

from noemactl.errors import ApiError, BadInput, CtlError, DaemonUnreachable
from noemactl.sse import Message, parse_sse

# httpx imports its own command-line client (click, rich.progress, ...) when
# they are installed; noemactl never uses it, so skip that import: it is a
# quarter of httpx's import time. httpx handles the ImportError by design.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx  # noqa: E402

APP = "noema"
SOCKET_NAME = "noemad.sock"
SYSTEM_SOCKET = Path("/run/noema/noemad.sock")  # contrib/systemd/noemad.socket
API = "/api/v1"
TIMEOUT = 30.0  # seconds for one answer: a bound on a hung daemon
MOVE_WAIT = 3600.0  # an export or import of a large mind is answered when it is over: minutes, not seconds
ARCHIVE_WAIT = 3600.0  # an archive run of a large store is answered when it is over: minutes, not seconds
START_HINT = "start it with `noemad` or `systemctl --user start noemad`"
SYSTEM_START_HINT = "start the system service with `sudo systemctl start noemad`"


def start_hint(socket: Path) -> str:
    """How to start the noemad that listens on `socket`: the system service for the system socket, else the user's."""
    return SYSTEM_START_HINT if socket == SYSTEM_SOCKET else START_HINT


def _first(value: str | None) -> Path | None:
    # systemd passes several directories colon-separated; the first is noemad's.
    return Path(value.split(":")[0]) if value else None


def resolve_socket(flag: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Where noemad listens, resolved as noemad itself does (see `noemad/paths.py`).

    Highest first: `--socket`, `NOEMA_SOCKET`, `NOEMA_HOME/run/noemad.sock`,
    `RUNTIME_DIRECTORY/noemad.sock`, then platformdirs' per-user runtime dir —
    unless no per-user daemon is there and the system service's socket is.
    """
    env = os.environ if env is None else env
    if flag:
        return Path(flag)
    if env.get("NOEMA_SOCKET"):
        return Path(env["NOEMA_SOCKET"])
    home = _first(env.get("NOEMA_HOME"))
    if home is not None:
        return home / "run" / SOCKET_NAME
    run_dir = _first(env.get("RUNTIME_DIRECTORY"))
    if run_dir is not None:
        return run_dir / SOCKET_NAME
    import platformdirs

    user = Path(platformdirs.user_runtime_dir(APP)) / SOCKET_NAME
    if not user.exists() and SYSTEM_SOCKET.exists():
        return SYSTEM_SOCKET
    return user


def _unreachable(socket: Path, exc: Exception) -> DaemonUnreachable:
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, PermissionError):
        return DaemonUnreachable(
            f"permission denied on {socket}: noemad's socket is open only to its owner"
            " (or to `socket_group` in noemad.toml); run noemactl as that user",
            str(socket),
        )
    if cause is not None and not isinstance(cause, (FileNotFoundError, ConnectionRefusedError)):
        return DaemonUnreachable(f"cannot connect to noemad on {socket} ({cause.strerror or cause}); {start_hint(socket)}", str(socket))
    return DaemonUnreachable(f"noemad is not running on {socket}; {start_hint(socket)}", str(socket))


def _problem(response: httpx.Response, method: str, path: str) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return ApiError(response.status_code, str(body.get("title", response.reason_phrase)), body["detail"], body)
    return ApiError(
        response.status_code,
        response.reason_phrase,
        f"noemad answered {response.status_code} {response.reason_phrase} to {method} {path}",
    )


class StreamIdle(CtlError):
    """No message on a stream within its `idle` seconds."""


def _segment(value: str) -> str:
    """`value` as one path segment of a URL, exactly: every reserved character percent-encoded.

    "." and ".." would be resolved away (as "this directory" and "its parent")
    before the request is sent, so their dots are encoded too; an empty value
    is no segment at all and is refused before anything is sent.
    """
    if not value:
        raise BadInput("a name in the command is empty; give the name of the mind, rule or source")
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


class Client:
    """A connection to one noemad; use as a context manager or call `close()`."""

    def __init__(self, socket: Path, timeout: float = TIMEOUT) -> None:
        self.socket = socket
        self._http = httpx.Client(
            transport=httpx.HTTPTransport(uds=str(socket)),
            base_url="http://noemad",
            timeout=timeout,
            headers={"accept": "application/json"},
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._http.close()

    def request(self, method: str, path: str, *, json: Any = None, params: Any = None, wait: float = TIMEOUT) -> Any:
        """Send one request under `/api/v1`; return the decoded JSON answer, waited for at most `wait` seconds."""
        try:
            response = self._http.request(method, API + path, json=json, params=params, timeout=httpx.Timeout(TIMEOUT, read=wait))
        except httpx.ConnectError as exc:
            raise _unreachable(self.socket, exc) from exc
        except httpx.TimeoutException as exc:
            raise CtlError(f"noemad on {self.socket} did not answer within {wait:g} s; its log may say why") from exc
        except httpx.TransportError as exc:
            raise CtlError(f"the connection to noemad on {self.socket} broke ({exc}); is it stopping?") from exc
        if response.is_error:
            raise _problem(response, method, API + path)
        try:
            return response.json()
        except ValueError:
            raise CtlError(f"noemad answered {method} {API + path} with something that is not JSON; is {self.socket} noemad's socket?") from None

    def _object(self, method: str, path: str, *, json: Any = None, params: Any = None, wait: float = TIMEOUT) -> dict[str, Any]:
        """`request`, for the routes that answer one JSON object (all but a list of archives)."""
        answer = self.request(method, path, json=json, params=params, wait=wait)
        if not isinstance(answer, dict):
            raise CtlError(f"noemad answered {method} {API + path} with {type(answer).__name__}, not an object; is {self.socket} noemad's socket?")
        return answer

    def _list(self, method: str, path: str) -> list[dict[str, Any]]:
        """`request`, for a route that answers a list of JSON objects."""
        answer = self.request(method, path)
        if not isinstance(answer, list) or not all(isinstance(item, dict) for item in answer):
            raise CtlError(f"noemad answered {method} {API + path} with something other than a list of objects; is {self.socket} noemad's socket?")
        return answer

    # the daemon -------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The daemon's state."""
        return self._object("GET", "/status")

    def replica(self) -> dict[str, Any]:
        """How the store's Litestream replica is doing."""
        return self._object("GET", "/replica")

    def reload(self) -> dict[str, Any]:
        """Ask noemad to reload its config (as SIGHUP does); whether it was taken, or why not."""
        return self._object("POST", "/reload")

    def advance_clock(self, seconds: float) -> dict[str, Any]:
        """Move a test daemon's manual clock forward (`NOEMA_CLOCK=manual:...`; a daemon on the system clock has no such route)."""
        return self._object("POST", "/clock/advance", json={"seconds": seconds})

    def config(self) -> dict[str, Any]:
        """The effective config, each value with its source; secrets only as set or not."""
        return self._object("GET", "/config")

    def log_level(self, level: str | None = None) -> dict[str, Any]:
        """The daemon's log level, after setting it to `level` when given."""
        return self._object("GET", "/log-level") if level is None else self._object("PUT", "/log-level", json={"level": level})

    def usage(self, mind: str | None, by: str, since: str | None) -> dict[str, Any]:
        """Model spend grouped `by` role, model, day or mind."""
        params = {k: v for k, v in (("mind", mind), ("by", by), ("since", since)) if v is not None}
        return self._object("GET", "/usage", params=params)

    # minds ------------------------------------------------------------------

    def minds(self) -> dict[str, Any]:
        """All minds: `{"minds": [...]}`."""
        return self._object("GET", "/minds")

    def create_mind(self, name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Create a mind."""
        return self._object("POST", "/minds", json={"name": name, "settings": settings})

    def mind(self, name: str, at: str | None = None) -> dict[str, Any]:
        """A mind's overview, with its recent events (as it stood `at` an event id, span or time, if given)."""
        return self._object("GET", f"/minds/{_segment(name)}", params={"at": at} if at is not None else None)

    def change_mind(self, name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Merge `settings` into a mind's stored settings (null unsets a key); returns the mind."""
        return self._object("PATCH", f"/minds/{_segment(name)}", json={"settings": settings})

    def set_paused(self, name: str, paused: bool) -> dict[str, Any]:
        """Pause or resume a mind; returns the mind."""
        return self._object("POST", f"/minds/{_segment(name)}/{'pause' if paused else 'resume'}")

    def delete_mind(self, name: str) -> dict[str, Any]:
        """Delete a mind and everything it holds."""
        return self._object("DELETE", f"/minds/{_segment(name)}", json={"confirm": name})

    # events -----------------------------------------------------------------

    def ingest(self, mind: str, stimulus: dict[str, Any]) -> dict[str, Any]:
        """Store a stimulus (a message or an observation); return the stored event."""
        return self._object("POST", f"/minds/{_segment(mind)}/events", json=stimulus)

    def events(
        self,
        mind: str,
        kinds: Sequence[str] = (),
        since: int = 0,
        limit: int = 100,
        *,
        tail: int | None = None,
        since_time: str | None = None,
        grep: str | None = None,
    ) -> dict[str, Any]:
        """A page of a mind's events after `since`: `{"events": [...], "next_since": N, "last_id": N}`.

        With `tail`, the newest `tail` matching events instead of the oldest `limit`.
        """
        params: dict[str, Any] = {"since": since, "limit": limit}
        if kinds:
            params["kind"] = list(kinds)
        params.update({k: v for k, v in (("tail", tail), ("since_time", since_time), ("grep", grep)) if v is not None})
        return self._object("GET", f"/minds/{_segment(mind)}/events", params=params)

    @contextmanager
    def stream(
        self, mind: str, since: int | None = None, idle: float | None = None, kinds: Sequence[str] = (), grep: str | None = None
    ) -> Iterator[Iterator[Message]]:
        """Follow a mind's events as server-sent events, only `kinds` and those holding `grep` when given (noemad filters).

        Entering waits until noemad has answered (from then on nothing new is
        missed); the iterator yields each message until noemad ends the stream.
        With `idle`, `StreamIdle` once no message came for that many seconds.
        """
        path = f"{API}/minds/{_segment(mind)}/events/stream"
        params: dict[str, Any] = {k: v for k, v in (("since", since), ("grep", grep)) if v is not None}
        if kinds:
            params["kind"] = list(kinds)
        try:
            with self._http.stream(
                "GET", path, params=params, headers={"accept": "text/event-stream"}, timeout=httpx.Timeout(TIMEOUT, read=idle)
            ) as response:
                if response.is_error:
                    response.read()
                    raise _problem(response, "GET", path)
                yield parse_sse(response.iter_lines())
        except httpx.ConnectError as exc:
            raise _unreachable(self.socket, exc) from exc
        except httpx.ReadTimeout as exc:
            raise StreamIdle(f"no event from noemad for {idle:g} s") from exc
        except httpx.TransportError as exc:
            raise CtlError(f"the event stream from noemad on {self.socket} broke off ({exc}); noemad may have stopped") from exc

    def stimulus_turn(self, event_id: int) -> dict[str, Any]:
        """Where a stimulus is on its way to a turn: waiting (and the gate's verdict) or taken."""
        return self._object("GET", f"/events/{event_id}/turn")

    def backup(self, out: BinaryIO) -> dict[str, str]:
        """Stream a verified snapshot of the store into `out`; return what noemad says it holds (its X-Noema-* headers)."""
        return self._download(f"{API}/backup", out, None, None, "backup")

    def export_mind(self, mind: str, out: BinaryIO, with_archives: bool = False) -> dict[str, str]:
        """Stream mind `mind`'s export file (with its archive files if asked) into `out`; return what noemad says it holds (its X-Noema-* headers)."""
        params = {"archives": "true"} if with_archives else None
        return self._download(f"{API}/minds/{_segment(mind)}/export", out, params, MOVE_WAIT, "export")

    def _download(self, path: str, out: BinaryIO, params: dict[str, str] | None, read: float | None, what: str) -> dict[str, str]:
        """GET a SQLite file at `path` into `out` (`read`: the longest wait between bytes); noemad's X-Noema-* headers, unprefixed."""
        try:
            with self._http.stream("GET", path, params=params, headers={"accept": "application/vnd.sqlite3"}, timeout=httpx.Timeout(TIMEOUT, read=read)) as response:
                if response.is_error:
                    response.read()
                    raise _problem(response, "GET", path)
                for chunk in response.iter_bytes(1 << 20):
                    out.write(chunk)
                return {k.lower()[len("x-noema-"):]: v for k, v in response.headers.items() if k.lower().startswith("x-noema-")}
        except httpx.ConnectError as exc:
            raise _unreachable(self.socket, exc) from exc
        except httpx.TransportError as exc:
            raise CtlError(f"the {what} from noemad on {self.socket} broke off ({exc}); nothing was kept, try again") from exc

    def import_mind(self, source: BinaryIO, as_name: str | None) -> dict[str, Any]:
        """Send a mind file to noemad to import (as `as_name`, else its own name); answered once it is committed."""

        def chunks() -> Iterator[bytes]:
            while chunk := source.read(1 << 20):
                yield chunk

        path = f"{API}/minds/import"
        try:
            response = self._http.post(
                path,
                content=chunks(),
                params={"as": as_name} if as_name else None,
                headers={"content-type": "application/vnd.sqlite3"},
                timeout=httpx.Timeout(TIMEOUT, read=MOVE_WAIT),
            )
        except httpx.ConnectError as exc:
            raise _unreachable(self.socket, exc) from exc
        except httpx.TransportError as exc:
            raise CtlError(f"the import to noemad on {self.socket} broke off ({exc}); nothing was imported, try again") from exc
        if response.is_error:
            raise _problem(response, "POST", path)
        answer = response.json()
        if not isinstance(answer, dict):
            raise CtlError(f"noemad answered POST {path} with something other than an object; is {self.socket} noemad's socket?")
        return answer

    def archive(self, mind: str, older_than: str, dry_run: bool) -> dict[str, Any]:
        """Archive a mind's events older than a span (or count what would go); answered when the run is over."""
        body = {"older_than": older_than, "dry_run": dry_run}
        return self._object("POST", f"/minds/{_segment(mind)}/archive", json=body, wait=ARCHIVE_WAIT)

    def archives(self, mind: str) -> list[dict[str, Any]]:
        """A mind's archive runs, oldest first."""
        return self._list("GET", f"/minds/{_segment(mind)}/archives")

    def set_trust(self, mind: str, source: str, value: float) -> dict[str, Any]:
        """Set how far a mind trusts a source."""
        return self._object("PUT", f"/minds/{_segment(mind)}/trust/{_segment(source)}", json={"value": value})

    def trust(self, mind: str) -> dict[str, Any]:
        """The trust levels a mind was told, and the default for any other source."""
        return self._object("GET", f"/minds/{_segment(mind)}/trust")

    def beliefs(self, mind: str, subject: str | None, status: str | None, limit: int, at: str | None = None) -> dict[str, Any]:
        """A mind's beliefs, most confident first (as they stood `at` an event id, span or time, if given)."""
        params = {k: v for k, v in (("subject", subject), ("status", status), ("limit", limit), ("at", at)) if v is not None}
        return self._object("GET", f"/minds/{_segment(mind)}/beliefs", params=params)

    def belief(self, belief_id: int) -> dict[str, Any]:
        """One belief with its evidence and the events that wrote it."""
        return self._object("GET", f"/beliefs/{belief_id}")

    def belief_history(self, belief_id: int) -> dict[str, Any]:
        """Every change of a belief's confidence and status, oldest first, with the event, cause and evidence of each."""
        return self._object("GET", f"/beliefs/{belief_id}/history")

    def changes(self, mind: str, since: str, until: str | None, threshold: float | None) -> dict[str, Any]:
        """What a mind changed its mind about between two times (event ids, spans or ISO times)."""
        params = {k: v for k, v in (("since", since), ("until", until), ("threshold", threshold)) if v is not None}
        return self._object("GET", f"/minds/{_segment(mind)}/changes", params=params)

    def remember(self, mind: str, body: dict[str, Any]) -> dict[str, Any]:
        """Give a mind a semantic or procedural memory."""
        return self._object("POST", f"/minds/{_segment(mind)}/memories", json=body)

    def memories(
        self, mind: str, search: str | None, kind: str | None, limit: int, status: str | None = None, at: str | None = None
    ) -> dict[str, Any]:
        """A mind's memories, or those matching `search` (as they stood `at` an event id, span or time, if given)."""
        params = {k: v for k, v in (("search", search), ("kind", kind), ("limit", limit), ("status", status), ("at", at)) if v is not None}
        return self._object("GET", f"/minds/{_segment(mind)}/memories", params=params)

    def goals(self, mind: str, status: str | None, limit: int) -> dict[str, Any]:
        """A mind's goals, oldest first."""
        params = {k: v for k, v in (("status", status), ("limit", limit)) if v is not None}
        return self._object("GET", f"/minds/{_segment(mind)}/goals", params=params)

    def goal(self, goal_id: int) -> dict[str, Any]:
        """One goal."""
        return self._object("GET", f"/goals/{goal_id}")

    def predictions(self, mind: str, status: str | None, limit: int) -> dict[str, Any]:
        """A mind's predictions, soonest due first."""
        params = {k: v for k, v in (("status", status), ("limit", limit)) if v is not None}
        return self._object("GET", f"/minds/{_segment(mind)}/predictions", params=params)

    def prediction(self, prediction_id: int) -> dict[str, Any]:
        """One prediction."""
        return self._object("GET", f"/predictions/{prediction_id}")

    def notifications(self, mind: str, status: str | None, limit: int) -> dict[str, Any]:
        """A mind's notifications, newest first."""
        params = {k: v for k, v in (("status", status), ("limit", limit)) if v is not None}
        return self._object("GET", f"/minds/{_segment(mind)}/notifications", params=params)

    def ack(self, notification_id: int) -> dict[str, Any]:
        """Acknowledge a notification; returns it."""
        return self._object("POST", f"/notifications/{notification_id}/ack")

    def calibration(self, mind: str) -> dict[str, Any]:
        """A mind's stated confidence against its outcomes: bins, Brier score, overconfidence."""
        return self._object("GET", f"/minds/{_segment(mind)}/calibration")

    def narrative(self, mind: str, at: str | None = None) -> dict[str, Any]:
        """A mind's newest narrative (as it read `at` an event id, span or time, if given): the prose as shown, the plain prose, the five parts."""
        return self._object("GET", f"/minds/{_segment(mind)}/narrative", params={"at": at} if at is not None else None)

    def event(self, event_id: int) -> dict[str, Any]:
        """One event."""
        return self._object("GET", f"/events/{event_id}")

    def chain(
        self, event_id: int, back: int | None = None, forward: int | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """The causal walk around an event (the timeline graph)."""
        params = {k: v for k, v in (("back", back), ("forward", forward), ("limit", limit)) if v is not None}
        return self._object("GET", f"/events/{event_id}/chain", params=params)

    def run_job(self, mind: str, kind: str) -> dict[str, Any]:
        """Start reflection or consolidation for a mind now; the running job."""
        return self._object("POST", f"/minds/{_segment(mind)}/jobs", json={"kind": kind})

    def job(self, job_id: int) -> dict[str, Any]:
        """One job, with its progress or outcome."""
        return self._object("GET", f"/jobs/{job_id}")

    def connectors(self, mind: str | None) -> dict[str, Any]:
        """Each connector's state and outbox (one mind's, or every mind's)."""
        if mind is not None:
            return self._object("GET", f"/minds/{_segment(mind)}/connectors")
        return self._object("GET", "/connectors")

    def retry_delivery(self, mind: str, delivery: int) -> dict[str, Any]:
        """Put a given-up delivery back in the outbox."""
        return self._object("POST", f"/minds/{_segment(mind)}/deliveries/{delivery}/retry")

    def jobs(self, mind: str | None, kind: str | None, limit: int) -> dict[str, Any]:
        """Background jobs, newest first."""
        params = {k: v for k, v in (("mind", mind), ("kind", kind), ("limit", limit)) if v is not None}
        return self._object("GET", "/jobs", params=params)

    def schedules(self) -> dict[str, Any]:
        """Whether each kind's scheduled runs are paused."""
        return self._object("GET", "/schedules")

    def set_schedule(self, kind: str, paused: bool) -> dict[str, Any]:
        """Pause or resume a kind's scheduled runs for every mind."""
        return self._object("PUT", f"/schedules/{_segment(kind)}", json={"paused": paused})

    def news(self, kind: str) -> dict[str, Any]:
        """For each mind, whether it has had news since its last job of `kind`."""
        return self._object("GET", f"/schedules/{_segment(kind)}/news")

    def reject(self, memory_id: int, reason: str) -> dict[str, Any]:
        """Reject a generalisation: memory retracted, belief rejected."""
        return self._object("POST", f"/memories/{memory_id}/reject", json={"reason": reason})

    def retract(self, memory_id: int, reason: str) -> dict[str, Any]:
        """Retract a memory: `{"memory": {...}, "event": {...}}`."""
        return self._object("POST", f"/memories/{memory_id}/retract", json={"reason": reason})

    def memory(self, memory_id: int) -> dict[str, Any]:
        """One memory."""
        return self._object("GET", f"/memories/{memory_id}")

    # the gate -----------------------------------------------------------------

    def rules(self, mind: str) -> dict[str, Any]:
        """A mind's wake rules in order, its default behaviour, reading errors, notes and shadow warnings."""
        return self._object("GET", f"/minds/{_segment(mind)}/rules")

    def rule(self, mind: str, name: str) -> dict[str, Any]:
        """One wake rule and its position."""
        return self._object("GET", f"/minds/{_segment(mind)}/rules/{_segment(name)}")

    def add_rule(self, mind: str, rule: Any, position: int | None) -> dict[str, Any]:
        """Add a wake rule; the change with its probe table."""
        body: dict[str, Any] = {"rule": rule}
        if position is not None:
            body["position"] = position
        return self._object("POST", f"/minds/{_segment(mind)}/rules", json=body)

    def edit_rule(self, mind: str, name: str, rule: Any, position: int | None) -> dict[str, Any]:
        """Replace a wake rule in one change (in its place, or at `position`); the change with its probe table."""
        body: dict[str, Any] = {"rule": rule}
        if position is not None:
            body["position"] = position
        return self._object("PUT", f"/minds/{_segment(mind)}/rules/{_segment(name)}", json=body)

    def remove_rule(self, mind: str, name: str) -> dict[str, Any]:
        """Remove a wake rule; the change with its probe table."""
        return self._object("DELETE", f"/minds/{_segment(mind)}/rules/{_segment(name)}")

    def move_rule(self, mind: str, name: str, to: int) -> dict[str, Any]:
        """Move a wake rule to position `to` (1 first); the change with its probe table."""
        return self._object("POST", f"/minds/{_segment(mind)}/rules/{_segment(name)}/move", json={"to": to})

    def set_default(self, mind: str, behaviour: Any) -> dict[str, Any]:
        """Set what a stimulus no rule matches does; the change with its probe table."""
        return self._object("PUT", f"/minds/{_segment(mind)}/rules/default", json={"behaviour": behaviour})

    def gate(self, mind: str | None) -> dict[str, Any]:
        """A mind's gate now, or every mind's (`{"minds": [...]}`) when `mind` is None."""
        return self._object("GET", "/gate" if mind is None else f"/minds/{_segment(mind)}/gate")

    def sleep(self, mind: str, until: str | None, span: str | None, note: str | None) -> dict[str, Any]:
        """Put a mind to sleep until a time or for a span."""
        body = {k: v for k, v in (("until", until), ("for", span), ("note", note)) if v is not None}
        return self._object("POST", f"/minds/{_segment(mind)}/sleep", json=body)

    def wake(self, mind: str) -> dict[str, Any]:
        """End a mind's sleep now."""
        return self._object("POST", f"/minds/{_segment(mind)}/wake")
