"""A judge rule's batches from the moment they fire to a verdict, and what its gate-status counts.

A judge rule gathers a batch as debounce does (`noemad.gate.behaviours.judge`). When
the batch is due it comes here, to the rule's `JudgeSlot` (kept by rule
name, so an edit or a removal does not lose what waits), and waits to be
judged. The slot is pure state; the actor decides when a call may start
(no turn running, not paused, not asleep, no delivery about to run) and
makes it through the `noemad.gate.judge.port.Judge` seam. Its rules:

- `held`: batches waiting for a judge call, merged into one (at most
  JUDGE_CAP stimuli, oldest dropped and counted); a batch that fires during
  a turn or a pause waits here, as does one whose call a turn stopped, or a
  refused call's (R1-1: held until `refused_until`, never dropped).
- `judging`: the one call in flight per rule, known by a token, so a
  verdict that arrives after its call was stopped is told apart.
- `queued`: batches that fire while the rule's judge decides; they go with
  a REPLY and are judged afresh after a WAIT (at most JUDGE_CAP, the newest
  kept: they are the likeliest to hold the question that should wake it).
- `replied`, `in_turn`, `unanswered` (R1-2): a REPLY's stimuli until the
  turn it woke completes; if that turn fails they stay on the rule and are
  folded into the next judged batch, marked unanswered, until a turn
  completes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from noemad.rules.shape import JudgeBehaviour

JUDGE_CAP = 100  # stimuli held for a rule's judge, and in a queue beside a batch being judged
REJUDGES = 2  # times a REPLY superseded by a turn is judged again before it is delivered as it stands
FAIL_STREAK = 3  # failed calls in a row that gate-status names

Outcome = Literal["reply", "wait", "failed", "refused"]


@dataclass
class JudgedBatch:
    """Stimuli one judge rule holds for its judge, with the rule as it was when they were gathered (R1-5)."""

    rule: str
    behaviour: JudgeBehaviour
    stimuli: list[int] = field(default_factory=list)
    addressed: list[int] = field(default_factory=list)
    superseded: int = 0  # REPLYs a turn overtook: past REJUDGES it is delivered without another call

    def merge(self, other: JudgedBatch) -> None:
        """Take `other`'s stimuli in (the newest behaviour wins; the counts of the oldest are kept)."""
        self.stimuli = sorted(set(self.stimuli) | set(other.stimuli))
        self.addressed = sorted(set(self.addressed) | set(other.addressed))
        self.behaviour = other.behaviour
        self.superseded = max(self.superseded, other.superseded)

    def cap(self, keep: Literal["newest", "oldest"] = "newest") -> int:
        """Cut to JUDGE_CAP stimuli, keeping the newest (or the oldest); how many were dropped."""
        over = len(self.stimuli) - JUDGE_CAP
        if over <= 0:
            return 0
        kept = self.stimuli[over:] if keep == "newest" else self.stimuli[:JUDGE_CAP]
        self.stimuli = kept
        self.addressed = [s for s in self.addressed if s in set(kept)]
        return over


@dataclass(frozen=True)
class JudgeStart:
    """A judge call to make now: the rule, the instructions to give (the rule's as it is, while it is a judge rule), the batch."""

    rule: str
    token: int
    instructions: str | None
    batch: tuple[int, ...]
    addressed: tuple[int, ...]
    unanswered: tuple[int, ...]
    last_turn_failed: bool


@dataclass(frozen=True)
class VerdictRecord:
    """One verdict as the timeline records it (`judge_verdict`) and gate-status shows the newest."""

    rule: str
    verdict: Outcome
    woke: bool
    reason: str  # gate-status and the model call keep it; the event does not
    stimuli: tuple[int, ...]
    at: float
    superseded: bool = False  # a REPLY a turn overtook: not a wake
    call_id: int | None = None
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0
    refused_until: float | None = None


