"""Each belief's state after every event that changed it: the table that answers "as of" fast.

A belief's events already say its confidence and status before and after
each change, but not how much evidence it then stood on, and finding each
belief's newest event before a time among a million would cost a scan. So
`noemad.cognition.beliefs.recording` calls `record` for every `belief_created` and
`belief_updated` event it appends, in the same transaction: one row per
event (keyed by the belief, then the event), holding the belief's confidence,
status and standing evidence counts right after it, and whether its
confidence or status moved (a well-evidenced belief's items mostly move
neither: its history is its moves). A row is never changed;
rows go only with their mind. Belief events kept by archiving stay here too
(their rows are small; a belief's history reads them).

This module owns `belief_history`; `noemad.cognition.asof` reads it through
the functions here, and through `beliefs.beliefs_then`, which reads each
belief's columns beside its state then in one query (tests/test_owners.py
says why).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sqlite_utils import Database


@dataclass(frozen=True)
class State:
    """A belief's state right after one of its events."""

    belief_id: int
    event_id: int
    confidence: float
    status: str
    support: int
    contradict: int
    at: str


_COLUMNS = "belief_id, event_id, confidence, status, support, contradict, at"


def record(
    db: Database, *, mind: str, belief_id: int, event_id: int, at: str, confidence: float, status: str, support: int, contradict: int
) -> None:
    """Record a belief's state after `event_id`; `support` and `contradict` are how its standing counts moved (a writer job).

    The counts are carried from the belief's previous row, so recording
    costs one index probe however much evidence the belief has.
    """
    row = db.execute(
        "SELECT confidence, status, support, contradict FROM belief_history WHERE belief_id = ? ORDER BY event_id DESC LIMIT 1", [belief_id]
    ).fetchone()
    before_confidence, before_status, before_support, before_contradict = row if row is not None else (None, None, 0, 0)
    moved = (before_confidence, before_status) != (confidence, status)
    db.execute(
        "INSERT INTO belief_history (event_id, mind, belief_id, confidence, status, support, contradict, moved, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [event_id, mind, belief_id, confidence, status, before_support + support, before_contradict + contradict, int(moved), at],
    )


def states_at(db: Database, belief_ids: Sequence[int], through: int) -> list[State]:
    """Each of these beliefs' state after its newest event with id <= `through`; beliefs with none then are left out.

    One probe per belief of the table's key (belief_id, event_id).
    """
    if not belief_ids:
        return []
    rows = db.execute(
        f"SELECT {', '.join('h.' + c.strip() for c in _COLUMNS.split(','))} FROM json_each(?) j"
        " JOIN belief_history h ON h.belief_id = j.value"
        " AND h.event_id = (SELECT max(event_id) FROM belief_history WHERE belief_id = j.value AND event_id <= ?)",
        [json.dumps(list(belief_ids)), through],
    ).fetchall()
    return [State(*row) for row in rows]


class Logged(NamedTuple):
    """A belief's state after one of its events, beside that event (None where archived) and its cause's kind."""

    event_id: int
    at: str
    confidence: float
    status: str
    support: int
    contradict: int
    kind: str | None
    actor: str | None
    cause: int | None
    data: str | None
    cause_kind: str | None


def logged(db: Database, belief_id: int, *, after: int = 0, through: int | None = None, moved_only: bool = False) -> list[Logged]:
    """A belief's states after its events with id in (`after`, `through`], oldest first, each with its event; only its moves if `moved_only`.

    One run of this table's key, each event found by its id: a belief's
    ten thousand changes are read in one query.
    """
    sql = (
        "SELECT h.event_id, h.at, h.confidence, h.status, h.support, h.contradict, e.kind, e.actor, e.causation_id, e.data, c.kind"
        " FROM belief_history h LEFT JOIN events e ON e.id = h.event_id LEFT JOIN events c ON c.id = e.causation_id"
        " WHERE h.belief_id = ? AND h.event_id > ? AND h.event_id <= ?" + (" AND h.moved" if moved_only else "") + " ORDER BY h.event_id"
    )
    return [Logged(*row) for row in db.execute(sql, [belief_id, after, through if through is not None else 1 << 62])]


def moved_between(db: Database, mind: str, after: int, through: int) -> list[int]:
    """Ids of the mind's beliefs with a recorded change in (`after`, `through`], by id."""
    rows = db.execute(
        "SELECT DISTINCT belief_id FROM belief_history WHERE mind = ? AND event_id > ? AND event_id <= ? ORDER BY belief_id",
        [mind, after, through],
    ).fetchall()
    return [int(r[0]) for r in rows]
