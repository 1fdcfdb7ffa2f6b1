"""Holds: a model the provider told us to leave alone until a stated time."""

from __future__ import annotations

from dataclasses import dataclass

from noemad.clock import Clock
from noemad.wire import IsoTime, wire


@wire
@dataclass(frozen=True)
class Hold:
    """No calls to `model` until `until` (epoch seconds), because of `reason`."""

    model: str
    until: IsoTime
    reason: str  # the error category that stated the wait
    since: IsoTime


class Holds:
    """The holds in force, by model, on the daemon's clock."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._holds: dict[str, Hold] = {}

    def arm(self, model: str, seconds: float, reason: str) -> Hold:
        """Hold `model` for `seconds` from now; a later end replaces an earlier one, never the reverse."""
        now = self._clock.now()
        hold = Hold(model, now + max(0.0, seconds), reason, now)
        current = self.active(model)
        if current is None or hold.until > current.until:
            self._holds[model] = hold
            return hold
        return current

    def active(self, model: str) -> Hold | None:
        """The hold on `model` now in force, if any."""
        hold = self._holds.get(model)
        if hold is not None and hold.until <= self._clock.now():
            del self._holds[model]
            return None
        return hold

    def in_force(self) -> list[Hold]:
        """Every hold now in force, by model."""
        return [h for m in sorted(self._holds) if (h := self.active(m)) is not None]
