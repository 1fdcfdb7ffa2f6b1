"""The archives a mind has, and the cuts: where a kept event's link now leads into an archive.

Owns the `archives` and `event_cuts` tables. A cut is found for every link
between a kept event and an archived one, both ways: `cause` when the kept
event linked to the archived one (it was caused by it, had it as a parent,
or cited it), `consequence` when the archived event linked to the kept one.
A `cited` link through a memory or a belief (the citing event and an event
that wrote it before) is cut at the writer nearest before the citing event,
so one much-cited belief does not make a cut per writer per citation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.errors import NotFound
from noemad.wire import OMIT_NONE, wire

LinkKind = Literal["caused", "parent", "cited"]
OUTSIDE = "outside this archive: in the store, or in an older archive"  # a cut's path, for a walk inside an archive
Side = Literal["cause", "consequence"]

_S = "WITH s(id) AS (SELECT value FROM json_each(?))"

# (kept event, archived event, link, side) for every link between the set s
# (the events archived) and the events that stay.
_FIND_SQL = f"""{_S}
SELECT id, causation_id, 'caused', 'cause' FROM events WHERE causation_id IN s AND id NOT IN s
UNION SELECT causation_id, id, 'caused', 'consequence' FROM events
 WHERE id IN s AND causation_id IS NOT NULL AND causation_id NOT IN s
UNION SELECT event_id, parent_id, 'parent', 'cause' FROM event_parents WHERE parent_id IN s AND event_id NOT IN s
UNION SELECT parent_id, event_id, 'parent', 'consequence' FROM event_parents WHERE event_id IN s AND parent_id NOT IN s
UNION SELECT event_id, ref_id, 'cited', 'cause' FROM event_refs
 WHERE ref_type = 'event' AND ref_id IN s AND event_id NOT IN s
UNION SELECT ref_id, event_id, 'cited', 'consequence' FROM event_refs
 WHERE ref_type = 'event' AND event_id IN s AND ref_id NOT IN s
UNION SELECT r.event_id, w.id, 'cited', 'cause'
  FROM events w JOIN event_refs r ON r.ref_type = w.subject_type AND r.ref_id = w.subject_id AND r.event_id > w.id
 WHERE w.id IN s AND w.subject_type IS NOT NULL AND r.event_id NOT IN s
   AND w.id = (SELECT max(n.id) FROM events n WHERE n.subject_type = r.ref_type AND n.subject_id = r.ref_id AND n.id < r.event_id)
UNION SELECT writer, event_id, 'cited', 'consequence' FROM (
  SELECT r.event_id, (SELECT max(n.id) FROM events n
                       WHERE n.subject_type = r.ref_type AND n.subject_id = r.ref_id AND n.id < r.event_id) AS writer
    FROM event_refs r WHERE r.event_id IN s AND r.ref_type IN ('memory', 'belief'))
 WHERE writer IS NOT NULL AND writer NOT IN s
"""


@dataclass(frozen=True)
class Found:
    """A link between a kept event and an archived one, found before the archived one goes."""

    event: int
    archived: int
    link: LinkKind
    side: Side


@wire
@dataclass(frozen=True)
class Archive:
    """One archive run of a mind: where its events went and how many."""

    id: int
    mind: str
    path: str
    """The archive file, on the daemon's host: a SQLite database with the same event tables."""
    before: str
    """Events older than this were taken (less what was pinned)."""
    actor: str
    started_at: str
    finished_at: Annotated[str | None, OMIT_NONE]
    """Unset while the run goes on (or if it stopped part way: what it moved is in the file and counted)."""
    events: int
    first_id: int | None
    last_id: int | None
    cuts: int
    """Links between a kept event and an archived one."""


@wire
@dataclass(frozen=True)
class Cut:
    """Where a kept event's link leads into an archive: the walk stops here."""

    event: int
    """The kept event."""
    archived: int
    """The event now in the archive."""
    link: LinkKind
    side: Side
    """cause: the kept event linked to the archived one; consequence: the archived one linked to it."""
    archive: int
    path: str
    """The archive file holding the archived event."""


_ARCHIVE_COLUMNS = "id, mind, path, before, actor, started_at, finished_at, events, first_id, last_id, cuts"


def _archive(row: Sequence[object]) -> Archive:
    return Archive(*row)  # type: ignore[arg-type]


def find(db: Database, ids: Sequence[int]) -> list[Found]:
    """Every link between the events `ids` (about to be archived) and the events that stay."""
    if not ids:
        return []
    rows = db.execute(_FIND_SQL, [json.dumps(list(ids))]).fetchall()
    return [Found(*row) for row in sorted(rows)]


