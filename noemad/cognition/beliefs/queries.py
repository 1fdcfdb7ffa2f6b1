"""Reads of beliefs and their evidence: what other modules need, so that none of them writes SQL on these tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.cognition.beliefs.change import BeliefChange
from noemad.cognition.beliefs.model import (
    COUNTER_SOURCE,
    Belief,
    BeliefNotFound,
    Evidence,
    normalise,
)

_BELIEF_COLUMNS = "id, mind, proposition, subject, kind, confidence, status, created_at, updated_at"


def evidence_of(db: Database, belief_ids: Sequence[int]) -> dict[int, list[Evidence]]:
    """Every item of evidence of these beliefs, withdrawn ones too, by belief, oldest first."""
    out: dict[int, list[Evidence]] = {}
    if not belief_ids:
        return out
    marks = ",".join("?" * len(belief_ids))
    for row in db.execute(
        f"SELECT belief_id, id, stance, weight, credibility, source, kind, event_id, at, withdrawn_by FROM evidence"
        f" WHERE belief_id IN ({marks}) ORDER BY id",
        list(belief_ids),
    ):
        out.setdefault(row[0], []).append(Evidence(*row[1:]))
    return out


def _beliefs(db: Database, rows: list[tuple[Any, ...]]) -> list[Belief]:
    evidence = evidence_of(db, [r[0] for r in rows])
    return [
        Belief(belief_id, mind, proposition, subject, kind, confidence, status, created_at, updated_at, tuple(evidence.get(belief_id, ())))
        for belief_id, mind, proposition, subject, kind, confidence, status, created_at, updated_at in rows
    ]


def get_belief(db: Database, belief_id: int) -> Belief:
    """One belief with its evidence, or `BeliefNotFound`."""
    rows = db.execute(f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE id = ?", [belief_id]).fetchall()
    if not rows:
        raise BeliefNotFound(f"belief {belief_id} does not exist; list a mind's beliefs with `noemactl beliefs MIND`")
    return _beliefs(db, rows)[0]


def belief_events(db: Database, belief_id: int) -> list[int]:
    """The events that wrote and changed a belief, oldest first: where to start its timeline."""
    rows = db.execute(
        "SELECT id FROM events WHERE subject_type = 'belief' AND subject_id = ? ORDER BY id", [belief_id]
    ).fetchall()
    return [r[0] for r in rows]


def list_beliefs(
    db: Database, mind: str, *, subject: str | None = None, status: str | None = None, limit: int = 100
) -> list[Belief]:
    """A mind's beliefs, most confident first (ties by id)."""
    sql = f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE mind = ?"
    params: list[Any] = [mind]
    if subject is not None:
        sql += " AND subject = ?"
        params.append(normalise(subject))
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY confidence DESC, id LIMIT ?"
    params.append(limit)
    return _beliefs(db, db.execute(sql, params).fetchall())



