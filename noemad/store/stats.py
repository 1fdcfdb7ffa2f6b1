"""Counters kept in memory for `GET /api/v1/metrics`: a latency histogram.

Cumulative buckets as Prometheus reads them. Updated by one thread (the
writer's, or the loop's) and read by the loop: a read may see a sample half
counted (the count before the sum), never a wrong bucket layout.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

# Seconds: from a fast commit (a millisecond) to a slow turn with a model call (a minute).
LATENCY_BUCKETS: tuple[float, ...] = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass
class Histogram:
    """Observations counted into fixed upper bounds (seconds), with their sum and count."""

    bounds: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=list)  # per bound, not cumulative; the last slot is +Inf
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound, observations at or under it), ending with +Inf: the `_bucket` samples."""
        out, running = [], 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += n
            out.append((bound, running))
        return out
