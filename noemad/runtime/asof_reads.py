"""What the API reads of a mind as it stood at a time (`?at=`), of a belief's history, and of what changed in a window.

The supervisor holds one (`sup.asof`), as it holds `Reads`: each method reads on the calling
thread's reader connection and checks the mind exists first. A time is an
event id, a span back from the daemon's clock, or an ISO time
(`noemad.cognition.asof.resolve`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.cognition.asof import BeliefThen, Changes, Cutoff, Step, beliefs_at, changes, history, resolve
from noemad.cognition.beliefs.queries import find_belief
from noemad.cognition.memory.model import Memory
from noemad.cognition.memory.reads import memories_at, memory_counts_at
from noemad.cognition.narrative.stored import NarrativeShown, narrative_shown
from noemad.events import Event, latest_events
from noemad.minds import get_mind
from noemad.runtime.running_config import RunningConfig
from noemad.store import Store
from noemad.wire import wire


@wire
@dataclass(frozen=True)
class BeliefsThen:
    """A mind's beliefs as they stood at a time."""

    mind: str
    at: Cutoff
    beliefs: list[BeliefThen]


@wire
@dataclass(frozen=True)
class BeliefHistory:
    """Every change of one belief's confidence and status, oldest first."""

    id: int
    mind: str
    proposition: str
    steps: list[Step]


@wire
@dataclass(frozen=True)
class MindThen:
    """A mind as it stood at a time: how much it had lived, what it believed and remembered, what it would have said."""

    name: str
    at: Cutoff
    events: int
    """Its events up to then (archived ones not counted)."""
    beliefs: dict[str, int]
    """Its beliefs then, by status."""
    memories: dict[str, int]
    """Its memories then: active and retracted."""
    narrative: str | None
    """Its narrative as it read then."""
    recent: list[Event]
    """Its newest events up to then."""


class AsOfReads:
    """The supervisor's "as of" reads: the store, the clock a span back is counted on, each mind's running settings."""

    def __init__(self, store: Store, clock: Clock, running: RunningConfig) -> None:
        self.store = store
        self.clock = clock
        self.running = running

    def _cutoff(self, db: Database, mind: str, at: str | None) -> Cutoff:
        get_mind(db, mind)
        return resolve(db, mind, at, self.clock.now())

    def beliefs_then(self, mind: str, at: str, subject: str | None, status: str | None, limit: int) -> BeliefsThen:
        db = self.store.reader()
        cut = self._cutoff(db, mind, at)
        return BeliefsThen(mind, cut, beliefs_at(db, mind, cut.event_id, subject=subject, status=status, limit=limit))

    def belief_history(self, belief_id: int) -> BeliefHistory:
        db = self.store.reader()
        steps = history(db, belief_id)
        belief = find_belief(db, belief_id)
        assert belief is not None  # history() found it
        return BeliefHistory(belief.id, belief.mind, belief.proposition, steps)

    def changes(self, mind: str, since: str, until: str | None, threshold: float) -> Changes:
        db = self.store.reader()
        after = self._cutoff(db, mind, since)
        upto = self._cutoff(db, mind, until)
        return changes(db, mind, after, upto, threshold)

    def memories_then(self, mind: str, at: str, kind: str | None, limit: int, status: str | None) -> list[Memory]:
        db = self.store.reader()
        cut = self._cutoff(db, mind, at)
        return memories_at(db, mind, cut.event_id, kind=kind, status=status, limit=limit)

    def narrative_then(self, mind: str, at: str) -> NarrativeShown:
        db = self.store.reader()
        cut = self._cutoff(db, mind, at)
        return narrative_shown(db, mind, self.running.settings_of(mind), through=cut.event_id)

    def mind_then(self, mind: str, at: str) -> MindThen:
        db = self.store.reader()
        cut = self._cutoff(db, mind, at)
        by_status: dict[str, int] = {}
        for b in beliefs_at(db, mind, cut.event_id):
            by_status[b.status] = by_status.get(b.status, 0) + 1
        (events,) = db.execute("SELECT count(*) FROM events WHERE mind = ? AND id <= ?", [mind, cut.event_id]).fetchone()
        active, retracted = memory_counts_at(db, mind, cut.event_id)
        told = narrative_shown(db, mind, self.running.settings_of(mind), through=cut.event_id)
        return MindThen(
            mind, cut, int(events), by_status, {"active": active, "retracted": retracted}, told.text,
            latest_events(db, mind, limit=10, through=cut.event_id),
        )
