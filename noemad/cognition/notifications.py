"""Notifications: after a cycle, what an operator should hear about now.

`Rules` maps the events a cycle wrote (and the thoughts it admitted) to
candidates, each with an explicit threshold and an *aggregate key*:

| rule                | fires when                                                                                          | key                                  |
|---------------------|-----------------------------------------------------------------------------------------------------|--------------------------------------|
| prediction_miss     | a `prediction_resolved` with result `miss` and stated_confidence >= 0.7 (MISS_CONFIDENCE)           | `prediction_miss:subject:<subject>`  |
| contradiction       | a belief event whose status went to `contested`, and the belief is still contested after the cycle  | `contradiction:belief:<id>`          |
| strong_belief       | only if the mind's `notify_proactively` is true: an admitted evidence thought for a belief that is  | `strong_belief:belief:<id>`          |
|                     | active, not a hypothesis, at confidence >= `notify_min_confidence` (default 0.8), the thought's     |                                      |
|                     | salience >= `notify_min_salience` (default 0.7)                                                     |                                      |
| goal_completed      | a `goal_completed` event                                                                            | `goal_completed:goal:<id>`           |
| warning             | a `metacognition` event of check `overconfidence` or `repeated_failure`                             | `warning:<check>:<ref>`              |
| denied_action       | an `action_denied` event: a tool call of the mind's that was refused (`noemad.cognition.actions`)   | `denied_action:action:<action>`      |
| replica             | raised by the daemon, not a cycle (`daemon_notice`): its Litestream child is missing, crashed or  | `replica:<state>`                    |
|                     | cannot write the replica (`noemad.store.replica.child`); sent to every mind                         |                                      |
| salient_observation | an observation perceived in the cycle whose salience >= 0.9 (OBSERVATION_SALIENCE): the larger of   | `salient_observation:source:<source>`|
|                     | the salience its source states (a number in its `data.salience`, e.g. `noemactl observe --data     |                                      |
|                     | '{"salience": 0.95}'`) and that of its perception thought if attention admitted it                  |                                      |

One notification is raised outside these rules: `delivery_given_up`, by
a connector's outbox worker when a reply could not be delivered in time
(noemad/connectors/sender.py; not sent to webhooks, which may be what failed).

Every threshold is inclusive (a miss at 0.7 notifies, one at 0.69 does not).
A belief changed more than once in a cycle (evidence, then a warning lifted
by it) is a strong belief once, from the first admitted change that fires.
A missed hypothesis is contradicted and then rejected in the same cycle; it
ends rejected, not contested, so it notifies once, as a prediction miss.
Hypotheses are left to the prediction rules, so a stated prediction is not
echoed back as a strong belief.

`evaluate` is pure and deterministic: it reads the store and writes nothing,
and returns candidates ordered by triggering event, rule and key. `notify`
(a writer job) turns candidates into notifications: when an *open*
notification with the same key was created or last repeated less than
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

A mind's personality is in its typed settings (`noemad.config.mind.MindSettings`,
checked where they enter): `notify_proactively`, `notify_min_confidence`,
`notify_min_salience` and `notify_cooldown` (seconds).

After a cycle completes, in one writer job:

    notify(db, mind=mind, cycle_id=cycle_id, now=now,
           candidates=evaluate(db, mind=mind, settings=settings,
                               events=[*result.perception.events, *result.effects],
                               winners=result.winners))

and after a turn's tool call is denied, in the writer job that records it,
with `events=[the action_denied event]` and no winners.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.actions import ActionDenied
from noemad.cognition.beliefs.change import BELIEF_EVENTS, BeliefChange
from noemad.cognition.beliefs.queries import evidence_counts, find_belief
from noemad.cognition.goals import GoalChange
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.predictions import Resolution
from noemad.cognition.thoughts import Thought
from noemad import outbox
from noemad.config.connectors import ConnectorSettings, WebhookConnector
from noemad.config.mind import MindSettings
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of, get_events
from noemad.stimuli import Observation
from noemad.wire import wire

log = logging.getLogger("noemad.notifications")

ACTOR = "process:notifications"
STATUSES: tuple[str, ...] = ("open", "acked")
KINDS: tuple[str, ...] = ("notification", "notification_suppressed", "notification_acked")

MISS_CONFIDENCE = 0.7  # a missed prediction stated at least this confidently notifies
OBSERVATION_SALIENCE = 0.9  # an observation at least this salient notifies
WARNING_CHECKS: tuple[str, ...] = ("overconfidence", "repeated_failure")
MAX_TITLE = 200



class NotificationNotFound(NotFound):
    """No notification has that id."""

    title = "Notification not found"


class NotificationAcked(Conflict):
    """The notification was already acknowledged."""

    title = "Notification acknowledged"


# rules -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """What a rule says an operator should hear, and why."""

    rule: str
    key: str  # the aggregate key: repeats within the cooldown share one notification
    title: str
    values: dict[str, Any]  # what fired the rule, thresholds included
    cause: int | None  # the event that triggered it (None: the daemon's own trouble, such as the replica's)
    refs: tuple[Ref, ...] = ()
    cooldown: float = MindSettings.model_fields["notify_cooldown"].default  # seconds, from the mind's settings

    def order(self) -> tuple[int, int, str]:
        return (self.cause or 0, RULE_NAMES.index(self.rule), self.key)


def _title(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1] + "…"


@dataclass
class _Context:
    db: Database
    mind: str
    personality: MindSettings
    events: Sequence[Event]
    winners: Sequence[Thought]
    out: list[Candidate] = field(default_factory=list)

    def add(self, rule: str, key: str, title: str, values: dict[str, Any], cause: int, refs: Sequence[Ref] = ()) -> None:
        self.out.append(
            Candidate(rule, key, _title(title), values, cause, tuple(dict.fromkeys(refs)), self.personality.notify_cooldown)
        )


def _prediction_miss(ctx: _Context) -> None:
    for event in ctx.events:
        if event.kind != "prediction_resolved":
            continue
        resolution = Resolution.of(event)
        if resolution.result != "miss":
            continue
        stated = resolution.stated_confidence
        if stated < MISS_CONFIDENCE:
            continue
        subject = resolution.subject
        ctx.add(
            "prediction_miss",
            f"prediction_miss:subject:{subject}",
            f"prediction #{resolution.prediction} missed at stated {stated:.2f}: {resolution.proposition}",
            {
                "prediction": resolution.prediction,
                "subject": subject,
                "proposition": resolution.proposition,
                "stated_confidence": stated,
                "threshold": MISS_CONFIDENCE,
                "observed": resolution.observed,
                "belief": resolution.belief,
            },
            event.id,
            [Ref("belief", resolution.belief)] if isinstance(resolution.belief, int) else [],
        )


def _contradiction(ctx: _Context) -> None:
    for event in ctx.events:
        if event.kind not in BELIEF_EVENTS or event.subject is None or event.subject.type != "belief":
            continue
        change = BeliefChange.of(event)
        if change.status_to != "contested" or change.status_from == "contested":
            continue
        belief = find_belief(ctx.db, event.subject.id)
        if belief is None or belief.status != "contested":
            continue  # settled again within the cycle (a missed hypothesis ends rejected)
        proposition, confidence = belief.proposition, float(belief.confidence)
        support, contradict = evidence_counts(ctx.db, event.subject.id)
        ctx.add(
            "contradiction",
            f"contradiction:belief:{event.subject.id}",
            f"belief #{event.subject.id} is contested ({confidence:.2f}): {proposition}",
            {
                "belief": event.subject.id,
                "proposition": proposition,
                "confidence": confidence,
                "status": {"from": change.status_from, "to": "contested"},
                "support": support,
                "contradict": contradict,
                "source": change.source,
            },
            event.id,
            [event.subject],
        )


def _strong_belief(ctx: _Context) -> None:
    person = ctx.personality
    if not person.notify_proactively:
        return
    told: set[int] = set()
    for thought in ctx.winners:
        if thought.process != "evidence":
            continue
        beliefs = [r.id for r in thought.refs if r.type == "belief"]
        events = [r.id for r in thought.refs if r.type == "event"]
        if not beliefs or not events or thought.salience < person.notify_min_salience or beliefs[0] in told:
            continue  # a belief changed twice in a cycle (evidence, then a lifted warning) is told of once
        belief = find_belief(ctx.db, beliefs[0])
        if belief is None:
            continue
        proposition, kind, confidence, status = belief.proposition, belief.kind, float(belief.confidence), belief.status
        if status != "active" or kind == "hypothesis" or confidence < person.notify_min_confidence:
            continue
        told.add(beliefs[0])
        ctx.add(
            "strong_belief",
            f"strong_belief:belief:{beliefs[0]}",
            f"strong belief #{beliefs[0]} ({confidence:.2f}): {proposition}",
            {
                "belief": beliefs[0],
                "proposition": proposition,
                "kind": kind,
                "confidence": confidence,
                "min_confidence": person.notify_min_confidence,
                "salience": round(thought.salience, 6),
                "min_salience": person.notify_min_salience,
            },
            events[0],
            [Ref("belief", beliefs[0])],
        )


def _goal_completed(ctx: _Context) -> None:
    for event in ctx.events:
        if event.kind != "goal_completed":
            continue
        change = GoalChange.of(event)
        goal = change.goal
        ctx.add(
            "goal_completed",
            f"goal_completed:goal:{goal}",
            f"goal #{goal} completed: {change.title}",
            {"goal": goal, "title": change.title, "progress": {"from": change.progress_from, "to": change.progress_to}, "origin_actor": event.actor},
            event.id,
        )


def _warning(ctx: _Context) -> None:
    for event in ctx.events:
        if event.kind != "metacognition":
            continue
        warning = MetacognitionWarning.of(event)
        check, ref = warning.check, warning.ref
        if check not in WARNING_CHECKS:
            continue
        detail = {**warning.detail, "salience": warning.salience}
        ctx.add(
            "warning",
            f"warning:{check}:{ref}",
            f"warning ({check}): {event.text or ref}",
            {"check": check, "ref": ref, **detail},
            event.id,
        )


def _denied_action(ctx: _Context) -> None:
    for event in ctx.events:
        if event.kind != "action_denied":
            continue
        denied = ActionDenied.of(event)
        ctx.add(
            "denied_action",
            f"denied_action:action:{denied.action}",
            f"action denied: {denied.action}" + (f" ({denied.reason})" if denied.reason else ""),
            {"action": denied.action, "reason": denied.reason, "actor": event.actor},
            event.id,
        )


def _salient_observation(ctx: _Context) -> None:
    admitted: dict[int, float] = {}
    for thought in ctx.winners:
        if thought.process == "perception" and thought.kind == "observation":
            for ref in thought.refs:
                if ref.type == "event":
                    admitted[ref.id] = max(admitted.get(ref.id, 0.0), thought.salience)
    perceived = {e.causation_id for e in ctx.events if e.kind == "memory_created" and e.causation_id is not None}
    stimuli = get_events(ctx.db, perceived | set(admitted))
    for event_id in sorted(stimuli):
        event = stimuli[event_id]
        if event.kind != "observation" or event.mind != ctx.mind:
            continue
        observation = Observation.of(event)
        stated = observation.stated_salience
        attended = admitted.get(event_id)
        salience = max(v for v in (stated, attended, 0.0) if v is not None)
        if salience < OBSERVATION_SALIENCE:
            continue
        source = observation.source or event.actor
        ctx.add(
            "salient_observation",
            f"salient_observation:source:{source}",
            f"very salient observation from {source} ({salience:.2f}): {event.text or ''}",
            {
                "source": source,
                "salience": round(salience, 6),
                "stated_salience": stated,
                "attention_salience": None if attended is None else round(attended, 6),
                "threshold": OBSERVATION_SALIENCE,
                "text": _title(event.text or ""),
            },
            event_id,
        )


Rules: dict[str, Callable[[_Context], None]] = {
    "prediction_miss": _prediction_miss,
    "contradiction": _contradiction,
    "strong_belief": _strong_belief,
    "goal_completed": _goal_completed,
    "warning": _warning,
    "denied_action": _denied_action,
    "salient_observation": _salient_observation,
}
# Raised by the daemon, not by a cycle: the replica in trouble (`daemon_notice`).
DAEMON_RULES: tuple[str, ...] = ("replica",)
RULE_NAMES: tuple[str, ...] = (*Rules, *DAEMON_RULES)


def evaluate(
    db: Database, *, mind: str, settings: MindSettings, events: Sequence[Event], winners: Sequence[Thought]
) -> list[Candidate]:
    """The candidates a cycle's events and admitted thoughts give (reads only; deterministic)."""
    ctx = _Context(db, mind, settings, [e for e in events if e.mind == mind], list(winners))
    for rule in Rules.values():
        rule(ctx)
    seen: set[tuple[str, int | None]] = set()
    out = []
    for candidate in sorted(ctx.out, key=Candidate.order):
        if (candidate.key, candidate.cause) not in seen:
            seen.add((candidate.key, candidate.cause))
            out.append(candidate)
    return out


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
    candidate = Candidate(rule, key, _title(title), values, None, (), cooldown)
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
