"""m020_belief_history: each belief's state after every event that changed it, filled from the events already stored."""

from __future__ import annotations

import json

from sqlite_utils import Database

from noemad.store.migrations.script import run_script


def migrate(db: Database) -> None:
    """Apply m020_belief_history."""
    # Each belief's state after every event that changed it (written by
    # noemad.cognition.belief_history with the event): what `beliefs --at`
    # and `belief --history` read, one index probe per belief instead of a
    # walk over the log. Keyed by belief then event, without a rowid, so a
    # belief's history is one run of the table's own b-tree; `moved` marks
    # the rows whose confidence or status differ from the row before (most
    # of a well-evidenced belief's items change neither). Filled here from the belief events already stored:
    # their data gives the confidence and status after each, and how the
    # standing evidence counts moved (an item's stance, a batch's counts,
    # the stances of the items a withdrawal names).
    run_script(
        db,
        """
        CREATE TABLE belief_history (
            belief_id INTEGER NOT NULL,
            event_id INTEGER NOT NULL,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            confidence REAL NOT NULL,
            status TEXT NOT NULL,
            support INTEGER NOT NULL,
            contradict INTEGER NOT NULL,
            moved INTEGER NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (belief_id, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX belief_history_mind ON belief_history(mind, event_id);
        """,
    )
    counts: dict[int, tuple[int, int]] = {}
    last: dict[int, tuple[float, str]] = {}
    rows = db.conn.execute(  # read as inserted: a long history is never held whole
        "SELECT id, mind, subject_id, data, at FROM events WHERE subject_type = 'belief'"
        " AND kind IN ('belief_created', 'belief_updated') ORDER BY id"
    )
    for event_id, mind, belief_id, raw, at in rows:
        data = json.loads(raw or "{}")
        support, contradict = counts.get(belief_id, (0, 0))
        batch = data.get("evidence")
        if isinstance(batch, dict):
            support, contradict = support + int(batch.get("support") or 0), contradict + int(batch.get("contradict") or 0)
        elif data.get("stance") in ("support", "contradict"):
            support, contradict = support + (data["stance"] == "support"), contradict + (data["stance"] == "contradict")
        withdrawn = data.get("withdrawn")
        if isinstance(withdrawn, list) and withdrawn:
            marks = ",".join("?" * len(withdrawn))
            for (stance,) in db.execute(f"SELECT stance FROM evidence WHERE id IN ({marks})", withdrawn).fetchall():
                support, contradict = support - (stance == "support"), contradict - (stance == "contradict")
        counts[belief_id] = (support, contradict)
        state = (float((data.get("confidence") or {}).get("to") or 0.0), str((data.get("status") or {}).get("to") or "active"))
        moved = last.get(belief_id) != state
        last[belief_id] = state
        db.execute(
            "INSERT INTO belief_history (event_id, mind, belief_id, confidence, status, support, contradict, moved, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [event_id, mind, belief_id, *state, support, contradict, int(moved), at],
        )
