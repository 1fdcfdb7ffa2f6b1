"""m012_memory_tags: a memory's tags."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m012_memory_tags."""
    # A memory's tags (a JSON array of names), set by an operator (noemactl
    # remember --tag, the API); written by noemad.cognition.memory. The turn
    # hands the tags of what it recalled to governance as evidence.
    run_script(db, "ALTER TABLE memories ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';")
