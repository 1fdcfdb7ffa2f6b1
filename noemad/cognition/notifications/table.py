"""The notifications table and its events: a cycle's candidates stored, repeats counted, acknowledgements.

`notify` (a writer job) turns candidates (`noemad.cognition.notifications.rules`)
into notifications: when an *open* notification with the same key was created or last repeated less than
`notify_cooldown` ago (on the daemon's clock; default 1 h), the repeat
increments its `count`, moves its `updated_at` and is recorded as
`notification_suppressed` (caused by the triggering event, citing the
notification's `notification` event); otherwise a new notification is stored
with a `notification` event (actor `process:notifications`, caused by the
triggering event, text its title, data `{rule, key, values, notification}`).
So a repeat exactly `notify_cooldown` after the last one notifies again, and
so does any repeat after an operator acked. Every notification stores its
rule and the values that fired it, thresholds included.

`ack` closes one (`notification_acked`; acking twice is a conflict).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlite_utils import Database

from noemad import outbox
from noemad.clock import iso
from noemad.cognition.notifications.rules import Candidate, title_of
from noemad.config.connectors import ConnectorSettings, WebhookConnector
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of
from noemad.wire import wire

ACTOR = "process:notifications"
STATUSES: tuple[str, ...] = ("open", "acked")
KINDS: tuple[str, ...] = ("notification", "notification_suppressed", "notification_acked")


class NotificationNotFound(NotFound):
    """No notification has that id."""

    title = "Notification not found"


class NotificationAcked(Conflict):
    """The notification was already acknowledged."""

    title = "Notification acknowledged"


# the notification event ------------------------------------------------------------


@dataclass(frozen=True)
class Raised:
    """The data of a `notification` event: the one definition of its fields (what the narrative reads)."""

    notification: int
    rule: str
    key: str
    values: dict[str, Any]

    @classmethod
    def of(cls, event: Event) -> Raised:
        data = data_of(event, "notification")
        return cls(int(data["notification"]), str(data["rule"]), str(data["key"]), dict(data.get("values") or {}))


# the notifications table -------------------------------------------------------------


@wire
@dataclass(frozen=True)
class Notification:
    """What an operator should hear about: the rule that fired, the values that fired it, and how often it repeated."""

    id: int
    mind: str
    rule: Literal[
        "prediction_miss", "contradiction", "strong_belief", "goal_completed", "warning", "denied_action", "salient_observation",
        "replica",
    ]
    key: str
    """The aggregate key: repeats within the mind's notify_cooldown count here instead of notifying again."""
    title: str
    values: dict[str, Any]
    """The values that fired the rule, thresholds included."""
    count: int
    """1, plus every repeat counted (each a notification_suppressed event)."""
    status: Literal["open", "acked"]
    created_at: str
    updated_at: str
    """When it was created or last repeated."""
    acked_at: str | None
    event_id: int | None
    """The notification event."""
    last_event_id: int | None
    """The newest notification or notification_suppressed event."""
    acked_event_id: int | None
    """The notification_acked event, once acknowledged."""


_COLUMNS = (
    'id, mind, rule, key, title, "values", count, status, created_at, updated_at, acked_at, event_id, last_event_id, acked_event_id'
)


def _row(row: Sequence[Any]) -> Notification:
    return Notification(*row[:5], json.loads(row[5]), *row[6:])  # type: ignore[call-arg]


def get_notification(db: Database, notification_id: int) -> Notification:
    """One notification, or `NotificationNotFound`."""
    row = db.execute(f"SELECT {_COLUMNS} FROM notifications WHERE id = ?", [notification_id]).fetchone()
    if row is None:
        raise NotificationNotFound(
            f"notification {notification_id} does not exist; list a mind's notifications with `noemactl notifications MIND`"
        )
    return _row(row)


def list_notifications(db: Database, mind: str, status: str | None = None, limit: int = 100) -> list[Notification]:
    """A mind's notifications, newest first, optionally of one status."""
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"a notification is {' or '.join(STATUSES)}, not {status!r}")
    sql = f"SELECT {_COLUMNS} FROM notifications WHERE mind = ?"
    params: list[Any] = [mind]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(limit)
    return [_row(r) for r in db.execute(sql, params).fetchall()]


def _open_within(db: Database, mind: str, key: str, since: float) -> Notification | None:
    """The newest open notification with `key` created or repeated after `since` (exclusive)."""
    row = db.execute(
        f"SELECT {_COLUMNS} FROM notifications WHERE mind = ? AND key = ? AND status = 'open' AND updated_at > ?"
        " ORDER BY id DESC LIMIT 1",
        [mind, key, iso(since)],
    ).fetchone()
    return None if row is None else _row(row)


