"""Appending events with their causal links: the only way state changes.

A state change is a function run on the writer that calls `append` for the
event recording it, in the same transaction. Links (`causation_id`, parents,
evidence refs) are checked here: each must exist and belong to the same mind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.errors import EventNotFound, InvalidInput, InvalidLink
from noemad.store.writer import emit
from noemad.wire import wire

RefType = Literal["event", "memory", "belief", "model_call"]
_REF_TABLES: dict[str, str] = {"event": "events", "memory": "memories", "belief": "beliefs", "model_call": "model_calls"}
_MAX_LINKS = 64  # parents or refs on one event; more is a bug upstream
MAX_LINKS = _MAX_LINKS  # for writers that cap what they link (a turn over a large batch)


@dataclass(frozen=True)
class Ref:
    """A reference to a row: an event, a memory, a belief or a model call."""

    type: RefType
    id: int


@dataclass(frozen=True)
class EventDraft:
    """An event as written, before it has an id."""

    mind: str
    kind: str
    actor: str
    text: str | None = None
    channel: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    cycle_id: str | None = None
    causation_id: int | None = None
    parents: Sequence[int] = ()
    refs: Sequence[Ref] = ()
    subject: Ref | None = None  # the memory or belief this event writes or changes


@wire
@dataclass(frozen=True)
class Event:
    """A stored event with the links it was written with."""

    id: int
    mind: str
    kind: str
    actor: str
    at: str
    channel: str | None
    text: str | None
    data: dict[str, Any]
    cycle_id: str | None
    causation_id: int | None
    parents: tuple[int, ...]
    refs: tuple[Ref, ...]
    subject: Ref | None


def data_of(event: Event, *kinds: str) -> dict[str, Any]:
    """An event's data, for the typed payload of `kinds` to read; ValueError for another kind (a reader's bug)."""
    if event.kind not in kinds:
        raise ValueError(f"event {event.id} is a {event.kind!r}, not {' or '.join(map(repr, kinds))}")
    return event.data


def _check_links(db: Database, draft: EventDraft) -> None:
    if len(draft.parents) > _MAX_LINKS or len(draft.refs) > _MAX_LINKS:
        raise InvalidLink(f"an event may name at most {_MAX_LINKS} parents and {_MAX_LINKS} refs")
    wanted: dict[str, set[int]] = {}
    if draft.causation_id is not None:
        wanted.setdefault("event", set()).add(draft.causation_id)
    wanted.setdefault("event", set()).update(draft.parents)
    for ref in draft.refs:
        if ref.type not in _REF_TABLES:
            raise InvalidLink(f"ref type {ref.type!r} is not one of {', '.join(_REF_TABLES)}")
        wanted.setdefault(ref.type, set()).add(ref.id)
    if draft.subject is not None:
        if draft.subject.type not in ("memory", "belief"):
            raise InvalidLink(f"an event's subject is a memory or a belief, not {draft.subject.type!r}")
        wanted.setdefault(draft.subject.type, set()).add(draft.subject.id)
    for ref_type, ids in wanted.items():
        if not ids:
            continue
        table = _REF_TABLES[ref_type]
        marks = ",".join("?" * len(ids))
        found = dict(db.execute(f"SELECT id, mind FROM {table} WHERE id IN ({marks})", list(ids)).fetchall())
        for ref_id in sorted(ids):
            owner = found.get(ref_id)
            if owner is None:
                raise InvalidLink(f"{ref_type.replace('_', ' ')} {ref_id} does not exist; link only to what is stored")
            if owner != draft.mind:
                raise InvalidLink(
                    f"{ref_type.replace('_', ' ')} {ref_id} belongs to mind {owner!r}, not {draft.mind!r}; "
                    "events link only within their own mind"
                )


def append(db: Database, draft: EventDraft, now: float) -> Event:
    """Write one event and its links. Run it on the writer, inside the change it records."""
    _check_links(db, draft)
    at = iso(now)
    try:
        # JSON has no NaN or Infinity: an event holding one could not be answered to any reader.
        data = json.dumps(draft.data, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except ValueError:
        raise InvalidInput(f"a {draft.kind} event's data holds a number that is not finite (NaN or Infinity); JSON numbers are finite") from None
    cur = db.execute(
        "INSERT INTO events (mind, kind, cycle_id, causation_id, actor, channel, text, data, subject_type, subject_id, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            draft.mind,
            draft.kind,
            draft.cycle_id,
            draft.causation_id,
            draft.actor,
            draft.channel,
            draft.text,
            data,
            draft.subject.type if draft.subject else None,
            draft.subject.id if draft.subject else None,
            at,
        ],
    )
    event_id = int(cur.lastrowid or 0)
    parents = tuple(dict.fromkeys(draft.parents))
    refs = tuple(dict.fromkeys(draft.refs))
    if parents:
        db.conn.executemany(
            "INSERT INTO event_parents (event_id, parent_id, mind) VALUES (?, ?, ?)",
            [(event_id, p, draft.mind) for p in parents],
        )
    if refs:
        db.conn.executemany(
            "INSERT INTO event_refs (event_id, ref_type, ref_id, mind) VALUES (?, ?, ?, ?)",
            [(event_id, r.type, r.id, draft.mind) for r in refs],
        )
    event = Event(
        id=event_id,
        mind=draft.mind,
        kind=draft.kind,
        actor=draft.actor,
        at=at,
        text=draft.text,
        channel=draft.channel,
        data=dict(draft.data),
        cycle_id=draft.cycle_id,
        causation_id=draft.causation_id,
        parents=parents,
        refs=refs,
        subject=draft.subject,
    )
    emit(event)
    return event


_COLUMNS = "id, mind, kind, actor, at, text, channel, data, cycle_id, causation_id, subject_type, subject_id"


def _links(db: Database, ids: Sequence[int]) -> tuple[dict[int, list[int]], dict[int, list[Ref]]]:
    parents: dict[int, list[int]] = {}
    refs: dict[int, list[Ref]] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        for event_id, parent_id in db.execute(
            f"SELECT event_id, parent_id FROM event_parents WHERE event_id IN ({marks}) ORDER BY event_id, parent_id", chunk
        ):
            parents.setdefault(event_id, []).append(parent_id)
        for event_id, ref_type, ref_id in db.execute(
            f"SELECT event_id, ref_type, ref_id FROM event_refs WHERE event_id IN ({marks}) ORDER BY event_id, ref_type, ref_id",
            chunk,
        ):
            refs.setdefault(event_id, []).append(Ref(ref_type, ref_id))
    return parents, refs


def _rows_to_events(db: Database, rows: Iterable[tuple[Any, ...]]) -> list[Event]:
    rows = list(rows)
    parents, refs = _links(db, [r[0] for r in rows])
    return [event_from_row(r, tuple(parents.get(r[0], ())), tuple(refs.get(r[0], ()))) for r in rows]


EVENT_COLUMNS = _COLUMNS  # the columns `event_from_row` reads, in its order


def _no_constant(name: str) -> None:
    return None


def event_from_row(row: Sequence[Any], parents: tuple[int, ...], refs: tuple[Ref, ...]) -> Event:
    """An event from a row of `EVENT_COLUMNS` and its links, equal to the one `get_events` builds.

    For readers that fetch the links themselves (the causal walk gets them with
    the edges it needs anyway). `parents` in id order, `refs` in (type, id) order.
    """
    raw = row[7]
    # The object Event(...) would make, without its frozen-dataclass __init__:
    # setting 13 fields one object.__setattr__ at a time took 1.8 µs, most of
    # the cost of building an event. Event has no __post_init__ to skip; the
    # walk's tests compare these events with get_events' field by field.
    event = object.__new__(Event)
    event.__dict__.update(
        id=row[0],
        mind=row[1],
        kind=row[2],
        actor=row[3],
        at=row[4],
        text=row[5],
        channel=row[6],
        # Most events carry no data; skip the parser for the stored default.
        # A non-finite number stored before the edge refused them reads as null, so no read of it fails.
        data={} if raw == "{}" else json.loads(raw, parse_constant=_no_constant),
        cycle_id=row[8],
        causation_id=row[9],
        parents=parents,
        refs=refs,
        subject=Ref(row[10], row[11]) if row[10] else None,
    )
    return event


def get_event(db: Database, event_id: int) -> Event:
    """One event by id, or `EventNotFound`."""
    rows = db.execute(f"SELECT {_COLUMNS} FROM events WHERE id = ?", [event_id]).fetchall()
    if not rows:
        raise EventNotFound(f"event {event_id} does not exist; list a mind's events with `noemactl events MIND`")
    return _rows_to_events(db, rows)[0]


def get_events(db: Database, ids: Iterable[int]) -> dict[int, Event]:
    """Several events by id; missing ids are left out."""
    ids = sorted(set(ids))
    out: dict[int, Event] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(f"SELECT {_COLUMNS} FROM events WHERE id IN ({marks})", chunk).fetchall()
        out.update((e.id, e) for e in _rows_to_events(db, rows))
    return out


def list_events(
    db: Database, mind: str, *, kinds: Sequence[str] = (), since: int = 0, limit: int = 100
) -> list[Event]:
    """A mind's events after id `since`, oldest first, optionally of some kinds only."""
    sql = f"SELECT {_COLUMNS} FROM events WHERE mind = ? AND id > ?"
    params: list[Any] = [mind, since]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    sql += " ORDER BY id LIMIT ?"
    params.append(limit)
    return _rows_to_events(db, db.execute(sql, params).fetchall())


def count_events(db: Database, mind: str, kind: str) -> int:
    """How many events of `kind` a mind has (e.g. the cycles it has run)."""
    (count,) = db.execute("SELECT count(*) FROM events WHERE mind = ? AND kind = ?", [mind, kind]).fetchone()
    return int(count)


def latest_events(db: Database, mind: str, *, kinds: Sequence[str] = (), limit: int = 100) -> list[Event]:
    """A mind's newest `limit` events, oldest first."""
    sql = f"SELECT {_COLUMNS} FROM events WHERE mind = ?"
    params: list[Any] = [mind]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(limit)
    return list(reversed(_rows_to_events(db, db.execute(sql, params).fetchall())))
