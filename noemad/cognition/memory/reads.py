"""Reads of a mind's memories: by id, listed, as they stood after an event, the operator's search, and what archiving must keep."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from sqlite_utils import Database

from noemad.cognition.memory.model import (
    IDS_SQL,
    MAX_LIST,
    STATUSES,
    Memory,
    check_kind,
    check_limit,
)
from noemad.cognition.memory.terms import fts_query, query_terms
from noemad.errors import InvalidInput, NotFound
from noemad.minds import get_mind

_COLUMNS = "id, mind, kind, text, importance, created_at, last_access, access_count, status, event_id"


_SEARCH_SQL = """
SELECT m.id
  FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
 WHERE memories_fts MATCH :match AND m.mind = :mind AND m.status = 'active' AND (:kind IS NULL OR m.kind = :kind)
 ORDER BY bm25(memories_fts), m.id
 LIMIT :limit
"""


def memories_with_links(db: Database, ids: Sequence[int]) -> dict[int, Memory]:
    """The memories with these ids, with their links; missing ids are left out."""
    if not ids:
        return {}
    step = json.dumps(list(ids))
    links: dict[int, list[int]] = {}
    for memory_id, source in db.execute(
        f"SELECT memory_id, derived_from FROM memory_links WHERE memory_id IN {IDS_SQL} ORDER BY memory_id, derived_from",
        [step],
    ):
        links.setdefault(memory_id, []).append(source)
    out: dict[int, Memory] = {}
    rows = db.execute(f"SELECT {_COLUMNS}, tags FROM memories WHERE id IN {IDS_SQL}", [step])
    for memory_id, mind, kind, text, importance, created_at, last_access, access_count, status, event_id, tags in rows:
        out[memory_id] = Memory(
            memory_id, mind, kind, text, importance, created_at, last_access, access_count, status, event_id,
            derived_from=tuple(links.get(memory_id, ())), tags=tuple(json.loads(tags or "[]")),
        )
    return out


def get_memory(db: Database, memory_id: int) -> Memory:
    """One memory by id, or `NotFound` with a hint."""
    found = memories_with_links(db, [memory_id])
    if memory_id not in found:
        raise NotFound(f"memory {memory_id} does not exist; list a mind's memories with `noemactl memories MIND`")
    return found[memory_id]


def memories_by_id(db: Database, ids: Sequence[int]) -> list[Memory]:
    """The memories with these ids, in the order given (missing ids left out)."""
    found = memories_with_links(db, ids)
    return [found[i] for i in ids if i in found]


def without_episode(db: Database, mind: str, kinds: Sequence[str]) -> list[int]:
    """The mind's stored events of `kinds` that no episodic memory records yet, oldest first.

    Perception writes an episode for every stimulus a cycle takes, in the
    cycle's one transaction, so this is the set of stimuli no cycle has
    taken: deferred, denied or stored just before a crash alike. A set, not a
    high-water mark, so a turn's links may be capped without losing track.
    """
    marks = ",".join("?" * len(kinds))
    rows = db.execute(
        f"SELECT e.id FROM events e WHERE e.mind = ? AND e.kind IN ({marks})"
        " AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.event_id = e.id AND m.kind = 'episodic') ORDER BY e.id",
        [mind, *kinds],
    ).fetchall()
    return [r[0] for r in rows]


def list_memories(
    db: Database, mind: str, kind: str | None = None, status: str | None = None, limit: int = 100, since: int = 0
) -> list[Memory]:
    """A mind's memories with ids above `since`, oldest first, optionally of one kind or status."""
    get_mind(db, mind)
    check_limit(limit, MAX_LIST)
    sql = "SELECT id FROM memories WHERE mind = ? AND id > ?"
    params: list[Any] = [mind, since]
    if kind is not None:
        check_kind(kind)
        sql += " AND kind = ?"
        params.append(kind)
    if status is not None:
        if status not in STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY id LIMIT ?"
    params.append(limit)
    ids = [row[0] for row in db.execute(sql, params)]
    found = memories_with_links(db, ids)
    return [found[i] for i in ids]


def _written_and_retracted(db: Database, mind: str, through: int) -> tuple[int, set[int]]:
    """The highest id of the mind's memories written by event `through`, and the ids of those retracted by then."""
    row = db.execute(
        "SELECT subject_id FROM events WHERE mind = ? AND kind = 'memory_created' AND id <= ? ORDER BY id DESC LIMIT 1", [mind, through]
    ).fetchone()
    retracted = {
        int(r[0]) for r in db.execute("SELECT subject_id FROM events WHERE mind = ? AND kind = 'memory_retracted' AND id <= ?", [mind, through])
    }
    return (int(row[0]) if row and row[0] is not None else 0), retracted


