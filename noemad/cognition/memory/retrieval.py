"""Retrieval: the candidates FTS5 finds, scored by relevance, recency and importance (`rank`), and `retrieve`, which records the access."""

from __future__ import annotations

import json
from collections.abc import Collection

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.cognition.memory.model import (
    CANDIDATES,
    IDS_SQL,
    MAX_LIMIT,
    RECENCY_HALF_LIFE,
    RETRIEVAL_ACTOR,
    W_IMP,
    W_REC,
    W_REL,
    ScoredMemory,
    as_id,
    check_event_of,
    check_limit,
    preview,
)
from noemad.cognition.memory.reads import memories_with_links
from noemad.cognition.memory.terms import fts_query, informative_counted, query_terms
from noemad.events import Event, EventDraft, Ref, append
from noemad.minds import get_mind

# The candidates: FTS first (CROSS JOIN keeps the planner from scanning the
# mind's memories and probing the index row by row), then the memory by
# rowid; bm25 is computed only for rows that pass the filter. Only id and
# bm25 go through the sort: the other columns are read for the few kept
# (carrying them for every match cost ~7% more at 100,000 memories).
# Excluded ids are dropped in Python from LIMIT candidates + len(exclude)
# rows: a NOT IN (json_each) test on every match cost another ~8%.
# Ties by id keep the cut at the limit stable.
_CANDIDATES_SQL = """
SELECT m.id, bm25(memories_fts)
  FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
 WHERE memories_fts MATCH ? AND m.mind = ? AND m.status = 'active'
 ORDER BY 2, 1
 LIMIT ?
"""

# The same candidates, found without reading a memories row per match: the best
# matches of the whole index (every mind's), ordered as _CANDIDATES_SQL orders
# them, of which only the few fetched are looked up and kept if the mind's and
# active. Kept rows are a prefix of _CANDIDATES_SQL's answer in its order, so
# when enough are kept (or every match was fetched) they are its answer. Per
# match the joined query reads the memories row (its text with it), which at
# 100,000 memories cost 1.7x the bare FTS5 query; this costs about 1.1x.
_CANDIDATES_ANY_MIND_SQL = """
SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? ORDER BY 2, 1 LIMIT ?
"""
_KEPT_SQL = f"SELECT id, importance, coalesce(last_access, created_at) FROM memories WHERE id IN {IDS_SQL} AND mind = ? AND status = 'active'"
_ANY_MIND_SHARE = 0.5  # the unjoined search is tried first when the mind holds at least this share of the host's memories
_ANY_MIND_FETCH = 2  # ... and fetches this many times the candidates it needs


_SCORING_SQL = f"SELECT id, importance, coalesce(last_access, created_at) FROM memories WHERE id IN {IDS_SQL}"


def rank(
    db: Database, *, mind: str, query: str, now: float, limit: int = 5, exclude: Collection[int] = ()
) -> tuple[list[str], list[ScoredMemory]]:
    """What `retrieve` would return now, without writing anything: (query terms, scored memories)."""
    check_limit(limit, MAX_LIMIT)
    get_mind(db, mind)
    return _ranked(db, mind=mind, query=query, now=now, limit=limit, exclude=exclude)


def _ranked(db: Database, *, mind: str, query: str, now: float, limit: int, exclude: Collection[int]) -> tuple[list[str], list[ScoredMemory]]:
    """`rank` for a mind known to exist."""
    terms = query_terms(query)
    kept, mind_memories = informative_counted(db, mind, terms)
    match = fts_query(kept)
    if match is None:
        return terms, []
    excluded = {as_id(i, "exclude") for i in exclude}
    wanted = max(CANDIDATES, limit)
    stored: dict[int, tuple[float, str]] | None = None
    any_mind = _candidates_any_mind(db, mind, match, wanted + len(excluded), mind_memories)
    if any_mind is None:
        rows = db.execute(_CANDIDATES_SQL, [match, mind, wanted + len(excluded)]).fetchall()
    else:
        rows, stored = any_mind
    # At most len(excluded) rows are dropped, so `wanted` remain if there are that many.
    candidates = [(memory_id, bm25) for memory_id, bm25 in rows if memory_id not in excluded][:wanted]
    if not candidates:
        return terms, []
    if stored is None:
        stored = {row[0]: (row[1], row[2]) for row in db.execute(_SCORING_SQL, [json.dumps([c[0] for c in candidates])])}
    best = max(-bm25 for _, bm25 in candidates)
    scored: list[tuple[float, int, float, float, float]] = []
    for memory_id, bm25 in candidates:
        imp, touched = stored[memory_id]
        relevance = (-bm25) / best if best > 0 else 1.0
        age = max(0.0, now - parse_iso(touched))
        recency = 0.5 ** (age / RECENCY_HALF_LIFE)
        score = W_REL * relevance + W_REC * recency + W_IMP * imp
        scored.append((score, memory_id, relevance, recency, imp))
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[:limit]
    found = memories_with_links(db, [s[1] for s in top])
    return terms, [ScoredMemory(found[i], score, rel, rec, imp) for score, i, rel, rec, imp in top]


