"""The review: what the mind's next reflection finds, read in one snapshot on a reader.

The period runs from the end of the mind's last reflection (its
`reflection` event's `period.to`, or the mind's creation) to now. It is cut
by event id, not time: the mind's events after the last reflection's
`period.through_event` up to the newest event when the review starts, so no
event is reviewed twice or missed, whatever the clocks did.

Every read is an indexed range on `events(mind, kind, id)` between two event
ids, or a primary-key lookup; the lookback's first event is found by
bisecting the mind's event ids, as events are appended in time order. Belief
events are filtered in SQL, so only status changes and corrections reach
Python. Other writers' events and rows are read through their owners'
queries (`beliefs.status_changes`, `predictions.resolutions`,
`goals.completions`); `memories` and `reflection_patterns` rows directly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from sqlite_utils import Database

from noemad.background.reflection.findings import (
    KIND,
    BeliefChange,
    Findings,
    GoalCompleted,
    Lookback,
    Period,
    PredictionError,
)
from noemad.background.reflection.patterns import failures_of, find_patterns, learnt
from noemad.clock import iso, parse_iso
from noemad.cognition.beliefs.queries import status_changes
from noemad.cognition.calibration import calibrate, calibration
from noemad.cognition.goals import completions
from noemad.cognition.metacognition import MONTH
from noemad.cognition.predictions import resolutions
from noemad.events import first_event_since
from noemad.minds import get_mind

LOOKBACK = MONTH  # seconds over which failures are counted (at least)


@contextmanager
def _snapshot(db: Database) -> Iterator[None]:
    """Every read of one review sees the same committed state (a reader runs in autocommit)."""
    if db.conn.in_transaction:
        yield  # already inside a transaction (a writer job): that is the snapshot
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def _resolutions(db: Database, mind: str, lo: int, hi: int) -> list[tuple[PredictionError, int | None]]:
    """Prediction resolutions with id in [lo, hi], oldest first, each with its cause (the outcome stimulus)."""
    out = []
    for event_id, cause, resolution in resolutions(db, mind, lo, hi):
        outcome = 1.0 if resolution.result == "hit" else 0.0
        out.append(
            (
                PredictionError(
                    prediction=resolution.prediction,
                    event=event_id,
                    subject=resolution.subject,
                    proposition=resolution.proposition,
                    stated=resolution.stated_confidence,
                    result=resolution.result,
                    error=round(abs(resolution.stated_confidence - outcome), 6),
                    belief=resolution.belief,
                ),
                cause,
            )
        )
    return out


def _belief_changes(db: Database, mind: str, lo: int, hi: int) -> list[BeliefChange]:
    """Belief events with id in [lo, hi] that changed a status or were corrections, oldest first (`beliefs.status_changes`)."""
    return [
        BeliefChange(
            belief=c.belief,
            event=c.event,
            subject=c.subject,
            proposition=c.proposition,
            status_from=c.change.status_from,
            status_to=c.change.status_to,
            confidence_from=c.change.confidence_from,
            confidence_to=c.change.confidence_to,
            by=c.change.by,
            reason=c.change.reason,
            prediction=c.change.prediction,
            cause=c.cause,
            status_now=c.status_now,
        )
        for c in status_changes(db, mind, lo, hi)
    ]


def collapse(changes: Sequence[BeliefChange]) -> list[BeliefChange]:
    """One change per belief and cause: a chain of status changes one event brought counts once, first status to last.

    A missed prediction contradicts its hypothesis (active -> contested) and
    rejects it (contested -> rejected) in one step; that is one change,
    active -> rejected, and no contradiction.
    """
    groups: dict[tuple[int, int], list[BeliefChange]] = {}
    for c in changes:
        groups.setdefault((c.belief, c.cause if c.cause is not None else -c.event), []).append(c)
    merged = [
        replace(group[-1], status_from=group[0].status_from, confidence_from=group[0].confidence_from) if len(group) > 1 else group[0]
        for group in groups.values()
    ]
    return sorted(merged, key=lambda c: c.event)


def _goals(db: Database, mind: str, after: int, through: int) -> list[GoalCompleted]:
    return [GoalCompleted(change.goal, event_id, change.title or text or "") for event_id, text, change in completions(db, mind, after, through)]


def previous_reflection(db: Database, mind: str) -> tuple[int, int, str] | None:
    """The mind's last reflection: its event id, the last event its period reviewed, and when that period ended."""
    row = db.execute(
        "SELECT id, at, data FROM events WHERE mind = ? AND kind = ? ORDER BY id DESC LIMIT 1", [mind, KIND]
    ).fetchone()
    if row is None:
        return None
    period = json.loads(row[2]).get("period") or {}
    return int(row[0]), int(period.get("through_event", row[0])), str(period.get("to") or row[1])


def review(db: Database, mind: str, now: float) -> Findings:
    """What the mind's next reflection finds, as of `now` (reads only; the same store and `now` give the same findings)."""
    with _snapshot(db):
        created = get_mind(db, mind).created_at
        previous = previous_reflection(db, mind)
        previous_id, after, start = previous if previous is not None else (None, 0, created)
        (newest,) = db.execute("SELECT coalesce(max(id), 0) FROM events WHERE mind = ?", [mind]).fetchone()
        through = max(int(newest), after)
        (count,) = db.execute("SELECT count(*) FROM events WHERE mind = ? AND id > ? AND id <= ?", [mind, after, through]).fetchone()
        window = min(parse_iso(start), now - LOOKBACK)
        days = max(1, math.ceil((now - window) / 86_400 - 1e-9))
        lo = min(after + 1, first_event_since(db, mind, iso(window), through))
        resolutions = _resolutions(db, mind, lo, through)
        changes = collapse(_belief_changes(db, mind, lo, through))
        goals = _goals(db, mind, after, through)
        overall = calibration(db, mind)
        known = learnt(db, mind)
        failures = failures_of(resolutions, changes)
        patterns = find_patterns(db, mind, failures, after, days, known)
    predictions = [p for p, _ in resolutions if p.event > after]
    in_period = [c for c in changes if c.event > after]
    status_changes = [c for c in in_period if c.status_from != c.status_to]
    return Findings(
        mind=mind,
        period=Period(start, iso(now), after, through, int(count)),
        lookback=Lookback(iso(window), days, lo),
        predictions=tuple(sorted(predictions, key=lambda p: (-p.error, p.event))),
        rejected=tuple(c for c in in_period if c.rejected),
        corrections=tuple(c for c in in_period if c.correction),
        status_changes=tuple(status_changes),
        contested=tuple(c for c in status_changes if c.status_to == "contested"),
        goals_completed=tuple(goals),
        calibration_period=calibrate(mind, ((p.stated, p.result == "hit") for p in sorted(predictions, key=lambda p: p.event))),
        calibration_overall=overall,
        patterns=tuple(patterns),
        previous=previous_id,
        failures=tuple(failures),
    )
