"""m016_archive: archiving: the runs, the links cut from kept events, and the tally of archived events."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m016_archive."""
    # Archiving (noemad.archive): old events move to an archive file of their
    # own, and what stays behind says where its links were cut.
    # `archives` is one row per run (owned by noemad.archive.cuts);
    # `event_cuts` names, for a kept event, each linked event that is now in
    # an archive (cause side: it linked to it; consequence side: it was
    # linked from it); `archived_tally` counts a mind's archived events by
    # kind (owned by noemad.events) so counts that number things (cycles)
    # go on from where they were.
    # Archiving deletes events: every column that points at one gets the
    # index its foreign-key action needs, or each delete would scan the table.
    run_script(
        db,
        """
        CREATE TABLE archives (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            path TEXT NOT NULL,
            before TEXT NOT NULL,
            actor TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            events INTEGER NOT NULL DEFAULT 0,
            first_id INTEGER,
            last_id INTEGER,
            cuts INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX archives_mind ON archives(mind, id);
        CREATE TABLE event_cuts (
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            archived_id INTEGER NOT NULL,
            link TEXT NOT NULL CHECK (link IN ('caused', 'parent', 'cited')),
            side TEXT NOT NULL CHECK (side IN ('cause', 'consequence')),
            archive_id INTEGER NOT NULL REFERENCES archives(id) ON DELETE CASCADE,
            PRIMARY KEY (event_id, archived_id, link, side)
        ) WITHOUT ROWID;
        CREATE TABLE archived_tally (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            events INTEGER NOT NULL,
            PRIMARY KEY (mind, kind)
        ) WITHOUT ROWID;
        CREATE INDEX evidence_event ON evidence(event_id);
        CREATE INDEX goals_event ON goals(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX predictions_event ON predictions(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX predictions_resolved_event ON predictions(resolved_event_id) WHERE resolved_event_id IS NOT NULL;
        CREATE INDEX notifications_event ON notifications(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX notifications_last_event ON notifications(last_event_id) WHERE last_event_id IS NOT NULL;
        CREATE INDEX notifications_acked_event ON notifications(acked_event_id) WHERE acked_event_id IS NOT NULL;
        """,
    )