def _candidates_any_mind(
    db: Database, mind: str, match: str, needed: int, mind_memories: int
) -> tuple[list[tuple[int, float]], dict[int, tuple[float, str]]] | None:
    """_CANDIDATES_SQL's answer for `needed` rows, by the unjoined search, with each row's scoring columns; None if it cannot tell.

    Tried only when the mind holds most of the host's memories (the highest
    id stands for the host's count): otherwise few of the fetched rows would be
    the mind's, and the joined query would run after it anyway.
    """
    (top,) = db.execute("SELECT max(id) FROM memories").fetchone()
    if not top or mind_memories < _ANY_MIND_SHARE * top:
        return None
    fetch = _ANY_MIND_FETCH * needed
    rows = db.execute(_CANDIDATES_ANY_MIND_SQL, [match, fetch]).fetchall()
    stored = {row[0]: (row[1], row[2]) for row in db.execute(_KEPT_SQL, [json.dumps([r[0] for r in rows]), mind])}
    kept = [(memory_id, bm25) for memory_id, bm25 in rows if memory_id in stored]
    if len(kept) < needed and len(rows) == fetch:
        return None  # matches past the fetched ones may be the mind's: only the joined query can say
    return kept[:needed], stored


def retrieve(
    db: Database,
    *,
    mind: str,
    query: str,
    now: float,
    limit: int = 5,
    exclude: Collection[int] = (),
    cause: int | None,
    cycle_id: str | None,
) -> tuple[list[ScoredMemory], Event | None]:
    """Retrieve a mind's best memories for `query` and record that it did (a writer job).

    Scored as the module docstring says. When anything is returned, each
    returned memory's `last_access` becomes `now` and its `access_count`
    grows by one, and one `memory_retrieved` event (caused by `cause`, in
    `cycle_id`) cites them in rank order, with the terms and scores in its
    data. The memories returned carry their access state from before this
    retrieval (what was scored). Nothing found: no event and no update.
    """
    if cause is not None:
        check_event_of(db, mind, as_id(cause, "cause"), "cause")
    check_limit(limit, MAX_LIMIT)
    if cause is None:
        get_mind(db, mind)  # else an event of the mind, its cause, says it exists
    terms, results = _ranked(db, mind=mind, query=query, now=now, limit=limit, exclude=exclude)
    if not results:
        return [], None
    ids = [r.memory.id for r in results]
    db.execute(
        f"UPDATE memories SET last_access = ?, access_count = access_count + 1 WHERE id IN {IDS_SQL}",
        [iso(now), json.dumps(ids)],
    )
    event = append(
        db,
        EventDraft(
            mind=mind,
            kind="memory_retrieved",
            actor=RETRIEVAL_ACTOR,
            text=preview(f"{len(ids)} {'memory' if len(ids) == 1 else 'memories'} for: {' '.join(terms)}"),
            data={
                "terms": terms,
                "limit": limit,
                "scores": [
                    {
                        "id": r.memory.id,
                        "score": round(r.score, 6),
                        "relevance": round(r.relevance, 6),
                        "recency": round(r.recency, 6),
                        "importance": round(r.importance, 6),
                    }
                    for r in results
                ],
            },
            cycle_id=cycle_id,
            causation_id=cause,
            refs=[Ref("memory", i) for i in ids],
        ),
        now,
        links_checked=True,  # the cause checked above, the memories found among the mind's own
    )
    return results, event
