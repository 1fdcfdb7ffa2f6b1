"""What one reflection finds, before any of it is written (stored as JSON in the `reflection` event).

| finding          | from                                                                          |
|------------------|-------------------------------------------------------------------------------|
| predictions      | `prediction_resolved`: stated confidence, result, error = abs(stated -        |
|                  | outcome), a *confident miss* at stated >= CONFIDENT (the notification rule's) |
| rejected         | belief events whose status went to `rejected`, and by whom: `outcome` (a      |
|                  | missed prediction), `operator` (a correction) or `evidence`                  |
| corrections      | operators' `belief_updated` (data `correction`), and their effect: rejected,  |
|                  | lowered, raised or kept                                                       |
| status_changes   | belief status changes, counted by transition (`reading.collapse`)             |
| contested        | beliefs that became contested (contradictions), and whether they still are   |
| goals_completed  | `goal_completed`                                                              |
| calibration      | Brier score, gap and bins (`noemad.cognition.calibration`) over the period's |
|                  | resolved predictions and over all of the mind's                              |
| patterns         | repeated failures on a subject (`patterns`)                                   |

The lists in the data keep at most MAX_ITEMS items each; the counts are of everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from noemad.cognition.calibration import Calibration
from noemad.cognition.narrative.phrasing import clip
from noemad.cognition.notifications.rules import MISS_CONFIDENCE
from noemad.wire import HIDDEN, computed, dump, renamed, shown_as, wire

if TYPE_CHECKING:
    from noemad.background.reflection.patterns import Failure, Pattern

KIND = "reflection"  # the event kind
ACTOR = "process:reflection"
CONFIDENT = MISS_CONFIDENCE  # a confident miss: stated at least 0.7
MAX_ITEMS = 50  # items each finding's list keeps in the event (counts are of everything)
MAX_SUBJECTS = 10  # subjects listed in the predictions' by_subject

Clipped = Annotated[str, shown_as(clip)]  # stored clipped to a line, like the prose that quotes it


@wire
@dataclass(frozen=True)
class Period:
    """What one reflection reviews: the mind's events after `after_event` up to `through_event`."""

    start: Annotated[str, renamed("from")]  # ISO: the end of the previous reflection's period, or the mind's creation
    end: Annotated[str, renamed("to")]  # ISO: when the review ran
    after_event: int
    through_event: int
    events: int  # the mind's events in the period


@wire
@dataclass(frozen=True)
class Lookback:
    """Where failures are counted from: at least LOOKBACK before now, and the whole period."""

    start: Annotated[str, renamed("from")]  # ISO
    days: int
    first_event: int  # the first event id counted


@wire
@dataclass(frozen=True)
class PredictionError:
    """A resolved prediction: how confident the mind was, what came, and how far off it was."""

    prediction: int
    event: int  # its prediction_resolved
    subject: str
    proposition: Clipped
    stated: float
    result: str  # hit | miss
    error: float  # abs(stated - outcome), outcome 1 for a hit and 0 for a miss
    belief: int | None

    @computed
    @property
    def confident_miss(self) -> bool:
        return self.result == "miss" and self.stated >= CONFIDENT


@wire
@dataclass(frozen=True)
class BeliefChange:
    """A belief event that changed the belief's status or was an operator's correction."""

    belief: int
    event: int
    subject: str
    proposition: Clipped
    status_from: Annotated[str, HIDDEN]  # stored as status.from
    status_to: Annotated[str, HIDDEN]
    confidence_from: Annotated[float, HIDDEN]  # stored as confidence.from
    confidence_to: Annotated[float, HIDDEN]
    by: str  # outcome | operator | evidence
    reason: Annotated[str | None, shown_as(lambda reason: clip(reason) if reason else None)]
    prediction: int | None  # the missed prediction, when an outcome rejected it
    cause: Annotated[int | None, HIDDEN]  # the event that brought the change (a stimulus, a resolution)
    status_now: str | None  # the belief's status when the review ran

    @computed
    @property
    def status(self) -> dict[str, str]:
        return {"from": self.status_from, "to": self.status_to}

    @computed
    @property
    def confidence(self) -> dict[str, float]:
        return {"from": self.confidence_from, "to": self.confidence_to}

    @property
    def correction(self) -> bool:
        return self.by == "operator"

    @property
    def rejected(self) -> bool:
        return self.status_to == "rejected" and self.status_from != "rejected"

    @computed
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


@wire
@dataclass(frozen=True)
class GoalCompleted:
    """A goal completed in the period."""

    goal: int
    event: int
    title: Clipped


def _calibration_json(cal: Calibration) -> dict[str, Any]:
    out: dict[str, Any] = dump(cal)
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
            "period": dump(self.period),
            "lookback": dump(self.lookback),
            "predictions": {
                "resolved": len(self.predictions),
                "hits": len(self.predictions) - len(misses),
                "misses": len(misses),
                "confident_misses": sum(1 for p in misses if p.confident_miss),
                "mean_error": mean([p.error for p in self.predictions]),
                "by_subject": [
                    {
                        "subject": subject,
                        "resolved": len(items),
                        "misses": sum(1 for p in items if p.result == "miss"),
                        "confident_misses": sum(1 for p in items if p.confident_miss),
                        "mean_error": mean([p.error for p in items]),
                    }
                    for subject, items in subjects
                ],
                "items": [dump(p) for p in self.predictions[:MAX_ITEMS]],
            },
            "rejected": {
                "count": len(self.rejected),
                "by": dict(sorted(Counter(c.by for c in self.rejected).items())),
                "items": [dump(c) for c in _newest(self.rejected)],
            },
            "corrections": {
                "count": len(self.corrections),
                "effects": dict(sorted(Counter(c.effect for c in self.corrections).items())),
                "items": [dump(c) for c in _newest(self.corrections)],
            },
            "status_changes": {
                "count": len(self.status_changes),
                "transitions": dict(sorted(Counter(f"{c.status_from}->{c.status_to}" for c in self.status_changes).items())),
                "items": [dump(c) for c in _newest(self.status_changes)],
            },
            "contested": {
                "count": len({c.belief for c in self.contested}),
                "changes": len(self.contested),
                "still_contested": len({c.belief for c in self.contested if c.status_now == "contested"}),
                "items": [dump(c) for c in _newest(self.contested)],
            },
            "goals_completed": {
                "count": len(self.goals_completed),
                "items": [dump(g) for g in _newest(self.goals_completed)],
            },
            "calibration": {
                "period": _calibration_json(self.calibration_period),
                "overall": _calibration_json(self.calibration_overall),
            },
            "patterns": [dump(p) for p in self.patterns],
            "counts": self.counts(),
            "previous": self.previous,
        }


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None
