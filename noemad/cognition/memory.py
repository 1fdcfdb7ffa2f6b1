"""A mind's memories: writing them, retracting them, and retrieving them.

Every stimulus becomes an *episodic* memory; *semantic* and *procedural*
memories come from consolidation, reflection and operators. A memory may be
derived from others (`memory_links`). Memories are never edited: the text of a
row never changes, and a retraction is an event (`memory_retracted`) plus a
status. The only other columns that change are the access bookkeeping
(`last_access`, `access_count`), and only on retrieval, recorded by the
`memory_retrieved` event written in the same job.

Writing helpers (`write_memory`, `retrieve`, `retract`) are writer jobs: run
them on the writer (`store.writer.run_sync(lambda db: ...)`), which wraps each
job in a savepoint, so a job that raises leaves nothing behind. They check
their inputs before they write anything all the same.

Retrieval
---------

The query text is cut into words (runs of letters and digits, as FTS5's
unicode61 tokenizer cuts them), lower-cased; stop-words and one-character
words are dropped, duplicates too, and at most `MAX_TERMS` are kept. Each term
is quoted as an FTS5 string and the terms are OR-ed, so no user text ever
reaches MATCH as syntax: `NEAR`, `OR`, `*`, `-`, quotes and parentheses are
only words or separators. A query with no terms left matches nothing.

A term found in at least half of the mind's memories (and in more than
`COMMON_MIN_DOCS` of them) is dropped before the search: with n of N
documents holding it, bm25's IDF ln((N - n + 0.5) / (n + 0.5)) is not
positive, so FTS5 weighs it 1e-6 and it cannot tell memories apart, yet it
would make nearly every memory a candidate and cost a bm25 score each (a
mind told "hello" ten thousand times would score ten thousand memories every
cycle). n and N come from `memory_terms`, which `write_memory` keeps: per
mind, the number of memories each stem occurs in (porter stems of content
words, as FTS5's porter tokenizer stores them) and, under the empty term,
the number of memories. FTS5's own vocabulary table cannot serve: it counts
a term's documents by reading its whole posting list. Below
`COMMON_MIN_DOCS` every term is kept, so small minds rank as plain bm25 does.

The candidates are the max(CANDIDATES, limit) best matches by FTS5 bm25
(CANDIDATES = 50; ties by id) among the mind's active memories not
excluded. Each candidate gets

    score = W_REL x relevance + W_REC x recency + W_IMP x importance

    relevance  = r / max(r over the candidates), r = -bm25 (bm25 is <= 0 in
                 FTS5, lower is better); 1 for all if every r is 0
    recency    = 0.5 ** (age / RECENCY_HALF_LIFE), age = now - (last_access or
                 created_at) in clock seconds, never below 0
    importance = as stored at write time (see `importance`)

with W_REL = 0.5, W_REC = 0.25, W_IMP = 0.25 and RECENCY_HALF_LIFE = 7 days
(close to the Generative Agents decay of 0.995 per hour, a half-life of about
5.8 days). All three components are in [0, 1], so the score is too.
Relevance carries half the weight because the candidates were chosen by it;
recency and importance together weigh as much, so a fresh or important
memory overtakes a somewhat better but stale, minor match, and among equal
matches the fresher, then the more important, comes first. Results are
ordered by score, highest first, ties broken by the lower id (the memory
written first), and the top `limit` are returned.

Everything is a function of the store and the arguments (`now` included), so
the same store and the same query give the same memories and the same scores.
One caveat: bm25's IDF and average length are those of the whole FTS table,
i.e. of every mind on the host, so the raw bm25 of a mind's memory shifts
slightly if other minds' memories change; normalising within the candidates
removes most, not all, of that.

Retrieval that returns anything updates `last_access` (to `now`) and
`access_count` of each returned memory and appends one `memory_retrieved`
event (actor `process:retrieval`) citing each returned memory in rank order,
in the same job. Retrieval that finds nothing writes nothing. `rank` gives
the same answer without any of those writes (for previews and benchmarks);
`search` is the operator's read-only full-text search.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, Literal, NamedTuple

import numpy as np
from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.words import STOP_WORDS, WORD, content_words, index_stems, porter_stems
from noemad.errors import Conflict, InvalidInput, InvalidLink, NotFound
from noemad.events import Event, EventDraft, Ref, append
from noemad.minds import get_mind
from noemad.store import savepoint
from noemad.wire import wire

MemoryKind = Literal["episodic", "semantic", "procedural"]
MemoryStatus = Literal["active", "retracted"]
KINDS: tuple[str, ...] = ("episodic", "semantic", "procedural")
STATUSES: tuple[str, ...] = ("active", "retracted")

MAX_TEXT = 100_000  # characters in one memory
MAX_REASON = 2_000  # characters in a retraction's reason
# An event names at most 64 refs (noemad.events); one is kept for the event a
# memory records, so a memory_created event always fits. A memory may be
# derived from any number of memories (every link is kept in memory_links);
# its memory_created event cites the first MAX_DERIVED_FROM of them by id.
MAX_DERIVED_FROM = 63
MAX_LIMIT = 64  # memories one retrieval returns: the memory_retrieved event cites each
MAX_LIST = 1_000  # rows one listing or search returns

# Scoring (see the module docstring).
W_REL = 0.5
W_REC = 0.25
W_IMP = 0.25
RECENCY_HALF_LIFE = 7 * 86_400.0  # seconds
CANDIDATES = 50  # bm25 candidates scored per retrieval
MAX_TERMS = 32  # query terms kept; bounds the cost of one MATCH
COMMON_MIN_DOCS = 200  # a term is pruned as common only when in more memories than this
RETRIEVAL_ACTOR = "process:retrieval"

# Importance (see `importance`).
KIND_BASE: dict[str, float] = {"episodic": 0.3, "semantic": 0.55, "procedural": 0.6}
SPECIFICITY_WEIGHT = 0.25
LENGTH_SATURATION = 30  # content words at which the length term reaches 1
DETAIL_SATURATION = 5  # numbers and proper names at which the detail term reaches 1

_SENTENCE = re.compile(r"[.!?:;]\s+|\n")


@wire
@dataclass(frozen=True)
class Memory:
    """A stored memory.

    `event_id` is the event the memory records (an episodic memory's
    stimulus), if any; the event that wrote the memory is the one whose
    subject it is. `derived_from` is in id order.
    """

    id: int
    mind: str
    kind: MemoryKind
    text: str
    importance: float
    created_at: str
    last_access: str | None
    access_count: int
    status: MemoryStatus
    event_id: int | None
    derived_from: tuple[int, ...] = ()
    tags: tuple[str, ...] = ()
    """Names an operator gave it (`noemactl remember --tag`); the tags of what a turn recalled are governance evidence."""


@wire
@dataclass(frozen=True)
class ScoredMemory:
    """A retrieved memory with its score and the three components of it."""

    memory: Memory
    score: float
    relevance: float
    recency: float
    importance: float


# --- importance -----------------------------------------------------------------


def importance(text: str, kind: str) -> float:
    """How much a memory matters, in [0, 1], from its kind and its text alone.

        importance = KIND_BASE[kind] + SPECIFICITY_WEIGHT x specificity
        specificity = 0.6 x min(1, ln(1 + content words) / ln(1 + LENGTH_SATURATION))
                    + 0.4 x min(1, details / DETAIL_SATURATION)

    Content words are the words of two characters or more that are not
    stop-words; details are words with a digit (dates, times, versions) and
    capitalised words that do not start a sentence (names, places). The
    base is 0.3 for episodic, 0.55 for semantic and 0.6 for procedural
    memories: a fact or a skill distilled from many episodes is worth more
    than one episode. So an episode scores 0.3-0.55, a semantic memory
    0.55-0.8 and a procedural one 0.6-0.85: longer, more specific text scores
    a little higher, with diminishing returns, and never crosses into the next
    kind's range by much. Deterministic; no model involved.
    """
    _check_kind(kind)
    words = WORD.findall(text)
    content = sum(1 for w in words if len(w) > 1 and w.lower() not in STOP_WORDS)
    details = _details(text)
    length_term = min(1.0, math.log1p(content) / math.log1p(LENGTH_SATURATION))
    detail_term = min(1.0, details / DETAIL_SATURATION)
    value = KIND_BASE[kind] + SPECIFICITY_WEIGHT * (0.6 * length_term + 0.4 * detail_term)
    return round(min(1.0, max(0.0, value)), 6)


_estimate_importance = importance  # `write_memory` has an argument of the same name


def _details(text: str) -> int:
    """Words with a digit, and capitalised words that do not start a sentence (names, places, acronyms)."""
    count = 0
    for sentence in _SENTENCE.split(text):
        words = WORD.findall(sentence)
        count += sum(1 for w in words if any(c.isdigit() for c in w))
        count += sum(1 for w in words[1:] if w[0].isupper())
    return count


# --- the query ------------------------------------------------------------------


def query_terms(text: str) -> list[str]:
    """The words of `text` retrieval searches for, in order of first appearance.

    Lower-cased runs of letters and digits, without stop-words, one-character
    words and repeats; at most `MAX_TERMS`.
    """
    terms: dict[str, None] = {}
    for word in content_words(text):
        terms[word] = None
        if len(terms) == MAX_TERMS:
            break
    return list(terms)


def informative_terms(db: Database, mind: str, terms: Sequence[str]) -> list[str]:
    """`terms` without those in at least half of the mind's memories (see the module docstring)."""
    if not terms:
        return []
    stems = porter_stems(terms)
    counts = dict(db.execute(_TERM_DOCS_SQL, [mind, json.dumps(["", *sorted(set(stems))])]).fetchall())
    total = counts.get("", 0)
    if total <= COMMON_MIN_DOCS:
        return list(terms)
    return [t for t, stem in zip(terms, stems) if not (counts.get(stem, 0) > COMMON_MIN_DOCS and 2 * counts[stem] >= total)]


