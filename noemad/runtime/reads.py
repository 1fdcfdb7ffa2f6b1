"""What the API reads through the supervisor (`sup.reads`): minds' cognition, jobs, one row by id.

Each method reads on the calling thread's reader connection (the API's sync
routes run on a thread pool) and checks the mind exists first, so an unknown
mind is a `MindNotFound` with its hint, not an empty list. The API never
opens a connection itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from noemad.background.jobs import Job, get_job, list_jobs
from noemad.cognition.beliefs.model import Belief
from noemad.cognition.beliefs.queries import belief_events, get_belief, list_beliefs
from noemad.cognition.trust import DEFAULT_TRUST, TrustLevel, list_trust
from noemad.cognition.calibration import Calibration, calibration
from noemad.cognition.goals import Goal, get_goal, list_goals
from noemad.cognition.memory.model import Memory
from noemad.cognition.memory.reads import get_memory, list_memories
from noemad.cognition.memory.reads import search as memory_search
from noemad.cognition.narrative.stored import NarrativeShown, narrative_shown
from noemad.cognition.notifications.table import Notification, list_notifications
from noemad.cognition.predictions import Prediction, get_prediction, list_predictions
from noemad.clock import iso
from noemad.ledger import UsageGroup, UsageRow, usage
from noemad.minds import Mind, get_mind, list_minds
from noemad.runtime.running_config import RunningConfig
from noemad.store import Store
from noemad.wire import wire


@wire
@dataclass(frozen=True)
class Usage:
    """Model spend grouped one way, of one mind or all, since a time or ever."""

    by: UsageGroup
    mind: str | None
    since: str | None
    rows: list[UsageRow]


class Reads:
    """The supervisor's read methods: the store, and each mind's running settings (a narrative is judged against them)."""

    def __init__(self, store: Store, running: RunningConfig) -> None:
        self.store = store
        self.running = running

    def minds(self) -> list[Mind]:
        return list_minds(self.store.reader())

    def mind(self, name: str) -> Mind:
        return get_mind(self.store.reader(), name)

    def beliefs(self, mind: str, subject: str | None, status: str | None, limit: int) -> list[Belief]:
        db = self.store.reader()
        get_mind(db, mind)
        return list_beliefs(db, mind, subject=subject, status=status, limit=limit)

    def belief(self, belief_id: int) -> tuple[Belief, list[int]]:
        """A belief and the ids of the events that changed it."""
        db = self.store.reader()
        return get_belief(db, belief_id), belief_events(db, belief_id)

    def memories(self, mind: str, search: str | None, kind: str | None, limit: int, status: str | None = None) -> list[Memory]:
        """A mind's memories, or those matching `search`, best first (no side effects); retracted ones are never matched."""
        db = self.store.reader()
        get_mind(db, mind)
        if search is not None:
            return memory_search(db, mind, search, limit, kind=kind)
        return list_memories(db, mind, kind=kind, status=status, limit=limit)

    def trust_levels(self, mind: str) -> tuple[float, list[TrustLevel]]:
        """The trust a source not named gets, and the levels the mind was told."""
        db = self.store.reader()
        get_mind(db, mind)
        return DEFAULT_TRUST, list_trust(db, mind)

    def memory(self, memory_id: int) -> Memory:
        return get_memory(self.store.reader(), memory_id)

    def goals(self, mind: str, status: str | None, limit: int) -> list[Goal]:
        db = self.store.reader()
        get_mind(db, mind)
        return list_goals(db, mind, status=status, limit=limit)

    def goal(self, goal_id: int) -> Goal:
        return get_goal(self.store.reader(), goal_id)

    def predictions(self, mind: str, status: str | None, limit: int) -> list[Prediction]:
        db = self.store.reader()
        get_mind(db, mind)
        return list_predictions(db, mind, status=status, limit=limit)

    def prediction(self, prediction_id: int) -> Prediction:
        return get_prediction(self.store.reader(), prediction_id)

    def notifications(self, mind: str, status: str | None, limit: int) -> list[Notification]:
        db = self.store.reader()
        get_mind(db, mind)
        return list_notifications(db, mind, status=status, limit=limit)

    def narrative(self, mind: str) -> NarrativeShown:
        """The mind's newest narrative as the API shows it, judged against its running settings."""
        db = self.store.reader()
        get_mind(db, mind)
        return narrative_shown(db, mind, self.running.settings_of(mind))

    def calibration(self, mind: str) -> Calibration:
        db = self.store.reader()
        get_mind(db, mind)
        return calibration(db, mind)

    def usage(self, mind: str | None, by: UsageGroup, since: float | None) -> Usage:
        """Model spend grouped `by` role, model, day or mind."""
        db = self.store.reader()
        if mind is not None:
            get_mind(db, mind)
        return Usage(by, mind, iso(since) if since is not None else None, usage(db, mind, by, since))

    def list_jobs(self, mind: str | None, kind: str | None, limit: int) -> list[Job]:
        return list_jobs(self.store.reader(), mind=mind, kind=kind, limit=limit)

    def job(self, job_id: int) -> Job:
        return get_job(self.store.reader(), job_id)
