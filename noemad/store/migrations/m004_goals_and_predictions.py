"""m004_goals_and_predictions: goals and predictions, each row with the event that made it."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m004_goals_and_predictions."""
    # Goals and predictions are written by the cognitive cycle (perception of
    # `goal`, `prediction` and `outcome` stimuli; the mind's own goals), each
    # change with the event that records it. `event_id` is the event that
    # created the row; a prediction's `resolved_event_id` is its
    # `prediction_resolved`. Due times are ISO text as `clock.iso` writes it
    # (fixed width, so text order is time order).
    run_script(
        db,
        """
        CREATE TABLE goals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            title TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'abandoned')),
            progress REAL NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 1),
            origin TEXT NOT NULL CHECK (origin IN ('operator', 'mind')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            event_id INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        CREATE INDEX goals_mind ON goals(mind, status, id);
        CREATE INDEX goals_active ON goals(mind, id) WHERE status = 'active';

        CREATE TABLE predictions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            proposition TEXT NOT NULL,
            subject TEXT NOT NULL,
            stated_confidence REAL NOT NULL CHECK (stated_confidence BETWEEN 0 AND 1),
            due_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'hit', 'miss')),
            belief_id INTEGER REFERENCES beliefs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            resolved_at TEXT,
            observed TEXT,
            event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            resolved_event_id INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        CREATE INDEX predictions_mind ON predictions(mind, status, id);
        CREATE INDEX predictions_open_due ON predictions(mind, due_at, id) WHERE status = 'open';
        CREATE INDEX predictions_belief ON predictions(belief_id) WHERE belief_id IS NOT NULL;
        """,
    )
