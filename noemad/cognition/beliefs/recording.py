"""What every change to a belief shares: its belief found or made, its confidence recomputed, its event and history written."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.cognition import belief_history
from noemad.cognition.beliefs.change import BeliefChange
from noemad.cognition.beliefs.model import normalise
from noemad.cognition.confidence import Item, assessed
from noemad.events import Event, EventDraft, append


def held(status: str, moved: bool) -> str | None:
    """The `held` note of a change that did not move a pinned or rejected belief; None if it moved."""
    return None if moved else f"the belief is {status}; evidence is recorded but does not move it"


def appended(db: Database, draft: EventDraft, now: float, *, support: int = 0, contradict: int = 0) -> Event:
    """Append a belief event (its data a `BeliefChange`) and record the belief's state after it (`support`, `contradict`: how its counts moved)."""
    event = append(db, draft, now)
    change = BeliefChange.from_data(draft.data)
    assert draft.subject is not None
    belief_history.record(
        db, mind=draft.mind, belief_id=draft.subject.id, event_id=event.id, at=event.at,
        confidence=change.confidence_to, status=change.status_to, support=support, contradict=contradict,
    )
    return event


def recompute(status: str, items: list[Item]) -> tuple[float | None, str]:
    """The confidence and status evidence gives; None keeps an operator's pinned or rejected value."""
    if status in ("pinned", "rejected"):
        return None, status
    value, split = assessed(items)
    return value, "contested" if split else "active"


def find_or_create(
    db: Database, *, mind: str, proposition: str, subject_key: str, kind: str, at: str
) -> tuple[int, bool, float, str]:
    """The mind's belief in a checked `proposition`: (id, whether made now, confidence, status); made active at 0 if new."""
    key = normalise(proposition)
    row = db.execute(
        "SELECT id, confidence, status FROM beliefs WHERE mind = ? AND proposition_key = ? AND proposition_key != ''", [mind, key]
    ).fetchone()
    if row is not None:
        return int(row[0]), False, float(row[1]), str(row[2])
    cur = db.execute(
        "INSERT INTO beliefs (mind, proposition, proposition_key, subject, kind, confidence, status, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, 0, 'active', ?, ?)",
        [mind, proposition, key, subject_key, kind, at, at],
    )
    return int(cur.lastrowid or 0), True, 0.0, "active"
