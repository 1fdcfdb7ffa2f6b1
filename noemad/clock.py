"""The one injectable clock every timer goes through.

The daemon runs on `SystemClock`; tests run it on `ManualClock` and move time
by hand (over the API when the daemon was started with `NOEMA_CLOCK=manual`),
so no test ever sleeps.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import re
import time
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    """What every timer in noemad asks for the time and waits on."""

    def now(self) -> float:
        """Wall-clock time in seconds since the epoch."""

    def monotonic(self) -> float:
        """A clock that never goes backward, for durations."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""


class SystemClock:
    """The real time of the machine."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that moves only when `advance` is called."""

    def __init__(self, start: float) -> None:
        self._now = start
        self._start = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._now - self._start

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), fut))
        await fut

    def advance(self, seconds: float) -> None:
        """Move time forward and wake, in deadline order, every sleeper now due."""
        if seconds < 0:
            raise ValueError("a clock only moves forward")
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)


def clock_from_spec(spec: str | None) -> Clock:
    """Build the clock named by `NOEMA_CLOCK`: unset or `system`, or `manual[:ISO-TIME]`."""
    if not spec or spec == "system":
        return SystemClock()
    if spec == "manual" or spec.startswith("manual:"):
        start = spec.partition(":")[2]
        return ManualClock(parse_iso(start) if start else 1_767_225_600.0)  # 2026-01-01
    raise ValueError(f"NOEMA_CLOCK={spec!r} is not a clock: use 'system' or 'manual[:2026-01-01T00:00:00Z]'")


_SECOND: tuple[int, str] = (0, "1970-01-01T00:00:00")  # the last whole second `iso` wrote, and its text


def iso(ts: float) -> str:
    """Render epoch seconds as the ISO-8601 UTC text stored and shown everywhere (milliseconds, truncated; a Z).

    The same text as `datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")`:
    microseconds rounded half-even as fromtimestamp rounds them, then cut to milliseconds. The date and
    time of the whole second is built once per second: a stimulus writes three times (its event, the
    gate's due time, the answer), thousands a second, mostly within the same second.
    """
    global _SECOND
    frac, whole = math.modf(ts)
    micros = round(frac * 1e6)  # raises ValueError for NaN, as fromtimestamp does
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    elif micros < 0:
        whole, micros = whole - 1, micros + 1_000_000
    second = int(whole)  # OverflowError for an infinity, as fromtimestamp
    cached, text = _SECOND
    if second != cached:
        # Out of range (before year 1, after 9999) raises here as it always did.
        text = datetime.fromtimestamp(second, tz=timezone.utc).isoformat(timespec="seconds")[:-6]
        _SECOND = (second, text)
    return f"{text}.{micros // 1000:03d}Z"


def writable(ts: float) -> bool:
    """Whether `iso` can write `ts` (a year from 1 to 9999): a time outside that would make every read of it fail."""
    try:
        iso(ts)
    except (ValueError, OverflowError, OSError):
        return False
    return True


def parse_iso(text: str) -> float:
    """Parse ISO-8601 text (a trailing Z is UTC) into epoch seconds."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


_SPAN_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_WHOLE_SPAN = re.compile(r"^(\d+)([smhd])$")
_FRACTIONAL_SPAN = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def span_seconds(text: str, *, fractional: bool = False) -> float | None:
    """Seconds in a span such as 90s, 30m, 24h or 7d (1.5h too when `fractional`); None if `text` is not one."""
    match = (_FRACTIONAL_SPAN if fractional else _WHOLE_SPAN).match(text.strip())
    if match is None:
        return None
    return float(match.group(1)) * _SPAN_UNITS[match.group(2)]


def parse_since(text: str, now: float) -> float:
    """A start time from an ISO date or time, or a span back from `now` such as 30m, 24h or 7d."""
    from noemad.errors import InvalidInput

    text = text.strip()
    span = span_seconds(text)
    if span is not None:
        if not writable(now - span):
            raise InvalidInput(f"since={text!r} reaches back before the year 1; give a shorter span or an ISO date")
        return now - span
    try:
        return parse_iso(text)
    except (ValueError, OverflowError):
        raise InvalidInput(
            f"since={text!r} is neither an ISO date or time (2026-01-31, 2026-01-31T12:00:00Z) nor a span (30m, 24h, 7d)"
        ) from None
