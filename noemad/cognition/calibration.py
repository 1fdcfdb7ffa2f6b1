"""Calibration: a mind's stated confidence against what came true.

Over a mind's resolved predictions (hits and misses; open ones are counted
but not scored):

* bins of stated confidence, tenths: [0, 0.1), [0.1, 0.2), ... [0.9, 1.0]
  (the last one closed); each with its count, hits, mean stated confidence
  and hit rate (null when empty). A calibrated mind's hit rate in each bin
  is near the bin's mean stated confidence.
* the Brier score: the mean of (stated − outcome)², outcome 1 for a hit and
  0 for a miss; 0 is perfect, 0.25 is what always stating 0.5 earns.
* `gap`: mean stated confidence minus hit rate, over all resolved.
* `overconfident`: at least 5 resolved predictions (OVERCONFIDENT_MIN) and a
  gap of 0.15 or more (OVERCONFIDENT_GAP): stated confidence running ahead
  of outcomes. Metacognition's `overconfidence` check reads this.

Values are rounded to 6 decimals, as belief confidences are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlite_utils import Database

from noemad.cognition.predictions import resolved_record, track_record
from noemad.wire import computed, wire

BINS = 10
OVERCONFIDENT_MIN = 5  # resolved predictions before the flag may be raised
OVERCONFIDENT_GAP = 0.15  # mean stated confidence minus hit rate that raises it
RULE = (
    f"overconfident when at least {OVERCONFIDENT_MIN} predictions are resolved and the mean stated confidence"
    f" exceeds the hit rate by {OVERCONFIDENT_GAP} or more"
)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


@wire
@dataclass(frozen=True)
class Bin:
    """Resolved predictions whose stated confidence fell in [low, high) (the last bin includes 1)."""

    low: float
    high: float
    count: int = 0
    hits: int = 0
    mean_stated: float | None = None
    hit_rate: float | None = None


@wire
@dataclass(frozen=True)
class Calibration:
    """A mind's stated confidence against its outcomes."""

    mind: str
    resolved: int
    hits: int
    open: int
    mean_stated: float | None
    hit_rate: float | None
    gap: float | None
    """Mean stated confidence minus hit rate."""
    brier: float | None
    """Mean of (stated - outcome)^2 over resolved predictions; 0 is perfect."""
    overconfident: bool
    bins: tuple[Bin, ...] = field(default=())

    @computed
    @property
    def misses(self) -> int:
        return self.resolved - self.hits

    @computed
    @property
    def rule(self) -> str:
        """When `overconfident` is true."""
        return RULE


def bin_index(stated: float) -> int:
    """Which tenth `stated` falls in (1.0 in the last); rounding first keeps 0.3 out of [0.2, 0.3)."""
    return min(max(math.floor(round(stated * BINS, 9)), 0), BINS - 1)


def calibrate(mind: str, resolved: Iterable[tuple[float, bool]], open_count: int = 0) -> Calibration:
    """Calibration from (stated confidence, hit) pairs."""
    pairs = [(float(p), bool(hit)) for p, hit in resolved]
    groups: list[list[tuple[float, bool]]] = [[] for _ in range(BINS)]
    for p, hit in pairs:
        groups[bin_index(p)].append((p, hit))
    bins = []
    for k, group in enumerate(groups):
        low, high = round(k / BINS, 1), round((k + 1) / BINS, 1)
        if not group:
            bins.append(Bin(low, high))
            continue
        hits = sum(1 for _, hit in group if hit)
        bins.append(
            Bin(low, high, len(group), hits, _round(sum(p for p, _ in group) / len(group)), _round(hits / len(group)))
        )
    n = len(pairs)
    hits = sum(1 for _, hit in pairs if hit)
    if n == 0:
        return Calibration(mind, 0, 0, open_count, None, None, None, None, False, tuple(bins))
    mean_stated = sum(p for p, _ in pairs) / n
    hit_rate = hits / n
    gap = mean_stated - hit_rate
    brier = sum((p - (1.0 if hit else 0.0)) ** 2 for p, hit in pairs) / n
    overconfident = n >= OVERCONFIDENT_MIN and round(gap, 9) >= OVERCONFIDENT_GAP
    return Calibration(
        mind, n, hits, open_count, _round(mean_stated), _round(hit_rate), _round(gap), _round(brier), overconfident, tuple(bins)
    )


def calibration(db: Database, mind: str) -> Calibration:
    """A mind's calibration over its resolved predictions."""
    pairs, open_count = track_record(db, mind)
    return calibrate(mind, pairs, open_count)


def overconfident(db: Database, mind: str) -> Calibration | None:
    """The mind's calibration if it is `overconfident`, else None; cheap when it has too few outcomes to be (metacognition asks every cycle)."""
    pairs = resolved_record(db, mind)
    if len(pairs) < OVERCONFIDENT_MIN:
        return None
    cal = calibrate(mind, pairs)  # the open count does not bear on the flag or the Brier score
    return cal if cal.overconfident else None
