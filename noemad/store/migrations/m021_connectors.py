"""m021_connectors: what connectors bring in and send out: their cursors, the remote ids, the outbox."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m021_connectors."""
    # What connectors bring in and send out (issue 21). `connector_cursors`:
    # each connector's place in its source (Matrix's `since`), written by
    # noemad.inbox in the same transaction as the stimuli it brought, so a
    # crash loses or doubles nothing. `remote_ids`: what the source called
    # each stimulus (a Matrix event id), with its room and thread, so a reply
    # can answer it there and a later edit or redaction find it; unique per
    # connector, which also refuses a message brought in twice. `deliveries`:
    # the outbox, one row per reply (or notification) and connector, written
    # by noemad.outbox in the same transaction as the event it delivers and
    # changed with the event of each attempt. Times are ISO text.
    run_script(
        db,
        """
        CREATE TABLE connector_cursors (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            connector TEXT NOT NULL,
            cursor TEXT,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, connector)
        ) WITHOUT ROWID;
        CREATE TABLE remote_ids (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            connector TEXT NOT NULL,
            remote_id TEXT NOT NULL,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            room TEXT,
            thread TEXT,
            PRIMARY KEY (mind, connector, remote_id)
        ) WITHOUT ROWID;
        CREATE INDEX remote_ids_event ON remote_ids(event_id);
        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            connector TEXT NOT NULL,
            what TEXT NOT NULL CHECK (what IN ('reply', 'notification')),
            room TEXT,
            thread TEXT,
            in_reply_to TEXT,
            status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'given_up')),
            attempts INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            next_at TEXT NOT NULL,
            give_up_at TEXT NOT NULL,
            last_error TEXT,
            remote_id TEXT,
            done_at TEXT,
            UNIQUE (event_id, connector)
        );
        CREATE INDEX deliveries_pending ON deliveries(mind, connector, next_at) WHERE status = 'pending';
        CREATE INDEX deliveries_mind ON deliveries(mind, connector, status);
        """,
    )
