"""`debounce`: gather a batch that wakes the mind once, `ms` after its newest stimulus (each one pushes the time back)."""

from __future__ import annotations

from typing import ClassVar

from noemad.clock import iso
from noemad.gate.batch import Batch
from noemad.gate.behaviours.base import Answer, Gathering, Offered
from noemad.gate.delivery import count
from noemad.rules.shape import Debounce, JudgeBehaviour
from noemad.wake import Verdict


class DebounceState(Gathering):
    """A debounce rule's pending batch."""

    judge: ClassVar[JudgeBehaviour | None] = None

    def __init__(self, behaviour: Debounce) -> None:
        super().__init__()
        self.behaviour = behaviour

    def offer(self, stimulus: Offered) -> Answer:
        if self.batch is None:
            self.batch = Batch(stimulus.rule, self.behaviour.ms, started=stimulus.now)
        batch = self.batch
        batch.add(stimulus.event_id, stimulus.facts.addressed, stimulus.now)
        reason = f"{stimulus.label}: debounce {self.behaviour.ms} ms, due at {iso(batch.due)} ({count(len(batch.stimuli))} in the batch)"
        return Answer(Verdict.BATCH, reason, batch.due)
