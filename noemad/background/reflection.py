"""Reflection: a mind reviews what happened since it last reflected, and learns from repeated failure.

One run (`run`, a reflection job) does four things.

1. **Review** (`review`, read-only, in one snapshot on a reader). The period
   runs from the end of the mind's last reflection (its `reflection` event's
   `period.to`, or the mind's creation) to now. It is cut by event id, not
   time: it holds the mind's events after the last reflection's
   `period.through_event` up to the newest event when the review starts, so
   no event is reviewed twice or missed, whatever the clocks did. Reviewed:

   | finding          | from                                                                          |
   |------------------|-------------------------------------------------------------------------------|
   | predictions      | `prediction_resolved`: stated confidence, result, error =                     |
   |                  | abs(stated - outcome), a *confident miss* at stated >= 0.7 (the notification  |
   |                  | rule's threshold)                                                             |
   | rejected         | belief events whose status went to `rejected`, and by whom: `outcome` (a      |
   |                  | missed prediction), `operator` (a correction) or `evidence`                  |
   | corrections      | operators' `belief_updated` (data `correction`), and their effect: rejected,  |
   |                  | lowered, raised or kept                                                       |
   | status_changes   | belief status changes, counted by transition; the changes one event brought  |
   |                  | to one belief count once, first status to last (`collapse`: a miss that       |
   |                  | contradicts, then rejects, its hypothesis is active -> rejected)             |
   | contested        | beliefs that became contested (contradictions), and whether they still are   |
   | goals_completed  | `goal_completed`                                                              |
   | calibration      | Brier score, gap and bins (`noemad.cognition.calibration`) over the period's |
   |                  | resolved predictions and over all of the mind's                              |

2. **Patterns.** A *failure* on a subject is a prediction miss stated at
   0.5 or more (FAILED_MISS_MIN: the mind expected it to come true; a miss at
   0.3 is what it said would probably happen), an operator correction that
   rejected a belief or lowered its confidence, or a belief rejected by
   anything else but an outcome. A hypothesis a miss rejects is the same
   failure as the miss and a correction that rejects is one correction, so
   nothing is counted twice. Failures are counted over the LOOKBACK (30
   days) before now, reaching further back to the period's start when the
   period is longer: a mind reflecting every six hours still sees three
   misses spread over a week (as metacognition's `repeated_failure` counts
   rejected hypotheses over a month), and nothing left unreviewed is
   dropped. A subject with PATTERN_MIN (3) or more failures is a pattern,
   keyed `failures:<subject>`. A pattern not yet in `reflection_patterns` is
   *new*: its lesson is written once as a procedural memory (`lesson_text`),
   derived from the episodes of the stimuli that brought the failures
   (outcomes, corrections) and recorded in `reflection_patterns`; its advice
   follows the failures (`lesson_text`). A pattern
   already there is *known* and is reported only when it recurred in the
   period; its lesson is never rewritten.

3. **Rendering.** The findings (a `Findings`, stored as JSON) get a
   deterministic plain rendering (`render`): one short first-person line per
   finding, the first MAX_PATTERN_LINES (5) patterns one by one and the rest
   counted; the lists in the data keep at most MAX_ITEMS (50) items each, the
   counts are of everything. With a `narrate` model and a model call left in the run's budget
   (`[schedules.reflection] model_calls`), the model may reword the prose:
   the answer is kept only if it adds no content (the narrative's
   `unsupported` rule). The findings never change. `rendered_by` says which
   prose the event holds, `reason` why it stayed plain (`empty_period`: nothing
   happened, nothing to reword; `no_calls`: the run's budget is 0; `no_model`;
   then the narrative's `budget`, `held`, `refused`, `model_error`,
   `truncated`, `empty_answer`, `unsupported_content`). Every call made or
   refused is recorded on the job.

4. **The `reflection` event** (one writer job, atomic): actor
   `process:reflection`, caused by the job's `mode_changed` start event, text
   the prose, data the findings with the job, the period, `counts`, the
   patterns, `lessons` (memory ids), `rendered_by`, `reason`, `detail`,
   `model_call`, `plain` (the plain rendering) and `previous` (the last
   reflection). It cites what it reviewed, most important first and at most
   64 (MAX_REFS): the model call, the previous reflection, the failures behind
   the patterns, confident misses, corrections, rejections, contradictions,
   completed goals, the other resolutions and status changes; `cited` says
   how many of how many. Then each new lesson's `memory_created`, caused by
   the reflection event, so `noemactl timeline` walks from a lesson to the
   reflection and on to the failures it cites. An empty period is reflected
   on too: the event says nothing happened.

Cost. Every read is an indexed range on `events(mind, kind, id)` between two
event ids, or a primary-key lookup; the lookback's first event is found by
bisecting the mind's event ids (`events(mind, id)`), as events are appended
in time order. Belief events are filtered in SQL, so only status changes and
corrections reach Python. bench/reflection.py measures a month of a busy mind
(about 58,000 events, 1,800 resolved predictions): about 0.1 s a run.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from sqlite_utils import Database

from noemad.background.jobs import JobContext, start_event
from noemad.clock import iso, parse_iso
from noemad.cognition.calibration import Calibration, calibrate, calibration
from noemad.cognition.memory import MAX_DERIVED_FROM, write_memory
from noemad.cognition.metacognition import MONTH
from noemad.cognition.narrative import Rephrasing, clip, refusal_reason, unquote, unsupported
from noemad.cognition.notifications import MISS_CONFIDENCE
from noemad.cognition.predictions import OUTCOME_SOURCE
from noemad.errors import Conflict, ModelError, StoreError
from noemad.events import Event, EventDraft, Ref, append
from noemad.minds import get_mind
from noemad.wire import dump

if TYPE_CHECKING:
    from noemad.cognition.memory import Memory

KIND = "reflection"  # the event kind
ACTOR = "process:reflection"
LOOKBACK = MONTH  # seconds over which failures are counted (at least)
PATTERN_MIN = 3  # failures on one subject that make a pattern
FAILED_MISS_MIN = 0.5  # a miss is a failure when stated at least this confidently
CONFIDENT = MISS_CONFIDENCE  # a confident miss: stated at least 0.7
MAX_ITEMS = 50  # items each finding's list keeps in the event (counts are of everything)
MAX_SUBJECTS = 10  # subjects listed in the predictions' by_subject
MAX_PATTERN_EVENTS = 20  # failure events a pattern lists
MAX_REFS = 64  # what one event may cite
MAX_QUOTE = 80  # characters of a proposition or title quoted in the prose
MAX_PATTERN_LINES = 5  # patterns the prose describes one by one (the data holds them all)
# Sources that do not count as independent support for a failed belief: an
# outcome arrives after the fact, metacognition only ever contradicts.
NOT_INDEPENDENT = frozenset({OUTCOME_SOURCE, "metacognition"})
SYSTEM = (
    "You reword a mind's reflection on its recent past into plain first-person prose. Use only the words, names and"
    " numbers of the reflection: add no facts, names, numbers, opinions or hedges, and change no number. Quote lessons"
    " as they are. You may reorder, join and shorten sentences. Answer with the reworded reflection only."
)

FailureKind = Literal["miss", "rejected", "correction"]


# --- findings ------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    """What one reflection reviews: the mind's events after `after_event` up to `through_event`."""

    start: str  # ISO: the end of the previous reflection's period, or the mind's creation
    end: str  # ISO: when the review ran
    after_event: int
    through_event: int
    events: int  # the mind's events in the period

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.start,
            "to": self.end,
            "after_event": self.after_event,
            "through_event": self.through_event,
            "events": self.events,
        }