def fts_query(terms: Iterable[str]) -> str | None:
    """An FTS5 MATCH expression that ORs `terms`, each quoted; None if there are none.

    Each term is an FTS5 string ("..." with inner quotes doubled), which FTS5
    only tokenizes and never reads as syntax, so nothing a user typed can
    become an operator, a column filter or a prefix query.
    """
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms if term]
    return " OR ".join(quoted) if quoted else None


# --- reading ----------------------------------------------------------------------

_COLUMNS = "id, mind, kind, text, importance, created_at, last_access, access_count, status, event_id"
# Ids are bound as one JSON array: the statement text never changes, so it is
# prepared once per connection (see noemad.timeline).
_IDS = "(SELECT value FROM json_each(?))"

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

_TERM_DOCS_SQL = f"SELECT term, docs FROM memory_terms WHERE mind = ? AND term IN {_IDS}"

# Document counts per stem and mind; the row with the empty term counts the mind's memories.
_COUNT_TERM_SQL = (
    "INSERT INTO memory_terms (mind, term, docs) VALUES (?, ?, 1) ON CONFLICT (mind, term) DO UPDATE SET docs = docs + 1"
)

_SCORING_SQL = f"SELECT id, importance, coalesce(last_access, created_at) FROM memories WHERE id IN {_IDS}"

