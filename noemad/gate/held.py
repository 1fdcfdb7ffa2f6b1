"""Deliveries that came while a turn runs, the mind is paused or it sleeps: held, and released as one.

At most HOLD_CAP stimuli are held, the oldest dropped and counted (they stay
stored and in context; only the delivery's list, which names the turn's
parents, is capped). A turn that takes held stimuli takes them out of what
is held, except from a judge's REPLY, which wakes the mind for its batch
whoever took the stimuli.
"""

from __future__ import annotations

from collections.abc import Iterable

from noemad.gate.delivery import Delivery

__all__ = ["HOLD_CAP", "Held"]

HOLD_CAP = 100  # stimuli in held deliveries, and in the list of a sleep's stimuli


class Held:
    """The deliveries a gate holds for its actor, and how many stimuli the cap dropped."""

    def __init__(self) -> None:
        self._held: list[Delivery] = []
        self.dropped = 0

    def hold(self, delivery: Delivery) -> None:
        """Keep a delivery (at most HOLD_CAP stimuli, oldest dropped)."""
        self._held.append(delivery)
        over = self.count - HOLD_CAP
        if over <= 0:
            return
        self.dropped += over
        drop = set(sorted({s for d in self._held for s in d.stimuli})[:over])
        self._held = [
            d.without(drop) for d in self._held if d.self_wake or d.judged or any(s not in drop for s in d.stimuli)
        ]

    def __bool__(self) -> bool:
        """A held delivery waits (a self-wake holds no stimuli, so `count` may be 0)."""
        return bool(self._held)

    @property
    def count(self) -> int:
        """Stimuli in held deliveries."""
        return len({s for d in self._held for s in d.stimuli})

    def taken(self, gone: Iterable[int]) -> None:
        """A turn took these stimuli: they leave every held delivery but a judge's REPLY; one left with nothing goes."""
        taken = set(gone)
        held = []
        for d in self._held:
            if d.judged:  # a judge's REPLY wakes the mind for its batch, whoever took the stimuli
                held.append(d)
                continue
            kept = d.without(taken)
            if kept.stimuli or d.self_wake:
                held.append(kept)
        self._held = held

    def release(self) -> Delivery | None:
        """The held deliveries merged into one (None if nothing is held)."""
        if not self._held:
            return None
        held, self._held = self._held, []
        if len(held) == 1:
            return held[0]
        stimuli = sorted({s for d in held for s in d.stimuli})
        addressed = sorted({s for d in held for s in d.addressed})
        reasons = list(dict.fromkeys(d.reason for d in held))
        shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
        # The rule named is the first that asked for a wake: the turn was owed from then.
        woke = next((d for d in held if d.rule is not None), held[0])
        self_wake = next((d for d in held if d.self_wake), None)
        return Delivery(
            woke.rule, tuple(stimuli), tuple(addressed), f"held while the mind was busy: {shown}",
            self_wake is not None, None if self_wake is None else self_wake.cause, any(d.judged for d in held),
        )