@dataclass(frozen=True)
class Lookback:
    """Where failures are counted from: at least LOOKBACK before now, and the whole period."""

    start: str  # ISO
    days: int
    first_event: int  # the first event id counted

    def to_json(self) -> dict[str, Any]:
        return {"from": self.start, "days": self.days, "first_event": self.first_event}


@dataclass(frozen=True)
class PredictionError:
    """A resolved prediction: how confident the mind was, what came, and how far off it was."""

    prediction: int
    event: int  # its prediction_resolved
    subject: str
    proposition: str
    stated: float
    result: str  # hit | miss
    error: float  # abs(stated - outcome), outcome 1 for a hit and 0 for a miss
    belief: int | None

    @property
    def confident_miss(self) -> bool:
        return self.result == "miss" and self.stated >= CONFIDENT

    def to_json(self) -> dict[str, Any]:
        return {
            "prediction": self.prediction,
            "event": self.event,
            "subject": self.subject,
            "proposition": clip(self.proposition),
            "stated": self.stated,
            "result": self.result,
            "error": self.error,
            "confident_miss": self.confident_miss,
            "belief": self.belief,
        }


@dataclass(frozen=True)
class BeliefChange:
    """A belief event that changed the belief's status or was an operator's correction."""

    belief: int
    event: int
    subject: str
    proposition: str
    status_from: str
    status_to: str
    confidence_from: float
    confidence_to: float
    by: str  # outcome | operator | evidence
    reason: str | None
    prediction: int | None  # the missed prediction, when an outcome rejected it
    cause: int | None  # the event that brought the change (a stimulus, a resolution)
    status_now: str | None  # the belief's status when the review ran

    @property
    def correction(self) -> bool:
        return self.by == "operator"

    @property
    def rejected(self) -> bool:
        return self.status_to == "rejected" and self.status_from != "rejected"

    @property
    def effect(self) -> str:
        """rejected, lowered, raised or kept."""
        if self.rejected:
            return "rejected"
        if self.confidence_to < self.confidence_from:
            return "lowered"
        if self.confidence_to > self.confidence_from:
            return "raised"
        return "kept"

    def to_json(self) -> dict[str, Any]:
        return {
            "belief": self.belief,
            "event": self.event,
            "subject": self.subject,
            "proposition": clip(self.proposition),
            "status": {"from": self.status_from, "to": self.status_to},
            "confidence": {"from": self.confidence_from, "to": self.confidence_to},
            "by": self.by,
            "effect": self.effect,
            "reason": clip(self.reason) if self.reason else None,
            "prediction": self.prediction,
            "status_now": self.status_now,
        }