_SEARCH_SQL = """
SELECT m.id
  FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
 WHERE memories_fts MATCH :match AND m.mind = :mind AND m.status = 'active' AND (:kind IS NULL OR m.kind = :kind)
 ORDER BY bm25(memories_fts), m.id
 LIMIT :limit
"""


def _memories(db: Database, ids: Sequence[int]) -> dict[int, Memory]:
    """The memories with these ids, with their links; missing ids are left out."""
    if not ids:
        return {}
    step = json.dumps(list(ids))
    links: dict[int, list[int]] = {}
    for memory_id, source in db.execute(
        f"SELECT memory_id, derived_from FROM memory_links WHERE memory_id IN {_IDS} ORDER BY memory_id, derived_from",
        [step],
    ):
        links.setdefault(memory_id, []).append(source)
    out: dict[int, Memory] = {}
    rows = db.execute(f"SELECT {_COLUMNS}, tags FROM memories WHERE id IN {_IDS}", [step])
    for memory_id, mind, kind, text, importance, created_at, last_access, access_count, status, event_id, tags in rows:
        out[memory_id] = Memory(
            memory_id, mind, kind, text, importance, created_at, last_access, access_count, status, event_id,
            derived_from=tuple(links.get(memory_id, ())), tags=tuple(json.loads(tags or "[]")),
        )
    return out


