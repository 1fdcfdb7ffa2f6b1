"""Stimuli: what reaches a mind from outside, and the events that store them.

A stimulus is stored as an event the moment it arrives; the cognitive cycle
then takes it (perception writes its episode, and evidence for a belief when
it states a proposition). These are data, below cognition: what a stimulus
must satisfy against the mind's state before it is stored (the belief a
correction names exists, the goal a change names is open…) is checked by
`noemad.cognition.intake`, beside the state it reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from noemad.clock import iso
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


@dataclass(frozen=True)
class PredictionStimulus:
    """A prediction: a proposition expected true by `due_at` (epoch seconds), at a stated confidence."""

    proposition: str
    subject: str
    confidence: float
    due_at: float

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind,
            kind="prediction",
            actor="operator",
            text=self.proposition,
            data={"proposition": self.proposition, "subject": self.subject, "confidence": self.confidence, "due_at": iso(self.due_at)},
        )


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


Stimulus = Message | Observation | Assertion | Correction | GoalStimulus | PredictionStimulus | OutcomeStimulus