def find_belief(db: Database, belief_id: int) -> Belief | None:
    """One belief without its evidence (a belief may have many thousands of items), or None."""
    row = db.execute(f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE id = ?", [belief_id]).fetchone()
    return None if row is None else Belief(*row)


def beliefs_then(
    db: Database, mind: str, through: int, *, subject_key: str | None = None, status: str | None = None, limit: int | None = None
) -> list[tuple[Any, ...]]:
    """The mind's beliefs as they stood right after event `through`, most confident first (ties by id), at most `limit`.

    Each row: id, proposition, subject, kind, confidence, status, support,
    contradict, created_at, the event of its newest change by then, and
    that event's time. The belief's columns read here never change after
    it is made; its state then is `belief_history`'s (beliefs created later
    have none and are left out). One query, sorted and cut in SQL: a mind of
    10,000 beliefs gives its top 1,000 without 10,000 rows reaching Python
    (bench/asof.py).
    """
    sql = (
        "SELECT b.id, b.proposition, b.subject, b.kind, h.confidence, h.status, h.support, h.contradict, b.created_at, h.event_id, h.at"
        " FROM beliefs b JOIN belief_history h ON h.belief_id = b.id"
        " AND h.event_id = (SELECT max(event_id) FROM belief_history WHERE belief_id = b.id AND event_id <= ?) WHERE b.mind = ?"
    )
    params: list[Any] = [through, mind]
    if subject_key is not None:
        sql += " AND b.subject = ?"
        params.append(subject_key)
    if status is not None:
        sql += " AND h.status = ?"
        params.append(status)
    sql += " ORDER BY h.confidence DESC, b.id LIMIT ?"
    params.append(-1 if limit is None else limit)
    return db.execute(sql, params).fetchall()


def find_by_proposition(db: Database, mind: str, proposition: str) -> Belief | None:
    """The mind's belief in `proposition` (as `normalise` keys it) without its evidence, or None."""
    row = db.execute(
        f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE mind = ? AND proposition_key = ? AND proposition_key != ''",
        [mind, normalise(proposition)],
    ).fetchone()
    return None if row is None else Belief(*row)


def evidence_counts(db: Database, belief_id: int) -> tuple[int, int]:
    """How many items support and how many contradict a belief (those withdrawn are not counted)."""
    support, contradict = db.execute(
        "SELECT coalesce(sum(stance = 'support'), 0), coalesce(sum(stance = 'contradict'), 0) FROM evidence"
        " WHERE belief_id = ? AND withdrawn_by IS NULL",
        [belief_id],
    ).fetchone()
    return int(support), int(contradict)


def support_items(db: Database, belief_ids: Sequence[int]) -> list[tuple[int, str, int]]:
    """(belief, source, event that brought it) of every supporting item of these beliefs, oldest first."""
    if not belief_ids:
        return []
    marks = ",".join("?" * len(belief_ids))
    return [
        (int(b), str(source), int(event))
        for b, source, event in db.execute(
            f"SELECT belief_id, source, event_id FROM evidence WHERE belief_id IN ({marks}) AND stance = 'support' ORDER BY id",
            list(belief_ids),
        )
    ]


def with_standing_counter(db: Database, belief_ids: Iterable[int]) -> list[int]:
    """Those of these beliefs that hold counter-evidence from COUNTER_SOURCE not withdrawn, by id (found on a partial index)."""
    ids = sorted(set(belief_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [
        int(b)
        for (b,) in db.execute(
            f"SELECT DISTINCT belief_id FROM evidence WHERE belief_id IN ({marks})"
            f" AND source = '{COUNTER_SOURCE}' AND stance = 'contradict' AND withdrawn_by IS NULL ORDER BY belief_id",
            ids,
        )
    ]


def contested_since(db: Database, mind: str, before: str) -> list[tuple[int, str]]:
    """(id, proposition) of the mind's contested beliefs that became contested at or before `before` (ISO), by id.

    Since when a belief is contested is the time of the newest event that
    moved it *into* `contested`; evidence arriving while it stays contested
    (more for one side, more for the other) does not restart that time.
    """
    # ORDER BY +b.id: ordered by the bare id, SQLite walked the mind's every belief by
    # beliefs_mind to skip a sort (1 ms a cycle at 10,000 beliefs); so it seeks the few
    # contested ones by beliefs_status and sorts them.
    return [
        (int(i), str(p))
        for i, p in db.execute(
            "SELECT b.id, b.proposition FROM beliefs b WHERE b.mind = ? AND b.status = 'contested'"
            " AND coalesce((SELECT max(e.at) FROM events e WHERE e.subject_type = 'belief' AND e.subject_id = b.id"
            "   AND e.kind IN ('belief_created', 'belief_updated') AND json_extract(e.data, '$.status.to') = 'contested'"
            "   AND json_extract(e.data, '$.status.from') IS NOT 'contested'), b.updated_at) <= ?"
            " ORDER BY +b.id",
            [mind, before],
        )
    ]


def fluent_beliefs(db: Database, mind: str, since: str) -> list[int]:
    """Ids of the mind's active or contested beliefs that rest only on FLUENT_KINDS, given such support at or after `since` (ISO).

    Found through the partial index on fluent support (the kinds are written
    out so SQLite can use it), then each belief checked for any other support.
    """
    return [
        int(i)
        for (i,) in db.execute(
            "SELECT DISTINCT f.belief_id FROM evidence f JOIN beliefs b ON b.id = f.belief_id"
            " WHERE f.mind = ? AND f.kind IN ('model_output', 'note') AND f.stance = 'support' AND f.at >= ?"
            " AND b.status IN ('active', 'contested')"
            " AND NOT EXISTS (SELECT 1 FROM evidence e WHERE e.belief_id = f.belief_id AND e.stance = 'support'"
            "   AND e.kind NOT IN ('model_output', 'note'))"
            " ORDER BY f.belief_id",
            [mind, since],
        )
    ]


def rejected_hypotheses(db: Database, mind: str, since: str, at_least: int = 1) -> list[tuple[str, int]]:
    """(subject, how many) of the mind's hypotheses rejected at or after `since` (ISO), for subjects with `at_least` of them."""
    return [
        (str(subject), int(count))
        for subject, count in db.execute(
            "SELECT subject, count(*) FROM beliefs WHERE mind = ? AND kind = 'hypothesis' AND status = 'rejected'"
            " AND updated_at >= ? GROUP BY subject HAVING count(*) >= ? ORDER BY subject",
            [mind, since, at_least],
        )
    ]


@dataclass(frozen=True)
class StatusChange:
    """A belief event that changed the belief's status or was a correction, with the belief as it is now."""

    event: int
    cause: int | None
    belief: int
    subject: str
    proposition: str
    status_now: str | None
    change: BeliefChange


def status_changes(db: Database, mind: str, lo: int, hi: int) -> list[StatusChange]:
    """The mind's belief events with id in [lo, hi] that changed a status or were corrections, oldest first.

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
    return [
        StatusChange(event_id, cause, int(belief_id), subject or "", proposition or "", status_now, BeliefChange.from_data(json.loads(raw)))
        for event_id, cause, belief_id, raw, subject, proposition, status_now in rows
    ]


def events_held(db: Database, mind: str, low: int, high: int) -> set[int]:
    """The mind's events in [low, high] a belief stands on: evidence, and every live belief's history; archiving keeps them."""
    rows = db.execute(
        "SELECT event_id FROM evidence WHERE event_id BETWEEN ?1 AND ?2 AND mind = ?3"
        " UNION SELECT e.id FROM events e JOIN beliefs b ON b.id = e.subject_id"
        " WHERE e.mind = ?3 AND e.id BETWEEN ?1 AND ?2 AND e.subject_type = 'belief'",
        [low, high, mind],
    )
    return {row[0] for row in rows}
