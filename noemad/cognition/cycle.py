"""One cognitive cycle over a turn's stimuli.

`cycle_started` (caused by the newest stimulus that addresses the mind among
those the gate delivered, else the newest; its parents the delivered stimuli,
the newest up to an event's link limit; its text names the rule that woke
the mind, and its data which rule held back each other stimulus it takes);
perceive (episodes; evidence and corrections applied to
beliefs); retrieve (the memories most worth recalling for what arrived,
recorded as `memory_retrieved`); deliberate (the warnings whose cause is gone
lift, their counter-evidence withdrawn; the processes propose thoughts —
perception, evidence, goals, due predictions, metacognition —, attention admits the most salient few
and records the competition, the admitted warnings take effect);
`cycle_completed`; then notifications for what the cycle did. Every event of
the cycle carries its id, and the same stimuli into the same state give the
same events. The cycle is one transaction on the writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.config.mind import MindSettings
from noemad.cognition import metacognition
from noemad.cognition.notifications import rules as notification_rules
from noemad.cognition.notifications import table as notifications
from noemad.cognition.attention import attend
from noemad.cognition.beliefs.queries import find_belief
from noemad.cognition.memory.retrieval import retrieve
from noemad.cognition.perceive import Perception, perceive
from noemad.cognition.goals import active_goals
from noemad.cognition.predictions import due_predictions
from noemad.cognition.thoughts import Thought, evidence_thoughts, goal_thoughts, perception_thoughts, prediction_thoughts
from noemad.events import MAX_LINKS, Event, EventDraft, Ref, append, get_events
from noemad.store import Store
from noemad.wake import HeldVerdict, Wake

RECALL = 5  # memories retrieved per cycle


def started_draft(mind: str, stimuli: Sequence[int], cycle_id: str, wake: Wake) -> EventDraft:
    """The `cycle_started` of a cycle taking `stimuli` (oldest first) because of `wake`.

    A batch may hold more stimuli than an event may link: the parents are the
    newest `MAX_LINKS` delivered, and `more` counts the rest (each is still an
    episode of the cycle, caused by its stimulus). Stimuli taken without
    having woken the mind (deferred, denied...) are grouped by verdict and
    rule in `held_back` and cited, the newest `MAX_LINKS`, so a walk from one
    of them reaches the cycle that took it and says which rule held it back.
    """
    taken = set(stimuli)
    delivered: list[int] = sorted((i for i in (stimuli if wake.delivered is None else wake.delivered) if i in taken), reverse=True)
    addressed = set(wake.addressed)
    cause = wake.cause
    if cause is None:
        cause = next((i for i in delivered if i in addressed), delivered[0] if delivered else (stimuli[-1] if stimuli else None))
    groups: dict[tuple[HeldVerdict, str | None], list[int]] = {}
    woke = set(delivered)
    for held in sorted(wake.held_back, key=lambda h: -h.stimulus):
        if held.stimulus in taken and held.stimulus not in woke:
            groups.setdefault((held.verdict, held.rule), []).append(held.stimulus)
    data: dict[str, Any] = {
        "stimuli": len(stimuli),
        "wake": wake.reason,
        "rule": wake.rule,
        "batch": len(delivered),
        "more": max(0, len(delivered) - MAX_LINKS),
    }
    # The gate's reason names the rule that decided; said here too should a reason not.
    named = wake.rule is None or f"rule {wake.rule}" in wake.reason
    text = f"woke: {wake.reason}" if named else f"woke for rule {wake.rule}: {wake.reason}"
    if groups:
        data["held_back"] = [
            {"verdict": verdict, "rule": rule, "stimuli": ids[:MAX_LINKS], "more": max(0, len(ids) - MAX_LINKS)}
            for (verdict, rule), ids in groups.items()
        ]
        text += "; also took " + ", ".join(
            f"{len(ids)} {verdict}" + (f" by rule {rule}" if rule else "") for (verdict, rule), ids in groups.items()
        )
    cited = sorted((i for ids in groups.values() for i in ids), reverse=True)[:MAX_LINKS]
    return EventDraft(
        mind=mind,
        kind="cycle_started",
        actor="process:runtime",
        text=text,
        cycle_id=cycle_id,
        causation_id=cause,
        # The newest MAX_LINKS, in id order: the store keeps parents as a set and reads them back in
        # id order, so the event the bus publishes and the one the API reads name them alike.
        parents=sorted(delivered[:MAX_LINKS]),
        refs=[Ref("event", i) for i in sorted(cited)],
        data=data,
    )


@dataclass
class CycleResult:
    """What one cycle wrote."""

    started: Event
    perception: Perception
    retrieved: Event | None
    winners: list[Thought]
    effects: list[Event]
    completed: Event


def _proposition(db: Database, belief_id: int) -> str | None:
    found = find_belief(db, belief_id)
    return found.proposition if found is not None else None


def deliberate(
    db: Database, *, mind: str, stimuli: list[Event], perception: Perception, size: int, cause: int, cycle_id: str, now: float
) -> tuple[list[Thought], list[Event]]:
    """Lift the warnings whose cause is gone, propose, attend, and let the admitted warnings take effect (one writer job)."""
    lifted = metacognition.lift(db, mind, perception.beliefs, cycle_id, now)
    thoughts = [
        *perception_thoughts(mind, stimuli, perception.payloads),
        *evidence_thoughts([*perception.events, *lifted], lambda belief: _proposition(db, belief)),
        *goal_thoughts(active_goals(db, mind)),
        *prediction_thoughts(due_predictions(db, mind, now), now),
        *metacognition.propose(db, mind, perception.beliefs, now),
    ]
    winners, attention = attend(db, mind=mind, thoughts=thoughts, size=size, cause=cause, cycle_id=cycle_id, now=now)
    effects: list[Event] = [*lifted, *([attention] if attention else [])]
    for thought in winners:
        if thought.process == "metacognition" and attention is not None:
            effects.extend(metacognition.apply(db, mind, thought, attention.id, cycle_id, now))
    return winners, effects


def cycle(
    db: Database, *, mind: str, stimuli: list[int], cycle_id: str, wake: Wake | str, settings: MindSettings, now: float
) -> CycleResult:
    """One whole cycle as one writer job: it commits whole or not at all."""
    found = get_events(db, stimuli)
    draft = started_draft(mind, stimuli, cycle_id, Wake(wake) if isinstance(wake, str) else wake)
    # It links only stimuli, as a rule: read just now, they need no second look-up when all are the mind's.
    linked = {i for i in (draft.causation_id, *draft.parents, *(r.id for r in draft.refs)) if i is not None}
    checked = all(r.type == "event" for r in draft.refs) and all(i in found and found[i].mind == mind for i in linked)
    started = append(db, draft, now, links_checked=checked)
    events = [found[i] for i in stimuli if i in found]
    perception = perceive(db, mind, events, cycle_id, now)
    _, retrieved = retrieve(
        db,
        mind=mind,
        query=" ".join(e.text or "" for e in events),
        now=now,
        limit=RECALL,
        exclude=perception.episodes,
        cause=started.id,
        cycle_id=cycle_id,
    )
    winners, effects = deliberate(
        db, mind=mind, stimuli=events, perception=perception, size=settings.attention_capacity, cause=started.id, cycle_id=cycle_id, now=now
    )
    completed = append(
        db,
        EventDraft(
            mind=mind,
            kind="cycle_completed",
            actor="process:runtime",
            cycle_id=cycle_id,
            causation_id=started.id,
            data={
                "stimuli": len(stimuli),
                "episodes": len(perception.episodes),
                "beliefs": sorted(set(perception.beliefs)),
                "retrieved": len(retrieved.refs) if retrieved else 0,
                "winners": [t.key for t in winners],
                "warnings": [metacognition.MetacognitionWarning.of(e).check for e in effects if e.kind == "metacognition"],
            },
        ),
        now,
        links_checked=True,  # its cause is the cycle's own cycle_started, appended in this job
    )
    result = CycleResult(started, perception, retrieved, winners, effects, completed)
    # After the cycle, in the same transaction: what it did that operators should hear of.
    notifications.notify(
        db,
        mind=mind,
        cycle_id=cycle_id,
        now=now,
        candidates=notification_rules.evaluate(
            db, mind=mind, settings=settings, events=[*perception.events, *effects], winners=winners, stimuli=events
        ),
        connectors=settings.connectors,
    )
    return result


async def run_cycle(
    store: Store, clock: Clock, mind: str, stimuli: list[int], cycle_id: str, wake: Wake | str, settings: MindSettings | None = None
) -> CycleResult:
    """Run one cycle over the stored stimuli `stimuli` (ids, oldest first) on the writer.

    No model call happens inside a cycle, so the whole of it is one
    transaction: one commit, and no half-written cycle after a crash.
    """
    return await store.writer.run(
        lambda db: cycle(db, mind=mind, stimuli=stimuli, cycle_id=cycle_id, wake=wake, settings=settings or MindSettings(), now=clock.now())
    )
