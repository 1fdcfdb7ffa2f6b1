"""The outbox: every reply (or notification) a connector delivers is a row here, written with it.

`enqueue` runs in the writer job that appends the reply (`noemad.turn.emit`),
so a reply stored is a reply that will be delivered: one row per connector
it goes to (`routes`: the connector that brought the stimulus it answers,
to that room and thread, as an answer to the newest stimulus it answers;
and every webhook of the mind). The worker (noemad/connectors/outbox.py)
sends what is `due`; each attempt's outcome is a `delivery` event caused by
the reply (so the timeline walks message → reply → delivery) written with
the row's change (`record`): sent, failed (retried at `next_at`), or given
up once `give_up_at` has passed. `retry` puts a given-up row back by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.errors import Conflict, NotFound
from noemad.events import Event, EventDraft, append, data_of
from noemad.inbox import origin
from noemad.wire import OMIT_NONE, IsoTime, wire

Status = Literal["pending", "sent", "given_up"]
What = Literal["reply", "notification"]
Outcome = Literal["sent", "failed", "given_up", "retried"]


class DeliveryNotFound(NotFound):
    """No delivery with that id for that mind."""


@dataclass(frozen=True)
class Route:
    """Where one delivery of a reply goes: a connector, and for a room the room, thread and message it answers."""

    connector: str
    room: str | None = None
    thread: str | None = None
    in_reply_to: str | None = None


@wire
@dataclass(frozen=True)
class DeliveryRow:
    """One outbox row, as `noemactl connectors` lists it."""

    id: int
    mind: str
    event_id: int
    """The reply (or notification) delivered."""
    connector: str
    what: What
    status: Status
    attempts: int
    created_at: IsoTime
    next_at: IsoTime
    """When the next attempt is due (pending)."""
    give_up_at: IsoTime
    room: Annotated[str | None, OMIT_NONE] = None
    thread: Annotated[str | None, OMIT_NONE] = None
    in_reply_to: Annotated[str | None, OMIT_NONE] = None
    last_error: Annotated[str | None, OMIT_NONE] = None
    remote_id: Annotated[str | None, OMIT_NONE] = None
    done_at: Annotated[IsoTime | None, OMIT_NONE] = None
    """When it was sent or given up."""


@dataclass(frozen=True)
class DeliveryRecord:
    """The data of a `delivery` event: one attempt's outcome (or a retry by hand) of one outbox row."""

    delivery: int
    connector: str
    outcome: Outcome
    attempt: int
    error: str | None = None
    retry_at: float | None = None
    remote_id: str | None = None
    detail: str | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"delivery": self.delivery, "connector": self.connector, "outcome": self.outcome, "attempt": self.attempt}
        for name in ("error", "remote_id", "detail"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.retry_at is not None:
            data["retry_at"] = iso(self.retry_at)
        return data

    @classmethod
    def of(cls, event: Event) -> DeliveryRecord:
        data = data_of(event, "delivery")
        retry_at = data.get("retry_at")
        return cls(
            int(data["delivery"]), str(data["connector"]), data["outcome"], int(data.get("attempt", 0)),
            data.get("error"), parse_iso(retry_at) if isinstance(retry_at, str) else None, data.get("remote_id"), data.get("detail"),
        )


_COLUMNS = "id, mind, event_id, connector, what, status, attempts, created_at, next_at, give_up_at, room, thread, in_reply_to, last_error, remote_id, done_at"


def _row(row: Sequence[Any]) -> DeliveryRow:
    (id_, mind, event_id, connector, what, status, attempts, created, next_at, give_up_at, room, thread, in_reply_to, error, remote, done) = row
    return DeliveryRow(
        id=id_, mind=mind, event_id=event_id, connector=connector, what=what, status=status, attempts=attempts,
        created_at=parse_iso(created), next_at=parse_iso(next_at), give_up_at=parse_iso(give_up_at), room=room, thread=thread,
        in_reply_to=in_reply_to, last_error=error, remote_id=remote, done_at=parse_iso(done) if done else None,
    )


def routes_for_reply(db: Database, answered: int | None, connectors: Sequence[str], webhooks: Sequence[str]) -> list[Route]:
    """Where a reply to the stimulus `answered` goes: back to the connector that brought it (if it still runs), and every webhook.

    `connectors` are the mind's configured connector keys, `webhooks` those of its webhooks.
    """
    routes: list[Route] = []
    came = origin(db, answered) if answered is not None else None
    if came is not None and came.connector in connectors and came.connector not in webhooks:
        routes.append(Route(came.connector, came.room, came.thread, came.remote_id))
    routes += [Route(key) for key in webhooks]
    return routes


def enqueue(db: Database, event: Event, what: What, routes: Sequence[Route], give_up_after: dict[str, float], now: float) -> list[int]:
    """Put one delivery of `event` per route in the outbox (in the job that appends the event); their ids.

    `give_up_after` holds each connector's give-up span in seconds.
    """
    ids: list[int] = []
    for route in routes:
        cursor = db.execute(
            "INSERT INTO deliveries (mind, event_id, connector, what, room, thread, in_reply_to, status, created_at, next_at, give_up_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
            [event.mind, event.id, route.connector, what, route.room, route.thread, route.in_reply_to, iso(now), iso(now),
             iso(now + give_up_after[route.connector])],
        )
        ids.append(int(cursor.lastrowid or 0))
    return ids


def delivered_as(db: Database, mind: str, connector: str, remote_id: str) -> int | None:
    """The event (a reply) the connector delivered as what the remote side calls `remote_id`, or None."""
    row = db.execute(
        "SELECT event_id FROM deliveries WHERE mind = ? AND connector = ? AND status = 'sent' AND remote_id = ? LIMIT 1",
        [mind, connector, remote_id],
    ).fetchone()
    return None if row is None else int(row[0])


def get_delivery(db: Database, mind: str, delivery_id: int) -> DeliveryRow:
    row = db.execute(f"SELECT {_COLUMNS} FROM deliveries WHERE id = ? AND mind = ?", [delivery_id, mind]).fetchone()
    if row is None:
        raise DeliveryNotFound(f"mind {mind!r} has no delivery {delivery_id}; list them with `noemactl connectors {mind} --json`")
    return _row(row)


def pending(db: Database, mind: str, connector: str) -> list[DeliveryRow]:
    """A connector's pending deliveries, oldest first (the order they are sent in)."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM deliveries WHERE mind = ? AND connector = ? AND status = 'pending' ORDER BY id",
        [mind, connector],
    ).fetchall()
    return [_row(r) for r in rows]


def recent(db: Database, mind: str, connector: str, status: Status, limit: int = 20) -> list[DeliveryRow]:
    """A connector's newest deliveries of `status`."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM deliveries WHERE mind = ? AND connector = ? AND status = ? ORDER BY id DESC LIMIT ?",
        [mind, connector, status, limit],
    ).fetchall()
    return [_row(r) for r in rows]


