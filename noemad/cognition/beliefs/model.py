"""What a belief and an item of its evidence are, and how a proposition and a subject are keyed."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from noemad.cognition.confidence import Item
from noemad.errors import InvalidInput, NotFound
from noemad.wire import OMIT_NONE, computed, wire

Kind = Literal["observation", "assertion", "inference", "hypothesis", "model_output", "note"]
KINDS: tuple[str, ...] = ("observation", "assertion", "inference", "hypothesis", "model_output", "note")
FLUENT_KINDS: tuple[str, ...] = ("model_output", "note")  # what a mind said or noted itself: no event of the world behind it
Status = Literal["active", "contested", "rejected", "pinned"]
OPERATOR_STATUSES = ("active", "rejected", "pinned")
COUNTER_SOURCE = "metacognition"  # the source of metacognition's counter-evidence, the one kind of item ever withdrawn
MAX_PROPOSITION = 1000

_ARTICLES = re.compile(r"^(the|a|an)\s+")
_NOT_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


class BeliefNotFound(NotFound):
    """No belief has that id."""

    title = "Belief not found"


def normalise(text: str) -> str:
    """The key two texts share when they say the same: casefolded, unaccented spacing and punctuation folded."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _NOT_WORD.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    return _ARTICLES.sub("", text)


def check_proposition(proposition: str, subject: str) -> tuple[str, str]:
    """Cleaned proposition and normalised subject, or `InvalidInput` with a sentence."""
    proposition = " ".join(proposition.split())
    if not proposition:
        raise InvalidInput("a proposition needs some words; say what is believed")
    if len(proposition) > MAX_PROPOSITION:
        raise InvalidInput(f"a proposition is at most {MAX_PROPOSITION} characters, not {len(proposition)}")
    key = normalise(subject)
    if not key:
        raise InvalidInput("a subject needs some words; name what the proposition is about")
    return proposition, key


@wire
@dataclass(frozen=True)
class Evidence:
    """One item behind a belief, and the event that brought it."""

    id: int
    stance: Literal["support", "contradict"]
    weight: float
    credibility: float
    source: str
    kind: str
    event_id: int
    at: str
    withdrawn_by: Annotated[int | None, OMIT_NONE] = None
    """The event that withdrew it, if it was: it is kept but no longer counts (metacognition's counter-evidence once its warning lifted)."""

    @property
    def standing(self) -> bool:
        """Whether it counts: not withdrawn."""
        return self.withdrawn_by is None

    def item(self) -> Item:
        return Item(self.stance, self.weight, self.credibility, self.source)


def standing_items(evidence: Iterable[Evidence]) -> list[Item]:
    """The items the confidence is computed from: every item not withdrawn."""
    return [e.item() for e in evidence if e.standing]


@wire
@dataclass(frozen=True)
class Belief:
    """A belief with its evidence."""

    id: int
    mind: str
    proposition: str
    subject: str
    kind: str
    confidence: float
    status: Status
    created_at: str
    updated_at: str | None
    evidence: tuple[Evidence, ...] = field(default=())

    @computed
    @property
    def support(self) -> int:
        """How many evidence items support it (withdrawn items are not counted)."""
        return sum(1 for e in self.evidence if e.stance == "support" and e.standing)

    @computed
    @property
    def contradict(self) -> int:
        """How many evidence items contradict it (withdrawn items are not counted)."""
        return sum(1 for e in self.evidence if e.stance == "contradict" and e.standing)
