"""What the gate answers: a `Decision` for each stimulus offered, a `Delivery` for each wake, and the words both use."""

from __future__ import annotations

from dataclasses import dataclass

from noemad.wake import Verdict

__all__ = ["Decision", "Delivery", "Verdict", "count", "label"]


@dataclass(frozen=True)
class Decision:
    """The gate's answer for one stimulus, with the sentence the timeline shows."""

    verdict: Verdict
    rule: str | None  # the rule that decided (None: the default, or sleep)
    reason: str
    due: float | None = None  # BATCH: when the batch wakes the mind unless pushed back


@dataclass(frozen=True)
class Delivery:
    """A wake to hand to the actor: the stimuli that asked for it, and why."""

    rule: str | None
    stimuli: tuple[int, ...]  # oldest first; the turn takes every untaken stimulus, these are its cause and parents
    addressed: tuple[int, ...]  # those said to the mind (a mention, a DM, a reply to it)
    reason: str
    self_wake: bool = False  # the mind's own timer: a turn with nothing new
    cause: int | None = None  # a self-wake's self_wake_set event
    judged: bool = False  # a judge's REPLY (or a failed call under on_error = "wake"): a turn even if another took its stimuli

    def joined(self, other: Delivery) -> Delivery:
        """This delivery with `other`'s stimuli too (its rule and reason kept): one turn wakes for both."""
        return Delivery(
            self.rule, tuple(sorted({*self.stimuli, *other.stimuli})), tuple(sorted({*self.addressed, *other.addressed})),
            self.reason, self.self_wake, self.cause, self.judged,
        )

    def without(self, gone: set[int]) -> Delivery:
        """This delivery with the stimuli in `gone` left out (a turn took them, or a cap dropped them)."""
        return Delivery(
            self.rule, tuple(s for s in self.stimuli if s not in gone), tuple(s for s in self.addressed if s not in gone),
            self.reason, self.self_wake, self.cause, self.judged,
        )


def label(rule: str | None) -> str:
    """The rule as a reason names it: "rule ambient", or the default's words."""
    return "the default (no rule matched)" if rule is None else f"rule {rule}"


def count(n: int) -> str:
    """ "1 stimulus", "3 stimuli"."""
    return f"{n} stimulus" if n == 1 else f"{n} stimuli"
