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

STIMULUS_KINDS = ("message", "observation", "assertion", "correction")
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


Stimulus = Message | Observation | Assertion | Correction
