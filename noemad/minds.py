"""Minds: creating, listing, showing, changing and deleting them.

This module is the one writer of the `minds` table: its rows, their settings
(`settings_changed`) and their runtime mode (`mode_changed`, whoever asks:
an operator's pause or a background job).

Settings are parsed at the edges: a new mind's and a change's by
`parse_mind_settings` (a bad key or value is refused with a sentence), a
stored row's by `salvage_mind_settings` when it is read, so a row written
before the checks existed still loads: its bad keys are left out of
`Mind.parsed` (their defaults apply), kept in the row and in
`Mind.settings`, and named in `Mind.problems` until someone sets or unsets
them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any

from sqlite_utils import Database

from noemad.clock import iso
from noemad.config.mind import MindSettings, parse_mind_settings, salvage_mind_settings
from noemad.errors import ConfirmationMismatch, InvalidInput, MindExists, MindNotFound
from noemad.events import Event, EventDraft, append, data_of, unlink_mind
from noemad.names import mind_name_problem
from noemad.store.guard import unrecorded
from noemad.wire import HIDDEN, wire

@wire
@dataclass(frozen=True)
class Mind:
    """A mind's row."""

    name: str
    created_at: str
    settings: dict[str, Any]  # as stored: what the operator wrote
    mode: str
    parsed: Annotated[MindSettings, HIDDEN] = field(default_factory=MindSettings, compare=False)  # the valid part, typed
    problems: Annotated[tuple[str, ...], HIDDEN] = ()  # a sentence per stored key that is no longer valid


def check_name(name: str) -> str:
    """Return `name` if it is a valid mind name (noemad.names), else raise `InvalidInput`."""
    problem = mind_name_problem(name)
    if problem is not None:
        raise InvalidInput(problem)
    return name


def create_mind(db: Database, name: str, settings: dict[str, Any], now: float, actor: str) -> Mind:
    """Create a mind and record `mind_created` (a writer job)."""
    check_name(name)
    parse_mind_settings(settings)
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
    return _mind(row)


def _mind(row: tuple[Any, ...]) -> Mind:
    raw = _json_or_text(row[2])
    parsed, problems = _settings_of(row[2])
    return Mind(row[0], row[1], raw if isinstance(raw, dict) else {}, row[3], parsed, problems)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # not even JSON: shown as the text it is


@lru_cache(maxsize=256)
def _settings_of(text: str) -> tuple[MindSettings, tuple[str, ...]]:
    """Stored settings parsed, once per distinct text (MindSettings is frozen, so one may be shared).

    A turn reads its mind half a dozen times; parsing each time cost a
    validation, and for a row that no longer validates a sentence per key,
    with its nearest valid keys found by difflib.
    """
    parsed, problems = salvage_mind_settings(_json_or_text(text))
    return parsed, tuple(problems)


def list_minds(db: Database) -> list[Mind]:
    """Every mind, by name."""
    rows = db.execute("SELECT name, created_at, settings, mode FROM minds ORDER BY name").fetchall()
    return [_mind(r) for r in rows]


def mind_names(db: Database) -> list[str]:
    """Every mind's name, in order (without reading their settings)."""
    return [r[0] for r in db.execute("SELECT name FROM minds ORDER BY name")]


