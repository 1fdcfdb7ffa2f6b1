"""Stimuli: what reaches a mind from outside, and the events that store them.

A stimulus is stored as an event the moment it arrives; the cognitive cycle
then takes it (perception writes its episode, and evidence for a belief when
it states a proposition).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.errors import InvalidInput
from noemad.events import EventDraft

STIMULUS_KINDS = ("message", "observation", "assertion", "correction", "goal", "prediction", "outcome")
Stance = Literal["supports", "contradicts"]


@dataclass(frozen=True)
class Claim:
    """A proposition about a subject that a stimulus supports or contradicts."""

    proposition: str
    subject: str
    stance: Stance = "supports"

    def to_data(self) -> dict[str, str]:
        return {"proposition": self.proposition, "subject": self.subject, "stance": self.stance}


@dataclass(frozen=True)
class Message:
    """Someone says something to the mind on a channel."""

    author: str
    text: str
    channel: str = "cli"
    mentions: tuple[str, ...] = ()

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind,
            kind="message",
            actor=f"user:{self.author}",
            channel=self.channel,
            text=self.text,
            data={"author": self.author, "mentions": list(self.mentions)},
        )

    def check(self, db: Database, mind: str) -> None:
        """Nothing beyond the schema to check."""


@dataclass(frozen=True)
class Observation:
    """A sensed fact from a named source; it may state a proposition it supports or contradicts."""

    source: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    claim: Claim | None = None

    def draft(self, mind: str) -> EventDraft:
        extra: dict[str, Any] = {"source": self.source}
        if self.data:
            extra["data"] = self.data
        if self.claim:
            extra["claim"] = self.claim.to_data()
        return EventDraft(mind=mind, kind="observation", actor=f"source:{self.source}", text=self.text, data=extra)

    def check(self, db: Database, mind: str) -> None:
        """Nothing beyond the schema to check."""


@dataclass(frozen=True)
class Assertion:
    """Someone states a proposition; how much it counts depends on how far the mind trusts them."""

    source: str
    claim: Claim
    channel: str = "cli"

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind,
            kind="assertion",
            actor=f"user:{self.source}",
            channel=self.channel,
            text=self.claim.proposition,
            data={"source": self.source, "claim": self.claim.to_data()},
        )

    def check(self, db: Database, mind: str) -> None:
        """Nothing beyond the schema to check."""


@dataclass(frozen=True)
class Correction:
    """An operator corrects a belief: a status, a confidence, or both, and why."""

    belief: int
    reason: str
    status: Literal["active", "pinned", "rejected"] | None = None
    confidence: float | None = None

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind,
            kind="correction",
            actor="operator",
            text=self.reason,
            data={"belief": self.belief, "status": self.status, "confidence": self.confidence},
        )

    def check(self, db: Database, mind: str) -> None:
        """The belief must exist and be the mind's, checked before the correction is stored."""
        from noemad.cognition.beliefs import get_belief

        if self.status is None and self.confidence is None:
            raise InvalidInput("a correction sets a status (active, pinned, rejected) or a confidence, or both")
        belief = get_belief(db, self.belief)
        if belief.mind != mind:
            raise InvalidInput(f"belief {self.belief} belongs to mind {belief.mind!r}, not {mind!r}")


@dataclass(frozen=True)
class GoalStimulus:
    """An operator sets a goal (`title`), or changes one (`goal`: progress, completed or abandoned)."""

    title: str | None = None
    goal: int | None = None
    progress: float | None = None
    status: Literal["completed", "abandoned"] | None = None
    note: str | None = None

    def draft(self, mind: str) -> EventDraft:
        data: dict[str, Any] = {
            k: v for k, v in (("goal", self.goal), ("title", self.title), ("progress", self.progress), ("status", self.status)) if v is not None
        }
        if self.note:
            data["note"] = self.note
        # Drafted before `check` runs: nothing here may assume a valid combination.
        if self.goal is None:
            text = self.title
        else:
            change = self.status or ("" if self.progress is None else f"progress {self.progress:g}")
            text = self.note or f"goal {self.goal}: {change}"
        return EventDraft(mind=mind, kind="goal", actor="operator", text=text, data=data)

    def check(self, db: Database, mind: str) -> None:
        """A new goal needs a title; a change names an active goal of this mind and says how it changes."""
        from noemad.cognition.goals import GoalClosed, check_progress, check_title, closing_stimulus, get_goal

        if self.progress is not None:
            check_progress(self.progress)
        if self.goal is None:
            if self.title is None:
                raise InvalidInput("a goal stimulus sets a new goal (title) or changes one (goal, with progress or status)")
            check_title(self.title)
            if self.status is not None:
                raise InvalidInput("a new goal is active; status completes or abandons an existing one (give its id as goal)")
            if self.progress is not None and self.progress >= 1.0:
                raise InvalidInput("a new goal cannot start complete; give a progress below 1")
            return
        if self.title is not None:
            raise InvalidInput(f"title names a new goal; to change goal {self.goal}, give only progress or status")
        if self.progress is None and self.status is None:
            raise InvalidInput(f"say how goal {self.goal} changes: a progress, or status completed or abandoned")
        goal = get_goal(db, self.goal)
        if goal.mind != mind:
            raise InvalidInput(f"goal {self.goal} belongs to mind {goal.mind!r}, not {mind!r}")
        if goal.status != "active":
            raise GoalClosed(f"goal {self.goal} is {goal.status}; a closed goal takes no more changes (set a new one)")
        closing = closing_stimulus(db, mind, self.goal)
        if closing is not None:
            raise GoalClosed(f"goal {self.goal} is being closed by event {closing}; a closed goal takes no more changes")


@dataclass(frozen=True)
class PredictionStimulus:
    """A prediction: a proposition expected true by `due_at` (epoch seconds), at a stated confidence."""

    proposition: str
    subject: str
    confidence: float
    due_at: float

    def draft(self, mind: str) -> EventDraft:
        from noemad.clock import iso

        return EventDraft(
            mind=mind,
            kind="prediction",
            actor="operator",
            text=self.proposition,
            data={"proposition": self.proposition, "subject": self.subject, "confidence": self.confidence, "due_at": iso(self.due_at)},
        )

    def check(self, db: Database, mind: str) -> None:
        """A proposition with a subject, and a confidence from 0 to 1 (the due time was checked against the clock when parsed)."""
        from noemad.cognition.beliefs import check_proposition
        from noemad.cognition.predictions import check_confidence

        check_proposition(self.proposition, self.subject)
        check_confidence(self.confidence)


@dataclass(frozen=True)
class OutcomeStimulus:
    """What came of a prediction: a hit or a miss, with the observed value as text if given."""

    prediction: int
    result: Literal["hit", "miss"]
    observed: str | None = None

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind,
            kind="outcome",
            actor="operator",
            text=self.observed or self.result,
            data={"prediction": self.prediction, "result": self.result, "observed": self.observed},
        )

    def check(self, db: Database, mind: str) -> None:
        """The prediction must be this mind's and open, with no outcome stored for it yet."""
        from noemad.cognition.predictions import RESULTS, check_resolvable

        if self.result not in RESULTS:
            raise InvalidInput(f"an outcome is a hit or a miss, not {self.result!r}")
        check_resolvable(db, mind, self.prediction)


Stimulus = Message | Observation | Assertion | Correction | GoalStimulus | PredictionStimulus | OutcomeStimulus
