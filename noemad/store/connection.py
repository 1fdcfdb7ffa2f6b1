"""Opening connections with the settings every noemad connection shares."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database

# WAL with synchronous=FULL: a commit is on disk before the writer answers,
# so an event acknowledged with 201 survives a power cut. The writer groups
# concurrent commits to keep that affordable.
_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=5000",
    "PRAGMA cache_size=-32000",
)

_STATEMENT_CACHE = 128  # sqlite3's own default size


def open_db(
    path: Path | str, *, readonly: bool = False, cached_statements: int | None = None, autocheckpoint: bool = True
) -> Database:
    """Open the store with WAL, foreign keys and a busy timeout set.

    A readonly connection runs in autocommit mode (no snapshot held between
    queries) and refuses writes with `query_only`. `cached_statements`
    overrides sqlite3's statement cache size (0: prepare every statement).
    `autocheckpoint=False` leaves checkpoints to Litestream, as its documentation
    asks of a busy writer it replicates: no checkpoint of ours races its copy of the WAL.
    """
    conn = sqlite3.connect(
        str(path),
        check_same_thread=False,
        # sqlite3's legacy transactions, DEFERRED (the default it also spells ""), for the writer.
        isolation_level=None if readonly else "DEFERRED",
        cached_statements=_STATEMENT_CACHE if cached_statements is None else cached_statements,
    )
    for pragma in _PRAGMAS:
        conn.execute(pragma)
    if readonly:
        conn.execute("PRAGMA query_only=1")
    if not autocheckpoint:
        conn.execute("PRAGMA wal_autocheckpoint=0")
    return Database(conn, execute_plugins=False)