def counts(db: Database, mind: str) -> dict[str, dict[str, int]]:
    """Each connector's deliveries by status."""
    out: dict[str, dict[str, int]] = {}
    for connector, status, count in db.execute(
        "SELECT connector, status, count(*) FROM deliveries WHERE mind = ? GROUP BY connector, status", [mind]
    ):
        out.setdefault(connector, {})[status] = count
    return out


def oldest_pending(db: Database, mind: str, connector: str) -> float | None:
    """When the oldest pending delivery of a connector was made (its lag's start), or None."""
    (at,) = db.execute(
        "SELECT min(created_at) FROM deliveries WHERE mind = ? AND connector = ? AND status = 'pending'", [mind, connector]
    ).fetchone()
    return parse_iso(at) if at else None


def _text(row: DeliveryRow, record: DeliveryRecord) -> str:
    where = f"{row.what} {row.event_id} to {row.connector}"
    match record.outcome:
        case "sent":
            return f"delivered {where}" + (f" ({record.detail})" if record.detail else "")
        case "failed":
            return f"delivery of {where} failed (attempt {record.attempt}: {record.error}); retried at {iso(record.retry_at or 0)}"
        case "given_up":
            return f"gave up delivering {where} after {record.attempt} attempts: {record.error}"
        case _:
            return f"delivery of {where} retried by hand"


def record(db: Database, row: DeliveryRow, outcome: DeliveryRecord, now: float, actor: str) -> Event:
    """Write one attempt's outcome (or a retry by hand) with its `delivery` event, caused by the delivered event."""
    event = append(
        db,
        EventDraft(
            mind=row.mind, kind="delivery", actor=actor, text=_text(row, outcome), causation_id=row.event_id, data=outcome.to_data(),
        ),
        now,
    )
    match outcome.outcome:
        case "sent":
            db.execute(
                "UPDATE deliveries SET status = 'sent', attempts = ?, remote_id = ?, done_at = ?, last_error = NULL WHERE id = ?",
                [outcome.attempt, outcome.remote_id, iso(now), row.id],
            )
        case "failed":
            db.execute(
                "UPDATE deliveries SET attempts = ?, last_error = ?, next_at = ? WHERE id = ?",
                [outcome.attempt, outcome.error, iso(outcome.retry_at or now), row.id],
            )
        case "given_up":
            db.execute(
                "UPDATE deliveries SET status = 'given_up', attempts = ?, last_error = ?, done_at = ? WHERE id = ?",
                [outcome.attempt, outcome.error, iso(now), row.id],
            )
        case "retried":
            raise ValueError("a retry by hand is written by `retry`")
    return event


def retry(db: Database, mind: str, delivery_id: int, give_up_after: float, now: float, actor: str) -> tuple[DeliveryRow, Event]:
    """Put a given-up delivery back in the outbox, due now, with a new give-up time; `Conflict` if it is not given up."""
    row = get_delivery(db, mind, delivery_id)
    if row.status != "given_up":
        said = "was sent" if row.status == "sent" else "is still being tried"
        raise Conflict(f"delivery {delivery_id} {said}; only a delivery given up can be retried by hand")
    outcome = DeliveryRecord(row.id, row.connector, "retried", row.attempts)
    event = append(
        db,
        EventDraft(mind=mind, kind="delivery", actor=actor, text=_text(row, outcome), causation_id=row.event_id, data=outcome.to_data()),
        now,
    )
    db.execute(
        "UPDATE deliveries SET status = 'pending', next_at = ?, give_up_at = ?, done_at = NULL WHERE id = ?",
        [iso(now), iso(now + give_up_after), row.id],
    )
    return get_delivery(db, mind, delivery_id), event
