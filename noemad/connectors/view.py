"""What `noemactl connectors`, `status`, `gate-status`, the dashboard and the metrics show of the connectors.

A connector's live state is read on the loop that changes it (the manager's
`Running.state`); its outbox and cursor are read from the store in a worker
thread. Lag: how long the oldest pending delivery has waited.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated

from noemad import inbox, outbox
from noemad.clock import parse_iso
from noemad.connectors.manager import Connectors, Running
from noemad.connectors.port import ConnectorState
from noemad.gate.status import ConnectorBrief, GateStatus
from noemad.minds import get_mind
from noemad.outbox import DeliveryRow
from noemad.runtime.metrics import Family
from noemad.runtime.status import MindConnectors
from noemad.wire import OMIT_NONE, IsoTime, wire

SHOWN = 10  # newest given-up and pending deliveries listed per connector


@wire
@dataclass(frozen=True)
class OutboxState:
    """A connector's deliveries: how many wait, were sent, were given up; how long the oldest pending one has waited."""

    pending: int = 0
    sent: int = 0
    given_up: int = 0
    lag_s: Annotated[float | None, OMIT_NONE] = None
    """Seconds the oldest pending delivery has waited (none pending: absent)."""


@wire
@dataclass(frozen=True)
class ConnectorView:
    """One connector of one mind, as `noemactl connectors` shows it."""

    mind: str
    key: str
    kind: str
    state: ConnectorState
    outbox: OutboxState
    cursor_at: Annotated[IsoTime | None, OMIT_NONE] = None
    """When its cursor last moved (what it brought in was stored)."""
    pending: list[DeliveryRow] = field(default_factory=list)
    """Its pending deliveries, oldest first, the order they are sent in (at most 10)."""
    given_up: list[DeliveryRow] = field(default_factory=list)
    """Its newest deliveries given up (at most 10): `noemactl connectors retry MIND DELIVERY` sends one again."""


@wire
@dataclass(frozen=True)
class ConnectorsView:
    """Every running mind's connectors (or one mind's)."""

    connectors: list[ConnectorView]


@wire
@dataclass(frozen=True)
class Retried:
    """A given-up delivery put back in the outbox by hand."""

    delivery: DeliveryRow
    event: int
    """The `delivery` event that records the retry."""


async def connectors_view(manager: Connectors, mind: str | None = None) -> ConnectorsView:
    """The connectors of `mind` (every running mind's when None): states read here, on the loop; the outbox in a thread."""
    sup = manager.sup
    if mind is not None:
        await sup.store.off_loop(lambda: get_mind(sup.store.reader(), mind))
    running = [r for r in manager.running.values() if mind is None or r.mind == mind]
    states = [(r, r.state()) for r in running]
    now = sup.clock.now()
    return ConnectorsView(await sup.store.off_loop(lambda: [_view(manager, r, s, now) for r, s in states]))


def _view(manager: Connectors, running: Running, state: ConnectorState, now: float) -> ConnectorView:
    db = manager.sup.store.reader()
    counts = outbox.counts(db, running.mind).get(running.key, {})
    oldest = outbox.oldest_pending(db, running.mind, running.key)
    cursor_at = inbox.last_brought(db, running.mind, running.key)
    return ConnectorView(
        mind=running.mind,
        key=running.key,
        kind=running.settings.kind,
        state=state,
        outbox=OutboxState(
            pending=counts.get("pending", 0), sent=counts.get("sent", 0), given_up=counts.get("given_up", 0),
            lag_s=round(now - oldest, 3) if oldest is not None else None,
        ),
        cursor_at=parse_iso(cursor_at) if cursor_at else None,
        pending=outbox.pending(db, running.mind, running.key)[:SHOWN],
        given_up=outbox.recent(db, running.mind, running.key, "given_up", SHOWN),
    )


def briefs(view: ConnectorsView, mind: str) -> list[ConnectorBrief]:
    """A mind's connectors as gate-status shows them."""
    return [
        ConnectorBrief(c.key, c.state.phase, c.outbox.pending, c.outbox.given_up, c.state.why) for c in view.connectors if c.mind == mind
    ]


def with_connectors(status: GateStatus, view: ConnectorsView) -> GateStatus:
    """`status` with its mind's connectors."""
    return replace(status, connectors=briefs(view, status.mind))


def summary(view: ConnectorsView) -> dict[str, MindConnectors]:
    """Per mind: connectors by phase, and outbox pending and given up (what `status` shows)."""
    out: dict[str, MindConnectors] = {}
    for c in view.connectors:
        was = out.get(c.mind) or MindConnectors(0, 0, 0, 0)
        out[c.mind] = MindConnectors(
            connectors=was.connectors + 1,
            up=was.up + (c.state.phase in ("connected", "syncing")),
            pending=was.pending + c.outbox.pending,
            given_up=was.given_up + c.outbox.given_up,
        )
    return out


def families(view: ConnectorsView) -> list[Family]:
    """The connectors' metrics: up, restarts, deliveries by status, outbox lag."""
    up = Family("noemad_connector_up", "gauge", "1 while a connector is connected or syncing, else 0.")
    restarts = Family("noemad_connector_restarts_total", "counter", "Times a failed connector was restarted since the daemon started.")
    deliveries = Family("noemad_deliveries", "gauge", "Outbox deliveries by connector and status (pending, sent, given_up).")
    lag = Family("noemad_outbox_lag_seconds", "gauge", "How long a connector's oldest pending delivery has waited (0: none pending).")
    for c in view.connectors:
        labels = {"mind": c.mind, "connector": c.key}
        up.add(1 if c.state.phase in ("connected", "syncing") else 0, **labels)
        restarts.add(c.state.restarts, **labels)
        for status in ("pending", "sent", "given_up"):
            deliveries.add(getattr(c.outbox, status), **labels, status=status)
        lag.add(c.outbox.lag_s or 0.0, **labels)
    return [up, restarts, deliveries, lag]
