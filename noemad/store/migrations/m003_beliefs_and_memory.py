"""m003_beliefs_and_memory: memory's importance, use, links and full-text index; beliefs' evidence; trust."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m003_beliefs_and_memory."""
    run_script(
        db,
        """
        ALTER TABLE memories ADD COLUMN importance REAL NOT NULL DEFAULT 0.5;
        ALTER TABLE memories ADD COLUMN last_access TEXT;
        ALTER TABLE memories ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE memories ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
        ALTER TABLE memories ADD COLUMN event_id INTEGER REFERENCES events(id) ON DELETE SET NULL;
        CREATE INDEX memories_event ON memories(event_id) WHERE event_id IS NOT NULL;
        CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='id', tokenize='porter unicode61');
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TABLE memory_links (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            derived_from INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            mind TEXT NOT NULL,
            PRIMARY KEY (memory_id, derived_from)
        ) WITHOUT ROWID;
        CREATE INDEX memory_links_from ON memory_links(derived_from);

        ALTER TABLE beliefs ADD COLUMN subject TEXT NOT NULL DEFAULT '';
        ALTER TABLE beliefs ADD COLUMN proposition_key TEXT NOT NULL DEFAULT '';
        ALTER TABLE beliefs ADD COLUMN kind TEXT NOT NULL DEFAULT 'observation';
        ALTER TABLE beliefs ADD COLUMN confidence REAL NOT NULL DEFAULT 0;
        ALTER TABLE beliefs ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
        ALTER TABLE beliefs ADD COLUMN updated_at TEXT;
        CREATE INDEX beliefs_subject ON beliefs(mind, subject);
        -- Partial: rows written before propositions had keys (or by hand) do not collide.
        CREATE UNIQUE INDEX beliefs_key ON beliefs(mind, proposition_key) WHERE proposition_key != '';
        CREATE TABLE evidence (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            belief_id INTEGER NOT NULL REFERENCES beliefs(id) ON DELETE CASCADE,
            stance TEXT NOT NULL CHECK (stance IN ('support', 'contradict')),
            weight REAL NOT NULL,
            credibility REAL NOT NULL,
            source TEXT NOT NULL,
            kind TEXT NOT NULL,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            at TEXT NOT NULL
        );
        CREATE INDEX evidence_belief ON evidence(belief_id);
        CREATE TABLE trust (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            source TEXT NOT NULL,
            value REAL NOT NULL CHECK (value BETWEEN 0 AND 1),
            updated_at TEXT NOT NULL,
            PRIMARY KEY (mind, source)
        ) WITHOUT ROWID;
        """,
    )
