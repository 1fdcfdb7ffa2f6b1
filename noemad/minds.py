"""Minds: creating, listing, showing and deleting them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.clock import iso
from noemad.errors import ConfirmationMismatch, InvalidInput, MindExists, MindNotFound
from noemad.events import EventDraft, append
from noemad.wire import wire

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


@wire
@dataclass(frozen=True)
class Mind:
    """A mind's row."""

    name: str
    created_at: str
    settings: dict[str, Any]
    mode: str



def check_name(name: str) -> str:
    """Return `name` if it is a valid mind name, else raise `InvalidInput`."""
    if not NAME_RE.match(name):
        raise InvalidInput(
            f"{name!r} is not a valid mind name: use 1-63 lowercase letters, digits, '-' or '_', starting with a letter or digit"
        )
    return name


def create_mind(db: Database, name: str, settings: dict[str, Any], now: float, actor: str) -> Mind:
    """Create a mind and record `mind_created` (a writer job)."""
    from noemad.cognition.notifications import check_settings

    check_name(name)
    check_settings(settings)  # the notification personality: a bad value is refused with a sentence
    if db.execute("SELECT 1 FROM minds WHERE name = ?", [name]).fetchone():
        raise MindExists(f"a mind named {name!r} already exists; pick another name or remove it with `noemactl mind rm {name}`")
    db.execute(
        "INSERT INTO minds (name, created_at, settings, mode) VALUES (?, ?, ?, 'idle')",
        [name, iso(now), json.dumps(settings, sort_keys=True)],
    )
    append(db, EventDraft(mind=name, kind="mind_created", actor=actor, data={"settings": settings}), now)
    return get_mind(db, name)


def get_mind(db: Database, name: str) -> Mind:
    """One mind, or `MindNotFound` with a hint."""
    row = db.execute("SELECT name, created_at, settings, mode FROM minds WHERE name = ?", [name]).fetchone()
    if row is None:
        raise MindNotFound(f"no mind is named {name!r}; list minds with `noemactl mind list` or create it with `noemactl mind create {name}`")
    return Mind(row[0], row[1], json.loads(row[2]), row[3])


def list_minds(db: Database) -> list[Mind]:
    """Every mind, by name."""
    rows = db.execute("SELECT name, created_at, settings, mode FROM minds ORDER BY name").fetchall()
    return [Mind(r[0], r[1], json.loads(r[2]), r[3]) for r in rows]


def mind_counts(db: Database, name: str) -> dict[str, int]:
    """How many events a mind has, and the id of its newest."""
    count, last = db.execute("SELECT count(*), coalesce(max(id), 0) FROM events WHERE mind = ?", [name]).fetchone()
    return {"events": count, "last_event_id": last}


MODES = ("idle", "paused", "reflecting", "consolidating")


def set_mode(db: Database, name: str, mode: str, now: float, actor: str, reason: str) -> Mind:
    """Switch a mind's runtime mode and record `mode_changed` (a writer job); a no-op if it is already there."""
    mind = get_mind(db, name)
    if mind.mode == mode:
        return mind
    db.execute("UPDATE minds SET mode = ? WHERE name = ?", [mode, name])
    append(
        db,
        EventDraft(mind=name, kind="mode_changed", actor=actor, text=reason, data={"from": mind.mode, "to": mode}),
        now,
    )
    return get_mind(db, name)


def delete_mind(db: Database, name: str, confirm: str) -> int:
    """Delete a mind and every row it owns; `confirm` must repeat its name. Returns the events removed."""
    get_mind(db, name)
    if confirm != name:
        raise ConfirmationMismatch(
            f"deleting mind {name!r} removes all its events; confirm by sending its name (noemactl mind rm {name} --yes)"
        )
    (count,) = db.execute("SELECT count(*) FROM events WHERE mind = ?", [name]).fetchone()
    # Children first so the cascade does not have to search for them row by row.
    for table in ("event_refs", "event_parents"):
        db.execute(f"DELETE FROM {table} WHERE mind = ?", [name])
    db.execute("UPDATE events SET causation_id = NULL WHERE mind = ? AND causation_id IS NOT NULL", [name])
    for table in ("consolidated", "reflection_patterns", "jobs", "memory_links", "evidence", "trust", "goals", "predictions", "notifications", "events", "model_calls", "memories", "beliefs", "minds"):
        db.execute(f"DELETE FROM {table} WHERE {'name' if table == 'minds' else 'mind'} = ?", [name])
    return int(count)
