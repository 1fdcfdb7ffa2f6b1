"""Appending events with their causal links: the only way state changes.

A state change is a function run on the writer that calls `append` for the
event recording it, in the same transaction. Links (`causation_id`, parents,
evidence refs) are checked here: each must exist and belong to the same mind.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.errors import EventNotFound, InvalidInput, InvalidLink
from noemad.store.writer import emit, inserted_ids
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
    if draft.causation_id is None and not draft.parents and not draft.refs and draft.subject is None:
        return  # links nothing (every stimulus): nothing to look up
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


# The one encoder of an event's data (json.dumps with these options would build a new encoder for every event).
_DATA_JSON = json.JSONEncoder(separators=(",", ":"), sort_keys=True, allow_nan=False).encode


def append(db: Database, draft: EventDraft, now: float, *, links_checked: bool = False) -> Event:
    """Write one event and its links. Run it on the writer, inside the change it records.

    `links_checked`: the caller has checked, in this writer job, that every
    link of the draft exists and is the draft's mind's (a writer that has
    just checked or written what its event names): they are not looked up again.
    """
    if not links_checked:
        _check_links(db, draft)
    at = iso(now)
    cur = db.execute(_insert_events(1), _row(draft, at))
    event = _event(int(cur.lastrowid or 0), draft, at)
    if event.parents or event.refs:
        _store_links(db, (event,))
    emit(event)
    return event


def append_all(db: Database, drafts: Sequence[EventDraft], now: float, *, links_checked: bool = False) -> list[Event]:
    """Write several events and their links, in their order: the rows and ids `append` gives them one at a time.

    One statement inserts them (a statement per event was most of recording
    a turn's episodes), one more their parents and one their refs. Every
    draft's links are checked (unless `links_checked`) before any is
    written, so a draft cannot link to another of the same call.
    """
    if not links_checked:
        for draft in drafts:
            _check_links(db, draft)
    at = iso(now)
    rows = [_row(draft, at) for draft in drafts]
    ids: list[int] = []
    for start in range(0, len(rows), _EVENTS_AT_ONCE):
        chunk = rows[start : start + _EVENTS_AT_ONCE]
        ids.extend(inserted_ids(db.execute(_insert_events(len(chunk)), list(chain.from_iterable(chunk))), len(chunk)))
    events = [_event(event_id, draft, at) for event_id, draft in zip(ids, drafts)]
    _store_links(db, events)
    for event in events:
        emit(event)
    return events


_EVENTS_AT_ONCE = 500  # events one statement inserts (11 values each, well inside SQLite's bound on a statement's values)


@functools.cache
def _insert_events(rows: int) -> str:
    """The statement that inserts `rows` events (one string per count, so SQLite's statement cache keeps each)."""
    return (
        "INSERT INTO events (mind, kind, cycle_id, causation_id, actor, channel, text, data, subject_type, subject_id, at) VALUES "
        + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)
    )


def _row(draft: EventDraft, at: str) -> tuple[Any, ...]:
    """A draft's values for `_insert_events`, its data as JSON."""
    try:
        # JSON has no NaN or Infinity: an event holding one could not be answered to any reader.
        data = _DATA_JSON(draft.data)
    except ValueError:
        raise InvalidInput(f"a {draft.kind} event's data holds a number that is not finite (NaN or Infinity); JSON numbers are finite") from None
    subject = draft.subject
    return (draft.mind, draft.kind, draft.cycle_id, draft.causation_id, draft.actor, draft.channel, draft.text, data,
            subject.type if subject else None, subject.id if subject else None, at)


def _event(event_id: int, draft: EventDraft, at: str) -> Event:
    """The event a draft became, its links without repeats."""
    # Event(...) without its frozen __init__, as event_from_row makes one (a field at a time was most of building it).
    event = object.__new__(Event)
    object.__setattr__(event, "__dict__", {
        "id": event_id,
        "mind": draft.mind,
        "kind": draft.kind,
        "actor": draft.actor,
        "at": at,
        "channel": draft.channel,
        "text": draft.text,
        "data": dict(draft.data),
        "cycle_id": draft.cycle_id,
        "causation_id": draft.causation_id,
        "parents": tuple(dict.fromkeys(draft.parents)),
        "refs": tuple(dict.fromkeys(draft.refs)),
        "subject": draft.subject,
    })
    return event


def _store_links(db: Database, events: Sequence[Event]) -> None:
    """The parents and refs of events just inserted, a statement for each."""
    parents = [(e.id, p, e.mind) for e in events for p in e.parents]
    if parents:
        db.conn.executemany("INSERT INTO event_parents (event_id, parent_id, mind) VALUES (?, ?, ?)", parents)
    refs = [(e.id, r.type, r.id, e.mind) for e in events for r in e.refs]
    if refs:
        db.conn.executemany("INSERT INTO event_refs (event_id, ref_type, ref_id, mind) VALUES (?, ?, ?, ?)", refs)


REDACTED = "(redacted)"  # what a redacted stimulus' text reads from then on


def redact(db: Database, target: int, draft: EventDraft, now: float) -> Event | None:
    """Take back what a stored stimulus said: its text reads `REDACTED` from now on, for the mind, its judge and
    every reader, and `draft` (the redaction, e.g. a `message_redacted` event) is recorded, caused by it.

    A writer job. Nothing happens (None) when `target` is not one of the draft's mind's messages or is
    redacted already: a redaction the source sends again is recorded once.
    """
    cur = db.execute(
        "UPDATE events SET text = ? WHERE id = ? AND mind = ? AND kind = 'message' AND text IS NOT ?",
        [REDACTED, target, draft.mind, REDACTED],
    )
    if cur.rowcount == 0:
        return None
    return append(db, replace(draft, causation_id=target), now)


_COLUMNS = "id, mind, kind, actor, at, text, channel, data, cycle_id, causation_id, subject_type, subject_id"


def _links(db: Database, ids: Sequence[int]) -> tuple[dict[int, list[int]], dict[int, list[Ref]]]:
    """The parents (in id order) and refs (in (type, id) order) of the events `ids`, both read by one statement."""
    parents: dict[int, list[int]] = {}
    refs: dict[int, list[Ref]] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        # A parent's row has no ref type (NULL sorts first): ordered by (event, type, id), parents come in id order, refs in (type, id) order.
        for event_id, ref_type, linked in db.execute(
            f"SELECT event_id, NULL, parent_id FROM event_parents WHERE event_id IN ({marks})"
            f" UNION ALL SELECT event_id, ref_type, ref_id FROM event_refs WHERE event_id IN ({marks}) ORDER BY 1, 2, 3",
            chunk + chunk,
        ):
            if ref_type is None:
                parents.setdefault(event_id, []).append(linked)
            else:
                refs.setdefault(event_id, []).append(Ref(ref_type, linked))
    return parents, refs


def _rows_to_events(db: Database, rows: Iterable[tuple[Any, ...]]) -> list[Event]:
    rows = list(rows)
    parents, refs = _links(db, [r[0] for r in rows])
    return [event_from_row(r, tuple(parents.get(r[0], ())), tuple(refs.get(r[0], ()))) for r in rows]


EVENT_COLUMNS = _COLUMNS  # the columns `event_from_row` reads, in its order


def _no_constant(name: str) -> None:
    return None


# The one decoder of an event's data (json.loads with an option builds a new decoder for every event).
_DATA_DECODE = json.JSONDecoder(parse_constant=_no_constant).decode


def _data(raw: str) -> dict[str, Any]:
    """An event's stored data, parsed."""
    # Most events carry no data; skip the parser for the stored default.
    # A non-finite number stored before the edge refused them reads as null, so no read of it fails.
    return {} if raw == "{}" else _DATA_DECODE(raw)


def event_from_row(row: Sequence[Any], parents: tuple[int, ...], refs: tuple[Ref, ...]) -> Event:
    """An event from a row of `EVENT_COLUMNS` and its links, equal to the one `get_events` builds.

    For readers that fetch the links themselves (the causal walk gets them with
    the edges it needs anyway). `parents` in id order, `refs` in (type, id) order.
    """
    # The object Event(...) would make, without its frozen-dataclass __init__:
    # setting 13 fields one object.__setattr__ at a time took 1.8 µs, most of
    # the cost of building an event. Event has no __post_init__ to skip; the
    # walk's tests compare these events with get_events' field by field.
    event = object.__new__(Event)
    object.__setattr__(event, "__dict__", event_fields(row, parents, refs))
    return event


def event_fields(row: Sequence[Any], parents: tuple[int, ...], refs: tuple[Ref, ...]) -> dict[str, Any]:
    """The fields of the event `event_from_row` makes, as a new dict: for a reader that makes an Event subclass of them (the walk's nodes)."""
    return {
        "id": row[0],
        "mind": row[1],
        "kind": row[2],
        "actor": row[3],
        "at": row[4],
        "text": row[5],
        "channel": row[6],
        "data": _data(row[7]),
        "cycle_id": row[8],
        "causation_id": row[9],
        "parents": parents,
        "refs": refs,
        "subject": Ref(row[10], row[11]) if row[10] else None,
    }


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
    """How many events of `kind` a mind has had, archived ones included (e.g. the cycles it has run).

    Archived events count: a count that numbers things (a cycle's number is
    its cycle id) goes on from where it was, never reusing a number.
    """
    (count,) = db.execute(
        "SELECT (SELECT count(*) FROM events WHERE mind = ? AND kind = ?)"
        " + coalesce((SELECT events FROM archived_tally WHERE mind = ? AND kind = ?), 0)",
        [mind, kind, mind, kind],
    ).fetchone()
    return int(count)


def archived_counts(db: Database) -> list[tuple[str, str, int]]:
    """(mind, kind, how many) of every mind's archived events (moved out of the store), by mind and kind."""
    return db.execute("SELECT mind, kind, events FROM archived_tally ORDER BY mind, kind").fetchall()


def remove_archived(db: Database, mind: str, ids: Sequence[int]) -> dict[str, int]:
    """Delete the mind's events `ids`, copied into an archive beforehand; kind -> how many went.

    Run it on the writer, in the job that copied them and recorded the cuts
    (noemad.archive). Kept events' links into `ids` go first: a kept event's
    cause is unset rather than letting the foreign key's cascade delete the
    kept event with it, and refs to the events are dropped (the cuts say
    where they pointed). Parents go with their rows (a cascade), as do the
    memories' pointers to them (set null). The mind's tally keeps them counted.
    """
    if not ids:
        return {}
    step = json.dumps(list(ids))
    rows = "WITH gone(id) AS (SELECT value FROM json_each(?))"
    db.execute(f"{rows} UPDATE events SET causation_id = NULL WHERE causation_id IN gone AND id NOT IN gone", [step])
    db.execute(f"{rows} DELETE FROM event_refs WHERE ref_type = 'event' AND ref_id IN gone AND event_id NOT IN gone", [step])
    kinds = dict(
        db.execute(f"{rows} SELECT kind, count(*) FROM events WHERE id IN gone AND mind = ? GROUP BY kind", [step, mind]).fetchall()
    )
    db.execute(f"{rows} DELETE FROM events WHERE id IN gone AND mind = ?", [step, mind])
    db.conn.executemany(
        "INSERT INTO archived_tally (mind, kind, events) VALUES (?, ?, ?)"
        " ON CONFLICT (mind, kind) DO UPDATE SET events = events + excluded.events",
        [(mind, kind, n) for kind, n in sorted(kinds.items())],
    )
    return kinds


def unlink_mind(db: Database, mind: str) -> None:
    """Drop every link among the mind's events (refs, parents, causes): the first step of deleting the mind (noemad.minds).

    With no link left, its events go in one statement, without the foreign
    keys' cascades searching for their children row by row.
    """
    db.execute("DELETE FROM event_refs WHERE mind = ?", [mind])
    db.execute("DELETE FROM event_parents WHERE mind = ?", [mind])
    db.execute("UPDATE events SET causation_id = NULL WHERE mind = ? AND causation_id IS NOT NULL", [mind])


def latest_events(db: Database, mind: str, *, kinds: Sequence[str] = (), limit: int = 100, through: int | None = None) -> list[Event]:
    """A mind's newest `limit` events (of those up to event `through`, if given), oldest first."""
    sql = f"SELECT {_COLUMNS} FROM events WHERE mind = ?"
    params: list[Any] = [mind]
    if through is not None:
        sql += " AND id <= ?"
        params.append(through)
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(limit)
    return list(reversed(_rows_to_events(db, db.execute(sql, params).fetchall())))


def in_window(db: Database, mind: str, *, kinds: Sequence[str], window: int) -> list[Event]:
    """The mind's events of `kinds` among its newest `window` events (of every kind), oldest first."""
    # ids start at 1: with fewer than `window` events, every one is in it.
    sql = (
        f"SELECT {_COLUMNS} FROM events WHERE mind = ?"
        " AND id >= coalesce((SELECT id FROM events WHERE mind = ? ORDER BY id DESC LIMIT 1 OFFSET ?), 0)"
        f" AND kind IN ({','.join('?' * len(kinds))}) ORDER BY id LIMIT ?"
    )
    return _rows_to_events(db, db.execute(sql, [mind, mind, window - 1, *kinds, window]).fetchall())


def latest_data(db: Database, mind: str, kind: str) -> tuple[int, dict[str, Any]] | None:
    """The id and data of the mind's newest event of `kind` (None if it has none): for a reader that needs
    nothing else of it, without reading its links as `latest_events` does."""
    row = db.execute("SELECT id, data FROM events WHERE mind = ? AND kind = ? ORDER BY id DESC LIMIT 1", [mind, kind]).fetchone()
    return None if row is None else (int(row[0]), _data(row[1]))


# --- reading a mind's events as people read logs ---------------------------------------------

# Every kind an event is written with. `--kind` is checked against these (and
# any kind already stored) so a typo is an error naming the kinds rather than
# an empty page. tests/test_events_query.py checks every EventDraft's kind in
# `noemad` is listed here, so a new kind cannot be forgotten.
KNOWN_KINDS: tuple[str, ...] = (
    # stimuli
    "message", "observation", "assertion", "correction", "goal", "prediction", "outcome",
    # the mind and its gate
    "mind_created", "mode_changed", "settings_changed", "trust_changed", "gate_rules_changed",
    "mind_slept", "mind_woke", "self_wake_set", "self_wake_cancelled", "judge_verdict",
    # a turn
    "cycle_started", "cycle_completed", "attention", "reply", "reply_skipped", "reply_failed", "turn_failed",
    "tool_called", "action_denied", "governance", "metacognition", "narrative_updated", "narrative_rephrased",
    # beliefs, memories, goals, predictions, notifications
    "belief_created", "belief_updated", "memory_created", "memory_retrieved", "memory_retracted",
    "goal_created", "goal_progressed", "goal_completed", "goal_abandoned",
    "prediction_made", "prediction_due", "prediction_resolved",
    "notification", "notification_suppressed", "notification_acked",
    # background jobs
    "reflection", "consolidation", "generalisation_rejected", "job_finished", "schedule_paused", "schedule_resumed",
    # retention
    "events_archived",
    # connectors: an outbox row's attempts; what a room took back (a redaction) or was refused (an invite)
    "delivery", "message_redacted", "matrix_invite_refused",
)
MAX_QUERY_KINDS = 64  # --kind given more often than there are kinds is a mistake
MAX_GREP = 200  # characters in a search
MAX_TAIL = 1000  # newest events in one page, as `limit` bounds the oldest-first page


def stored_kinds(db: Database) -> set[str]:
    """The kinds any stored event has (a kind a newer daemon wrote is known too)."""
    return {row[0] for row in db.execute("SELECT DISTINCT kind FROM events")}


def check_kinds(db: Database, kinds: Sequence[str]) -> tuple[str, ...]:
    """`kinds` each once, or `InvalidInput` naming one that is no event kind, with a did-you-mean and the list."""
    import difflib

    wanted = tuple(dict.fromkeys(kinds))
    if len(wanted) > MAX_QUERY_KINDS:
        raise InvalidInput(f"ask for at most {MAX_QUERY_KINDS} kinds at once, not {len(wanted)}")
    unknown = [k for k in wanted if k not in KNOWN_KINDS]
    if unknown:
        known = sorted(set(KNOWN_KINDS) | stored_kinds(db))
        for kind in unknown:
            if kind in known:
                continue
            close = difflib.get_close_matches(kind, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InvalidInput(f"{kind[:60]!r} is not an event kind; {hint}the kinds are: {', '.join(known)}")
    return wanted


def _contains(haystack: str | None, needle: str) -> bool:
    return haystack is not None and needle in haystack.casefold()


def _values_hold(value: Any, needle: str) -> bool:
    """Whether a string or number among `value`'s values (never its keys) holds `needle`, already casefolded."""
    if isinstance(value, dict):
        return any(_values_hold(v, needle) for v in value.values())
    if isinstance(value, list):
        return any(_values_hold(v, needle) for v in value)
    if isinstance(value, str):
        return needle in value.casefold()
    return isinstance(value, (int, float)) and not isinstance(value, bool) and needle in str(value)


def _data_holds(data: str | None, needle: str) -> bool:
    return data is not None and _values_hold(json.loads(data), needle)


def _ascii_part(needle: str) -> str:
    """The longest run of `needle` that stored JSON spells as is (printable ASCII but `"` and `\\`)."""
    runs = re.split(r'[^\x20-\x7e]|["\\]', needle)
    return max(runs, key=len)


def matches(event: Event, grep: str) -> bool:
    """Whether `grep` is in the event's text or its data's values, ignoring case (as `query_events` filters; for followers)."""
    needle = grep.casefold()
    return _contains(event.text, needle) or _values_hold(event.data, needle)


@dataclass(frozen=True)
class EventQuery:
    """What `query_events` reads: filters, and either the oldest `limit` after them or the newest `tail`."""

    kinds: Sequence[str] = ()
    since: int = 0  # only ids above this
    since_time: float | None = None  # only events at or after this time
    grep: str | None = None  # only events whose text or data's values hold this, ignoring case
    limit: int = 100
    tail: int | None = None


def query_events(db: Database, mind: str, query: EventQuery) -> tuple[list[Event], int]:
    """A mind's events matching `query`, oldest first, and the mind's newest event id when they were read.

    The id is what a follower streams after: every event up to it was
    considered here, so following from it misses none and repeats none.
    """
    kinds = check_kinds(db, query.kinds)
    if query.grep is not None and not 0 < len(query.grep) <= MAX_GREP:
        raise InvalidInput(f"a search is 1 to {MAX_GREP} characters, not {len(query.grep)}")
    if query.tail is not None and not 1 <= query.tail <= MAX_TAIL:
        raise InvalidInput(f"tail is 1 to {MAX_TAIL} events, not {query.tail}")
    (last,) = db.execute("SELECT coalesce(max(id), 0) FROM events WHERE mind = ?", [mind]).fetchone()
    sql = f"SELECT {_COLUMNS} FROM events WHERE mind = ? AND id > ? AND id <= ?"
    params: list[Any] = [mind, query.since, last]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    if query.since_time is not None:
        sql += " AND at >= ?"
        params.append(iso(query.since_time))
    if query.grep is not None:
        # Python's casefold, not SQLite's ASCII-only lower(): 'Émile' finds 'émile'. The data's values
        # are searched too (its keys are not). Parsing every row's JSON would cost 8x a text-only scan
        # (bench/events_grep.py), so first, in C, the raw JSON must hold the search's longest ASCII run:
        # stored JSON is ASCII, escaping only non-ASCII, quotes, backslashes and control characters.
        # One match is given up for speed: a search all ASCII does not find, in the data, a letter
        # that only folds to it (strasse finds Straße in the text, not in the data; Straße does).
        needle = query.grep.casefold()
        db.conn.create_function("noema_contains", 2, _contains, deterministic=True)
        db.conn.create_function("noema_data_holds", 2, _data_holds, deterministic=True)
        sql += " AND (noema_contains(text, ?) OR (instr(lower(data), ?) AND noema_data_holds(data, ?)))"
        params.extend([needle, _ascii_part(needle), needle])
    if query.tail is not None:
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(query.tail)
        return list(reversed(_rows_to_events(db, db.execute(sql, params).fetchall()))), int(last)
    sql += " ORDER BY id LIMIT ?"
    params.append(query.limit)
    return _rows_to_events(db, db.execute(sql, params).fetchall()), int(last)


def first_event_since(db: Database, mind: str, at: str, through: int, *, strictly: bool = False) -> int:
    """The id of the mind's first event at or after `at` (ISO; after it if `strictly`), or `through + 1` if none up to `through`.

    Events are appended in time order, so the mind's event ids are bisected
    on `events(mind, id)`: a few dozen index probes however long the history.
    """
    # Two queries: SQLite answers a lone min() or max() with one index seek, both together with a scan.
    (lo,) = db.execute("SELECT min(id) FROM events WHERE mind = ? AND id <= ?", [mind, through]).fetchone()
    (hi,) = db.execute("SELECT max(id) FROM events WHERE mind = ? AND id <= ?", [mind, through]).fetchone()
    if hi is None:
        return through + 1

    def first_from(x: int) -> tuple[int, str]:
        found, found_at = db.execute("SELECT id, at FROM events WHERE mind = ? AND id >= ? ORDER BY id LIMIT 1", [mind, x]).fetchone()
        return int(found), str(found_at)

    def reached(when: str) -> bool:
        return when > at if strictly else when >= at

    if not reached(first_from(hi)[1]):
        return through + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if reached(first_from(mid)[1]):
            hi = mid
        else:
            lo = mid + 1
    return int(first_from(lo)[0])
