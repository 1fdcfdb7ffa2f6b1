"""The write guard: a write job that changes rows must append an event.

Every change is an event written by the table's owner in the same
transaction (DESIGN.md). The guard checks it for each writer job, when on
(`NOEMA_WRITE_GUARD=1`; the tests set it): a job that changed rows of a table
outside `ALLOWLIST` and appended no event fails with `UnrecordedWrite`
naming the tables, and is rolled back alone like any job that raises.

How it sees changes. Python's sqlite3 has no update hook, so the guard
pairs two callbacks on the writer's connection: the authorizer names the
tables a statement may insert into, update or delete from (including what its
triggers and foreign-key actions touch) when the statement is prepared, and
the trace callback marks where each statement starts to run, so the rows
`total_changes` moved between two starts are charged to the tables of the
statement that ran between them. A statement that changed no rows (an
`INSERT OR IGNORE` that ignored, an `UPDATE` that matched nothing) charges
nothing. Statements must be prepared anew each time for the authorizer to see
them, so a guarded writer opens its connection with `cached_statements=0`.
A part of a job rolled back to its savepoint (`noemad.store.savepoint`)
changed nothing, and its tables are taken off the job's account.

What it costs (bench/guard.py, 2 shared cores): a one-event job about 20%
more (some 60 µs), a whole cognitive cycle about 45-55% more (some 1.5 ms):
nothing a test suite notices, too much to pay in production, where it is off.

A job that deliberately records nothing calls `unrecorded(reason)`: deleting
a mind (its timeline goes with it), pausing a schedule on a host with no
minds (no timeline to record it on; the row names who and when).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from noemad.errors import StoreError

ENV = "NOEMA_WRITE_GUARD"

# What may change without an event, and why: a table, or `table.column` for an UPDATE of only that column.
ALLOWLIST: dict[str, str] = {
    "model_calls": "the ledger: each row is its own record (mind, role, model, tokens, outcome, time), written by the"
    " gateway for every call, refused calls too; the event that used a call cites it",
    "jobs.progress": "a running job's progress, written as it moves (a percent or a new stage at a time); its start and"
    " end are events",
    "jobs.stage": "the same report's stage name",
    "connector_cursors": "a connector's place in its source (Matrix's sync token): it moves on every sync, most of"
    " which bring nothing; the stimuli a sync brings are events written in the same transaction",
}
# What appending an event writes.
EVENT_TABLES = frozenset({"events", "event_parents", "event_refs"})

_WRITES = (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE)
_local = threading.local()


class UnrecordedWrite(StoreError):
    """A write job changed rows and recorded no event."""

    title = "Unrecorded write"


def guard_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether `NOEMA_WRITE_GUARD` asks for the guard."""
    return (environ if environ is not None else os.environ).get(ENV, "") not in ("", "0")


def unrecorded(reason: str) -> None:
    """Say that the running writer job deliberately records no event, and why (a no-op when the guard is off)."""
    _local.reason = reason


class WriteGuard:
    """Watches one writing connection; `begin` and `check` bracket each job."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._pending: set[str] = set()  # tables of the statement being prepared
        self._running: set[str] = set()  # tables of the statement that last started
        self._changed: set[str] = set()  # tables whose rows this job changed
        self._mark = conn.total_changes
        conn.set_authorizer(self._authorize)
        conn.set_trace_callback(self._trace)

    def _authorize(self, action: int, table: str | None, column: str | None, *_: Any) -> int:
        # sqlite_* are SQLite's own (the schema, FTS5's bookkeeping), never a table of the store.
        if action in _WRITES and table and not table.startswith("sqlite_"):
            # An UPDATE is authorized column by column: name each, so one column can be allowed.
            self._pending.add(f"{table}.{column}" if action == sqlite3.SQLITE_UPDATE and column else table)
        return sqlite3.SQLITE_OK

    def _trace(self, sql: str) -> None:
        if sql.startswith("--"):
            return  # a trigger's statement: part of the one running
        self._settle()
        if self._pending:  # a statement run again (executemany) prepares nothing new
            self._running, self._pending = self._pending, set()

    def _settle(self) -> None:
        total = self._conn.total_changes
        if total != self._mark:
            self._changed |= self._running
            self._mark = total

    def begin(self) -> None:
        """A job starts: forget what earlier ones changed."""
        self._settle()
        self._changed = set()
        self._running = set()
        self._pending = set()
        _local.reason = None
        _local.guard = self

    def mark(self) -> frozenset[str]:
        """What the running job has changed so far (a savepoint begins)."""
        self._settle()
        return frozenset(self._changed)

    def rewind(self, mark: frozenset[str]) -> None:
        """A savepoint was rolled back: its changes are undone, so they are no longer the job's."""
        self._mark = self._conn.total_changes
        self._changed = set(mark)
        self._running = set()

    def check(self, *, appended: bool, job: Callable[..., Any] | None = None) -> None:
        """A job ended: raise `UnrecordedWrite` if it changed guarded rows and appended no event."""
        self._settle()
        unguarded = {w for w in self._changed if w not in ALLOWLIST and w.split(".")[0] not in ALLOWLIST.keys() | EVENT_TABLES}
        if not unguarded or appended or getattr(_local, "reason", None):
            return
        name = f"{getattr(job, '__module__', '?')}.{getattr(job, '__qualname__', repr(job))}" if job is not None else "a write job"
        raise UnrecordedWrite(
            f"{name} changed rows of {', '.join(sorted(unguarded))} and appended no event; write the change through"
            " the table's owner, which records it with an event, or allowlist the table in noemad.store.guard with why"
        )


def guard_of_job() -> WriteGuard | None:
    """The guard watching the job this thread runs, if the guard is on."""
    return getattr(_local, "guard", None)