def get_memory(db: Database, memory_id: int) -> Memory:
    """One memory by id, or `NotFound` with a hint."""
    found = _memories(db, [memory_id])
    if memory_id not in found:
        raise NotFound(f"memory {memory_id} does not exist; list a mind's memories with `noemactl memories MIND`")
    return found[memory_id]


def memories_by_id(db: Database, ids: Sequence[int]) -> list[Memory]:
    """The memories with these ids, in the order given (missing ids left out)."""
    found = _memories(db, ids)
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
    _check_limit(limit, MAX_LIST)
    sql = "SELECT id FROM memories WHERE mind = ? AND id > ?"
    params: list[Any] = [mind, since]
    if kind is not None:
        _check_kind(kind)
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
    found = _memories(db, ids)
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
    _check_limit(limit, MAX_LIST)
    if kind is not None:
        _check_kind(kind)
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
    found = _memories(db, ids)
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
    _check_limit(limit, MAX_LIST)
    if kind is not None:
        _check_kind(kind)
    match = fts_query(query_terms(text))
    if match is None:
        return []
    ids = [row[0] for row in db.execute(_SEARCH_SQL, {"match": match, "mind": mind, "kind": kind, "limit": limit})]
    found = _memories(db, ids)
    return [found[i] for i in ids]


def rank(
    db: Database, *, mind: str, query: str, now: float, limit: int = 5, exclude: Collection[int] = ()
) -> tuple[list[str], list[ScoredMemory]]:
    """What `retrieve` would return now, without writing anything: (query terms, scored memories)."""
    _check_limit(limit, MAX_LIMIT)
    get_mind(db, mind)
    terms = query_terms(query)
    match = fts_query(informative_terms(db, mind, terms))
    if match is None:
        return terms, []
    excluded = {_as_id(i, "exclude") for i in exclude}
    wanted = max(CANDIDATES, limit)
    rows = db.execute(_CANDIDATES_SQL, [match, mind, wanted + len(excluded)]).fetchall()
    # At most len(excluded) rows are dropped, so `wanted` remain if there are that many.
    candidates = [(memory_id, bm25) for memory_id, bm25 in rows if memory_id not in excluded][:wanted]
    if not candidates:
        return terms, []
    stored = {row[0]: row[1:] for row in db.execute(_SCORING_SQL, [json.dumps([c[0] for c in candidates])])}
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
    found = _memories(db, [s[1] for s in top])
    return terms, [ScoredMemory(found[i], score, rel, rec, imp) for score, i, rel, rec, imp in top]


# --- writing ----------------------------------------------------------------------


_LINKS_AT_ONCE = 64  # memories whose links one statement stores


class NewMemory(NamedTuple):
    """A memory for `write_memories`: what `write_memory` takes for one, but the mind, time, actor and cycle they share."""

    kind: str
    text: str
    cause: int | None
    derived_from: Iterable[int] = ()
    event_id: int | None = None
    importance: float | None = None
    tags: Iterable[str] = ()


@dataclass(frozen=True)
class _Checked:
    """A new memory's input, checked: all but the memories it is derived from (checked as they are linked)."""

    kind: str
    text: str
    importance: float
    sources: tuple[int, ...]
    tags: tuple[str, ...]
    event_id: int | None
    cause: int | None


