"""Predictions: propositions a mind expects to come true by a due time, at a stated confidence.

A `prediction` stimulus, when perceived, becomes

1. evidence for the proposition's belief: kind `hypothesis`, weight 1, the
   stated confidence as credibility, source `prediction` (a new belief is
   created at the stated confidence) — the belief the prediction rests on;
2. the prediction's row (`open`, with that belief's id) and `prediction_made`,
   caused by the stimulus and citing the belief and the stimulus' episode.

An `outcome` stimulus resolves it once and for all (`hit` or `miss`, with
the observed value as text if given):

    outcome --caused--> prediction_resolved --caused--> belief_updated

`prediction_resolved` is caused by the outcome and cites `prediction_made`
and the belief; downstream of it (caused by it) the belief gets evidence
from source `outcome` at weight 1 and credibility 1: a hit supports, a miss
contradicts. Outcomes are decisive for hypotheses: a miss on a belief of
kind `hypothesis` that is active or contested also rejects it (a second
`belief_updated`, caused by `prediction_resolved`, actor
`process:predictions`). A belief an operator pinned or rejected records the
evidence and keeps its status.

For the cycle: `due_predictions(db, mind, now)` — open predictions whose due
time has come (overdue ones become thoughts); `calibration.calibration`
measures stated confidence against outcomes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.cognition.beliefs.corrections import reject_hypothesis
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.beliefs.model import check_proposition
from noemad.cognition.beliefs.queries import get_belief
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of
from noemad.stimuli import stored_outcome
from noemad.wire import wire

Result = Literal["hit", "miss"]
RESULTS: tuple[str, ...] = ("hit", "miss")
PREDICTION_STATUSES: tuple[str, ...] = ("open", "hit", "miss")
ACTOR = "process:predictions"
PREDICTION_SOURCE = "prediction"  # the evidence source of a stated prediction
OUTCOME_SOURCE = "outcome"  # the evidence source of an outcome



class PredictionNotFound(NotFound):
    """No prediction has that id."""

    title = "Prediction not found"


class PredictionResolved(Conflict):
    """The prediction already has its outcome."""

    title = "Prediction resolved"


@wire
@dataclass(frozen=True)
class Prediction:
    """A prediction and, once resolved, its outcome."""

    id: int
    mind: str
    proposition: str
    subject: str
    stated_confidence: float
    due_at: str
    status: Literal["open", "hit", "miss"]
    belief_id: int | None
    """The belief the prediction rests on."""
    created_at: str
    resolved_at: str | None
    observed: str | None
    event_id: int | None
    """The prediction_made event."""
    resolved_event_id: int | None
    """The prediction_resolved event, once resolved."""

    def is_overdue(self, now: float) -> bool:
        """Open and past its due time."""
        return self.status == "open" and parse_iso(self.due_at) <= now


@dataclass(frozen=True)
class Resolution:
    """The data of a `prediction_resolved` event: the one definition of its fields."""

    prediction: int
    result: str
    proposition: str
    subject: str
    stated_confidence: float
    due_at: str
    late: bool
    observed: str | None
    belief: int | None
    squared_error: float

    def to_data(self) -> dict[str, Any]:
        return {
            "prediction": self.prediction,
            "result": self.result,
            "proposition": self.proposition,
            "subject": self.subject,
            "stated_confidence": self.stated_confidence,
            "due_at": self.due_at,
            "late": self.late,
            "observed": self.observed,
            "belief": self.belief,
            "squared_error": self.squared_error,
        }

    @classmethod
    def of(cls, event: Event) -> Resolution:
        return cls.from_data(data_of(event, "prediction_resolved"))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Resolution:
        return cls(
            prediction=int(data.get("prediction") or 0),
            result=str(data.get("result")),
            proposition=str(data.get("proposition") or ""),
            subject=str(data.get("subject") or ""),
            stated_confidence=float(data.get("stated_confidence") or 0.0),
            due_at=str(data.get("due_at") or ""),
            late=bool(data.get("late")),
            observed=data.get("observed"),
            belief=data.get("belief"),
            squared_error=float(data.get("squared_error") or 0.0),
        )


_COLUMNS = (
    "id, mind, proposition, subject, stated_confidence, due_at, status, belief_id,"
    " created_at, resolved_at, observed, event_id, resolved_event_id"
)


def check_confidence(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"a prediction's stated confidence is between 0 and 1, not {value}")
    return float(value)


def get_prediction(db: Database, prediction_id: int) -> Prediction:
    """One prediction, or `PredictionNotFound`."""
    row = db.execute(f"SELECT {_COLUMNS} FROM predictions WHERE id = ?", [prediction_id]).fetchone()
    if row is None:
        raise PredictionNotFound(
            f"prediction {prediction_id} does not exist; list a mind's predictions with `noemactl predictions MIND`"
        )
    return Prediction(*row)


_STATUSES = ("open", "hit", "miss")


def list_predictions(db: Database, mind: str, *, status: str | None = None, limit: int = 100) -> list[Prediction]:
    """A mind's predictions, soonest due first (ties by id), optionally of one status."""
    sql = f"SELECT {_COLUMNS} FROM predictions WHERE mind = ?"
    params: list[Any] = [mind]
    if status in _STATUSES:
        # Written out, not bound: with `status = ?` SQLite prepares the statement again at every run (a bound
        # value decides whether the partial index predictions_open_due applies), 20 µs a narrative.
        sql += f" AND status = '{status}'"
    elif status is not None:
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY due_at, id LIMIT ?"
    params.append(limit)
    return [Prediction(*r) for r in db.execute(sql, params).fetchall()]


