"""`passive_sample`: a counter per key that wakes the mind for the 1st, (every+1)th, ... matching stimulus; the rest are denied."""

from __future__ import annotations

from noemad.gate.batch import Batch
from noemad.gate.behaviours.base import Answer, Immediate, Offered, key_of, key_words, remember
from noemad.rules.shape import PassiveSample
from noemad.wake import Verdict


class PassiveSampleState(Immediate):
    """A passive_sample rule's counters, by key, the most recently used last."""

    def __init__(self, behaviour: PassiveSample) -> None:
        self.behaviour = behaviour
        self.samples: dict[str, int] = {}

    def offer(self, stimulus: Offered) -> Answer:
        every = self.behaviour.every
        key = key_of(self.behaviour.key_by, stimulus.facts)
        number = self.samples.get(key, 0)
        self.samples[key] = number + 1
        remember(self.samples, key)
        who = key_words(self.behaviour.key_by, key)
        if number % every == 0:
            return Answer(Verdict.WAKE, f"{stimulus.label}: passive_sample 1 in {every}, number {number + 1} for {who} wakes the mind", sampled=True)
        reason = f"{stimulus.label}: passive_sample 1 in {every}, number {number + 1} for {who} is not sampled; stored, in context"
        return Answer(Verdict.DENY, reason, sampled=False)

    def reset(self) -> Batch | None:
        self.samples.clear()
        return None
