"""m019_withdrawn_evidence: evidence that may be withdrawn."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m019_withdrawn_evidence."""
    # An item of evidence may be withdrawn: metacognition's counter-evidence
    # when the warning that added it no longer holds (a second independent
    # source arrived). The row stays, with the event that withdrew it, and
    # no longer counts (written by noemad.cognition.beliefs.evidence). Stores from
    # before read as they were: nothing is withdrawn. Each cycle looks for
    # the standing counter-evidence of the beliefs it changed: a partial
    # index holds just those few rows.
    run_script(
        db,
        """
        ALTER TABLE evidence ADD COLUMN withdrawn_by INTEGER;
        CREATE INDEX evidence_standing_counter ON evidence(belief_id) WHERE source = 'metacognition' AND stance = 'contradict' AND withdrawn_by IS NULL;
        """,
    )
