"""One state class per wake-rule behaviour, behind one protocol (`base.BehaviourState`: offer, due, reset, status).

`always`, `defer`, `debounce`, `judge`, `rate_limit` and `passive_sample`
each hold what their behaviour keeps between stimuli; `state_for` is the
one place that picks the class for a behaviour.
"""

from __future__ import annotations

from typing import assert_never

from noemad.gate.behaviours.always import AlwaysState
from noemad.gate.behaviours.base import Answer, BehaviourState, Offered, StateView
from noemad.gate.behaviours.debounce import DebounceState
from noemad.gate.behaviours.defer import DeferState
from noemad.gate.behaviours.judge import JudgeState
from noemad.gate.behaviours.passive_sample import PassiveSampleState
from noemad.gate.behaviours.rate_limit import RateLimitState
from noemad.rules.shape import Always, Behaviour, Debounce, Defer, JudgeBehaviour, PassiveSample, RateLimit

__all__ = ["Answer", "BehaviourState", "Offered", "StateView", "state_for"]


def state_for(behaviour: Behaviour) -> BehaviourState:
    """A fresh state for `behaviour` (a rule new, or whose behaviour changed)."""
    match behaviour:
        case Always():
            return AlwaysState()
        case Defer():
            return DeferState()
        case Debounce():
            return DebounceState(behaviour)
        case JudgeBehaviour():
            return JudgeState(behaviour)
        case RateLimit():
            return RateLimitState(behaviour)
        case PassiveSample():
            return PassiveSampleState(behaviour)
        case _:
            assert_never(behaviour)