@dataclass(frozen=True)
class GoalCompleted:
    """A goal completed in the period."""

    goal: int
    event: int
    title: str

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "event": self.event, "title": clip(self.title)}


@dataclass(frozen=True)
class Failure:
    """One failure on a subject (see the module docstring)."""

    kind: FailureKind
    subject: str
    event: int
    belief: int | None
    cause: int | None  # the stimulus whose episode records it
    confident: bool


@dataclass(frozen=True)
class Pattern:
    """Repeated failures on one subject."""

    key: str
    subject: str
    status: Literal["new", "known"]
    failures: int
    in_period: int  # of them, in the period
    misses: int
    confident_misses: int
    rejected: int
    corrections: int
    single_source: int  # failures whose belief had one supporting source or none
    days: int  # the lookback they were counted over
    events: tuple[int, ...]  # the failures' events, oldest first
    episodes: tuple[int, ...] = ()  # episodic memories of the stimuli that brought them
    memory: int | None = None  # the lesson: written now (new) or earlier (known)

    @property
    def lesson(self) -> str:
        return lesson_text(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "subject": self.subject,
            "status": self.status,
            "failures": self.failures,
            "in_period": self.in_period,
            "misses": self.misses,
            "confident_misses": self.confident_misses,
            "rejected": self.rejected,
            "corrections": self.corrections,
            "single_source": self.single_source,
            "events": list(self.events[-MAX_PATTERN_EVENTS:]),
            "episodes": list(self.episodes),
            "lesson": self.lesson if self.status == "new" else None,
            "memory": self.memory,
        }


def _calibration_json(cal: Calibration) -> dict[str, Any]:
    out = dump(cal)
    out.pop("mind", None)
    out.pop("rule", None)
    return out


def _newest(items: Sequence[Any]) -> list[Any]:
    """The newest MAX_ITEMS of a chronological list, oldest first."""
    return list(items[-MAX_ITEMS:])


@dataclass(frozen=True)
class Findings:
    """Everything one reflection found, before any of it is written."""

    mind: str
    period: Period
    lookback: Lookback
    predictions: tuple[PredictionError, ...]  # largest error first, then by id
    rejected: tuple[BeliefChange, ...]  # oldest first, as are the rest
    corrections: tuple[BeliefChange, ...]
    status_changes: tuple[BeliefChange, ...]
    contested: tuple[BeliefChange, ...]
    goals_completed: tuple[GoalCompleted, ...]
    calibration_period: Calibration
    calibration_overall: Calibration
    patterns: tuple[Pattern, ...]  # new first, then by failures
    previous: int | None  # the previous reflection event
    failures: tuple[Failure, ...] = field(default=(), repr=False)  # over the lookback

    def empty(self) -> bool:
        """Nothing in the period called for reflection."""
        return not (self.predictions or self.status_changes or self.corrections or self.goals_completed or self.patterns)

    @property
    def misses(self) -> list[PredictionError]:
        return [p for p in self.predictions if p.result == "miss"]

    @property
    def new_patterns(self) -> list[Pattern]:
        return [p for p in self.patterns if p.status == "new"]

    def counts(self) -> dict[str, int]:
        """How many of each finding the period holds (whatever the lists keep)."""
        misses = self.misses
        return {
            "events": self.period.events,
            "predictions_resolved": len(self.predictions),
            "hits": len(self.predictions) - len(misses),
            "misses": len(misses),
            "confident_misses": sum(1 for p in misses if p.confident_miss),
            "rejected": len(self.rejected),
            "corrections": len(self.corrections),
            "status_changes": len(self.status_changes),
            "contested": len({c.belief for c in self.contested}),  # beliefs, however often each became contested
            "goals_completed": len(self.goals_completed),
            "patterns": len(self.patterns),
            "new_patterns": len(self.new_patterns),
        }

    def to_json(self) -> dict[str, Any]:
        """The findings as stored in the `reflection` event's data."""
        misses = self.misses
        by_subject: dict[str, list[PredictionError]] = {}
        for p in self.predictions:
            by_subject.setdefault(p.subject, []).append(p)
        subjects = sorted(
            by_subject.items(), key=lambda kv: (-sum(1 for p in kv[1] if p.result == "miss"), -len(kv[1]), kv[0])
        )[:MAX_SUBJECTS]
        return {
            "period": self.period.to_json(),
            "lookback": self.lookback.to_json(),
            "predictions": {
                "resolved": len(self.predictions),
                "hits": len(self.predictions) - len(misses),
                "misses": len(misses),
                "confident_misses": sum(1 for p in misses if p.confident_miss),
                "mean_error": _mean([p.error for p in self.predictions]),
                "by_subject": [
                    {
                        "subject": subject,
                        "resolved": len(items),
                        "misses": sum(1 for p in items if p.result == "miss"),
                        "confident_misses": sum(1 for p in items if p.confident_miss),
                        "mean_error": _mean([p.error for p in items]),
                    }
                    for subject, items in subjects
                ],
                "items": [p.to_json() for p in self.predictions[:MAX_ITEMS]],
            },
            "rejected": {
                "count": len(self.rejected),
                "by": dict(sorted(Counter(c.by for c in self.rejected).items())),
                "items": [c.to_json() for c in _newest(self.rejected)],
            },
            "corrections": {
                "count": len(self.corrections),
                "effects": dict(sorted(Counter(c.effect for c in self.corrections).items())),
                "items": [c.to_json() for c in _newest(self.corrections)],
            },
            "status_changes": {
                "count": len(self.status_changes),
                "transitions": dict(sorted(Counter(f"{c.status_from}->{c.status_to}" for c in self.status_changes).items())),
                "items": [c.to_json() for c in _newest(self.status_changes)],
            },
            "contested": {
                "count": len({c.belief for c in self.contested}),
                "changes": len(self.contested),
                "still_contested": len({c.belief for c in self.contested if c.status_now == "contested"}),
                "items": [c.to_json() for c in _newest(self.contested)],
            },
            "goals_completed": {
                "count": len(self.goals_completed),
                "items": [g.to_json() for g in _newest(self.goals_completed)],
            },
            "calibration": {
                "period": _calibration_json(self.calibration_period),
                "overall": _calibration_json(self.calibration_overall),
            },
            "patterns": [p.to_json() for p in self.patterns],
            "counts": self.counts(),
            "previous": self.previous,
        }


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