def write_memory(
    db: Database,
    *,
    mind: str,
    kind: str,
    text: str,
    now: float,
    actor: str,
    cause: int | None,
    cycle_id: str | None,
    derived_from: Iterable[int] = (),
    event_id: int | None = None,
    importance: float | None = None,
    tags: Iterable[str] = (),
) -> tuple[Memory, Event]:
    """Store a memory and the `memory_created` event that records it (a writer job).

    The event's subject is the memory; it is caused by `cause`, belongs to
    `cycle_id`, and cites each memory the new one is derived from and the
    event it records (`event_id`, unless that is already its cause). Its data
    holds the kind and the importance. `importance` defaults to
    `importance(text, kind)`; an operator may set it. Derived-from memories
    must exist and belong to the mind; they may be retracted (provenance
    stays what it was). If anything fails its check, nothing is written.

    A memory may be derived from any number of memories: every link is
    stored in `memory_links`, but an event names at most 64 refs, so the
    event cites the first `MAX_DERIVED_FROM` (63) of them by id, and its
    data says how many there are in all (`derived_from`, present whenever
    the memory is derived from any).
    """
    new = NewMemory(kind, text, cause, derived_from, event_id, importance, tags)
    return write_memories(db, mind=mind, memories=[new], now=now, actor=actor, cycle_id=cycle_id)[0]


def write_memories(
    db: Database,
    *,
    mind: str,
    memories: Sequence[NewMemory],
    now: float,
    actor: str,
    cycle_id: str | None,
    cause_citing: Callable[[list[int]], int] | None = None,
) -> list[tuple[Memory, Event]]:
    """Store several memories at once (a writer job), each as `write_memory` stores one; their events in their order.

    Their links are stored together, in the order of the memories they
    come from, each found as it is linked: for thousands of links spread
    over several memories (a consolidation's generalisations), half the
    time a statement per memory takes. If anything fails its check,
    nothing is written.

    `cause_citing`, when given, is called with the new memories' ids once
    their rows are stored and before their events are; it appends the event
    that causes them all (and may name them: a reflection lists the lessons
    it learnt) and returns its id. So an event can cite memories it causes
    by the ids they got, never by ids guessed ahead. Their own `cause` must
    then be None.
    """
    get_mind(db, mind)
    checked = [_checked(db, mind, m) for m in memories]
    if cause_citing is not None and any(c.cause is not None for c in checked):
        raise ValueError("a memory caused by the event cause_citing appends has no cause of its own")
    created_at = iso(now)
    with savepoint(db, "write_memories"):
        ids = [_insert(db, mind, c, created_at) for c in checked]
        for start in range(0, len(checked), _LINKS_AT_ONCE):
            _link(db, mind, ids[start : start + _LINKS_AT_ONCE], [c.sources for c in checked[start : start + _LINKS_AT_ONCE]])
        if cause_citing is not None:
            cause = cause_citing(ids)
            checked = [replace(c, cause=cause) for c in checked]
        return [_recorded(db, mind, memory_id, c, created_at, now=now, actor=actor, cycle_id=cycle_id) for memory_id, c in zip(ids, checked)]


def _checked(db: Database, mind: str, new: NewMemory) -> _Checked:
    """A new memory's input checked, or `InvalidInput`/`InvalidLink` saying what is wrong (its sources are checked as they are linked)."""
    _check_kind(new.kind)
    text = new.text
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("a memory needs text: it was empty or only whitespace")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"a memory holds at most {MAX_TEXT:,} characters, not {len(text):,}; split it or summarise it")
    value = _estimate_importance(text, new.kind) if new.importance is None else _check_importance(new.importance)
    sources = _ids(new.derived_from, "derived_from")
    names = _tags(new.tags)
    for what, ref in (("cause", new.cause), ("event_id", new.event_id)):
        if ref is not None:
            _check_event_of(db, mind, _as_id(ref, what), what)
    return _Checked(new.kind, text, value, sources, names, new.event_id, new.cause)


def _insert(db: Database, mind: str, c: _Checked, created_at: str) -> int:
    """A memory's row, and its terms counted; its id."""
    cur = db.execute(
        "INSERT INTO memories (mind, kind, text, created_at, importance, last_access, access_count, status, event_id, tags)"
        " VALUES (?, ?, ?, ?, ?, NULL, 0, 'active', ?, ?)",
        [mind, c.kind, c.text, created_at, c.importance, c.event_id, json.dumps(c.tags)],
    )
    db.conn.executemany(_COUNT_TERM_SQL, [(mind, stem) for stem in ["", *index_stems(c.text)]])
    return int(cur.lastrowid or 0)


