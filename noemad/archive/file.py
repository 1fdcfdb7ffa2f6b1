"""The archive file: a SQLite database holding a run's events with their links, as the store held them.

Its `events`, `event_parents`, `event_refs` and `model_calls` tables have
the store's columns (read from the store when the file is made, so a newer
schema's columns come along), without the foreign keys: the causal walk
(`noemad.timeline.walk`) runs on the file as on the store. Beside them:
`event_cuts` (the archived events' own cuts into earlier archives, with the
archive's path), `memory_events` (the episodes whose stimulus is here: the
store's memory no longer points at it), `archive_info` (whose file it is)
and `archive_runs` (each run that wrote to it: a month's runs share a file).

Rows are written with INSERT OR REPLACE: a chunk copied by a run that failed
after writing the file is copied again over itself, never twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from sqlite_utils import Database

from noemad.archive.cuts import Archive, cuts_of
from noemad.cognition.memory.reads import episodes_recording
from noemad.ledger import cited_rows

_S = "WITH s(id) AS (SELECT value FROM json_each(?))"
_TABLES = ("events", "event_parents", "event_refs", "model_calls")
_KEYS = {"events": "id", "model_calls": "id", "event_parents": "event_id, parent_id", "event_refs": "event_id, ref_type, ref_id"}
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS events_mind_id ON events(mind, id)",
    "CREATE INDEX IF NOT EXISTS events_causation ON events(causation_id) WHERE causation_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS events_cycle ON events(cycle_id) WHERE cycle_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS events_subject ON events(subject_type, subject_id, id) WHERE subject_type IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS event_parents_parent ON event_parents(parent_id, event_id)",
    "CREATE INDEX IF NOT EXISTS event_refs_target ON event_refs(ref_type, ref_id, event_id)",
    """CREATE TABLE IF NOT EXISTS event_cuts (event_id INTEGER NOT NULL, archived_id INTEGER NOT NULL, link TEXT NOT NULL,
       side TEXT NOT NULL, archive_id INTEGER NOT NULL, archive_path TEXT NOT NULL,
       PRIMARY KEY (event_id, archived_id, link, side)) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS memory_events (memory_id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS archive_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS archive_runs (archive INTEGER PRIMARY KEY, before TEXT NOT NULL, actor TEXT NOT NULL, started_at TEXT NOT NULL)",
)


def _columns(db: Database, table: str) -> list[tuple[str, str]]:
    return [(row[1], row[2]) for row in db.execute(f"PRAGMA table_info({table})")]


def open_file(path: Path, store: Database, archive: Archive) -> sqlite3.Connection:
    """Open (making it if new) the archive file at `path` for `archive`, its tables shaped as the store's."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = not path.exists()
    if fresh:
        # Made private before SQLite writes a byte: it holds what the store holds.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    # A chunk is in the file, durably, before the store lets it go. WAL syncs once per chunk where a rollback
    # journal syncs three times; `close_file` folds the WAL back in, so the file stands alone.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("BEGIN")
    for table in _TABLES:
        columns = _columns(store, table)
        keys = _KEYS[table]
        body = ", ".join(f'"{name}" {kind}' for name, kind in columns)
        suffix = " WITHOUT ROWID" if table in ("event_parents", "event_refs") else ""
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body}, PRIMARY KEY ({keys})){suffix}")
        known = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns:  # a file a run of an older noemad began: its columns catch up
            if name not in known:
                conn.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {kind}')
    for statement in _INDEXES:
        conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO archive_info (key, value) VALUES ('mind', ?)", [archive.mind])
    conn.execute(
        "INSERT OR REPLACE INTO archive_runs (archive, before, actor, started_at) VALUES (?, ?, ?, ?)",
        [archive.id, archive.before, archive.actor, archive.started_at],
    )
    conn.execute("COMMIT")
    return conn


def _copy(store: Database, conn: sqlite3.Connection, table: str, where: str, params: Sequence[object]) -> int:
    """Copy the rows of one of the event log's tables (open to readers: noemad.events writes them) that `where` picks."""
    names = [name for name, _ in _columns(store, table)]
    quoted = ", ".join(f'"{n}"' for n in names)
    rows = store.execute(f"{_S} SELECT {quoted} FROM {table} WHERE {where}", list(params)).fetchall()
    return _put(conn, table, names, rows)


def _put(conn: sqlite3.Connection, table: str, names: Sequence[str], rows: Sequence[Sequence[object]]) -> int:
    quoted = ", ".join(f'"{n}"' for n in names)
    conn.executemany(f"INSERT OR REPLACE INTO {table} ({quoted}) VALUES ({', '.join('?' * len(names))})", rows)
    return len(rows)


def write_chunk(store: Database, conn: sqlite3.Connection, archive: Archive, ids: Sequence[int]) -> None:
    """Copy the events `ids` with their parents, refs, cited model calls, cuts and episodes into the file, and sync it."""
    step = [json.dumps(list(ids))]
    conn.execute("BEGIN")
    try:
        _copy(store, conn, "events", "id IN s", step)
        _copy(store, conn, "event_parents", "event_id IN s", step)
        _copy(store, conn, "event_refs", "event_id IN s", step)
        _put(conn, "model_calls", *cited_rows(store, ids))  # the ledger's rows, read through it
        earlier = [c for c in cuts_of(store, ids) if c.path != archive.path]  # cuts into this file end inside it
        conn.executemany(
            "INSERT OR REPLACE INTO event_cuts VALUES (?, ?, ?, ?, ?, ?)", [(c.event, c.archived, c.link, c.side, c.archive, c.path) for c in earlier]
        )
        conn.executemany("INSERT OR REPLACE INTO memory_events (memory_id, event_id) VALUES (?, ?)", episodes_recording(store, ids))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def close_file(conn: sqlite3.Connection) -> None:
    """Fold the file's WAL into it and close it: a finished archive is one file, with no -wal beside it."""
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    finally:
        conn.close()


def open_readonly(path: str) -> Database:
    """An archive file, read only (for the walk), or FileNotFoundError when it has been moved away."""
    if not Path(path).is_file():
        raise FileNotFoundError(path)
    return Database(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))


def holds(path: str, event_id: int) -> bool:
    """Whether the archive file at `path` holds event `event_id` (False when the file is gone)."""
    try:
        db = open_readonly(path)
    except FileNotFoundError:
        return False
    try:
        return db.execute("SELECT 1 FROM events WHERE id = ?", [event_id]).fetchone() is not None
    finally:
        db.close()
