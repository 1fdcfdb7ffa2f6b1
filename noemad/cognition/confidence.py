"""How sure a mind is of a belief, computed from its evidence alone.

Each evidence item has a stance (support or contradict), a weight (how much
the item says, 0..1) and a credibility (how far the mind trusts where it came
from, 0..1); its strength is weight x credibility.

Within one source, items are combined as independent chances with a discount
for repetition: sorted strongest first, the k-th item counts
strength x 0.5^(k-1) (SAME_SOURCE_DISCOUNT). Across sources, the per-source
strengths combine as independent chances:

    S = 1 - prod over sources (1 - S_source)     (support; C likewise for contradiction)
    S_source = 1 - prod over k (1 - strength_k x 0.5^(k-1))

    confidence = S x (1 - C)

Properties (each tested with hypothesis): deterministic and independent of
the order of the items; within [0, 1]; more support never lowers it and more
contradiction never raises it (inserting an item makes every rank's strength
at least as large, and adds a factor); n items from one source count for less
than n items from n sources; one credible item carries a belief as far as its
strength (weight 1 at credibility 0.8 gives 0.8); a metacognition
counter-item of weight 0.25 takes a quarter off; consolidation's episodes
count 0.3 each, so ten episodes from one user give about 0.49 and from ten
users about 0.97.

A belief is contested when both sides are strong: S >= 0.5 and C >= 0.5.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

SAME_SOURCE_DISCOUNT = 0.5
CONTESTED = 0.5

Stance = Literal["support", "contradict"]


@dataclass(frozen=True)
class Item:
    """One piece of evidence as the formula sees it."""

    stance: Stance
    weight: float
    credibility: float
    source: str

    @property
    def strength(self) -> float:
        return min(1.0, max(0.0, self.weight)) * min(1.0, max(0.0, self.credibility))


def side(items: Iterable[Item]) -> float:
    """The combined strength of items on one side (all support, or all contradiction)."""
    by_source: dict[str, list[float]] = {}
    for item in items:
        by_source.setdefault(item.source, []).append(item.strength)
    doubt = 1.0
    for source in sorted(by_source):
        kept = 1.0
        for rank, strength in enumerate(sorted(by_source[source], reverse=True)):
            kept *= 1.0 - strength * SAME_SOURCE_DISCOUNT**rank
        doubt *= kept  # this source's chance of saying nothing, times the others'
    return 1.0 - doubt


def sides(items: Iterable[Item]) -> tuple[float, float]:
    """Support and contradiction strengths (S, C)."""
    items = list(items)
    return side(i for i in items if i.stance == "support"), side(i for i in items if i.stance == "contradict")


def confidence(items: Iterable[Item]) -> float:
    """The belief's confidence from all its evidence."""
    return assessed(items)[0]


def contested(items: Iterable[Item]) -> bool:
    """Strong evidence on both sides."""
    return assessed(items)[1]


def assessed(items: Iterable[Item]) -> tuple[float, bool]:
    """`confidence` and `contested` at once, the sides computed once."""
    support, contradiction = sides(items)
    return round(support * (1.0 - contradiction), 6), support >= CONTESTED and contradiction >= CONTESTED
