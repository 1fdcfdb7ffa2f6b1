"""What one mind's actor counts in memory for the metrics: gate decisions, wakes, turns and their latency.

Counted since the daemon started (Prometheus counters reset with the
process, and a scraper handles that); nothing here is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noemad.store.stats import Histogram
from noemad.wake import GateVerdict


@dataclass
class MindStats:
    """One mind's counters since its actor started."""

    decisions: dict[GateVerdict, int] = field(default_factory=dict)
    """The gate's verdicts on stored stimuli: wake, batch, defer, deny, asleep."""
    wakes: int = 0
    """Deliveries that started a turn."""
    turns: dict[str, int] = field(default_factory=dict)
    """Turns by outcome: ok, failed."""
    turn_seconds: Histogram = field(default_factory=Histogram)
    """Wall time of each turn, the model calls in it included."""

    def decided(self, verdict: GateVerdict) -> None:
        self.decisions[verdict] = self.decisions.get(verdict, 0) + 1

    def turned(self, outcome: str, seconds: float) -> None:
        self.turns[outcome] = self.turns.get(outcome, 0) + 1
        self.turn_seconds.observe(seconds)
