"""SQLite through sqlite-utils: the schema, its migrations, one writer, readers."""

from noemad.store.connection import open_db
from noemad.store.schema import migrations
from noemad.store.store import Store
from noemad.store.writer import Writer, savepoint

__all__ = ["Store", "Writer", "migrations", "open_db", "savepoint"]
