"""The store: migrations at open, one writer, a reader connection per thread."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sqlite_utils import Database

from noemad.errors import StoreError
from noemad.store.connection import open_db
from noemad.store.migrations import migrations
from noemad.store.writer import Writer

T = TypeVar("T")


class Store:
    """One SQLite database: migrated on open, written by one `Writer`."""

    def __init__(self, path: Path, *, replicated: bool = False) -> None:
        """Open (and migrate) the store at `path`; `replicated`: Litestream streams it and does its checkpoints."""
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = open_db(path)
            try:
                # Every pending migration in one transaction: a store is at the schema before or after,
                # never between, and a new store is created with one commit (one fsync) rather than one per
                # migration (each a savepoint inside it).
                with db.atomic():
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

    def drop_reader(self) -> None:
        """Close this thread's read-only connection, if it has one: a thread made for one read gives it back as it
        ends (else each such thread would leave a connection open until the store closes)."""
        db: Database | None = getattr(self._local, "db", None)
        if db is None:
            return
        self._local.db = None
        with self._lock:
            self._readers.remove(db)
        db.close()

    async def off_loop(self, read: Callable[[], T]) -> T:
        """Run `read` (which reads through `reader()`) in a worker thread; a caller cancelled meanwhile waits for it to end.

        `asyncio.to_thread` leaves its thread running when the awaiting task is
        cancelled, and closing the store under a read still running crashes
        CPython's sqlite3 (a segfault: a connector's sender, stopped mid-read
        as the daemon stopped). A task stopped here ends only once its read has.
        """
        running = asyncio.ensure_future(asyncio.to_thread(read))
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            await asyncio.wait({running})  # a read ends in milliseconds; what it found is not wanted now
            if not running.cancelled():
                running.exception()  # retrieved, so no "never retrieved" warning
            raise

    def close(self) -> None:
        """Close the readers, then flush and close the writer."""
        with self._lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
        self.writer.close()
