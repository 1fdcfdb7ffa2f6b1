"""m007_memory_terms: each mind's document count per memory term, filled for the memories already stored."""

from __future__ import annotations

from sqlite_utils import Database

from noemad.store.migrations.script import run_script
from noemad.words import index_stems


def migrate(db: Database) -> None:
    """Apply m007_memory_terms."""
    # Retrieval drops terms found in half a mind's memories (no bm25 weight,
    # all of the cost); this keeps their document counts (see
    # noemad.cognition.memory). Filled here for memories already stored, with
    # noemad.words.index_stems: the one definition of what is counted.
    run_script(
        db,
        """
        CREATE TABLE memory_terms (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            term TEXT NOT NULL,
            docs INTEGER NOT NULL,
            PRIMARY KEY (mind, term)
        ) WITHOUT ROWID;
        """,
    )
    counts: dict[tuple[str, str], int] = {}
    for mind, text in db.execute("SELECT mind, text FROM memories"):
        for stem in ["", *index_stems(text)]:
            counts[(mind, stem)] = counts.get((mind, stem), 0) + 1
    db.conn.executemany("INSERT INTO memory_terms (mind, term, docs) VALUES (?, ?, ?)", [(m, t, n) for (m, t), n in counts.items()])
