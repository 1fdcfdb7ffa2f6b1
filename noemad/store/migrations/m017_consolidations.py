"""m017_consolidations: one row per generalisation; `consolidated` becomes a view."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m017_consolidations."""
    # Consolidation wrote a `consolidated` row per episode (its job and the
    # generalisation it went into) beside the memory_links row that already
    # links the two: the same fact twice, a third of a run's rows. Now one
    # row per generalisation names its job, and `consolidated` is a view
    # giving the rows it held (one per episode), for readers and operators.
    # Every consolidated row had its link; one written otherwise gets it here.
    run_script(
        db,
        """
        CREATE TABLE consolidations (
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            at TEXT NOT NULL
        );
        INSERT INTO consolidations (memory_id, mind, job_id, at)
            SELECT into_memory, min(mind), min(job_id), min(at) FROM consolidated GROUP BY into_memory;
        INSERT OR IGNORE INTO memory_links (memory_id, derived_from, mind) SELECT into_memory, memory_id, mind FROM consolidated;
        DROP TABLE consolidated;
        CREATE VIEW consolidated (memory_id, mind, job_id, into_memory, at) AS
            SELECT l.derived_from, c.mind, c.job_id, c.memory_id, c.at FROM consolidations c JOIN memory_links l ON l.memory_id = c.memory_id;
        """,
    )
