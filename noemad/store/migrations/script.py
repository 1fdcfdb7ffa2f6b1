"""One migration's SQL script run statement by statement, inside the migration's transaction."""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database


def run_script(db: Database, script: str) -> None:
    """Run each statement of `script` on `db`; ValueError if it ends in an incomplete one."""
    # Not executescript(): it commits first, which would break the migration's
    # transaction (a failed migration must leave nothing behind). Statements
    # are cut where sqlite3 says one is complete, so triggers stay whole.
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete statement in migration: {statement.strip()[:80]}")