def due_predictions(db: Database, mind: str, now: float) -> list[Prediction]:
    """The mind's open predictions whose due time is at or before `now`, soonest due first."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM predictions WHERE mind = ? AND status = 'open' AND due_at <= ? ORDER BY due_at, id",
        [mind, iso(now)],
    ).fetchall()
    return [Prediction(*r) for r in rows]


def resolved_record(db: Database, mind: str) -> list[tuple[float, bool]]:
    """Each resolved prediction of `mind` as (stated confidence, whether it hit), oldest first."""
    rows = db.execute(
        "SELECT stated_confidence, status FROM predictions WHERE mind = ? AND status IN ('hit', 'miss') ORDER BY id", [mind]
    ).fetchall()
    return [(float(p), status == "hit") for p, status in rows]


def track_record(db: Database, mind: str) -> tuple[list[tuple[float, bool]], int]:
    """`resolved_record`, and how many of the mind's predictions are open."""
    (open_count,) = db.execute("SELECT count(*) FROM predictions WHERE mind = ? AND status = 'open'", [mind]).fetchone()
    return resolved_record(db, mind), int(open_count)


def check_resolvable(db: Database, mind: str, prediction_id: int) -> Prediction:
    """The open prediction an outcome may resolve, or a 404, 422 or 409 with a sentence."""
    prediction = get_prediction(db, prediction_id)
    if prediction.mind != mind:
        raise InvalidInput(f"prediction {prediction_id} belongs to mind {prediction.mind!r}, not {mind!r}")
    if prediction.status != "open":
        raise PredictionResolved(
            f"prediction {prediction_id} was already resolved as a {prediction.status} at {prediction.resolved_at};"
            " an outcome is final (state a new prediction instead)"
        )
    earlier = stored_outcome(db, mind, prediction_id)
    if earlier is not None:
        raise PredictionResolved(
            f"an outcome for prediction {prediction_id} is already stored (event {earlier}); an outcome is final"
        )
    return prediction


def make_prediction(
    db: Database,
    *,
    mind: str,
    proposition: str,
    subject: str,
    confidence: float,
    due_at: float,
    brought_by: int,
    now: float,
    cycle_id: str | None = None,
    cites: tuple[Ref, ...] = (),
    actor: str = ACTOR,
) -> tuple[Prediction, list[Event]]:
    """Record a prediction and the hypothesis it rests on (a writer job, or part of one).

    Returns the prediction and the events written: the belief's
    `belief_created`/`belief_updated`, then `prediction_made`.
    """
    proposition, _ = check_proposition(proposition, subject)
    confidence = check_confidence(confidence)
    belief, belief_event = add_evidence(
        db,
        mind=mind,
        proposition=proposition,
        subject=subject,
        kind="hypothesis",
        stance="support",
        weight=1.0,
        source=PREDICTION_SOURCE,
        credibility=confidence,
        brought_by=brought_by,
        now=now,
        actor=actor,
        cycle_id=cycle_id,
        cites=cites,
    )
    at = iso(now)
    due = iso(due_at)
    prediction_id = int(
        db.execute(
            "INSERT INTO predictions (mind, proposition, subject, stated_confidence, due_at, status, belief_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, 'open', ?, ?)",
            [mind, proposition, belief.subject, confidence, due, belief.id, at],
        ).lastrowid
        or 0
    )
    made = append(
        db,
        EventDraft(
            mind=mind,
            kind="prediction_made",
            actor=actor,
            text=proposition,
            cycle_id=cycle_id,
            causation_id=brought_by,
            refs=[*cites, Ref("belief", belief.id)],
            data={
                "prediction": prediction_id,
                "proposition": proposition,
                "subject": belief.subject,
                "stated_confidence": confidence,
                "due_at": due,
                "belief": belief.id,
            },
        ),
        now,
    )
    db.execute("UPDATE predictions SET event_id = ? WHERE id = ?", [made.id, prediction_id])
    return get_prediction(db, prediction_id), [belief_event, made]


