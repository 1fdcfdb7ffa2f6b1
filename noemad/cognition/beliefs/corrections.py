"""Beliefs set by what outranks their evidence: an operator's correction, and a missed prediction rejecting its hypothesis."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.beliefs.change import BeliefChange
from noemad.cognition.beliefs.model import (
    OPERATOR_STATUSES,
    Belief,
    BeliefNotFound,
    standing_items,
)
from noemad.cognition.beliefs.queries import find_belief, get_belief
from noemad.cognition.beliefs.recording import appended, recompute
from noemad.errors import InvalidInput
from noemad.events import Event, EventDraft, Ref


def correct(
    db: Database,
    *,
    belief_id: int,
    status: str | None,
    confidence_value: float | None,
    reason: str,
    brought_by: int,
    now: float,
    actor: str,
    cycle_id: str | None = None,
) -> tuple[Belief, Event]:
    """An operator's correction (a writer job): pin at a confidence, reject, or set active again.

    A confidence pins the belief there unless another status is given;
    `active` unpins and lets the evidence decide again.
    """
    belief = get_belief(db, belief_id)
    if status is None:
        status = "pinned" if confidence_value is not None else None
    if status is None:
        raise InvalidInput("a correction sets a status (active, pinned, rejected) or a confidence, or both")
    if status not in OPERATOR_STATUSES:
        raise InvalidInput(f"operators set a belief {', '.join(OPERATOR_STATUSES)}, not {status!r}")
    if confidence_value is not None and not 0.0 <= confidence_value <= 1.0:
        raise InvalidInput(f"confidence is between 0 and 1, not {confidence_value}")
    if status == "active":
        new_conf, new_status = recompute("active", standing_items(belief.evidence))
        assert new_conf is not None
    else:
        new_conf = belief.confidence if confidence_value is None else confidence_value
        new_status = status
        if status == "rejected" and confidence_value is None:
            new_conf = 0.0
    db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, iso(now), belief_id])
    event = appended(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=reason,
            cycle_id=cycle_id,
            causation_id=brought_by,
            subject=Ref("belief", belief_id),
            data=BeliefChange(belief.confidence, new_conf, belief.status, new_status, correction=True, reason=reason).to_data(),
        ),
        now,
    )
    return get_belief(db, belief_id), event



def reject_hypothesis(
    db: Database,
    *,
    belief_id: int,
    prediction_id: int,
    cause: int,
    now: float,
    actor: str,
    cycle_id: str | None,
) -> Event:
    """A missed prediction rejects the hypothesis it rested on: status `rejected`, confidence 0 (a writer job, or part of one)."""
    belief = find_belief(db, belief_id)
    if belief is None:
        raise BeliefNotFound(f"belief {belief_id} does not exist")
    db.execute("UPDATE beliefs SET confidence = 0, status = 'rejected', updated_at = ? WHERE id = ?", [iso(now), belief_id])
    return appended(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=f"rejected: prediction {prediction_id} missed",
            cycle_id=cycle_id,
            causation_id=cause,
            subject=Ref("belief", belief_id),
            data=BeliefChange(
                belief.confidence, 0.0, belief.status, "rejected", rejected_by="outcome", prediction=prediction_id,
                reason="a hypothesis whose prediction missed is rejected; outcomes are decisive for hypotheses",
            ).to_data(),
        ),
        now,
    )

