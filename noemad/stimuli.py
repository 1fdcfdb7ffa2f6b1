"""Stimuli: what reaches a mind from outside, and the events that store them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from noemad.events import EventDraft

STIMULUS_KINDS = ("message", "observation")


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
    """A sensed fact from a named source."""

    source: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind,
            kind="observation",
            actor=f"source:{self.source}",
            text=self.text,
            data={"source": self.source, **({"data": self.data} if self.data else {})},
        )


Stimulus = Message | Observation
