"""The SQL reads of a consolidation: the episodes to consider, and what each clustered one needs.

*Episodes*: the mind's active episodic memories created within the window
(both ends included) with no `consolidated` row, in id order.

*Details*: an episode's speaker comes from the stimulus it records
(memories.event_id): a message's `author`, an observation's or assertion's
`source`, else the event's actor ("unknown" for an episode with no
stimulus); the event that brought it is that stimulus, or (for an episode
with none) the memory_created event that wrote it. (These read `events`
data of the stimuli's writers with json_extract.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlite_utils import Database

from noemad.clock import iso

UNKNOWN_SPEAKER = "unknown"
_EPISODES_SQL = """
SELECT m.id, m.text
  FROM memories m
 WHERE m.mind = ? AND m.kind = 'episodic' AND m.created_at >= ? AND m.created_at <= ? AND m.status = 'active'
   AND NOT EXISTS (SELECT 1 FROM consolidated c WHERE c.memory_id = m.id)
 ORDER BY m.id
"""

# The speaker and the event that brought each episode: its stimulus, or (for an
# episode with none) the memory_created event that wrote it.
_DETAILS_SQL = """
SELECT m.id, m.created_at, e.actor, json_extract(e.data, '$.author'), json_extract(e.data, '$.source'),
       coalesce(m.event_id, (SELECT w.id FROM events w WHERE w.subject_type = 'memory' AND w.subject_id = m.id ORDER BY w.id LIMIT 1))
  FROM memories m LEFT JOIN events e ON e.id = m.event_id
 WHERE m.id IN (SELECT value FROM json_each(?))
"""


def load_episodes(db: Database, mind: str, start: float, end: float) -> tuple[list[int], list[str]]:
    """Ids and texts of the mind's episodes to consolidate (see the module docstring), in id order."""
    rows = db.execute(_EPISODES_SQL, [mind, iso(start), iso(end)]).fetchall()
    return [r[0] for r in rows], [r[1] for r in rows]


def _speaker(actor: str | None, author: Any, source: Any) -> str:
    for value in (author, source):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return actor or UNKNOWN_SPEAKER


def load_details(db: Database, ids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
    """id -> (created_at, speaker, brought_by) of these episodes."""
    out: dict[int, tuple[str, str, int]] = {}
    for memory_id, created_at, actor, author, source, brought_by in db.execute(_DETAILS_SQL, [json.dumps(list(ids))]):
        out[memory_id] = (created_at, _speaker(actor, author, source), brought_by)
    return out
