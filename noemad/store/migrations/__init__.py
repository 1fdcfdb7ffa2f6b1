"""The schema, as sqlite-utils migrations applied in order at start-up: one module per migration, `mNNN_what.py`.

Every table carries the mind it belongs to, so a mind can move between hosts
by exporting its rows. Links between events are rows, written with the event
and never inferred later. Each module's `migrate` is registered under the
module's name, in the order of the names: a store records the names it has
applied, so a module is never renamed once released, and a new one takes the
next number. Which module owns each table afterwards is `noemad.store.owners`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sqlite3

from sqlite_utils import Migrations

migrations = Migrations("noemad")

# Found by name rather than listed, so a migration cannot be written and left unregistered.
for _step in sorted(m.name for m in pkgutil.iter_modules(__path__) if re.fullmatch(r"m\d{3}_\w+", m.name)):
    migrations(name=_step)(importlib.import_module(f"{__name__}.{_step}").migrate)


def newest_migration(conn: sqlite3.Connection) -> str:
    """The name of the last of noemad's migrations applied to the database of `conn` ("" if none)."""
    row = conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = 'noemad' ORDER BY rowid DESC LIMIT 1").fetchone()
    return str(row[0]) if row else ""
