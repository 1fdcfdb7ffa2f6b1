"""One cognitive cycle over a turn's stimuli.

`cycle_started` (caused by the stimulus that woke the mind, its parents every
stimulus taken); perceive (episodes; evidence and corrections applied to
beliefs); retrieve (the memories most worth recalling for what arrived,
recorded as `memory_retrieved`); deliberate (the processes propose thoughts —
perception, evidence, goals, due predictions, metacognition —, attention admits the most salient few
and records the competition, the admitted warnings take effect);
`cycle_completed`; then notifications for what the cycle did. Every event of
the cycle carries its id, and the same stimuli into the same state give the
same events. The cycle is one transaction on the writer.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.config import MindSettings
from noemad.cognition import metacognition, notifications
from noemad.cognition.attention import attend
from noemad.cognition.memory import retrieve
from noemad.cognition.perceive import Perception, perceive
from noemad.cognition.goals import active_goals
from noemad.cognition.predictions import due_predictions
from noemad.cognition.thoughts import Thought, evidence_thoughts, goal_thoughts, perception_thoughts, prediction_thoughts
from noemad.events import Event, EventDraft, append, get_events
from noemad.store import Store

RECALL = 5  # memories retrieved per cycle


@dataclass
class CycleResult:
    """What one cycle wrote."""

    started: Event
    perception: Perception
    retrieved: Event | None
    winners: list[Thought]
    effects: list[Event]
    completed: Event


def deliberate(
    db: Database, *, mind: str, stimuli: list[Event], perception: Perception, size: int, cause: int, cycle_id: str, now: float
) -> tuple[list[Thought], list[Event]]:
    """Propose, attend, and let the admitted warnings take effect (one writer job)."""
    thoughts = [
        *perception_thoughts(mind, stimuli),
        *evidence_thoughts(perception.events),
        *goal_thoughts(active_goals(db, mind)),
        *prediction_thoughts(due_predictions(db, mind, now), now),
        *metacognition.propose(db, mind, perception.beliefs, now),
    ]
    winners, attention = attend(db, mind=mind, thoughts=thoughts, size=size, cause=cause, cycle_id=cycle_id, now=now)
    effects: list[Event] = [attention] if attention else []
    for thought in winners:
        if thought.process == "metacognition" and attention is not None:
            effects.extend(metacognition.apply(db, mind, thought, attention.id, cycle_id, now))
    return winners, effects


def cycle(
    db: Database, *, mind: str, stimuli: list[int], cycle_id: str, wake: str, settings: MindSettings, now: float
) -> CycleResult:
    """One whole cycle as one writer job: it commits whole or not at all."""
    started = append(
        db,
        EventDraft(
            mind=mind,
            kind="cycle_started",
            actor="process:runtime",
            cycle_id=cycle_id,
            causation_id=stimuli[-1],
            parents=stimuli,
            data={"stimuli": len(stimuli), "wake": wake},
        ),
        now,
    )
    found = get_events(db, stimuli)
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
    )
    result = CycleResult(started, perception, retrieved, winners, effects, completed)
    # After the cycle, in the same transaction: what it did that operators should hear of.
    notifications.notify(
        db,
        mind=mind,
        cycle_id=cycle_id,
        now=now,
        candidates=notifications.evaluate(db, mind=mind, settings=settings, events=[*perception.events, *effects], winners=winners),
    )
    return result


async def run_cycle(
    store: Store, clock: Clock, mind: str, stimuli: list[int], cycle_id: str, wake: str, settings: MindSettings | None = None
) -> CycleResult:
    """Run one cycle over the stored stimuli `stimuli` (ids, oldest first) on the writer.

    No model call happens inside a cycle, so the whole of it is one
    transaction: one commit, and no half-written cycle after a crash.
    """
    return await store.writer.run(
        lambda db: cycle(db, mind=mind, stimuli=stimuli, cycle_id=cycle_id, wake=wake, settings=settings or MindSettings(), now=clock.now())
    )
