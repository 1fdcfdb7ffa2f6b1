"""`always`: every matching stimulus wakes the mind now; nothing is held between stimuli."""

from __future__ import annotations

from noemad.gate.behaviours.base import Answer, Immediate, Offered
from noemad.wake import Verdict


class AlwaysState(Immediate):
    """An `always` rule's state: none."""

    def offer(self, stimulus: Offered) -> Answer:
        return Answer(Verdict.WAKE, f"{stimulus.label}: always wakes the mind")
