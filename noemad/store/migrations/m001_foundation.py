"""m001_foundation: the first tables: minds, the event log and its links, model calls, memories and beliefs."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m001_foundation."""
    run_script(
        db,
        """
        CREATE TABLE minds (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            settings TEXT NOT NULL DEFAULT '{}',
            mode TEXT NOT NULL DEFAULT 'idle'
        );
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            cycle_id TEXT,
            causation_id INTEGER REFERENCES events(id) ON DELETE CASCADE,
            actor TEXT NOT NULL,
            channel TEXT,
            text TEXT,
            data TEXT NOT NULL DEFAULT '{}',
            subject_type TEXT,
            subject_id INTEGER,
            at TEXT NOT NULL
        );
        CREATE INDEX events_mind_id ON events(mind, id);
        CREATE INDEX events_mind_kind_id ON events(mind, kind, id);
        CREATE INDEX events_causation ON events(causation_id) WHERE causation_id IS NOT NULL;
        CREATE INDEX events_cycle ON events(cycle_id) WHERE cycle_id IS NOT NULL;
        CREATE INDEX events_subject ON events(subject_type, subject_id, id) WHERE subject_type IS NOT NULL;

        CREATE TABLE event_parents (
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            parent_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            mind TEXT NOT NULL,
            PRIMARY KEY (event_id, parent_id)
        ) WITHOUT ROWID;
        CREATE INDEX event_parents_parent ON event_parents(parent_id, event_id);

        CREATE TABLE event_refs (
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            ref_type TEXT NOT NULL CHECK (ref_type IN ('event', 'memory', 'belief', 'model_call')),
            ref_id INTEGER NOT NULL,
            mind TEXT NOT NULL,
            PRIMARY KEY (event_id, ref_type, ref_id)
        ) WITHOUT ROWID;
        CREATE INDEX event_refs_target ON event_refs(ref_type, ref_id, event_id);

        -- Filled by noemad.models; here so refs to model calls can be checked.
        CREATE TABLE model_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            role TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            latency_ms REAL,
            outcome TEXT NOT NULL,
            error_category TEXT,
            cost_usd REAL NOT NULL DEFAULT 0,
            at TEXT NOT NULL
        );
        CREATE INDEX model_calls_mind ON model_calls(mind, id);

        -- Memories and beliefs are written by the cognitive cycle; the events
        -- that write or change one name it as their subject.
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX memories_mind ON memories(mind, id);
        CREATE TABLE beliefs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            proposition TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX beliefs_mind ON beliefs(mind, id);
        """
    )