def notify(
    db: Database, *, mind: str, candidates: Sequence[Candidate], cycle_id: str | None, now: float,
    connectors: Sequence[ConnectorSettings] = (),
) -> list[Event]:
    """Store each candidate as a notification, or count it as a repeat (a writer job). Returns the events written.

    A new notification goes to each of `connectors` (the mind's) that is a
    webhook asking for notifications, through the outbox, in this same job.
    """
    at = iso(now)
    webhooks = [c for c in connectors if isinstance(c, WebhookConnector) and c.notifications]
    written: list[Event] = []
    for candidate in candidates:
        existing = _open_within(db, mind, candidate.key, now - candidate.cooldown) if candidate.cooldown > 0 else None
        if existing is not None:
            count = existing.count + 1
            cited = [Ref("event", existing.event_id)] if existing.event_id is not None else []
            event = append(
                db,
                EventDraft(
                    mind=mind,
                    kind="notification_suppressed",
                    actor=ACTOR,
                    text=f"repeat {count} of notification #{existing.id}: {candidate.title}",
                    cycle_id=cycle_id,
                    causation_id=candidate.cause,
                    refs=[*cited, *candidate.refs],
                    data={
                        "notification": existing.id,
                        "rule": candidate.rule,
                        "key": candidate.key,
                        "values": candidate.values,
                        "count": count,
                        "cooldown": candidate.cooldown,
                        "last": existing.updated_at,
                    },
                ),
                now,
            )
            db.execute(
                "UPDATE notifications SET count = ?, updated_at = ?, last_event_id = ? WHERE id = ?",
                [count, at, event.id, existing.id],
            )
            written.append(event)
            continue
        notification_id = int(
            db.execute(
                'INSERT INTO notifications (mind, rule, key, title, "values", count, status, created_at, updated_at)'
                " VALUES (?, ?, ?, ?, ?, 1, 'open', ?, ?)",
                [mind, candidate.rule, candidate.key, candidate.title, json.dumps(candidate.values, sort_keys=True), at, at],
            ).lastrowid
            or 0
        )
        event = append(
            db,
            EventDraft(
                mind=mind,
                kind="notification",
                actor=ACTOR,
                text=candidate.title,
                cycle_id=cycle_id,
                causation_id=candidate.cause,
                refs=list(candidate.refs),
                data={"notification": notification_id, "rule": candidate.rule, "key": candidate.key, "values": candidate.values},
            ),
            now,
        )
        db.execute("UPDATE notifications SET event_id = ?, last_event_id = ? WHERE id = ?", [event.id, event.id, notification_id])
        if webhooks:
            routes = [outbox.Route(c.key) for c in webhooks]
            outbox.enqueue(db, event, "notification", routes, {c.key: c.give_up_after for c in webhooks}, now)
        written.append(event)
    return written


def daemon_notice(db: Database, *, mind: str, rule: str, key: str, title: str, values: dict[str, Any], cooldown: float, now: float) -> list[Event]:
    """Raise the daemon's own trouble (no triggering event) as `mind`'s notification (a writer job); repeats within `cooldown` count."""
    candidate = Candidate(rule, key, title_of(title), values, None, (), cooldown)
    return notify(db, mind=mind, candidates=[candidate], cycle_id=None, now=now)


def ack(db: Database, *, notification_id: int, now: float, actor: str) -> Event:
    """Acknowledge a notification (a writer job): status `acked`, recorded as `notification_acked`.

    `NotificationNotFound` for an unknown id, `NotificationAcked` if it was acked already.
    """
    notification = get_notification(db, notification_id)
    if notification.status == "acked":
        raise NotificationAcked(
            f"notification {notification_id} was already acknowledged at {notification.acked_at}"
            f" (event {notification.acked_event_id}); nothing to do"
        )
    cited = [Ref("event", i) for i in dict.fromkeys((notification.event_id, notification.last_event_id)) if i is not None]
    event = append(
        db,
        EventDraft(
            mind=notification.mind,
            kind="notification_acked",
            actor=actor,
            text=f"acknowledged: {notification.title}",
            refs=cited,
            data={"notification": notification_id, "rule": notification.rule, "key": notification.key, "count": notification.count},
        ),
        now,
    )
    db.execute(
        "UPDATE notifications SET status = 'acked', acked_at = ?, acked_event_id = ? WHERE id = ?",
        [iso(now), event.id, notification_id],
    )
    return event


def events_held(db: Database, low: int, high: int) -> set[int]:
    """The events in [low, high] a notification was raised, renewed or acknowledged by; archiving keeps them."""
    rows = db.execute(
        "SELECT event_id FROM notifications WHERE event_id BETWEEN ?1 AND ?2"
        " UNION SELECT last_event_id FROM notifications WHERE last_event_id BETWEEN ?1 AND ?2"
        " UNION SELECT acked_event_id FROM notifications WHERE acked_event_id BETWEEN ?1 AND ?2",
        [low, high],
    )
    return {row[0] for row in rows}