def begin(db: Database, mind: str, directory: Path, before: float, actor: str, now: float) -> Archive:
    """Record a new archive run of `mind`; run it on the writer, with the run's first event.

    Its file is `MIND-YYYY-MM.sqlite` in `directory`, by the month the run
    starts: the runs of a month (a daily archive makes thirty) share a file.
    """
    path = directory / f"{mind}-{iso(now)[:7]}.sqlite"
    cur = db.execute(
        "INSERT INTO archives (mind, path, before, actor, started_at) VALUES (?, ?, ?, ?, ?)", [mind, str(path), iso(before), actor, iso(now)]
    )
    return get_archive(db, int(cur.lastrowid or 0))


def record(db: Database, archive: int, ids: Sequence[int], found: Sequence[Found]) -> Archive:
    """Write the cuts of a chunk and count the chunk's events into the archive row."""
    mind = get_archive(db, archive).mind
    db.conn.executemany(
        "INSERT OR IGNORE INTO event_cuts (mind, event_id, archived_id, link, side, archive_id) VALUES (?, ?, ?, ?, ?, ?)",
        [(mind, f.event, f.archived, f.link, f.side, archive) for f in found],
    )
    if ids:
        db.execute(
            "UPDATE archives SET events = events + ?1, cuts = cuts + ?2,"
            " first_id = min(coalesce(first_id, ?3), ?3), last_id = max(coalesce(last_id, ?4), ?4) WHERE id = ?5",
            [len(ids), len(found), min(ids), max(ids), archive],
        )
    return get_archive(db, archive)


def finish(db: Database, archive: int, now: float) -> Archive:
    """Mark the run finished."""
    db.execute("UPDATE archives SET finished_at = ? WHERE id = ?", [iso(now), archive])
    return get_archive(db, archive)


def get_archive(db: Database, archive: int) -> Archive:
    """One archive run by id."""
    row = db.execute(f"SELECT {_ARCHIVE_COLUMNS} FROM archives WHERE id = ?", [archive]).fetchone()
    if row is None:
        raise NotFound(f"archive {archive} does not exist; list a mind's archives with `noemactl archives MIND`")
    return _archive(row)


def archives(db: Database, mind: str) -> list[Archive]:
    """A mind's archive runs, oldest first."""
    return [_archive(row) for row in db.execute(f"SELECT {_ARCHIVE_COLUMNS} FROM archives WHERE mind = ? ORDER BY id", [mind])]


def archived_total(db: Database, mind: str) -> tuple[int, int]:
    """(events archived, archive runs) of a mind."""
    events, runs = db.execute("SELECT coalesce(sum(events), 0), count(*) FROM archives WHERE mind = ?", [mind]).fetchone()
    return int(events), int(runs)


def holding(db: Database, event_id: int) -> list[Archive]:
    """The archives whose id range holds `event_id` (not stored), newest first: the file says whether it is there.

    Ids are shared by every mind, so a range may also span another mind's
    events; the caller looks in the file. (No index on archived ids: this is
    asked only for an event the store does not have.)
    """
    rows = db.execute(
        f"SELECT {_ARCHIVE_COLUMNS} FROM archives WHERE first_id <= ? AND last_id >= ? ORDER BY id DESC", [event_id, event_id]
    )
    return [_archive(row) for row in rows]


def cuts_of(db: Database, event_ids: Iterable[int], *, in_file: bool = False) -> list[Cut]:
    """The cuts at the events `event_ids`, in the store, or in an archive file (`in_file`: its cuts carry their archive's path)."""
    # The ids joined (each one seeked), not `c.event_id IN s`, which built a temporary index of them first:
    # the causal walk asks this of its ~200 events on every walk, and most stores have no cut at all.
    source = (
        "SELECT c.event_id, c.archived_id, c.link, c.side, c.archive_id, c.archive_path FROM s CROSS JOIN event_cuts c ON c.event_id = s.id"
        if in_file
        else "SELECT c.event_id, c.archived_id, c.link, c.side, c.archive_id, a.path FROM s CROSS JOIN event_cuts c ON c.event_id = s.id"
        " JOIN archives a ON a.id = c.archive_id"
    )
    rows = db.execute(f"{_S} {source} ORDER BY 1, 2, 3, 4", ["[" + ",".join(map(str, set(event_ids))) + "]"])
    return [Cut(*row) for row in rows]
