"""Which of a mind's old events an archive run takes: the chunk's events older than the cut-off, less what is pinned.

Pinned events stay in the store however old (see the package docstring for
why each): the rows that point at them are live state, and the mind or the
operator reads them through those rows. Each table's owner says which events
its rows hold (`events_held`). A cycle goes whole or not at all, so
a walk over a kept cycle never finds half of it missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition import goals, predictions
from noemad.cognition.notifications import table as notifications
from noemad.cognition.beliefs import queries as beliefs
from noemad.cognition.memory import reads as memory
from noemad.gate import sleep
from noemad.models import ratios
from noemad.stimuli import STIMULUS_KINDS

_OLD_SQL = "SELECT id, cycle_id FROM events WHERE mind = ? AND id BETWEEN ? AND ? AND at < ? ORDER BY id"

# Every event of the cycles named, with whether it is older than the cut-off.
_CYCLES_SQL = """
WITH c(id) AS (SELECT value FROM json_each(?))
SELECT cycle_id, id, at < ? FROM events WHERE cycle_id IN c
"""


@dataclass(frozen=True)
class Taken:
    """What a run takes of one chunk, and what it leaves of the chunk's old events and why."""

    ids: list[int]
    """The events to archive, in id order."""
    pinned: int
    """Old events left because a live row or a belief's history holds them, or no cycle has taken them."""
    in_kept_cycles: int
    """Old events left because their cycle has an event that stays."""


def bounds(db: Database, mind: str, cutoff: float) -> tuple[int, int] | None:
    """The lowest and highest ids of the mind's events older than `cutoff`, or None when there are none."""
    low, high = db.execute("SELECT min(id), max(id) FROM events WHERE mind = ? AND at < ?", [mind, iso(cutoff)]).fetchone()
    return None if low is None else (int(low), int(high))


def pinned(db: Database, mind: str, low: int, high: int) -> set[int]:
    """The mind's pinned event ids in [low, high]: each owner of rows that hold events says which its rows hold."""
    return (
        beliefs.events_held(db, mind, low, high)
        | memory.events_held(db, mind, low, high, STIMULUS_KINDS)
        | goals.events_held(db, low, high)
        | predictions.events_held(db, low, high)
        | notifications.events_held(db, low, high)
        | sleep.events_held(db, mind, low, high)
        | ratios.events_held(db, mind, low, high)
    )


def take(db: Database, mind: str, low: int, high: int, cutoff: float) -> Taken:
    """The events of the chunk [low, high] a run archives (see the module docstring)."""
    stamp = iso(cutoff)
    old = db.execute(_OLD_SQL, [mind, low, high, stamp]).fetchall()
    if not old:
        return Taken([], 0, 0)
    cycles = sorted({cycle for _, cycle in old if cycle is not None})
    members: dict[str, list[tuple[int, bool]]] = {}
    if cycles:
        for cycle, event_id, is_old in db.execute(_CYCLES_SQL, [json.dumps(cycles), stamp]):
            members.setdefault(cycle, []).append((event_id, bool(is_old)))
    span_low = min([low, *(i for m in members.values() for i, _ in m)])
    span_high = max([high, *(i for m in members.values() for i, _ in m)])
    held = pinned(db, mind, span_low, span_high)
    kept_cycles = {cycle for cycle, events in members.items() if any(not is_old or i in held for i, is_old in events)}
    ids: list[int] = []
    pins = in_kept = 0
    for event_id, cycle in old:
        if event_id in held:
            pins += 1
        elif cycle in kept_cycles:
            in_kept += 1
        else:
            ids.append(event_id)
    return Taken(ids, pins, in_kept)


def chunks(low: int, high: int, size: int) -> Sequence[tuple[int, int]]:
    """[low, high] as id ranges of `size`, newest first: links only point to older events (see run.py)."""
    out: list[tuple[int, int]] = []
    top = high
    while top >= low:
        bottom = max(low, top - size + 1)
        out.append((bottom, top))
        top = bottom - 1
    return out
