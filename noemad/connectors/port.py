"""What every connector kind implements, and what the manager hands each one.

A connector is the mind's presence in one source (a Matrix account, a
webhook): `run` brings what is said there in, through its `ConnectorContext`,
until cancelled (raising means it failed: the manager restarts it after a
backoff); `send` delivers one outbox row, raising `DeliveryFailed` when it
could not; `state` says how it is doing, for `noemactl connectors`.

The context is the connector's only way into the daemon: `ingest` stores a
batch of stimuli with the connector's cursor in one transaction and offers
them to the mind's gate; `cursor` is the stored one; `find_stimulus` the
stimulus a remote id became; `clock` the daemon's (every wait a connector
makes is a clock wait, so tests move time by hand); `on_turn` a hook told when
a turn of the mind starts and ends (Matrix's typing notice).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal, Protocol

from noemad.clock import Clock
from noemad.events import Event
from noemad.config.connectors import ConnectorSettings as ConnectorSettings  # re-exported: a kind's factory takes one
from noemad.inbox import Inbound
from noemad.runtime.ingested import Ingested
from noemad.stimuli import Stimulus
from noemad.wire import OMIT_NONE, IsoTime, wire

Phase = Literal["starting", "connected", "syncing", "backing_off", "stopped"]


@dataclass(frozen=True)
class Delivery:
    """One outbox row to send: what the mind said, and where it goes."""

    id: int
    """The delivery's id (`noemactl connectors retry MIND DELIVERY`)."""
    mind: str
    event_id: int
    """The reply (or notification) event delivered: its id is the idempotency key (Matrix's transaction id)."""
    what: Literal["reply", "notification"]
    text: str
    at: float
    """When the mind said it."""
    attempt: int
    """1 for the first try."""
    room: str | None = None
    """Where it goes (a Matrix room id); None for a webhook."""
    thread: str | None = None
    """The thread of the stimulus it answers, if it was said in one."""
    in_reply_to: str | None = None
    """The remote id of the newest stimulus it answers (Matrix sends it as a reply to that event)."""
    answers: int | None = None
    """The stimulus event it answers (a reply's `in_reply_to`)."""
    channel: str | None = None
    """The channel of what it delivers (a reply's is the answered message's, e.g. matrix:!room:example.org)."""

    @property
    def idempotency_key(self) -> str:
        """The same on every attempt, across restarts: a retry of a send that reached the remote side is not a second message."""
        return f"noema-{self.mind}-{self.event_id}"


@dataclass(frozen=True)
class Sent:
    """A delivery the remote side accepted."""

    remote_id: str | None = None
    """What it calls what was sent (a Matrix event id), if it says."""
    detail: str | None = None
    """A short note for the timeline (an HTTP status)."""


class DeliveryFailed(Exception):
    """A delivery not accepted: `transient` ones are retried (after `retry_after` seconds if the remote side said)."""

    def __init__(self, reason: str, *, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.retry_after = retry_after


@wire
@dataclass
class ConnectorState:
    """How a connector is doing now, as `noemactl connectors` shows it."""

    phase: Phase = "starting"
    """starting, connected (in its source and listening), syncing (catching up), backing_off (failed; restarted after `retry_at`), stopped."""
    why: Annotated[str | None, OMIT_NONE] = None
    """Why it backs off, or stopped."""
    last_sync: Annotated[IsoTime | None, OMIT_NONE] = None
    """When it last heard from its source."""
    last_error: Annotated[str | None, OMIT_NONE] = None
    last_error_at: Annotated[IsoTime | None, OMIT_NONE] = None
    retry_at: Annotated[IsoTime | None, OMIT_NONE] = None
    """While backing off: when it is started again."""
    restarts: int = 0
    """Times the manager restarted it after a failure."""
    rooms: list[str] = field(default_factory=list)
    """The rooms it is in (Matrix)."""


TurnHook = Callable[[bool], None]


class ConnectorContext(Protocol):
    """What the manager hands a connector when it builds it."""

    mind: str
    key: str
    clock: Clock

    async def ingest(self, stimuli: Sequence[Inbound | Stimulus], cursor: str | None) -> list[Ingested]:
        """Store `stimuli` and `cursor` in one transaction, then offer each to the gate; those stored before are left out."""
        ...

    async def redact(self, remote_id: str, author: str, channel: str, reason: str | None) -> Event | None:
        """Take back what the stimulus stored for `remote_id` said: its text is gone from what the mind and its judge
        read, and a `message_redacted` event (by `author`, caused by it) says so. None if none was stored, or it was redacted."""
        ...

    async def note(self, kind: str, text: str, data: dict[str, str]) -> Event:
        """Record on the mind's timeline what the connector did that is no stimulus (an invite it refused)."""
        ...

    def cursor(self) -> str | None:
        """The connector's stored cursor (None before its first batch)."""
        ...

    def find_stimulus(self, remote_id: str) -> int | None:
        """The event `remote_id` is: the stimulus this connector stored for it, or the reply it delivered as it
        (a person quoting the mind's message replies to that reply), else None."""
        ...

    def on_turn(self, hook: TurnHook) -> Callable[[], None]:
        """Call `hook(True)` as each turn of the mind starts and `hook(False)` as it ends; returns what stops it."""
        ...

    def secret(self, name: str) -> str:
        """The secret `name` of the connector's settings (e.g. "access_token"), read from its file now."""
        ...


class Connector(Protocol):
    """One connector, built for one mind by its kind's factory."""

    key: str
    """Stable within the mind: "matrix:@gardener:example.org", "webhook:NAME-or-URL"."""

    async def run(self) -> None:
        """Bring what the source says in until cancelled; raising means failed (restarted with a backoff)."""
        ...

    async def send(self, delivery: Delivery) -> Sent:
        """Deliver one outbox row, or raise `DeliveryFailed`."""
        ...

    def state(self) -> ConnectorState:
        """How it is doing now."""
        ...


Factory = Callable[[ConnectorSettings, ConnectorContext], Connector]
"""How a kind builds its connector from its settings and context."""