@dataclass
class JudgeSlot:
    """One judge rule's held, in-flight and queued batches, its unanswered stimuli, and its counts."""

    rule: str
    held: JudgedBatch | None = None
    judging: JudgedBatch | None = None
    token: int = 0  # of the call in flight (0: none)
    queued: JudgedBatch | None = None
    replied: tuple[int, ...] = ()  # a REPLY's stimuli, until the turn it wakes starts
    in_turn: tuple[int, ...] = ()  # ... and while that turn runs
    unanswered: tuple[int, ...] = ()  # R1-2: its turn failed; until a turn completes
    refused_until: float | None = None
    refusal: str | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"reply": 0, "wait": 0, "failed": 0, "refused": 0, "superseded": 0})
    fail_streak: int = 0
    last: VerdictRecord | None = None
    held_dropped: int = 0  # oldest stimuli dropped from what was held past JUDGE_CAP
    queue_dropped: int = 0  # oldest stimuli dropped from a queue beside a batch being judged
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0

    @property
    def empty(self) -> bool:
        """Nothing waits here: a removed rule's slot may go."""
        return not (self.held or self.judging or self.queued or self.replied or self.in_turn or self.unanswered)

    def fire(self, batch: JudgedBatch) -> None:
        """A batch came due: it queues beside a call in flight, else waits to be judged."""
        if self.judging is not None:
            self.queued = self._joined(self.queued, batch)
            self.queue_dropped += self.queued.cap("newest")
        else:
            self.hold(batch)

    def hold(self, batch: JudgedBatch) -> None:
        self.held = self._joined(self.held, batch)
        self.held_dropped += self.held.cap("newest")

    @staticmethod
    def _joined(into: JudgedBatch | None, batch: JudgedBatch) -> JudgedBatch:
        if into is None:
            return JudgedBatch(batch.rule, batch.behaviour, list(batch.stimuli), list(batch.addressed), batch.superseded)
        into.merge(batch)
        return into

    def ready(self, now: float) -> bool:
        """A call may start (the actor has checked the mind is free)."""
        if self.held is None or self.judging is not None:
            return False
        return self.refused_until is None or self.refused_until <= now

    def start(self, token: int, instructions: str | None, last_turn_failed: bool) -> JudgeStart:
        """The held batch goes to the judge, with the unanswered stimuli folded in (R1-2)."""
        batch, self.held = self.held, None
        assert batch is not None
        self.judging, self.token = batch, token
        self.refused_until = self.refusal = None
        stimuli = tuple(sorted(set(batch.stimuli) | set(self.unanswered)))
        return JudgeStart(
            self.rule, token, instructions, stimuli, tuple(batch.addressed), self.unanswered, last_turn_failed
        )

    def stop(self) -> bool:
        """The call in flight was stopped (a turn started, a pause): no verdict; its batch and its queue are held again."""
        if self.judging is None:
            return False
        batch, self.judging, self.token = self.judging, None, 0
        self.hold(batch)
        if self.queued is not None:
            queued, self.queued = self.queued, None
            self.hold(queued)
        return True

    def taken_by_turn(self) -> None:
        """A turn started: a REPLY it carries is now in its hands."""
        if self.replied:
            self.in_turn = tuple(sorted(set(self.in_turn) | set(self.replied)))
            self.replied = ()

    def turn_ended(self, completed: bool) -> None:
        """The mind's turn ended; a completed one saw everything, a failed one leaves what it carried unanswered (R1-2)."""
        if completed:
            self.in_turn = self.unanswered = ()
            return
        if self.in_turn:
            self.unanswered = tuple(sorted(set(self.unanswered) | set(self.in_turn)))[-JUDGE_CAP:]
            self.in_turn = ()

    def count(self, record: VerdictRecord) -> None:
        if record.superseded:
            self.counts["superseded"] += 1
        else:
            self.counts[record.verdict] += 1
        if record.verdict == "failed":
            self.fail_streak += 1
        elif record.verdict in ("reply", "wait"):
            self.fail_streak = 0
        self.last = record
        self.input_tokens += record.input_tokens
        self.cache_read += record.cache_read
        self.cache_write += record.cache_write
        self.output_tokens += record.output_tokens
