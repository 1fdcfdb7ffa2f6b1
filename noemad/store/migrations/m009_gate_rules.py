"""m009_gate_rules: each mind's wake rules and default behaviour as rows."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m009_gate_rules."""
    # Each mind's wake rules, written by noemad.rules.table with a
    # `gate_rules_changed` event each. `body` is the rule in its one JSON
    # shape, read back by the one validator (a row that no longer reads is
    # left out and named, the others work); `notes` the clamp notes it was
    # read with. `position` orders a mind's rules (0 is asked first).
    # `gate_minds` holds each mind's default behaviour and whether its rules
    # were written yet (the config seeds only a mind whose rules never were).
    run_script(
        db,
        """
        CREATE TABLE gate_rules (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            body TEXT NOT NULL,
            notes TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (mind, name)
        ) WITHOUT ROWID;
        CREATE INDEX gate_rules_order ON gate_rules(mind, position);
        CREATE TABLE gate_minds (
            mind TEXT PRIMARY KEY REFERENCES minds(name) ON DELETE CASCADE,
            default_behaviour TEXT NOT NULL DEFAULT '{"always":{}}',
            seeded_at TEXT NOT NULL
        );
        """,
    )
