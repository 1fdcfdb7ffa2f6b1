"""m011_token_ratios: calibrated characters per token, and the anchors of each role's last window."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m011_token_ratios."""
    # Written by noemad.models.ratios after model calls built on a window:
    # each mind's calibrated characters-per-token ratio per model, and the
    # anchor (first event) of each role's last answered window with the
    # chunk size it was cut at, so the next window keeps its cached prefix.
    run_script(
        db,
        """
        CREATE TABLE token_ratios (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            model TEXT NOT NULL,
            chars_per_token REAL NOT NULL,
            samples INTEGER NOT NULL DEFAULT 0,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, model)
        ) WITHOUT ROWID;
        CREATE TABLE window_anchors (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            role TEXT NOT NULL,
            anchor_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            chunk_chars INTEGER NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, role)
        ) WITHOUT ROWID;
        """,
    )
