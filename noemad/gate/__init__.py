"""The event gate: whether, when and why a stored stimulus wakes its mind.

`engine.Gate` is a mind's gate (its wake rules' state, batches, sleep and
self-wake, in memory), answering a `delivery.Decision` per stimulus and a
`delivery.Delivery` per wake. Each behaviour's state is a class in
`behaviours/` (one protocol: offer, due, reset, status); `batch` is a
debounce or judge rule's batch; `held` keeps deliveries while the mind is
busy; `status` is what gate-status shows; `sleep` stores a sleep and a
self-wake so they survive a restart. The reply judge is `judge/`: `rules`
holds a gate's judge rules from a due batch to a verdict, `slot` one rule's
batches, `port` the seam the call sits behind, `verdicts` writes each
verdict as a `judge_verdict` event. The verdict's words (`Verdict`) live in
`noemad.wake`, below the gate, for the cycle and the API.
"""

from noemad.gate.engine import Decision, Delivery, Gate, Verdict

__all__ = ["Decision", "Delivery", "Gate", "Verdict"]
