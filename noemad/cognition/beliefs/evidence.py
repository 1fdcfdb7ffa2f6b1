"""One item of evidence added to a belief (made if new), and items withdrawn: each a belief event of its own.

An item is added as many are, by `noemad.cognition.beliefs.bulk`, with one item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.beliefs.bulk import EvidenceColumns, Evidenced, add_evidence_bulk
from noemad.cognition.beliefs.change import BeliefChange
from noemad.cognition.beliefs.model import Belief, standing_items
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.beliefs.recording import appended, held, recompute
from noemad.errors import InvalidInput
from noemad.events import Event, EventDraft, Ref


def add_evidence(
    db: Database,
    *,
    mind: str,
    proposition: str,
    subject: str,
    kind: str,
    stance: Literal["support", "contradict"],
    weight: float,
    source: str,
    brought_by: int,
    now: float,
    actor: str,
    cycle_id: str | None = None,
    cites: Sequence[Ref] = (),
    credibility: float | None = None,
) -> tuple[Belief, Event]:
    """Add one item of evidence for (or against) a proposition, creating the belief if new (a writer job).

    `add_evidence_bulk` with one item: its checks, its writes, its
    confidence; the event names the item (`evidence_id`, `stance`,
    `weight`, `credibility`, `source`). Credibility defaults to the mind's
    trust in `source`. The event is caused by `brought_by` (the event that
    brought the evidence, one of the mind's) and cites `cites`.
    """
    item = EvidenceColumns(stances=(stance,), weights=(weight,), sources=(source,), brought_by=(brought_by,), credibilities=(credibility,))
    (added,) = add_evidence_bulk(
        db, mind=mind, kind=kind, batches=[Evidenced(proposition, subject, item, cites)], now=now, actor=actor, cause=brought_by,
        cycle_id=cycle_id, itemised=True,
    )
    return get_belief(db, added.belief_id), added.event


def withdraw_evidence(
    db: Database,
    *,
    belief_id: int,
    evidence_ids: Sequence[int],
    reason: str,
    cause: int,
    now: float,
    actor: str,
    cycle_id: str | None = None,
    parents: Sequence[int] = (),
    check: str | None = None,
    lifted_by: int | None = None,
) -> tuple[Belief, Event]:
    """Withdraw items of a belief's evidence (a writer job): kept, marked with the event that withdrew them, no longer counted.

    The `belief_updated` event is caused by `cause` (what made the items
    stand no more: the event that brought the evidence that lifted a
    warning), has `parents` (the warnings whose items these were), says
    the confidence before and after and `reason` in its text, and gives
    them in its data. A pinned or rejected belief records
    the withdrawal without moving, as it records new evidence.
    """
    belief = get_belief(db, belief_id)
    wanted = set(evidence_ids)
    mine = {e.id for e in belief.evidence if e.standing}
    if not wanted or not wanted <= mine:
        raise InvalidInput(f"belief {belief_id} has no standing evidence {sorted(wanted - mine) or '(none named)'} to withdraw")
    new_conf, new_status = recompute(belief.status, standing_items(e for e in belief.evidence if e.id not in wanted))
    after = new_conf if new_conf is not None else belief.confidence
    event = appended(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=f"{belief.confidence:.2f} -> {after:.2f}: {reason}",  # front-loaded: a timeline shows the first 60 characters
            cycle_id=cycle_id,
            causation_id=cause,
            parents=sorted(set(parents)),
            subject=Ref("belief", belief_id),
            data=BeliefChange(
                belief.confidence, after, belief.status, new_status, held=held(belief.status, new_conf is not None),
                withdrawn=tuple(sorted(wanted)), check=check, lifted_by=lifted_by, reason=reason,
            ).to_data(),
        ),
        now,
        support=-sum(1 for e in belief.evidence if e.id in wanted and e.stance == "support"),
        contradict=-sum(1 for e in belief.evidence if e.id in wanted and e.stance == "contradict"),
    )
    marks = ",".join("?" * len(wanted))
    db.execute(f"UPDATE evidence SET withdrawn_by = ? WHERE id IN ({marks})", [event.id, *sorted(wanted)])
    if new_conf is not None:
        db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, iso(now), belief_id])
    return get_belief(db, belief_id), event

