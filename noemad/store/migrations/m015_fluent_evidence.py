"""m015_fluent_evidence: a partial index of the evidence from model output or notes."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m015_fluent_evidence."""
    # Metacognition's fluent_without_evidence check looks, every cycle, for
    # the beliefs given support by model output or notes lately (written by
    # noemad.cognition.beliefs.evidence, outside perception: a reply's own claims).
    # Such items are few among many: a partial index finds them without
    # reading the rest.
    run_script(db, "CREATE INDEX evidence_fluent ON evidence(mind, at) WHERE kind IN ('model_output', 'note') AND stance = 'support';")