def resolve_prediction(
    db: Database,
    *,
    prediction_id: int,
    result: str,
    brought_by: int,
    now: float,
    observed: str | None = None,
    cycle_id: str | None = None,
    cites: tuple[Ref, ...] = (),
    actor: str = ACTOR,
) -> tuple[Prediction, list[Event]]:
    """Resolve an open prediction as a hit or a miss (a writer job, or part of one).

    Writes `prediction_resolved` (caused by `brought_by`, the outcome), then
    downstream of it the belief's evidence (`belief_updated`) and, for a
    missed hypothesis, its rejection. `PredictionResolved` if it is not open.
    Returns the prediction and the events written, in order.
    """
    if result not in RESULTS:
        raise InvalidInput(f"an outcome is a hit or a miss, not {result!r}")
    prediction = get_prediction(db, prediction_id)
    if prediction.status != "open":
        raise PredictionResolved(f"prediction {prediction_id} was already resolved as a {prediction.status}; an outcome is final")
    at = iso(now)
    hit = result == "hit"
    refs = [*cites]
    if prediction.event_id is not None:
        refs.append(Ref("event", prediction.event_id))
    if prediction.belief_id is not None:
        refs.append(Ref("belief", prediction.belief_id))
    db.execute(
        "UPDATE predictions SET status = ?, resolved_at = ?, observed = ? WHERE id = ?", [result, at, observed, prediction_id]
    )
    resolved = append(
        db,
        EventDraft(
            mind=prediction.mind,
            kind="prediction_resolved",
            actor=actor,
            text=f"{result}: {prediction.proposition}" + (f" (observed: {observed})" if observed else ""),
            cycle_id=cycle_id,
            causation_id=brought_by,
            refs=refs,
            data=Resolution(
                prediction=prediction_id,
                result=result,
                proposition=prediction.proposition,
                subject=prediction.subject,
                stated_confidence=prediction.stated_confidence,
                due_at=prediction.due_at,
                late=prediction.is_overdue(now),
                observed=observed,
                belief=prediction.belief_id,
                squared_error=round((prediction.stated_confidence - (1.0 if hit else 0.0)) ** 2, 6),
            ).to_data(),
        ),
        now,
    )
    db.execute("UPDATE predictions SET resolved_event_id = ? WHERE id = ?", [resolved.id, prediction_id])
    events = [resolved]
    if prediction.belief_id is not None:
        rested_on = get_belief(db, prediction.belief_id)
        belief, updated = add_evidence(
            db,
            mind=prediction.mind,
            proposition=rested_on.proposition,
            subject=rested_on.subject,
            kind="observation",
            stance="support" if hit else "contradict",
            weight=1.0,
            source=OUTCOME_SOURCE,
            credibility=1.0,
            brought_by=resolved.id,
            now=now,
            actor=actor,
            cycle_id=cycle_id,
        )
        events.append(updated)
        if not hit and belief.kind == "hypothesis" and belief.status in ("active", "contested"):
            events.append(
                reject_hypothesis(
                    db, belief_id=belief.id, prediction_id=prediction_id, cause=resolved.id, now=now, actor=actor, cycle_id=cycle_id
                )
            )
    return get_prediction(db, prediction_id), events


def resolutions(db: Database, mind: str, lo: int, hi: int) -> list[tuple[int, int | None, Resolution]]:
    """The mind's `prediction_resolved` events with id in [lo, hi], oldest first: (event id, its cause, the payload)."""
    return [
        (int(event_id), cause, Resolution.from_data(json.loads(raw)))
        for event_id, cause, raw in db.execute(
            "SELECT id, causation_id, data FROM events WHERE mind = ? AND kind = 'prediction_resolved' AND id >= ? AND id <= ? ORDER BY id",
            [mind, lo, hi],
        )
    ]


def events_held(db: Database, low: int, high: int) -> set[int]:
    """The events in [low, high] a prediction was made or resolved by; archiving keeps them."""
    rows = db.execute(
        "SELECT event_id FROM predictions WHERE event_id BETWEEN ?1 AND ?2"
        " UNION SELECT resolved_event_id FROM predictions WHERE resolved_event_id BETWEEN ?1 AND ?2",
        [low, high],
    )
    return {row[0] for row in rows}
