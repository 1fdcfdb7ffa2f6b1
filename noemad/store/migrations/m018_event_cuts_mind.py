"""m018_event_cuts_mind: `event_cuts` keyed by mind, as every table is."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m018_event_cuts_mind."""
    # Every table is keyed by mind, so that one mind's rows can be exported,
    # moved and sharded on their own: `event_cuts` (m016) was the exception,
    # reaching its mind only through its archive run. Each cut takes its
    # run's mind; the table is made anew because a NOT NULL column cannot be
    # added to rows that already exist.
    run_script(
        db,
        """
        CREATE TABLE event_cuts_keyed (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            archived_id INTEGER NOT NULL,
            link TEXT NOT NULL CHECK (link IN ('caused', 'parent', 'cited')),
            side TEXT NOT NULL CHECK (side IN ('cause', 'consequence')),
            archive_id INTEGER NOT NULL REFERENCES archives(id) ON DELETE CASCADE,
            PRIMARY KEY (event_id, archived_id, link, side)
        ) WITHOUT ROWID;
        INSERT INTO event_cuts_keyed (mind, event_id, archived_id, link, side, archive_id)
            SELECT a.mind, c.event_id, c.archived_id, c.link, c.side, c.archive_id FROM event_cuts c JOIN archives a ON a.id = c.archive_id;
        DROP TABLE event_cuts;
        ALTER TABLE event_cuts_keyed RENAME TO event_cuts;
        CREATE INDEX event_cuts_mind ON event_cuts(mind, archive_id);
        """,
    )
