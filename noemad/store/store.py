"""The store: migrations at open, one writer, a reader connection per thread."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from sqlite_utils import Database

from noemad.errors import StoreError
from noemad.store.connection import open_db
from noemad.store.migrations import migrations
from noemad.store.writer import Writer


class Store:
    """One SQLite database: migrated on open, written by one `Writer`."""

    def __init__(self, path: Path, *, replicated: bool = False) -> None:
        """Open (and migrate) the store at `path`; `replicated`: Litestream streams it and does its checkpoints."""
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = open_db(path)
            try:
                migrations.apply(db)
            finally:
                db.close()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot open the store {path}: {exc}. Check the path and its permissions, and that the disk is not full."
            ) from None
        self.writer = Writer(path, replicated=replicated)
        self._local = threading.local()
        self._readers: list[Database] = []
        self._lock = threading.Lock()

    def reader(self) -> Database:
        """This thread's read-only connection (opened on first use)."""
        db: Database | None = getattr(self._local, "db", None)
        if db is None:
            db = open_db(self.path, readonly=True)
            self._local.db = db
            with self._lock:
                self._readers.append(db)
        return db

    def close(self) -> None:
        """Close the readers, then flush and close the writer."""
        with self._lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
        self.writer.close()
