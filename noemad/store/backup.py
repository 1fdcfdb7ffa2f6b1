"""Backups: a consistent, verified copy of the store, made while the daemon writes.

`VACUUM INTO` on a connection of its own reads one snapshot of the database
(WAL lets the writer go on meanwhile) and writes it compacted into a new
file, which is standalone (no -wal beside it). The copy is then checked with
`PRAGMA integrity_check` before anyone is handed it: a backup that does not
verify is deleted and reported, never served.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from noemad.errors import BackupFailed, BackupRunning
from noemad.store.migrations import newest_migration

_running = threading.Lock()  # one backup at a time per process: each reads the whole store


@dataclass(frozen=True)
class Snapshot:
    """A verified copy of the store on disk, and what it holds."""

    path: Path
    size: int
    """Bytes."""
    events: int
    minds: int
    migration: str
    """The newest schema migration the copy has: a restore needs a noemad that knows it."""


def snapshot(source: Path, dest: Path) -> Snapshot:
    """Copy the store at `source` into the new file `dest`, verified; blocking (run it off the loop).

    Raises BackupRunning while another snapshot is being made, and
    BackupFailed (with `dest` removed) when the copy cannot be written or
    does not pass `integrity_check`.
    """
    if not _running.acquire(blocking=False):
        raise BackupRunning("a backup is already being made; wait for it to finish, then ask again")
    try:
        dest.unlink(missing_ok=True)
        try:
            _copy(source, dest)
            return verify(dest)
        except (sqlite3.Error, OSError) as exc:
            dest.unlink(missing_ok=True)
            full = isinstance(exc, sqlite3.OperationalError) and "full" in str(exc)
            hint = f"free space in {dest.parent}, then retry" if full else "the daemon's log may say more; the store itself is untouched"
            raise BackupFailed(f"the backup could not be made: {exc}; {hint}") from None
        except BackupFailed:
            dest.unlink(missing_ok=True)
            raise
    finally:
        _running.release()


def _copy(source: Path, dest: Path) -> None:
    conn = sqlite3.connect(str(source), isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("VACUUM INTO ?", [str(dest)])
    finally:
        conn.close()
    fd = os.open(dest, os.O_RDONLY)
    try:
        os.fsync(fd)  # the copy is on disk before it is called a backup
    finally:
        os.close(fd)


def verify(path: Path) -> Snapshot:
    """Check the SQLite file at `path` with `integrity_check` and say what it holds; `BackupFailed` if it does not verify."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check(20)")]
        if problems != ["ok"]:
            raise BackupFailed(f"the backup did not verify ({'; '.join(problems)[:300]}); it was deleted. The store itself is untouched")
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        minds = conn.execute("SELECT count(*) FROM minds").fetchone()[0]
        newest = newest_migration(conn)
    finally:
        conn.close()
    return Snapshot(path=path, size=path.stat().st_size, events=events, minds=minds, migration=newest)
