"""The SQL reads of a consolidation: the episodes to consider, and what each clustered one needs.

*Episodes*: the mind's active episodic memories created within the window
(both ends included) that no generalisation is derived from yet (a
`memory_links` row to a memory in `consolidations`), in id order.

*Speakers*, read once for the clustered episodes: an episode's speaker comes from the stimulus it records
(memories.event_id): a message's `author`, an observation's or assertion's
`source`, else the event's actor ("unknown" for an episode with no
stimulus); the event that brought it is that stimulus, or (for an episode
with none) the memory_created event that wrote it (read in one query by
`stimuli.speakers`, the stimuli's owner).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import lt

from sqlite_utils import Database

from noemad.clock import iso
from noemad.stimuli import speakers

UNKNOWN_SPEAKER = "unknown"
_EPISODES_SQL = """
SELECT m.id, m.text, m.created_at, m.event_id
  FROM memories m
 WHERE m.mind = ? AND m.kind = 'episodic' AND m.created_at >= ? AND m.created_at <= ? AND m.status = 'active'
   AND NOT EXISTS (SELECT 1 FROM memory_links l JOIN consolidations c ON c.memory_id = l.memory_id WHERE l.derived_from = m.id)
"""

_WINDOW_SQL = (
    "SELECT json_group_array(id), json_group_array(text), json_group_array(created_at), json_group_array(event_id)"
    f" FROM ({_EPISODES_SQL})"
)

# The window read in two steps, for a caller that reads who the episodes are from meanwhile: their ids and stimuli,
# then the texts and times of those ids, in that order (each looked up by id as the array is read).
_IDS_SQL = f"SELECT json_group_array(id), json_group_array(event_id) FROM ({_EPISODES_SQL})"
_TEXTS_SQL = (
    "SELECT json_group_array(m.text), json_group_array(m.created_at) FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value"
)

# The event that wrote an episode with no stimulus (its memory_created).
_WRITTEN_BY_SQL = """
SELECT m.value, (SELECT w.id FROM events w WHERE w.subject_type = 'memory' AND w.subject_id = m.value ORDER BY w.id LIMIT 1)
  FROM json_each(?) m
"""


@dataclass
class Window:
    """The episodes to consolidate, in id order, as parallel lists (one row each would cost a tuple per episode)."""

    ids: list[int]
    texts: list[str]
    created: list[str]
    stimuli: list[int | None]  # memories.event_id: the stimulus each records, if any


def load_window(
    db: Database, mind: str, start: float, end: float, stimuli: Callable[[list[int | None]], object] | None = None
) -> Window:
    """The mind's episodes to consolidate (see the module docstring).

    Read as JSON arrays, one per column, in one row: decoding a column at
    once costs less than a Python row per episode. They come in the order
    of the index that finds them (creation time), which is id order unless
    a clock stepped back; only then are they sorted here (a sort by SQLite
    would cost a third of the read every time).

    `stimuli`, when given, is handed each episode's stimulus (in the order
    read) as soon as they are read, before the texts: the ids and stimuli
    are read first, then the texts and times of those ids, in one read
    transaction (so of the same episodes). That costs a tenth more than
    one read, and lets the caller read who the episodes are from meanwhile.
    """
    params = [mind, iso(start), iso(end)]
    if stimuli is None:
        columns = [json.loads(column) for column in db.execute(_WINDOW_SQL, params).fetchone()]
    else:
        began = not db.conn.in_transaction
        if began:
            db.execute("BEGIN")
        try:
            ids_json, stimuli_json = db.execute(_IDS_SQL, params).fetchone()
            recorded = json.loads(stimuli_json)
            stimuli(recorded)  # a list nothing changes: the window keeps it, or a sorted copy
            texts, created = map(json.loads, db.execute(_TEXTS_SQL, [ids_json]).fetchone())
        finally:
            if began:
                db.execute("COMMIT")
        columns = [json.loads(ids_json), texts, created, recorded]
    ids = columns[0]
    if not all(map(lt, ids, ids[1:])):
        order = sorted(range(len(ids)), key=ids.__getitem__)
        columns = [list(map(column.__getitem__, order)) for column in columns]
    return Window(*columns)


def load_episodes(db: Database, mind: str, start: float, end: float) -> tuple[list[int], list[str]]:
    """Ids and texts of the mind's episodes to consolidate, in id order."""
    window = load_window(db, mind, start, end)
    return window.ids, window.texts


def load_speakers(db: Database, stimuli: Iterable[int]) -> dict[int, str]:
    """stimulus event id -> who it is from (a stimulus not found is left out: its episode's speaker is unknown)."""
    return speakers(db, stimuli, UNKNOWN_SPEAKER)


def load_written_by(db: Database, ids: Sequence[int]) -> dict[int, int]:
    """episode id -> the first event about it (its memory_created), for episodes that record no stimulus."""
    if not ids:
        return {}
    return {memory_id: event_id for memory_id, event_id in db.execute(_WRITTEN_BY_SQL, [json.dumps(list(ids))])}
