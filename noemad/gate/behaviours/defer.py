"""`defer`: a matching stimulus is stored, in the mind's context for its next turn, and wakes nothing."""

from __future__ import annotations

from noemad.gate.behaviours.base import Answer, Immediate, Offered
from noemad.wake import Verdict


class DeferState(Immediate):
    """A `defer` rule's state: none."""

    def offer(self, stimulus: Offered) -> Answer:
        return Answer(Verdict.DEFER, f"{stimulus.label}: defer, stored for the next turn without waking the mind")
