"""One cognitive cycle over a turn's stimuli.

`cycle_started` (caused by the stimulus that woke the mind, its parents every
stimulus taken); perceive (episodes; evidence and corrections applied to
beliefs); retrieve (the memories most worth recalling for what arrived,
recorded as `memory_retrieved`); `cycle_completed`. Every event of the cycle
carries its id. Processes proposing thoughts, attention and the winners'
effects come next, between retrieval and completion.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.cognition.memory import retrieve
from noemad.cognition.perceive import Perception, perceive
from noemad.events import Event, EventDraft, append, get_events
from noemad.store import Store

RECALL = 5  # memories retrieved per cycle


@dataclass
class CycleResult:
    """What one cycle wrote."""

    started: Event
    perception: Perception
    retrieved: Event | None
    completed: Event


async def run_cycle(store: Store, clock: Clock, mind: str, stimuli: list[int], cycle_id: str, wake: str) -> CycleResult:
    """Run one cycle over the stored stimuli `stimuli` (ids, oldest first)."""
    trigger = stimuli[-1]

    def begin(db: Database) -> Event:
        return append(
            db,
            EventDraft(
                mind=mind,
                kind="cycle_started",
                actor="process:runtime",
                cycle_id=cycle_id,
                causation_id=trigger,
                parents=stimuli,
                data={"stimuli": len(stimuli), "wake": wake},
            ),
            clock.now(),
        )

    started = await store.writer.run(begin)

    def take_in(db: Database) -> Perception:
        events = get_events(db, stimuli)
        return perceive(db, mind, [events[i] for i in stimuli if i in events], cycle_id, clock.now())

    perception = await store.writer.run(take_in)

    def recall(db: Database) -> Event | None:
        events = get_events(db, stimuli)
        query = " ".join(events[i].text or "" for i in stimuli if i in events)
        _, event = retrieve(
            db, mind=mind, query=query, now=clock.now(), limit=RECALL, exclude=perception.episodes, cause=started.id, cycle_id=cycle_id
        )
        return event

    retrieved = await store.writer.run(recall)

    def finish(db: Database) -> Event:
        return append(
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
                },
            ),
            clock.now(),
        )

    completed = await store.writer.run(finish)
    return CycleResult(started, perception, retrieved, completed)
