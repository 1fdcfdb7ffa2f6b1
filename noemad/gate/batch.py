"""A batch: stimuli a debounce or judge rule gathers until its quiet period ends.

Each stimulus pushes the batch's time back by the quiet period; a judge
rule's `max_wait_ms` caps how far. When it is due a debounce batch wakes
the mind; a judge rule's goes to its judge (`noemad.gate.judge`), or, with
judging unwired, wakes the mind as a debounce would. A turn that takes
every stimulus of a debounce batch absorbs it; a judge batch is not
absorbed: it is judged after that turn, against what the turn left.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noemad.gate.delivery import Delivery, count, label
from noemad.gate.judge.slot import JudgedBatch
from noemad.gate.status import UpcomingWake
from noemad.rules.shape import JudgeBehaviour

__all__ = ["Batch", "JudgeBatch"]


@dataclass
class Batch:
    """A debounce batch: stimuli gathered by one rule until `due`."""

    rule: str | None  # None: the default's batch
    quiet_ms: int
    stimuli: list[int] = field(default_factory=list)
    addressed: list[int] = field(default_factory=list)
    due: float = 0.0
    orphan: bool = False  # its rule was removed or changed since: it wakes the mind at `due` all the same
    started: float = 0.0  # its first stimulus (max_wait_ms counts from here)

    def add(self, event_id: int, addressed: bool, now: float) -> None:
        """Gather a stimulus: the batch is due a quiet period after it."""
        self.stimuli.append(event_id)
        if addressed:
            self.addressed.append(event_id)
        self.due = now + self.quiet_ms / 1000

    def take(self, gone: set[int]) -> bool:
        """A turn took `gone`: they leave the batch. True if that absorbed it (nothing left to wake for)."""
        self.stimuli = [s for s in self.stimuli if s not in gone]
        self.addressed = [s for s in self.addressed if s not in gone]
        return not self.stimuli

    def delivery(self, unwired: str | None = None) -> Delivery:
        """The wake it makes when due (`unwired`: why a judge batch runs as a debounce)."""
        return self._delivery(f"debounce {self.quiet_ms} ms")

    def _delivery(self, how: str) -> Delivery:
        gone = " (gathered before the rule changed)" if self.orphan else ""
        reason = f"{label(self.rule)}: {how}, a batch of {count(len(self.stimuli))} after {self.quiet_ms} ms quiet{gone}"
        return Delivery(self.rule, tuple(self.stimuli), tuple(self.addressed), reason)

    def judged(self, wired: bool) -> JudgedBatch | None:
        """What goes to the rule's judge when it is due (None: it wakes the mind itself)."""
        return None

    def upcoming(self, wired: bool, at: float) -> UpcomingWake:
        """The wake it will make at `at`, as the upcoming wakes list it."""
        what = f"a debounce batch of {count(len(self.stimuli))}"
        if self.orphan:
            what += " (its rule has changed since)"
        elif self.rule is None:
            what += " (the default, for stimuli no rule matched)"
        return UpcomingWake(at, what, self.rule)


@dataclass
class JudgeBatch(Batch):
    """A judge rule's batch: gathered as debounce does, then judged (REPLY wakes the mind, WAIT does not)."""

    behaviour: JudgeBehaviour = field(kw_only=True)

    def add(self, event_id: int, addressed: bool, now: float) -> None:
        super().add(event_id, addressed, now)
        if self.behaviour.max_wait_ms is not None:
            self.due = min(self.due, self.started + self.behaviour.max_wait_ms / 1000)

    def take(self, gone: set[int]) -> bool:
        return False  # judged after the turn, against what it left

    def delivery(self, unwired: str | None = None) -> Delivery:
        if unwired is None:
            return super().delivery()
        return self._delivery(f"judge, run as a debounce of {self.quiet_ms} ms ({unwired})")

    def judged(self, wired: bool) -> JudgedBatch | None:
        if not wired or self.rule is None:
            return None
        return JudgedBatch(self.rule, self.behaviour, list(self.stimuli), list(self.addressed))

    def upcoming(self, wired: bool, at: float) -> UpcomingWake:
        if not wired:
            return super().upcoming(wired, at)
        return UpcomingWake(at, f"a batch of {count(len(self.stimuli))} its judge will be asked about", self.rule, maybe=True)
