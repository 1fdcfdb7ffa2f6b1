"""SQLite through sqlite-utils: the schema as its migrations, the owner of each table, one writer, readers."""

from noemad.store.connection import open_db
from noemad.store.migrations import migrations
from noemad.store.store import Store
from noemad.store.writer import Writer, inserted_ids, savepoint

__all__ = ["Store", "Writer", "inserted_ids", "migrations", "open_db", "savepoint"]