def memory_counts_at(db: Database, mind: str, through: int) -> tuple[int, int]:
    """How many of the mind's memories were active and how many retracted right after event `through`."""
    bound, retracted = _written_and_retracted(db, mind, through)
    (written,) = db.execute("SELECT count(*) FROM memories WHERE mind = ? AND id <= ?", [mind, bound]).fetchone()
    return int(written) - len(retracted), len(retracted)


def memories_at(
    db: Database, mind: str, through: int, kind: str | None = None, status: str | None = None, limit: int = 100
) -> list[Memory]:
    """A mind's memories as they stood right after event `through`, oldest first: written by then, retracted or not then.

    Memory ids grow with their `memory_created` events, so those written by
    then are the ids up to the newest such event's. The access bookkeeping
    is counted from the `memory_retrieved` events up to then (each cites
    what it recalled), so nothing read is today's but the text.
    """
    get_mind(db, mind)
    check_limit(limit, MAX_LIST)
    if kind is not None:
        check_kind(kind)
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    bound, retracted = _written_and_retracted(db, mind, through)
    sql = "SELECT id FROM memories WHERE mind = ? AND id <= ?" + (" AND kind = ?" if kind is not None else "") + " ORDER BY id"
    ids: list[int] = []
    for (memory_id,) in db.execute(sql, [mind, bound, *([kind] if kind is not None else [])]):
        if status is None or (memory_id in retracted) == (status == "retracted"):
            ids.append(int(memory_id))
            if len(ids) == limit:
                break
    found = memories_with_links(db, ids)
    accessed = {
        int(m): (int(n), str(last))
        for m, n, last in db.execute(
            "SELECT r.ref_id, count(*), max(e.at) FROM json_each(?) j JOIN event_refs r ON r.ref_type = 'memory' AND r.ref_id = j.value"
            " JOIN events e ON e.id = r.event_id WHERE e.kind = 'memory_retrieved' AND e.id <= ? GROUP BY r.ref_id",
            [json.dumps(ids), through],
        )
    }
    return [
        replace(
            found[i], status="retracted" if i in retracted else "active",
            access_count=accessed.get(i, (0, ""))[0], last_access=accessed[i][1] if i in accessed else None,
        )
        for i in ids
        if i in found
    ]


def search(db: Database, mind: str, text: str, limit: int = 20, kind: str | None = None) -> list[Memory]:
    """A mind's active memories that match `text`, best bm25 first (ties by id), optionally of one kind.

    Read-only: unlike `retrieve` it neither touches access times nor writes an
    event. The text is turned into terms as retrieval does it.
    """
    get_mind(db, mind)
    check_limit(limit, MAX_LIST)
    if kind is not None:
        check_kind(kind)
    match = fts_query(query_terms(text))
    if match is None:
        return []
    ids = [row[0] for row in db.execute(_SEARCH_SQL, {"match": match, "mind": mind, "kind": kind, "limit": limit})]
    found = memories_with_links(db, ids)
    return [found[i] for i in ids]


def events_held(db: Database, mind: str, low: int, high: int, stimulus_kinds: Sequence[str]) -> set[int]:
    """The mind's events in [low, high] memory still needs; archiving keeps them.

    The history of every memory that is not an episode (generalisations,
    lessons: few, and what they were made from is their provenance), and the
    stimuli no episode records yet (no cycle has taken them: see `without_episode`).
    """
    marks = ",".join("?" * len(stimulus_kinds))
    rows = db.execute(
        "SELECT e.id FROM events e JOIN memories m ON m.id = e.subject_id"
        " WHERE e.mind = ? AND e.id BETWEEN ? AND ? AND e.subject_type = 'memory' AND m.kind != 'episodic'"
        f" UNION SELECT e.id FROM events e WHERE e.mind = ? AND e.id BETWEEN ? AND ? AND e.kind IN ({marks})"
        " AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.event_id = e.id AND m.kind = 'episodic')",
        [mind, low, high, mind, low, high, *stimulus_kinds],
    )
    return {row[0] for row in rows}


def episodes_recording(db: Database, event_ids: Sequence[int]) -> list[tuple[int, int]]:
    """(memory, event) for each memory that records one of `event_ids` (an episode and its stimulus)."""
    return db.execute(
        "WITH s(id) AS (SELECT value FROM json_each(?)) SELECT id, event_id FROM memories WHERE event_id IN s ORDER BY id",
        [json.dumps(list(event_ids))],
    ).fetchall()


def episodes_of(db: Database, mind: str, event_ids: Iterable[int]) -> list[int]:
    """The ids of `mind`'s episodic memories that record one of `event_ids` (their stimuli), in id order."""
    ids = sorted(set(event_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    # By event_id alone, so SQLite takes memories_event (with mind and kind it
    # would walk all of the mind's memories); the rest is checked here.
    rows = db.execute(f"SELECT id, mind, kind FROM memories WHERE event_id IN ({marks}) ORDER BY id", ids).fetchall()
    return [r[0] for r in rows if r[1] == mind and r[2] == "episodic"]
