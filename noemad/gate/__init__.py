"""The event gate: whether, when and why a stored stimulus wakes its mind.

`engine.Gate` is a mind's gate (its wake rules' state, batches, sleep and
self-wake, in memory); `status` is what gate-status shows of it; `sleep`
stores a sleep and a self-wake so they survive a restart. The reply judge:
`judged` holds a judge rule's batches between firing and a verdict,
`judging` is the seam the judge call sits behind, `verdicts` writes each
verdict as a `judge_verdict` event.
"""

from noemad.gate.engine import Decision, Delivery, Gate, Verdict

__all__ = ["Decision", "Delivery", "Gate", "Verdict"]
