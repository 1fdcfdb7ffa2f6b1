"""`rate_limit`: a token bucket per key (full at first, a token back every `refill_ms`, counted continuously).

A stimulus that finds a token wakes the mind; one that finds none is
denied: stored, in context, no turn (or, with `passthrough`, decided by
the later rules).
"""

from __future__ import annotations

from dataclasses import dataclass

from noemad.clock import iso
from noemad.gate.batch import Batch
from noemad.gate.behaviours.base import Answer, Immediate, Offered, StateView, key_of, key_words, remember
from noemad.gate.status import Bucket
from noemad.rules.shape import RateLimit
from noemad.wake import Verdict

SHOWN_BUCKETS = 20  # per rule in gate-status: the most recently used


@dataclass
class _Bucket:
    tokens: float
    at: float  # when `tokens` was counted


class RateLimitState(Immediate):
    """A rate_limit rule's buckets, by key, the most recently used last."""

    def __init__(self, behaviour: RateLimit) -> None:
        self.behaviour = behaviour
        self.buckets: dict[str, _Bucket] = {}

    def offer(self, stimulus: Offered) -> Answer:
        limit, now = self.behaviour, stimulus.now
        key = key_of(limit.key_by, stimulus.facts)
        who = key_words(limit.key_by, key)
        bucket = self._bucket(key, now)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return Answer(Verdict.WAKE, f"{stimulus.label}: rate_limit, a token for {who} ({int(bucket.tokens)} of {limit.tokens} left)")
        back = now + (1 - bucket.tokens) * limit.refill_ms / 1000
        return Answer(Verdict.DENY, f"{stimulus.label}: rate_limit, no token left for {who} (the next at {iso(back)}); stored, in context")

    def _bucket(self, key: str, now: float) -> _Bucket:
        """The key's bucket refilled to `now`: one token back per `refill_ms`, counted continuously, never past full."""
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = _Bucket(float(self.behaviour.tokens), now)
        elif now > bucket.at:
            bucket.tokens = min(float(self.behaviour.tokens), bucket.tokens + (now - bucket.at) * 1000 / self.behaviour.refill_ms)
            bucket.at = now
        remember(self.buckets, key)
        return bucket

    def reset(self) -> Batch | None:
        self.buckets.clear()
        return None

    def status(self, now: float) -> StateView:
        limit = self.behaviour
        shown: list[Bucket] = []
        # The most recently used keys, newest first; counted to `now` without touching the buckets.
        for key in list(reversed(self.buckets))[:SHOWN_BUCKETS]:
            bucket = self.buckets[key]
            tokens = min(float(limit.tokens), bucket.tokens + max(0.0, now - bucket.at) * 1000 / limit.refill_ms)
            shown.append(Bucket(key, round(tokens, 2)))
        return StateView(buckets=shown)