# --- the review ------------------------------------------------------------------------


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


def first_event_since(db: Database, mind: str, at: str, through: int) -> int:
    """The id of the mind's first event at or after `at` (ISO), or `through + 1` if none up to `through`.

    Events are appended in time order, so the mind's event ids are bisected
    on `events(mind, id)`: a few dozen index probes however long the history.
    """
    # Two queries: SQLite answers a lone min() or max() with one index seek, both together with a scan.
    (lo,) = db.execute("SELECT min(id) FROM events WHERE mind = ? AND id <= ?", [mind, through]).fetchone()
    (hi,) = db.execute("SELECT max(id) FROM events WHERE mind = ? AND id <= ?", [mind, through]).fetchone()
    if hi is None:
        return through + 1

    def first_from(x: int) -> tuple[int, str]:
        return db.execute("SELECT id, at FROM events WHERE mind = ? AND id >= ? ORDER BY id LIMIT 1", [mind, x]).fetchone()

    if first_from(hi)[1] < at:
        return through + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if first_from(mid)[1] >= at:
            hi = mid
        else:
            lo = mid + 1
    return int(first_from(lo)[0])


def _resolutions(db: Database, mind: str, lo: int, hi: int) -> list[tuple[PredictionError, int | None]]:
    """Prediction resolutions with id in [lo, hi], oldest first, each with its cause (the outcome stimulus)."""
    out = []
    for event_id, cause, raw in db.execute(
        "SELECT id, causation_id, data FROM events WHERE mind = ? AND kind = 'prediction_resolved' AND id >= ? AND id <= ? ORDER BY id",
        [mind, lo, hi],
    ):
        data = json.loads(raw)
        stated = float(data.get("stated_confidence") or 0.0)
        result = str(data.get("result"))
        outcome = 1.0 if result == "hit" else 0.0
        out.append(
            (
                PredictionError(
                    prediction=int(data.get("prediction") or 0),
                    event=event_id,
                    subject=str(data.get("subject") or ""),
                    proposition=str(data.get("proposition") or ""),
                    stated=stated,
                    result=result,
                    error=round(abs(stated - outcome), 6),
                    belief=data.get("belief"),
                ),
                cause,
            )
        )
    return out


def _belief_changes(db: Database, mind: str, lo: int, hi: int) -> list[BeliefChange]:
    """Belief events with id in [lo, hi] that changed a status or were corrections, oldest first.

    The filter runs in SQL so the many evidence-only updates never reach Python.
    """
    rows = db.execute(
        "SELECT e.id, e.causation_id, e.subject_id, e.data, b.subject, b.proposition, b.status FROM events e"
        " LEFT JOIN beliefs b ON b.id = e.subject_id"
        " WHERE e.mind = ? AND e.kind IN ('belief_created', 'belief_updated') AND e.id >= ? AND e.id <= ?"
        " AND e.subject_type = 'belief'"
        " AND (json_extract(e.data, '$.correction') = 1"
        "      OR json_extract(e.data, '$.status.from') IS NOT json_extract(e.data, '$.status.to'))",
        [mind, lo, hi],
    ).fetchall()
    # Sorted here: with ORDER BY, SQLite walks every event of the range on
    # events(mind, id) instead of the two kinds' ranges on events(mind, kind, id).
    rows.sort(key=lambda r: r[0])
    out = []
    for event_id, cause, belief_id, raw, subject, proposition, status_now in rows:
        data = json.loads(raw)
        status = data.get("status") or {}
        conf = data.get("confidence") or {}
        if data.get("correction"):
            by = "operator"
        elif data.get("rejected_by") == "outcome":
            by = "outcome"
        else:
            by = "evidence"
        out.append(
            BeliefChange(
                belief=int(belief_id),
                event=event_id,
                subject=subject or "",
                proposition=proposition or "",
                status_from=str(status.get("from")),
                status_to=str(status.get("to")),
                confidence_from=float(conf.get("from") or 0.0),
                confidence_to=float(conf.get("to") or 0.0),
                by=by,
                reason=data.get("reason"),
                prediction=data.get("prediction"),
                cause=cause,
                status_now=status_now,
            )
        )
    return out


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
    out = []
    for event_id, raw, text in db.execute(
        "SELECT id, data, text FROM events WHERE mind = ? AND kind = 'goal_completed' AND id > ? AND id <= ? ORDER BY id",
        [mind, after, through],
    ):
        data = json.loads(raw)
        out.append(GoalCompleted(int(data.get("goal") or 0), event_id, str(data.get("title") or text or "")))
    return out


