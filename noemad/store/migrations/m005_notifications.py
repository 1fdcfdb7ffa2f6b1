"""m005_notifications: notifications, with the events that made, repeated and acknowledged them."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m005_notifications."""
    # Written by noemad.cognition.notifications after a cycle, each change
    # with its event: `event_id` is the `notification` that created the row,
    # `last_event_id` the latest `notification` or `notification_suppressed`
    # (a repeat within the cooldown), `acked_event_id` the
    # `notification_acked`. `values` holds the values that fired the rule.
    run_script(
        db,
        """
        CREATE TABLE notifications (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            rule TEXT NOT NULL,
            key TEXT NOT NULL,
            title TEXT NOT NULL,
            "values" TEXT NOT NULL DEFAULT '{}',
            count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1),
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acked')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            acked_at TEXT,
            event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            last_event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            acked_event_id INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        CREATE INDEX notifications_key ON notifications(mind, key, status);
        CREATE INDEX notifications_mind ON notifications(mind, status, id);
        """,
    )
