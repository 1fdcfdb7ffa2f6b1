"""m010_gate_sleep: a mind's sleep and self-wake, kept across restarts."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m010_gate_sleep."""
    # A mind's sleep and self-wake, written by noemad.gate.sleep with their
    # events, read back at start-up (the gate keeps them in memory). One row
    # per mind, deleted when it holds neither. Times are ISO text.
    run_script(
        db,
        """
        CREATE TABLE gate_sleep (
            mind TEXT PRIMARY KEY REFERENCES minds(name) ON DELETE CASCADE,
            until TEXT,
            note TEXT,
            self_wake_at TEXT,
            self_wake_cause INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        """,
    )
