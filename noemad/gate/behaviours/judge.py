"""`judge`: gather a batch as debounce does; when it is due, the rule's judge decides whether it wakes the mind.

The batch goes to the rule's slot (`noemad.gate.judge`) when judging is
wired; unwired (judging off, or no judge model) it wakes the mind as a
debounce of its quiet period would.
"""

from __future__ import annotations

from noemad.clock import iso
from noemad.gate.batch import JudgeBatch
from noemad.gate.behaviours.base import Answer, Gathering, Offered
from noemad.gate.delivery import count
from noemad.rules.shape import JudgeBehaviour
from noemad.wake import Verdict


class JudgeState(Gathering):
    """A judge rule's pending batch, before it goes to its judge."""

    def __init__(self, behaviour: JudgeBehaviour) -> None:
        super().__init__()
        self.judge: JudgeBehaviour | None = behaviour
        self.behaviour = behaviour

    def offer(self, stimulus: Offered) -> Answer:
        behaviour = self.behaviour
        if self.batch is None:
            self.batch = JudgeBatch(stimulus.rule, behaviour.debounce_ms, started=stimulus.now, behaviour=behaviour)
        batch = self.batch
        batch.add(stimulus.event_id, stimulus.facts.addressed, stimulus.now)
        how = "judged" if stimulus.judge_wired else "delivered (no judge: a debounce)"
        reason = (
            f"{stimulus.label}: judge after {behaviour.debounce_ms} ms quiet, {how} at {iso(batch.due)}"
            f" ({count(len(batch.stimuli))} in the batch)"
        )
        return Answer(Verdict.BATCH, reason, batch.due)
