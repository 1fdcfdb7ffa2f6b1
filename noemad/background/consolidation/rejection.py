"""Rejecting a generalisation (`noemactl consolidate reject MEMORY_ID`).

Only a semantic memory consolidation wrote (one with a `consolidations`
row) can be rejected. `reject` writes a `generalisation_rejected`
event (actor the operator, text the reason or DEFAULT_REASON, citing the
memory and its belief); then, caused by it, the memory is retracted and the
belief set `rejected` by a correction (confidence 0): a rejected belief
records later evidence without being moved by it. The belief is found
through the recorded link: the event that caused the memory's
memory_created event is the belief's. The episodes stay consolidated: were
they freed, the next run would write the generalisation again.
"""

from __future__ import annotations

from sqlite_utils import Database

from noemad.background.consolidation.recording import episodes_in
from noemad.cognition.beliefs.corrections import correct
from noemad.cognition.memory.model import MAX_REASON
from noemad.cognition.memory.reads import get_memory
from noemad.cognition.memory.writing import retract
from noemad.errors import Conflict, InvalidInput
from noemad.events import Event, EventDraft, Ref, append

REJECTED = "generalisation_rejected"
DEFAULT_REASON = "rejected by an operator"


def generalisation_belief(db: Database, memory_id: int) -> int | None:
    """The belief a consolidated memory states: the subject of the event that caused its memory_created event."""
    row = db.execute(
        "SELECT cause.subject_id FROM events created JOIN events cause ON cause.id = created.causation_id"
        " WHERE created.subject_type = 'memory' AND created.subject_id = ? AND created.kind = 'memory_created'"
        " AND cause.subject_type = 'belief' ORDER BY created.id LIMIT 1",
        [memory_id],
    ).fetchone()
    return None if row is None else int(row[0])


def reject(db: Database, *, memory_id: int, reason: str, now: float, actor: str) -> Event:
    """Reject a generalisation consolidation made (a writer job; see the module docstring). Returns the `generalisation_rejected` event.

    `InvalidInput` if the memory is not one consolidation wrote, `Conflict`
    if it was already rejected or retracted; nothing is written then.
    """
    memory = get_memory(db, memory_id)
    reason = " ".join((reason or "").split()) or DEFAULT_REASON
    if len(reason) > MAX_REASON:
        raise InvalidInput(f"a rejection's reason holds at most {MAX_REASON:,} characters, not {len(reason):,}")
    episodes = episodes_in(db, memory.id)
    if memory.kind != "semantic" or episodes == 0:
        raise InvalidInput(
            f"memory {memory.id} is a {memory.kind} memory consolidation did not write, so it is no generalisation to reject;"
            " retract it instead, or name a memory listed in a consolidation job's clusters (`noemactl jobs show JOB`)"
        )
    if memory.status == "retracted":
        raise Conflict(f"generalisation {memory.id} is already retracted; nothing was changed")
    belief_id = generalisation_belief(db, memory.id)
    refs = [Ref("memory", memory.id)] + ([Ref("belief", belief_id)] if belief_id is not None else [])
    event = append(
        db,
        EventDraft(
            mind=memory.mind,
            kind=REJECTED,
            actor=actor,
            text=reason,
            refs=refs,
            data={"memory": memory.id, "belief": belief_id, "episodes": episodes, "reason": reason},
        ),
        now,
    )
    retract(db, memory_id=memory.id, reason=reason, now=now, actor=actor, cause=event.id)
    if belief_id is not None:
        correct(db, belief_id=belief_id, status="rejected", confidence_value=None, reason=reason, brought_by=event.id, now=now, actor=actor)
    return event
