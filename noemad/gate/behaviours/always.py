"""`always`: every matching stimulus wakes the mind now; nothing is held between stimuli."""

from __future__ import annotations

from typing import ClassVar

from noemad.gate.batch import Batch
from noemad.gate.behaviours.base import Answer, Offered, StateView
from noemad.rules.shape import JudgeBehaviour
from noemad.wake import Verdict


class AlwaysState:
    """An `always` rule's state: none."""

    gathers: ClassVar[bool] = False
    batch: ClassVar[Batch | None] = None
    judge: ClassVar[JudgeBehaviour | None] = None

    def offer(self, stimulus: Offered) -> Answer:
        return Answer(Verdict.WAKE, f"{stimulus.label}: always wakes the mind")

    def due(self, now: float) -> Batch | None:
        return None

    def reset(self) -> Batch | None:
        return None

    def status(self, now: float) -> StateView:
        return StateView()
