"""m008_background_jobs: background jobs (reflection, consolidation), what they marked and learnt, and the schedules' pauses."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m008_background_jobs."""
    # Reflection and consolidation runs. At most one running job of a kind per
    # mind: the partial unique index makes an overlap impossible, not just unlikely.
    # `after_event` is the mind's newest event when the job started: the
    # scheduler skips a mind with nothing new since (see scheduler.py).
    # `consolidated` marks episodes beside them (episodes are never modified);
    # `reflection_patterns` remembers each pattern a mind has learnt a lesson
    # from, so a lesson is written once. `schedule_pauses` is host state (a
    # global pause per job kind that survives restarts), not a mind's.
    run_script(
        db,
        """
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('reflection', 'consolidation')),
            trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'operator')),
            actor TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
            progress REAL NOT NULL DEFAULT 0,
            stage TEXT NOT NULL DEFAULT '',
            started_at TEXT NOT NULL,
            finished_at TEXT,
            inputs TEXT NOT NULL DEFAULT '{}',
            outputs TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            model_calls TEXT NOT NULL DEFAULT '[]',
            after_event INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX jobs_mind ON jobs(mind, kind, id);
        CREATE UNIQUE INDEX jobs_one_running ON jobs(mind, kind) WHERE status = 'running';
        CREATE TABLE consolidated (
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            into_memory INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            at TEXT NOT NULL
        );
        CREATE INDEX consolidated_mind ON consolidated(mind, into_memory);
        CREATE TABLE reflection_patterns (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            key TEXT NOT NULL,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, key)
        ) WITHOUT ROWID;
        CREATE TABLE schedule_pauses (
            kind TEXT PRIMARY KEY CHECK (kind IN ('reflection', 'consolidation')),
            paused_at TEXT NOT NULL,
            actor TEXT NOT NULL
        );
        CREATE INDEX memories_mind_kind_created ON memories(mind, kind, created_at);
        """,
    )
