"""Memories written (one, or many at once with their links) and retracted: each a writer job with its event."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, NamedTuple

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.memory.importance import (
    importance as estimate_importance,  # `write_memory` has an argument named importance
)
from noemad.cognition.memory.model import (
    MAX_DERIVED_FROM,
    MAX_REASON,
    MAX_TEXT,
    Memory,
    as_id,
    as_ids,
    check_event_of,
    check_importance,
    check_kind,
    checked_tags,
    event_minds,
    not_linked,
    preview,
)
from noemad.cognition.memory.reads import get_memory
from noemad.errors import Conflict, InvalidInput
from noemad.events import Event, EventDraft, Ref, append, append_all
from noemad.minds import get_mind
from noemad.store import inserted_ids, savepoint
from noemad.words import index_stems

# Document counts per stem and mind; the row with the empty term counts the mind's memories. One
# statement for every stem of every new memory (a stem several of them hold is counted once per
# memory: the upsert runs row by row); `WHERE true` keeps SQLite from reading ON as a join's.
_COUNT_TERMS_SQL = (
    "INSERT INTO memory_terms (mind, term, docs) SELECT ?, value, 1 FROM json_each(?) WHERE true"
    " ON CONFLICT (mind, term) DO UPDATE SET docs = docs + 1"
)


_LINKS_AT_ONCE = 64  # memories whose links one statement stores
_ROWS_AT_ONCE = 100  # memories one statement inserts (7 values each, well inside SQLite's bound on a statement's values)


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
    minds = event_minds(db, (ref for m in memories for ref in (m.cause, m.event_id)))  # one read for every memory's checks
    if mind not in minds.values():  # an event of the mind says it exists (an episode's does); else MindNotFound, first, as ever
        get_mind(db, mind)
    checked = [_checked(db, mind, m, minds) for m in memories]
    if cause_citing is not None and any(c.cause is not None for c in checked):
        raise ValueError("a memory caused by the event cause_citing appends has no cause of its own")
    created_at = iso(now)
    with savepoint(db, "write_memories"):
        ids = [memory_id for start in range(0, len(checked), _ROWS_AT_ONCE) for memory_id in _insert(db, mind, checked[start : start + _ROWS_AT_ONCE], created_at)]
        db.execute(_COUNT_TERMS_SQL, [mind, json.dumps([stem for c in checked for stem in ["", *index_stems(c.text)]])])
        for start in range(0, len(checked), _LINKS_AT_ONCE):
            _link(db, mind, ids[start : start + _LINKS_AT_ONCE], [c.sources for c in checked[start : start + _LINKS_AT_ONCE]])
        if cause_citing is not None:
            cause = cause_citing(ids)
            checked = [replace(c, cause=cause) for c in checked]
        # Every link of their events is checked by now: each cause and event by _checked, each source as it was linked,
        # each memory as it was written; but the cause cause_citing appended is not.
        events = append_all(
            db,
            [_created(mind, memory_id, c, actor=actor, cycle_id=cycle_id) for memory_id, c in zip(ids, checked)],
            now,
            links_checked=cause_citing is None,
        )
        return [(_memory(mind, memory_id, c, created_at), event) for memory_id, c, event in zip(ids, checked, events)]


def _checked(db: Database, mind: str, new: NewMemory, minds: Mapping[int, str]) -> _Checked:
    """A new memory's input checked, or `InvalidInput`/`InvalidLink` saying what is wrong (its sources are checked as they are linked)."""
    check_kind(new.kind)
    text = new.text
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("a memory needs text: it was empty or only whitespace")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"a memory holds at most {MAX_TEXT:,} characters, not {len(text):,}; split it or summarise it")
    value = estimate_importance(text, new.kind) if new.importance is None else check_importance(new.importance)
    sources = as_ids(new.derived_from, "derived_from")
    names = checked_tags(new.tags)
    for what, ref in (("cause", new.cause), ("event_id", new.event_id)):
        if ref is not None:
            check_event_of(db, mind, as_id(ref, what), what, minds)
    return _Checked(new.kind, text, value, sources, names, new.event_id, new.cause)


def _insert(db: Database, mind: str, checked: Sequence[_Checked], created_at: str) -> list[int]:
    """Memories' rows, by one statement; their ids, in their order.

    One statement, not one a memory: FTS5 writes what its trigger indexed as
    a segment of its own at the next statement of the transaction, so rows
    inserted one at a time cost a segment (and its merging) each.
    """
    row = "(?, ?, ?, ?, ?, NULL, 0, 'active', ?, ?)"
    cur = db.execute(
        "INSERT INTO memories (mind, kind, text, created_at, importance, last_access, access_count, status, event_id, tags)"
        f" VALUES {', '.join([row] * len(checked))}",
        [value for c in checked for value in (mind, c.kind, c.text, created_at, c.importance, c.event_id, json.dumps(c.tags))],
    )
    return list(inserted_ids(cur, len(checked)))


def _link(db: Database, mind: str, ids: Sequence[int], sources: Sequence[tuple[int, ...]]) -> None:
    """Link each of at most _LINKS_AT_ONCE memories to its sources, in one statement; `InvalidLink` if a source is not the mind's.

    Each link goes as one integer, source x 64 + its memory's number, in
    source order; each source is found as it is linked (one missing or of
    another mind is not, and then the check says which).
    """
    count = sum(map(len, sources))
    if not count:
        return  # an episode links nothing: a turn never loads numpy
    import numpy as np  # here, not at import: numpy is a tenth of the daemon's start, and only writing links needs it

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
        raise not_linked(db, mind, sorted(set(chain.from_iterable(sources))))


def _created(mind: str, memory_id: int, c: _Checked, *, actor: str, cycle_id: str | None) -> EventDraft:
    """A new memory's `memory_created` event, to append."""
    refs = [Ref("memory", source) for source in c.sources[:MAX_DERIVED_FROM]]  # sources are in id order
    if c.event_id is not None and c.event_id != c.cause:
        refs.append(Ref("event", c.event_id))  # so the timeline reaches the recorded event
    data: dict[str, Any] = {"kind": c.kind, "importance": c.importance}
    if c.sources:
        data["derived_from"] = len(c.sources)  # all of them, cited or not
    if c.tags:
        data["tags"] = list(c.tags)
    return EventDraft(
        mind=mind,
        kind="memory_created",
        actor=actor,
        text=preview(c.text),
        data=data,
        cycle_id=cycle_id,
        causation_id=c.cause,
        refs=refs,
        subject=Ref("memory", memory_id),
    )


def _memory(mind: str, memory_id: int, c: _Checked, created_at: str) -> Memory:
    """A new memory as stored."""
    return Memory(
        id=memory_id,
        mind=mind,
        kind=c.kind,  # type: ignore[arg-type]  # checked by check_kind
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
    memory = get_memory(db, as_id(memory_id, "memory_id"))
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("say why the memory is retracted: the reason was empty")
    if len(reason) > MAX_REASON:
        raise InvalidInput(f"a retraction's reason holds at most {MAX_REASON:,} characters, not {len(reason):,}")
    if memory.status == "retracted":
        raise Conflict(f"memory {memory.id} is already retracted; nothing was changed")
    if cause is not None:
        check_event_of(db, memory.mind, as_id(cause, "cause"), "cause")
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
