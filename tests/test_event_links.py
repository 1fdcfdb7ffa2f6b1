"""An event read back carries its links as written: parents in id order, refs in (type, id) order, read in one statement."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sqlite_utils import Database

from noemad.clock import parse_iso
from noemad.errors import InvalidLink
from noemad.events import Event, EventDraft, Ref, append, append_all, get_event, get_events, latest_events
from noemad.minds import create_mind
from noemad.store import Store

START = parse_iso("2026-01-01T00:00:00Z")


def test_events_read_back_with_their_parents_and_refs_in_order_in_one_statement(tmp_path: Path) -> None:
    store = Store(tmp_path / "n.db")
    try:
        def write(db: Database) -> list[int]:
            create_mind(db, "ada", {}, START, "operator")
            a, b, c = (append(db, EventDraft("ada", "message", "user:alice", text=t), START).id for t in "abc")
            linked = append(
                db,
                EventDraft("ada", "note", "operator:root", parents=[c, a], refs=[Ref("event", c), Ref("event", b)], causation_id=a),
                START,
            )
            return [a, b, c, linked.id]

        a, b, c, linked = store.writer.run_sync(write)
        statements: list[str] = []
        reader = store.reader()
        reader.conn.set_trace_callback(statements.append)
        found = get_events(reader, [a, linked])
        reader.conn.set_trace_callback(None)

        assert found[linked].parents == (a, c) and found[linked].refs == (Ref("event", b), Ref("event", c))
        assert found[a].parents == () and found[a].refs == ()
        assert len(statements) == 2  # the rows, then every link of them
        assert latest_events(reader, "ada", limit=1)[0] == found[linked]
    finally:
        store.close()


def test_an_appended_event_is_the_one_read_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "n.db")
    try:
        def write(db: Database) -> Event:
            create_mind(db, "ada", {}, START, "operator")
            a = append(db, EventDraft("ada", "message", "user:alice", text="a", channel="cli", data={"author": "alice"}), START)
            return append(db, EventDraft("ada", "note", "operator:root", text="n", parents=[a.id], refs=[Ref("event", a.id)], causation_id=a.id), START)

        appended = store.writer.run_sync(write)
        assert appended == get_event(store.reader(), appended.id)
        assert list(vars(appended)) == [f.name for f in dataclasses.fields(Event)]  # built as Event(...) builds it
    finally:
        store.close()


def test_events_appended_together_are_the_rows_appending_each_writes(tmp_path: Path) -> None:
    def drafts(a: int, b: int) -> list[EventDraft]:
        return [
            EventDraft("ada", "note", "operator:root", text="one", data={"n": 1}),
            EventDraft("ada", "note", "operator:root", parents=[b, a, b], refs=[Ref("event", a)], causation_id=a),
            EventDraft("ada", "note", "operator:root", channel="cli", refs=[Ref("event", b), Ref("event", a)]),
        ]

    def rows(db: Database) -> list[list[tuple[object, ...]]]:
        return [db.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall() for table in ("events", "event_parents", "event_refs")]

    written: list[tuple[list[Event], list[list[tuple[object, ...]]]]] = []
    for together in (True, False):
        store = Store(tmp_path / f"{together}.db")
        try:
            def write(db: Database) -> list[Event]:
                create_mind(db, "ada", {}, START, "operator")
                a, b = (append(db, EventDraft("ada", "message", "user:alice", text=t), START).id for t in "ab")
                made = drafts(a, b)
                return append_all(db, made, START) if together else [append(db, d, START) for d in made]

            events = store.writer.run_sync(write)
            written.append((events, rows(store.reader())))
        finally:
            store.close()
    assert written[0] == written[1]
    assert [e.id for e in written[0][0]] == [4, 5, 6]


def test_events_appended_together_are_checked_before_any_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path / "n.db")
    try:
        store.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
        bad = [EventDraft("ada", "note", "operator:root"), EventDraft("ada", "note", "operator:root", causation_id=99)]
        with pytest.raises(InvalidLink, match="event 99 does not exist"):
            store.writer.run_sync(lambda db: append_all(db, bad, START))
        assert latest_events(store.reader(), "ada", kinds=["note"]) == []
    finally:
        store.close()


def test_a_number_json_cannot_carry_stored_by_an_older_version_reads_as_null(tmp_path: Path) -> None:
    store = Store(tmp_path / "n.db")
    try:
        def write(db: Database) -> int:
            create_mind(db, "ada", {}, START, "operator")
            event = append(db, EventDraft("ada", "note", "operator:root", data={"x": 1}), START)
            db.execute("UPDATE events SET data = ? WHERE id = ?", ['{"x": NaN, "y": [Infinity, -Infinity, 2]}', event.id])
            return event.id

        event_id = store.writer.run_sync(write)
        assert get_event(store.reader(), event_id).data == {"x": None, "y": [None, None, 2]}
    finally:
        store.close()
