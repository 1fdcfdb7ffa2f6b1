"""`clock.iso`: the one text of a time, stored and shown everywhere, written fast enough for every stimulus."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from noemad.clock import iso, writable


def reference(ts: float) -> str:
    """What iso always wrote: datetime's own rendering."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_iso_writes_what_datetime_writes() -> None:
    rng = random.Random(27)
    edges = [0.0, -0.0, 1.0, -1.5, 1_767_225_600.0, 1_767_225_600.9995, 1_767_225_600.9999995, 1_767_225_599.9999996,
             -0.0000004, -0.0000005, -0.0000006, 253_402_300_799.999, -62_135_596_800.0, 0.0005, 0.0015, 1e-7]
    values = edges + [rng.uniform(-62_135_596_800, 253_402_300_799) for _ in range(20_000)]
    values += [1_767_225_600 + rng.random() for _ in range(20_000)]  # within one second, as ingest writes them
    values += [1_767_225_600 + i / 8 for i in range(64)]  # exactly halfway microseconds, both sides
    for ts in values:
        assert iso(ts) == reference(ts), ts


@pytest.mark.parametrize("ts", [float("nan"), float("inf"), float("-inf"), 1e20, -1e20, 253_402_300_800.0])
def test_iso_refuses_what_datetime_refuses(ts: float) -> None:
    with pytest.raises((ValueError, OverflowError, OSError)) as ours:
        iso(ts)
    with pytest.raises((ValueError, OverflowError, OSError)) as theirs:
        reference(ts)
    assert type(ours.value) is type(theirs.value)
    assert not writable(ts)


def test_iso_builds_each_second_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of stimuli a second each write three times: the date of a second is rendered once."""
    import noemad.clock as clock

    built: list[float] = []

    class Counting(datetime):
        @classmethod
        def fromtimestamp(cls, t: float, tz: object = None) -> datetime:  # type: ignore[override]
            built.append(t)
            return datetime.fromtimestamp(t, tz)  # type: ignore[arg-type]

    monkeypatch.setattr(clock, "datetime", Counting)
    texts = [iso(1_800_000_000 + i / 1000) for i in range(1000)]
    assert texts[0] == "2027-01-15T08:00:00.000Z" and texts[-1] == "2027-01-15T08:00:00.999Z"
    assert len(built) == 1