def _flat(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Settings as dotted keys (models.respond.model) to their values."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _patched(settings: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`settings` with `patch` merged in (RFC 7396: null removes a key; an emptied table goes too)."""
    out = dict(settings)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            inner = _patched(out[key] if isinstance(out.get(key), dict) else {}, value)
            if inner:
                out[key] = inner
            else:
                out.pop(key, None)
        else:
            out[key] = value
    return out


def change_settings(db: Database, name: str, patch: dict[str, Any], now: float, actor: str) -> Mind:
    """Merge `patch` into a mind's stored settings and record `settings_changed` (a writer job).

    `patch` is a JSON merge patch: a value sets its key, null unsets it. The
    result is checked whole, so a stored key that is no longer valid must be
    set or unset in the same change. A patch that changes nothing writes
    nothing. The event's data names each changed key (dotted) with its old and
    new value (null: unset).
    """
    if not isinstance(patch, dict) or not patch:
        raise InvalidInput('a settings change is a JSON object of keys to set (null unsets one), such as {"persona": "You are Ada."}')
    mind = get_mind(db, name)
    new = _patched(mind.settings, patch)
    parse_mind_settings(new)
    old_flat, new_flat = _flat(mind.settings), _flat(new)
    changes = {
        key: {"from": old_flat.get(key), "to": new_flat.get(key)}
        for key in sorted(old_flat.keys() | new_flat.keys())
        if old_flat.get(key) != new_flat.get(key)
    }
    if not changes:
        return mind
    db.execute("UPDATE minds SET settings = ? WHERE name = ?", [json.dumps(new, sort_keys=True), name])
    append(
        db,
        EventDraft(mind=name, kind="settings_changed", actor=actor, text=f"settings changed: {', '.join(changes)}", data={"changes": changes}),
        now,
    )
    return get_mind(db, name)


MODES = ("idle", "paused", "reflecting", "consolidating")


@dataclass(frozen=True)
class ModeChange:
    """The data of a `mode_changed` event: the one definition of its fields (`job`: the background job it belongs to)."""

    from_mode: str
    to_mode: str
    job: int | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"from": self.from_mode, "to": self.to_mode}
        if self.job is not None:
            data["job"] = self.job
        return data

    @classmethod
    def of(cls, event: Event) -> ModeChange:
        data = data_of(event, "mode_changed")
        return cls(str(data.get("from")), str(data.get("to")), data.get("job"))


def job_start_event(db: Database, name: str, job_id: int) -> int | None:
    """The `mode_changed` event that started background job `job_id` (None if the mode did not change)."""
    row = db.execute(
        "SELECT id FROM events WHERE mind = ? AND kind = 'mode_changed' AND json_extract(data, '$.job') = ? ORDER BY id LIMIT 1",
        [name, job_id],
    ).fetchone()
    return None if row is None else int(row[0])


def set_mode(
    db: Database, name: str, mode: str, now: float, actor: str, reason: str, *, only_from: str | None = None, job: int | None = None
) -> Mind:
    """Switch a mind's runtime mode and record `mode_changed` (a writer job).

    A no-op if the mind is already in `mode`, or if `only_from` is given and
    the mind is in another mode (e.g. an operator paused it while a job ran:
    the pause stands). `job` names the background job the change belongs to.
    """
    if mode not in MODES:
        raise InvalidInput(f"a mind's mode is one of {', '.join(MODES)}, not {mode!r}")
    mind = get_mind(db, name)
    if mind.mode == mode or (only_from is not None and mind.mode != only_from):
        return mind
    db.execute("UPDATE minds SET mode = ? WHERE name = ?", [mode, name])
    append(db, EventDraft(mind=name, kind="mode_changed", actor=actor, text=reason, data=ModeChange(mind.mode, mode, job).to_data()), now)
    return get_mind(db, name)


def delete_mind(db: Database, name: str, confirm: str) -> int:
    """Delete a mind and every row it owns; `confirm` must repeat its name. Returns the events removed."""
    get_mind(db, name)
    if confirm != name:
        raise ConfirmationMismatch(
            f"deleting mind {name!r} removes all its events; confirm by sending its name (noemactl mind rm {name} --yes)"
        )
    (count,) = db.execute("SELECT count(*) FROM events WHERE mind = ?", [name]).fetchone()
    unrecorded("the mind's timeline is deleted with it; the daemon's log says who removed it")
    unlink_mind(db, name)  # children first so the cascade does not have to search for them row by row
    for table in ("consolidations", "reflection_patterns", "jobs", "memory_links", "evidence", "trust", "goals", "predictions", "notifications", "events", "model_calls", "memories", "beliefs", "minds"):
        db.execute(f"DELETE FROM {table} WHERE {'name' if table == 'minds' else 'mind'} = ?", [name])
    return int(count)
