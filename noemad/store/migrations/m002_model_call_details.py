"""m002_model_call_details: more of each model call: its provider, hour-long cache writes, stop reason and stated wait."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m002_model_call_details."""
    run_script(
        db,
        """
        ALTER TABLE model_calls ADD COLUMN provider TEXT NOT NULL DEFAULT '';
        ALTER TABLE model_calls ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE model_calls ADD COLUMN stop_reason TEXT;
        ALTER TABLE model_calls ADD COLUMN retry_after REAL;
        ALTER TABLE model_calls ADD COLUMN detail TEXT;
        CREATE INDEX model_calls_budget ON model_calls(mind, role, at);
        """,
    )