def failures_of(resolutions: Iterable[tuple[PredictionError, int | None]], changes: Iterable[BeliefChange]) -> list[Failure]:
    """The failures among resolutions and belief changes, by event id (see the module docstring)."""
    out = [
        Failure("miss", p.subject, p.event, p.belief, cause, p.stated >= CONFIDENT)
        for p, cause in resolutions
        if p.result == "miss" and p.stated >= FAILED_MISS_MIN
    ]
    for c in changes:
        if c.correction and c.effect in ("rejected", "lowered"):
            out.append(Failure("correction", c.subject, c.event, c.belief, c.cause, False))
        elif c.rejected and c.by != "outcome":  # a rejection by an outcome is the miss itself
            out.append(Failure("rejected", c.subject, c.event, c.belief, c.cause, False))
    return sorted(out, key=lambda f: f.event)


def _single_source(db: Database, failures: Sequence[Failure]) -> int:
    """How many failures rested on one supporting source or none (before the failure)."""
    beliefs = sorted({f.belief for f in failures if f.belief is not None})
    if not beliefs:
        return 0
    support: dict[int, list[tuple[str, int]]] = {}
    marks = ",".join("?" * len(beliefs))
    for belief_id, source, event_id in db.execute(
        f"SELECT belief_id, source, event_id FROM evidence WHERE belief_id IN ({marks}) AND stance = 'support' ORDER BY id", beliefs
    ):
        support.setdefault(belief_id, []).append((source, event_id))
    count = 0
    for f in failures:
        if f.belief is None:
            continue
        sources = {s for s, at in support.get(f.belief, []) if at < f.event and s not in NOT_INDEPENDENT}
        count += len(sources) <= 1
    return count


def _episodes(db: Database, mind: str, causes: Sequence[int]) -> tuple[int, ...]:
    """The episodic memories recording `causes` (stimuli), oldest first, at most MAX_DERIVED_FROM."""
    ids = sorted(set(causes))
    if not ids:
        return ()
    marks = ",".join("?" * len(ids))
    # By event_id alone, so SQLite takes memories_event (with mind and kind it
    # would walk all of the mind's memories); the rest is checked here.
    rows = db.execute(f"SELECT id, mind, kind FROM memories WHERE event_id IN ({marks}) ORDER BY id", ids).fetchall()
    return tuple(r[0] for r in rows if r[1] == mind and r[2] == "episodic")[-MAX_DERIVED_FROM:]


def _patterns(
    db: Database, mind: str, failures: Sequence[Failure], after: int, days: int, known: dict[str, int]
) -> list[Pattern]:
    by_subject: dict[str, list[Failure]] = {}
    for f in failures:
        by_subject.setdefault(f.subject, []).append(f)
    out = []
    for subject, items in sorted(by_subject.items()):
        if len(items) < PATTERN_MIN:
            continue
        key = f"failures:{subject}"
        in_period = sum(1 for f in items if f.event > after)
        if key in known and in_period == 0:
            continue  # learnt from before, and it did not recur: not news
        new = key not in known
        kinds = Counter(f.kind for f in items)
        out.append(
            Pattern(
                key=key,
                subject=subject,
                status="new" if new else "known",
                failures=len(items),
                in_period=in_period,
                misses=kinds["miss"],
                confident_misses=sum(1 for f in items if f.kind == "miss" and f.confident),
                rejected=kinds["rejected"],
                corrections=kinds["correction"],
                single_source=_single_source(db, items),
                days=days,
                events=tuple(f.event for f in items),
                episodes=_episodes(db, mind, [f.cause for f in items if f.cause is not None]) if new else (),
                memory=None if new else known[key],
            )
        )
    return sorted(out, key=lambda p: (p.status != "new", -p.failures, p.subject))


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
        known = {key: memory_id for key, memory_id in db.execute("SELECT key, memory_id FROM reflection_patterns WHERE mind = ?", [mind])}
        failures = failures_of(resolutions, changes)
        patterns = _patterns(db, mind, failures, after, days, known)
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


# --- words ------------------------------------------------------------------------------


