"""What a narrative holds: its five parts and the refs it cites, and the limits on them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from noemad.events import Ref

if TYPE_CHECKING:
    pass


PARTS: tuple[str, ...] = ("doing", "why", "recently", "resolving", "next")
MAX_ITEMS = 3  # items per part
MAX_ITEM = 600  # characters per item: a safety bound; quoting every text within MAX_QUOTE keeps items well under it
MAX_QUOTE = 60  # characters of a quoted text inside an item, cut at a word boundary
WINDOW = 100  # "recently" looks at the mind's newest WINDOW events
MAX_REFS = 64  # what an event may cite
ACTOR = "process:narrative"
MODEL_ACTOR = "model:narrate"
UPDATED = "narrative_updated"
REPHRASED = "narrative_rephrased"
SETTING = "narrative_llm"  # the mind setting that asks for a rephrasing
NOTABLE = ("reply", "belief_created", "belief_updated", "metacognition", "goal_completed", "goal_abandoned",
           "prediction_resolved", "notification")
ELLIPSIS = "…"


@dataclass
class Narrative:
    """The five parts (short strings each) and what they cite."""

    doing: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    recently: list[str] = field(default_factory=list)
    resolving: list[str] = field(default_factory=list)
    next: list[str] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)

    def parts(self) -> dict[str, list[str]]:
        """The structure compared between narratives and stored with them (refs are not part of it)."""
        return {name: list(getattr(self, name)) for name in PARTS}

    def empty(self) -> bool:
        return not any(getattr(self, name) for name in PARTS)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Narrative:
        """The structure stored in a `narrative_updated` event's data."""
        narrative = cls()
        for name in PARTS:  # by name, as parts() reads them
            setattr(narrative, name, [str(item) for item in data.get(name) or []])
        return narrative
