"""Notification rules: which of a cycle's events and admitted thoughts an operator should hear about now.

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

A mind's personality is in its typed settings (`noemad.config.mind.MindSettings`,
checked where they enter): `notify_proactively`, `notify_min_confidence`,
`notify_min_salience` and `notify_cooldown` (seconds).

`evaluate` is pure and deterministic: it reads the store and writes nothing,
and returns candidates ordered by triggering event, rule and key;
`noemad.cognition.notifications.table.notify` stores them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from noemad.cognition.actions import ActionDenied
from noemad.cognition.beliefs.change import BELIEF_EVENTS, BeliefChange
from noemad.cognition.beliefs.queries import evidence_counts, find_belief
from noemad.cognition.goals import GoalChange
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.predictions import Resolution
from noemad.cognition.thoughts import Thought
from noemad.config.mind import MindSettings
from noemad.events import Event, Ref, get_events
from noemad.stimuli import Observation

MISS_CONFIDENCE = 0.7  # a missed prediction stated at least this confidently notifies
OBSERVATION_SALIENCE = 0.9  # an observation at least this salient notifies
WARNING_CHECKS: tuple[str, ...] = ("overconfidence", "repeated_failure")
MAX_TITLE = 200


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


def title_of(text: str) -> str:
    """`text` on one line, cut to MAX_TITLE characters: a notification's title."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1] + "…"


@dataclass
class _Context:
    db: Database
    mind: str
    personality: MindSettings
    events: Sequence[Event]
    winners: Sequence[Thought]
    stimuli: Sequence[Event] = ()  # the cycle's stimuli, already read
    out: list[Candidate] = field(default_factory=list)

    def add(self, rule: str, key: str, title: str, values: dict[str, Any], cause: int, refs: Sequence[Ref] = ()) -> None:
        self.out.append(
            Candidate(rule, key, title_of(title), values, cause, tuple(dict.fromkeys(refs)), self.personality.notify_cooldown)
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
    wanted = perceived | set(admitted)
    stimuli = {e.id: e for e in ctx.stimuli if e.id in wanted}
    stimuli.update(get_events(ctx.db, wanted - stimuli.keys()))  # what the cycle did not hand over (none, from a cycle)
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
                "text": title_of(event.text or ""),
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
    db: Database, *, mind: str, settings: MindSettings, events: Sequence[Event], winners: Sequence[Thought], stimuli: Sequence[Event] = ()
) -> list[Candidate]:
    """The candidates a cycle's events and admitted thoughts give (reads only; deterministic).

    `stimuli`: the cycle's stimuli as it read them, so that no rule reads them again.
    """
    ctx = _Context(db, mind, settings, [e for e in events if e.mind == mind], list(winners), list(stimuli))
    for rule in Rules.values():
        rule(ctx)
    seen: set[tuple[str, int | None]] = set()
    out = []
    for candidate in sorted(ctx.out, key=Candidate.order):
        if (candidate.key, candidate.cause) not in seen:
            seen.add((candidate.key, candidate.cause))
            out.append(candidate)
    return out