def _n(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _misses_phrase(misses: int, confident: int) -> str:
    if confident == misses:
        return _n(misses, "confident prediction miss", "confident prediction misses")
    words = _n(misses, "prediction miss", "prediction misses")
    return f"{words} ({confident} confident)" if confident else words


def lesson_text(p: Pattern) -> str:
    """The procedural memory a new pattern is written as: what failed, then what to do differently.

    The advice follows the failures: mostly on a single source -> seek an
    independent source; mostly confident misses -> state lower confidence;
    mostly operator corrections -> check with an operator; else gather evidence.
    """
    parts = []
    if p.misses:
        parts.append(_misses_phrase(p.misses, p.confident_misses))
    if p.rejected:
        parts.append(_n(p.rejected, "rejected belief"))
    if p.corrections:
        parts.append(_n(p.corrections, "operator correction"))
    thin = ""
    if p.single_source == p.failures:
        thin = ", each resting on a single source"
    elif 2 * p.single_source >= p.failures:
        thin = f", {p.single_source} of them resting on a single source"
    s = p.subject
    if 2 * p.single_source >= p.failures:
        advice = f"Seek an independent source before raising confidence on {s}."
    elif 2 * p.confident_misses >= p.failures:
        advice = f"State lower confidence on {s} until predictions about it come true."
    elif 2 * p.corrections >= p.failures:
        advice = f"Check beliefs about {s} with an operator before relying on them."
    else:
        advice = f"Gather more evidence on {s} before forming hypotheses about it."
    return f"Lesson: {_and(parts)} on {s} within {p.days} days{thin}. {advice}"


def _when(at: str) -> str:
    return f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 and at[10] == "T" else at


def _subjects(counts: Counter[str], limit: int = 5) -> str:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = [f"{s} ({n})" for s, n in ranked[:limit]]
    if len(ranked) > limit:
        shown.append(_n(len(ranked) - limit, "more subject"))
    return _and(shown)


def _quoted(texts: Sequence[str], limit: int = 3) -> str:
    shown = [f"“{clip(t, MAX_QUOTE)}”" for t in texts[:limit]]
    if len(texts) > limit:
        shown.append(f"{len(texts) - limit} more")
    return _and(shown)


def render(f: Findings) -> str:
    """The plain prose of a reflection: one short first-person line per finding. Deterministic."""
    head = f"I reflected on what happened from {_when(f.period.start)} to {_when(f.period.end)}"
    if f.empty():
        return (
            f"{head}: nothing happened that calls for reflection. No prediction was resolved, no belief was rejected,"
            " corrected or changed status, and no goal was completed."
        )
    lines = [f"{head} ({_n(f.period.events, 'event')})."]
    c = f.counts()
    if f.predictions:
        line = (
            f"Predictions: {c['predictions_resolved']} resolved, {_n(c['hits'], 'hit')} and"
            f" {_n(c['misses'], 'miss', 'misses')}, mean error {_mean([p.error for p in f.predictions]):.2f}."
        )
        confident = Counter(p.subject for p in f.predictions if p.confident_miss)
        if confident:
            line += f" {_n(c['confident_misses'], 'confident miss', 'confident misses')} (stated {CONFIDENT} or more), on {_subjects(confident)}."
        lines.append(line)
    if f.rejected:
        by = Counter(r.by for r in f.rejected)
        phrases = {"outcome": "after a missed prediction", "operator": "by an operator", "evidence": "by the evidence"}
        lines.append(f"Rejected beliefs: {len(f.rejected)} ({_and([f'{by[k]} {v}' for k, v in phrases.items() if by[k]])}).")
    if f.corrections:
        effects = Counter(x.effect for x in f.corrections)
        shown = _and([f"{effects[e]} {e}" for e in ("rejected", "lowered", "raised", "kept") if effects[e]])
        lines.append(
            f"Operator corrections: {len(f.corrections)} ({shown}), on {_subjects(Counter(x.subject for x in f.corrections))}."
        )
    if f.status_changes:
        moves = Counter(f"{x.status_from} to {x.status_to}" for x in f.status_changes)
        shown = _and([f"{k} {n}" for k, n in sorted(moves.items(), key=lambda kv: (-kv[1], kv[0]))])
        lines.append(f"Belief status changes: {len(f.status_changes)} ({shown}).")
    if f.contested:
        beliefs = list(dict.fromkeys(x.belief for x in f.contested))
        still = [x for x in dict((x.belief, x) for x in f.contested).values() if x.status_now == "contested"]
        line = f"Contradictions: {_n(len(beliefs), 'belief')} became contested"
        line += f", {len(still)} still {'is' if len(still) == 1 else 'are'}: {_quoted([x.proposition for x in still])}." if still else ", none still is."
        lines.append(line)
    if f.goals_completed:
        lines.append(f"Goals completed: {len(f.goals_completed)}: {_quoted([g.title for g in f.goals_completed])}.")
    period, overall = f.calibration_period, f.calibration_overall
    if overall.resolved:
        line = "Calibration: "
        if period.resolved:
            line += f"Brier {period.brier:.2f} over {_n(period.resolved, 'prediction')} this period, "
        line += f"Brier {overall.brier:.2f} over {_n(overall.resolved, 'prediction')} overall"
        if overall.overconfident:
            line += f"; stated confidence {overall.mean_stated:.2f} runs ahead of a hit rate of {overall.hit_rate:.2f}"
        lines.append(line + ".")
    for p in f.patterns[:MAX_PATTERN_LINES]:
        failures = f"{_n(p.failures, 'failure')} on {p.subject} within {p.days} days"
        if p.status == "new":
            lines.append(f"New pattern: {failures}. I learnt a lesson: “{p.lesson}”")
        else:
            lines.append(f"Known pattern: {failures}, {p.in_period} of them this period; its lesson stands (memory #{p.memory}).")
    rest = f.patterns[MAX_PATTERN_LINES:]
    if rest:
        new = sum(1 for p in rest if p.status == "new")
        subjects = [p.subject for p in rest[:5]] + ([_n(len(rest) - 5, "more subject")] if len(rest) > 5 else [])
        lines.append(f"{_n(len(rest), 'more pattern')} ({new} new, {len(rest) - new} known), on {_and(subjects)}.")
    return "\n".join(lines)


def summary(f: Findings, lessons: int) -> str:
    """One sentence for the job's outputs, e.g. "3 prediction misses on deploy; 1 new lesson"."""
    parts = []
    misses = f.misses
    if misses:
        subjects = Counter(p.subject for p in misses)
        top, top_count = sorted(subjects.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        phrase = _n(len(misses), "prediction miss", "prediction misses")
        if len(subjects) == 1:
            phrase += f" on {top}"
        elif top_count >= 2:
            phrase += f" ({top_count} on {top})"
        parts.append(phrase)
    others = [r for r in f.rejected if r.by == "evidence"]  # the rest are the misses and the corrections
    for count, singular, plural in (
        (len(others), "belief rejected", "beliefs rejected"),
        (len(f.corrections), "correction", "corrections"),
        (len({x.belief for x in f.contested}), "belief contested", "beliefs contested"),
        (len(f.goals_completed), "goal completed", "goals completed"),
    ):
        if count:
            parts.append(_n(count, singular, plural))
    known = sum(1 for p in f.patterns if p.status == "known")
    if known:
        parts.append(_n(known, "known pattern") + " recurred")
    if not parts and not lessons:
        return f"nothing to reflect on since {_when(f.period.start)}"
    parts.append(_n(lessons, "new lesson") if lessons else "no new lesson")
    return "; ".join(parts)


# --- rewording --------------------------------------------------------------------------


async def reword(ctx: JobContext, f: Findings, plain: str) -> Rephrasing:
    """The prose the event holds: the narrate model's rewording if allowed and it adds nothing, else `plain` and why.

    Never raises a `ModelError`; every call made (or refused with a ledger row)
    is recorded on the job.
    """
    if f.empty():
        return Rephrasing(plain, "plain", "empty_period", "nothing happened in the period, so there is nothing to reword")
    if ctx.calls_left <= 0:
        return Rephrasing(
            plain, "plain", "no_calls", "the run's model budget is spent ([schedules.reflection] model_calls)"
        )
    if not ctx.gateway.configured(ctx.mind, "narrate"):
        return Rephrasing(plain, "plain", "no_model", "no model is configured for the narrate role; set [models] in noemad.toml")
    from noemad.models import Block, Prompt, Turn

    prompt = Prompt(
        role="narrate",
        mind=ctx.mind,
        system=(Block(SYSTEM),),
        messages=(Turn.user(f"Reword this reflection by {ctx.mind} in the first person, adding nothing:\n\n{plain}"),),
    )
    try:
        response = await ctx.gateway.complete(prompt)
    except ModelError as exc:
        ctx.record_call(exc.call_id)
        return Rephrasing(plain, "plain", refusal_reason(exc), exc.detail, exc.call_id)
    ctx.record_call(response.call_id)
    answer = unquote(response.text)
    common: dict[str, Any] = {"call_id": response.call_id, "model": response.model}
    if response.stop_reason == "max_tokens":
        return Rephrasing(plain, "plain", "truncated", "the narrate model ran out of tokens before it finished", **common)
    if not answer:
        return Rephrasing(plain, "plain", "empty_answer", "the narrate model answered nothing", **common)
    extra = unsupported(answer, plain, None, ctx.mind)
    if extra:
        shown = ", ".join(extra[:8]) + (", …" if len(extra) > 8 else "")
        return Rephrasing(
            plain, "plain", "unsupported_content", f"the rewording says what the reflection does not: {shown}",
            unsupported=tuple(extra), **common,
        )
    return Rephrasing(answer, "model", **common)


# --- recording --------------------------------------------------------------------------


def citations(f: Findings, rendering: Rephrasing) -> tuple[list[Ref], int]:
    """What the event cites, most important first and at most MAX_REFS, and how many it could have cited."""
    refs: list[Ref] = []
    if rendering.call_id is not None:
        refs.append(Ref("model_call", rendering.call_id))
    if f.previous is not None:
        refs.append(Ref("event", f.previous))
    for p in f.patterns:
        refs.extend(Ref("event", e) for e in p.events)
    refs.extend(Ref("event", p.event) for p in f.predictions if p.confident_miss)
    for group in (f.corrections, f.rejected, f.contested):
        refs.extend(Ref("event", c.event) for c in group)
    refs.extend(Ref("event", g.event) for g in f.goals_completed)
    refs.extend(Ref("event", p.event) for p in f.predictions)  # the rest, largest error first
    refs.extend(Ref("event", c.event) for c in f.status_changes)
    unique = list(dict.fromkeys(refs))
    return unique[:MAX_REFS], len(unique)


def _next_memory_id(db: Database) -> int:
    (seq,) = db.execute("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0)").fetchone()
    (top,) = db.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()
    return max(int(seq), int(top)) + 1


@dataclass(frozen=True)
class Recorded:
    """What `record` wrote: the reflection event and the lesson memories it caused."""

    event: Event
    lessons: tuple[Memory, ...]


def record(db: Database, *, job_id: int, findings: Findings, rendering: Rephrasing, plain: str, now: float) -> Recorded:
    """Write the `reflection` event, then each new lesson caused by it (a writer job; atomic).

    Refuses with `Conflict` if another reflection was recorded for the mind
    since the review, or one of its new patterns was learnt meanwhile (one
    reflection runs per mind at a time, so neither should happen).
    """
    mind = findings.mind
    previous = previous_reflection(db, mind)
    if (previous[0] if previous else None) != findings.previous:
        raise Conflict(f"another reflection of mind {mind!r} was recorded while this one ran; run it again")
    new = findings.new_patterns
    for p in new:
        if db.execute("SELECT 1 FROM reflection_patterns WHERE mind = ? AND key = ?", [mind, p.key]).fetchone():
            raise Conflict(f"pattern {p.key!r} of mind {mind!r} was learnt while this reflection ran; run it again")
    # The event lists its lessons' memory ids, yet the lessons are written after
    # it (their memory_created events are caused by it). This job is the only
    # writer, so the ids the memories will get are known: reserve them, and check.
    first = _next_memory_id(db)
    lesson_ids = [first + i for i in range(len(new))]
    memory_of = {p.key: m for p, m in zip(new, lesson_ids)}
    patterns = [replace(p, memory=memory_of.get(p.key, p.memory)) for p in findings.patterns]
    refs, candidates = citations(findings, rendering)
    data: dict[str, Any] = {
        "job": job_id,
        **findings.to_json(),
        "patterns": [p.to_json() for p in patterns],
        "lessons": lesson_ids,
        "rendered_by": rendering.rendered_by,
        "reason": rendering.reason,
        "detail": rendering.detail,
        "model_call": rendering.call_id,
        "plain": plain,
        "cited": {"refs": len(refs), "candidates": candidates},
    }
    if rendering.model:
        data["model"] = rendering.model
    if rendering.unsupported:
        data["unsupported"] = list(rendering.unsupported[:20])
    event = append(
        db,
        EventDraft(
            mind=mind,
            kind=KIND,
            actor=ACTOR,
            text=rendering.text,
            causation_id=start_event(db, mind, job_id),
            refs=refs,
            data=data,
        ),
        now,
    )
    lessons = []
    for p, expected in zip(new, lesson_ids):
        memory, _ = write_memory(
            db, mind=mind, kind="procedural", text=p.lesson, now=now, actor=ACTOR, cause=event.id, cycle_id=None,
            derived_from=p.episodes,
        )
        if memory.id != expected:
            raise StoreError(f"lesson memory got id {memory.id}, not the {expected} its reflection names; nothing was written")
        db.execute(
            "INSERT INTO reflection_patterns (mind, key, memory_id, job_id, at) VALUES (?, ?, ?, ?, ?)",
            [mind, p.key, memory.id, job_id, iso(now)],
        )
        lessons.append(memory)
    return Recorded(event, tuple(lessons))


# --- the job ----------------------------------------------------------------------------


def _review_on_reader(ctx: JobContext, now: float) -> Findings:
    return review(ctx.store.reader(), ctx.mind, now)


async def run(ctx: JobContext) -> dict[str, Any]:
    """One reflection of `ctx.mind`: review, render (maybe reword), record. Returns the job's outputs.

    Outputs: `summary` (one sentence), `event` (the reflection event's id),
    `lessons` (memory ids), `patterns` (key, status, failures, memory),
    `counts` (per finding kind, and lessons), `rendered_by`, `reason`, `period`.
    """
    now = ctx.now()
    ctx.progress(0.05, "reviewing")
    # Off the loop: the reads of a busy month take a good part of a second.
    findings = await asyncio.to_thread(_review_on_reader, ctx, now)
    ctx.progress(0.6, "rendering")
    plain = render(findings)
    rendering = await reword(ctx, findings, plain)
    ctx.progress(0.85, "recording")
    job_id = ctx.job.id
    written = await ctx.store.writer.run(
        lambda db: record(db, job_id=job_id, findings=findings, rendering=rendering, plain=plain, now=ctx.now())
    )
    lessons = [m.id for m in written.lessons]
    patterns = written.event.data["patterns"]
    return {
        "summary": summary(findings, len(lessons)),
        "event": written.event.id,
        "lessons": lessons,
        "patterns": [{k: p[k] for k in ("key", "status", "failures", "memory")} for p in patterns],
        "counts": {**findings.counts(), "lessons": len(lessons)},
        "rendered_by": rendering.rendered_by,
        "reason": rendering.reason,
        "period": findings.period.to_json(),
    }
