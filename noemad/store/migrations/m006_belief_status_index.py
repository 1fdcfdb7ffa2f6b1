"""m006_belief_status_index: beliefs found by status and age, as metacognition asks every cycle."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m006_belief_status_index."""
    # Metacognition asks every cycle for contested beliefs left alone for a
    # day and for rejected hypotheses by subject: both by status and age.
    run_script(db, "CREATE INDEX beliefs_status ON beliefs(mind, status, updated_at);\n")
