"""What the gate says of a stimulus and of a wake, as the layers below the gate read it.

The gate (`noemad.gate`) decides whether a stored stimulus wakes its mind: its
`Verdict` for each stimulus, and a `Wake` when a turn runs (why, which rule,
which stimuli asked for it). The cognitive cycle (`noemad.cognition.cycle`,
below the gate) records both on `cycle_started`, and the API answers them to a
caller waiting for a reply: so the words live here, under all three, and none
of them imports the gate's engine for them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

__all__ = ["GateVerdict", "HeldBack", "HeldVerdict", "Verdict", "Wake"]

GateVerdict = Literal["wake", "batch", "defer", "deny", "asleep"]
"""A verdict as the API and the timeline write it."""
HeldVerdict = Literal["batch", "defer", "deny", "asleep"]
"""The verdicts that hold a stimulus back: every one but wake."""


class Verdict(enum.Enum):
    """What the gate did with one stimulus."""

    WAKE = "wake"  # a turn now
    BATCH = "batch"  # a turn later, with the rest of the rule's batch
    DEFER = "defer"  # stored, in context, no turn
    DENY = "deny"  # a rate_limit or passive_sample said no: like defer
    ASLEEP = "asleep"  # the mind sleeps: stored, reached no rule

    @property
    def word(self) -> GateVerdict:
        """The verdict as the API and the timeline write it."""
        return _WORDS[self]

    @property
    def held(self) -> HeldVerdict | None:
        """The verdict as a stimulus held back carries it; None for WAKE (the stimulus woke the mind)."""
        return _HELD.get(self)


_HELD: dict[Verdict, HeldVerdict] = {
    Verdict.BATCH: "batch", Verdict.DEFER: "defer", Verdict.DENY: "deny", Verdict.ASLEEP: "asleep",
}
_WORDS: dict[Verdict, GateVerdict] = {Verdict.WAKE: "wake", **_HELD}


@dataclass(frozen=True)
class HeldBack:
    """A stimulus a cycle takes that did not wake the mind, and what the gate said of it."""

    stimulus: int
    verdict: HeldVerdict
    rule: str | None  # the rule that decided; None for the default behaviour or sleep


@dataclass(frozen=True)
class Wake:
    """Why a cycle runs, as the gate delivered it."""

    reason: str
    rule: str | None = None  # the wake rule that woke the mind; None: the default behaviour, a restart, a resume
    delivered: tuple[int, ...] | None = None  # the stimuli the gate delivered; None: every stimulus the cycle takes
    addressed: tuple[int, ...] = ()  # those of them that address the mind (a mention, a DM, a reply to it)
    cause: int | None = None  # what woke it when no stimulus did (a self-wake: its self_wake_set event)
    held_back: tuple[HeldBack, ...] = ()
