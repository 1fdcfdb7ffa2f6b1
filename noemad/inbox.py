"""What connectors bring in: each connector's cursor, and what its source called each stimulus.

A connector (noemad/connectors/) brings stimuli from a source such as a
Matrix room. The supervisor stores one batch of them in one writer job with
the connector's new cursor (`set_cursor`) and each stimulus' remote id
(`record_remote`), so a crash leaves either the whole batch and the cursor
after it, or neither: nothing is lost, nothing stored twice. A remote id is
unique per connector, so a message the source sends again (a cursor that did
not move) is stored once (`known`).

A reply finds where to go through `origin` (the connector, room, thread and
remote id of the stimulus it answers); a connector finds the stimulus a
remote id became through `find_stimulus` (a Matrix reply's quoted event, an
edit's or a redaction's target).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import iso
from noemad.stimuli import Stimulus


@dataclass(frozen=True)
class Inbound:
    """A stimulus as a connector brings it: with what its source calls it, and where it was said."""

    stimulus: Stimulus
    remote_id: str | None = None
    """The source's id for it (a Matrix event id): unique per connector; a second one with the same id is not stored."""
    room: str | None = None
    """Where a reply to it goes (a Matrix room id)."""
    thread: str | None = None
    """The thread it was said in (a Matrix thread's root event id), kept for the reply."""


@dataclass(frozen=True)
class Origin:
    """Where a stored stimulus came from: its connector, and the source's names for it and its place."""

    connector: str
    remote_id: str
    room: str | None
    thread: str | None


def cursor(db: Database, mind: str, connector: str) -> str | None:
    """The connector's stored cursor (None before its first batch)."""
    row = db.execute("SELECT cursor FROM connector_cursors WHERE mind = ? AND connector = ?", [mind, connector]).fetchone()
    return None if row is None else row[0]


def set_cursor(db: Database, mind: str, connector: str, value: str | None, now: float) -> None:
    """Store the connector's cursor (in the job that stores the stimuli it follows)."""
    db.execute(
        "INSERT INTO connector_cursors (mind, connector, cursor, at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (mind, connector) DO UPDATE SET cursor = excluded.cursor, at = excluded.at",
        [mind, connector, value, iso(now)],
    )


def known(db: Database, mind: str, connector: str, remote_ids: Sequence[str]) -> set[str]:
    """Which of `remote_ids` the connector has stored a stimulus for already."""
    if not remote_ids:
        return set()
    marks = ", ".join("?" * len(remote_ids))
    rows = db.execute(
        f"SELECT remote_id FROM remote_ids WHERE mind = ? AND connector = ? AND remote_id IN ({marks})",
        [mind, connector, *remote_ids],
    ).fetchall()
    return {r[0] for r in rows}


def record_remote(db: Database, mind: str, connector: str, inbound: Inbound, event_id: int) -> None:
    """Keep what the source called the stimulus stored as `event_id` (in the job that stores it)."""
    if inbound.remote_id is None:
        return
    db.execute(
        "INSERT INTO remote_ids (mind, connector, remote_id, event_id, room, thread) VALUES (?, ?, ?, ?, ?, ?)",
        [mind, connector, inbound.remote_id, event_id, inbound.room, inbound.thread],
    )


def find_stimulus(db: Database, mind: str, connector: str, remote_id: str) -> int | None:
    """The event id of the stimulus the connector stored for `remote_id`, or None."""
    row = db.execute(
        "SELECT event_id FROM remote_ids WHERE mind = ? AND connector = ? AND remote_id = ?", [mind, connector, remote_id]
    ).fetchone()
    return None if row is None else int(row[0])


def origin(db: Database, event_id: int) -> Origin | None:
    """Where the stimulus `event_id` came from, if a connector brought it."""
    row = db.execute("SELECT connector, remote_id, room, thread FROM remote_ids WHERE event_id = ? LIMIT 1", [event_id]).fetchone()
    return None if row is None else Origin(*row)


def last_brought(db: Database, mind: str, connector: str) -> str | None:
    """When the connector's cursor last moved (ISO time), or None."""
    row = db.execute("SELECT at FROM connector_cursors WHERE mind = ? AND connector = ?", [mind, connector]).fetchone()
    return None if row is None else str(row[0])