def _link(db: Database, mind: str, ids: Sequence[int], sources: Sequence[tuple[int, ...]]) -> None:
    """Link each of at most _LINKS_AT_ONCE memories to its sources, in one statement; `InvalidLink` if a source is not the mind's.

    Each link goes as one integer, source x 64 + its memory's number, in
    source order; each source is found as it is linked (one missing or of
    another mind is not, and then the check says which).
    """
    count = sum(map(len, sources))
    if not count:
        return
    codes = np.fromiter(chain.from_iterable(sources), dtype=np.int64, count=count) * _LINKS_AT_ONCE
    codes += np.repeat(np.arange(len(ids), dtype=np.int64), [len(s) for s in sources])
    codes.sort()
    memories = f"CASE j.value % {_LINKS_AT_ONCE} " + " ".join(["WHEN ? THEN ?"] * len(ids)) + " END"
    linked = db.execute(
        f"INSERT INTO memory_links (memory_id, derived_from, mind) SELECT {memories}, m.id, m.mind FROM json_each(?) j"
        f" CROSS JOIN memories m ON m.id = j.value / {_LINKS_AT_ONCE} WHERE m.mind = ?",
        [*(value for k, memory_id in enumerate(ids) for value in (k, memory_id)), json.dumps(codes.tolist()), mind],
    ).rowcount
    if linked != count:
        raise _not_linked(db, mind, sorted(set(chain.from_iterable(sources))))


