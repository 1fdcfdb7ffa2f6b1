"""m014_model_call_actor: who a model call was made for, when an operator's request caused it."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m014_model_call_actor."""
    # Who a model call was made for, when an operator's request caused it
    # (`operator:alice` for the calls of a job they ran); null for the mind's
    # own calls. Written by noemad.ledger.
    run_script(db, "ALTER TABLE model_calls ADD COLUMN actor TEXT;")