def _recorded(
    db: Database, mind: str, memory_id: int, c: _Checked, created_at: str, *, now: float, actor: str, cycle_id: str | None
) -> tuple[Memory, Event]:
    """A new memory's `memory_created` event, and the memory."""
    refs = [Ref("memory", source) for source in c.sources[:MAX_DERIVED_FROM]]  # sources are in id order
    if c.event_id is not None and c.event_id != c.cause:
        refs.append(Ref("event", c.event_id))  # so the timeline reaches the recorded event
    data: dict[str, Any] = {"kind": c.kind, "importance": c.importance}
    if c.sources:
        data["derived_from"] = len(c.sources)  # all of them, cited or not
    if c.tags:
        data["tags"] = list(c.tags)
    event = append(
        db,
        EventDraft(
            mind=mind,
            kind="memory_created",
            actor=actor,
            text=_preview(c.text),
            data=data,
            cycle_id=cycle_id,
            causation_id=c.cause,
            refs=refs,
            subject=Ref("memory", memory_id),
        ),
        now,
    )
    memory = Memory(
        id=memory_id,
        mind=mind,
        kind=c.kind,  # type: ignore[arg-type]  # checked by _check_kind
        text=c.text,
        importance=c.importance,
        created_at=created_at,
        last_access=None,
        access_count=0,
        status="active",
        event_id=c.event_id,
        derived_from=c.sources,
        tags=c.tags,
    )
    return memory, event


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
        _check_event_of(db, mind, _as_id(cause, "cause"), "cause")
    terms, results = rank(db, mind=mind, query=query, now=now, limit=limit, exclude=exclude)
    if not results:
        return [], None
    ids = [r.memory.id for r in results]
    db.execute(
        f"UPDATE memories SET last_access = ?, access_count = access_count + 1 WHERE id IN {_IDS}",
        [iso(now), json.dumps(ids)],
    )
    event = append(
        db,
        EventDraft(
            mind=mind,
            kind="memory_retrieved",
            actor=RETRIEVAL_ACTOR,
            text=_preview(f"{len(ids)} {'memory' if len(ids) == 1 else 'memories'} for: {' '.join(terms)}"),
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
    )
    return results, event


def retract(
    db: Database,
    *,
    memory_id: int,
    reason: str,
    now: float,
    actor: str,
    cause: int | None = None,
    cycle_id: str | None = None,
) -> Event:
    """Retract a memory (a writer job): its status becomes `retracted`, recorded by `memory_retracted`.

    The text is kept as it was; a retracted memory is no longer retrieved or
    searched but still listed, and memories derived from it keep their link.
    Retracting a retracted memory raises `Conflict` (nothing changes): the
    first retraction is the one on record, and a caller that retracts twice
    has a stale view it should hear about.
    """
    memory = get_memory(db, _as_id(memory_id, "memory_id"))
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("say why the memory is retracted: the reason was empty")
    if len(reason) > MAX_REASON:
        raise InvalidInput(f"a retraction's reason holds at most {MAX_REASON:,} characters, not {len(reason):,}")
    if memory.status == "retracted":
        raise Conflict(f"memory {memory.id} is already retracted; nothing was changed")
    if cause is not None:
        _check_event_of(db, memory.mind, _as_id(cause, "cause"), "cause")
    db.execute("UPDATE memories SET status = 'retracted' WHERE id = ?", [memory.id])
    return append(
        db,
        EventDraft(
            mind=memory.mind,
            kind="memory_retracted",
            actor=actor,
            text=reason,
            data={"from": memory.status, "to": "retracted"},
            cycle_id=cycle_id,
            causation_id=cause,
            subject=Ref("memory", memory.id),
        ),
        now,
    )


# --- checks ---------------------------------------------------------------------


def _preview(text: str, width: int = 80) -> str:
    """The first line of `text`, cut to `width` characters: what a timeline node shows."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


MAX_TAGS = 20
_TAG = re.compile(r"[\w][\w.:\-]{0,63}")


def _tags(values: Iterable[str]) -> tuple[str, ...]:
    """Tags as given, each once, in order; `InvalidInput` for one that is not a short name."""
    names = tuple(dict.fromkeys(values))
    for name in names:
        if not isinstance(name, str) or not _TAG.fullmatch(name):
            raise InvalidInput(f"a memory tag is a name of letters, digits, '.', ':' or '-' (at most 64), such as legal; not {name!r:.60}")
    if len(names) > MAX_TAGS:
        raise InvalidInput(f"a memory has at most {MAX_TAGS} tags, not {len(names)}")
    return names


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InvalidInput(f"a memory's kind is one of {', '.join(KINDS)}, not {kind!r}")


def _check_limit(limit: int, top: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= top:
        raise InvalidInput(f"limit must be a whole number between 1 and {top}, not {limit!r}")


def _check_importance(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"importance must be a number between 0 and 1, not {value!r}")
    return float(value)


def _as_id(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} takes integer ids, not {value!r}")
    return value


def _ids(values: Iterable[Any], what: str) -> tuple[int, ...]:
    """Distinct integer ids in ascending order, or `InvalidInput` names the first that is not one."""
    values = list(values)
    if not set(map(type, values)) <= {int}:  # checked one by one only to say which
        for value in values:
            _as_id(value, what)
    return tuple(sorted(set(values)))


def _not_linked(db: Database, mind: str, ids: Sequence[int]) -> InvalidLink:
    """Why some of `ids` (ascending) could not be linked: the first that is missing or another mind's."""
    owners = dict(db.execute(f"SELECT id, mind FROM memories WHERE id IN {_IDS}", [json.dumps(list(ids))]).fetchall())
    for memory_id in ids:
        owner = owners.get(memory_id)
        if owner is None:
            return InvalidLink(f"memory {memory_id} does not exist; a memory is derived only from stored memories")
        if owner != mind:
            return InvalidLink(
                f"memory {memory_id} belongs to mind {owner!r}, not {mind!r}; a memory is derived only from its own mind's memories"
            )
    return InvalidLink(f"some of the {len(ids)} memories named could not be linked")


def _check_event_of(db: Database, mind: str, event_id: int, what: str) -> None:
    row = db.execute("SELECT mind FROM events WHERE id = ?", [event_id]).fetchone()
    if row is None:
        raise InvalidLink(f"{what}: event {event_id} does not exist; link only to what is stored")
    if row[0] != mind:
        raise InvalidLink(f"{what}: event {event_id} belongs to mind {row[0]!r}, not {mind!r}; link only within a mind")


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
