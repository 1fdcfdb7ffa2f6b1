"""Goals: what a mind is working toward, set by operators or by the mind itself.

A goal has a title, a progress from 0 to 1 and a status: `active` until it
is `completed` (progress reaching 1 completes it) or `abandoned`; a closed
goal takes no more changes. Its origin is `operator` (a `goal` stimulus,
applied when the cycle perceives it) or `mind` (for instance an
investigation goal that metacognition sets for a stale contradiction).

Every change is an event written in the same transaction as the change:
`goal_created`, `goal_progressed`, `goal_completed`, `goal_abandoned`. Goals
are not memories or beliefs, so these events carry the goal's id in
`data["goal"]` (not as a subject); each is caused by what brought the change,
and every event after `goal_created` cites it, so the walk from any of them
reaches the goal's beginning.

For the cycle (callers run these on the writer, inside their own job):

* `active_goals(db, mind)` — the mind's active goals, oldest first.
* `create_goal(db, mind=, title=, origin=, cause=, cycle_id=, now=)` — a new
  active goal and its `goal_created` event; `cites` names what it is about
  (e.g. `Ref("belief", id)` for an investigation goal).
* `update_goal(db, goal_id=, progress=, status=, cause=, ...)` — progress,
  complete or abandon an active goal (`GoalClosed` if it is not active).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of
from noemad.wire import wire

GoalStatus = Literal["active", "completed", "abandoned"]
GOAL_STATUSES: tuple[str, ...] = ("active", "completed", "abandoned")
ORIGINS: tuple[str, ...] = ("operator", "mind")
CLOSING: tuple[str, ...] = ("completed", "abandoned")  # statuses a change may set
MAX_TITLE = 1000
ACTOR = "process:goals"  # who writes the mind's own goals unless the caller says


class GoalNotFound(NotFound):
    """No goal has that id."""

    title = "Goal not found"


class GoalClosed(Conflict):
    """The goal is completed or abandoned and takes no more changes."""

    title = "Goal closed"


@wire
@dataclass(frozen=True)
class Goal:
    """A goal: set by an operator or by the mind, active until completed or abandoned."""

    id: int
    mind: str
    title: str
    status: GoalStatus
    progress: float
    origin: Literal["operator", "mind"]
    created_at: str
    updated_at: str
    event_id: int | None
    """The goal_created event."""


_COLUMNS = "id, mind, title, status, progress, origin, created_at, updated_at, event_id"
CHANGE_KINDS = ("goal_progressed", "goal_completed", "goal_abandoned")


@dataclass(frozen=True)
class GoalChange:
    """The data of a `goal_progressed`, `goal_completed` or `goal_abandoned` event: the one definition of its fields."""

    goal: int
    title: str
    progress_from: float
    progress_to: float
    status_from: str
    status_to: str
    note: str | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "goal": self.goal,
            "title": self.title,
            "progress": {"from": self.progress_from, "to": self.progress_to},
            "status": {"from": self.status_from, "to": self.status_to},
        }
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def of(cls, event: Event) -> GoalChange:
        return cls.from_data(data_of(event, *CHANGE_KINDS))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> GoalChange:
        # Every goal change was written with both ends of progress and status (`update_goal`).
        progress, status = data["progress"], data["status"]
        return cls(
            goal=int(data.get("goal") or 0),
            title=str(data.get("title") or ""),
            progress_from=progress["from"],
            progress_to=progress["to"],
            status_from=status["from"],
            status_to=status["to"],
            note=data.get("note"),
        )


def check_title(title: str) -> str:
    """A goal's title, spaces folded, or `InvalidInput` with a sentence."""
    title = " ".join(title.split())
    if not title:
        raise InvalidInput("a goal needs a title; say what the mind should work toward")
    if len(title) > MAX_TITLE:
        raise InvalidInput(f"a goal's title is at most {MAX_TITLE} characters, not {len(title)}")
    return title


def check_progress(progress: float) -> float:
    if not 0.0 <= progress <= 1.0:
        raise InvalidInput(f"a goal's progress is between 0 and 1, not {progress}")
    return float(progress)


def get_goal(db: Database, goal_id: int) -> Goal:
    """One goal, or `GoalNotFound`."""
    row = db.execute(f"SELECT {_COLUMNS} FROM goals WHERE id = ?", [goal_id]).fetchone()
    if row is None:
        raise GoalNotFound(f"goal {goal_id} does not exist; list a mind's goals with `noemactl goals MIND`")
    return Goal(*row)


def list_goals(db: Database, mind: str, *, status: str | None = None, limit: int = 100) -> list[Goal]:
    """A mind's goals, oldest first, optionally of one status."""
    sql = f"SELECT {_COLUMNS} FROM goals WHERE mind = ?"
    params: list[Any] = [mind]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY id LIMIT ?"
    params.append(limit)
    return [Goal(*r) for r in db.execute(sql, params).fetchall()]


def active_goals(db: Database, mind: str) -> list[Goal]:
    """The mind's active goals, oldest first."""
    rows = db.execute(f"SELECT {_COLUMNS} FROM goals WHERE mind = ? AND status = 'active' ORDER BY id", [mind]).fetchall()
    return [Goal(*r) for r in rows]


def create_goal(
    db: Database,
    *,
    mind: str,
    title: str,
    origin: str,
    cause: int,
    cycle_id: str | None,
    now: float,
    actor: str | None = None,
    progress: float = 0.0,
    cites: Sequence[Ref] = (),
) -> tuple[Goal, Event]:
    """Create an active goal and record `goal_created` (a writer job, or part of one).

    `cause` is the event that set the goal (an operator's `goal` stimulus, a
    metacognition warning...); `cites` what the goal is about. The actor
    defaults to `operator` for operator goals and `process:goals` for the mind's.
    """
    title = check_title(title)
    progress = check_progress(progress)
    if origin not in ORIGINS:
        raise InvalidInput(f"a goal's origin is {' or '.join(ORIGINS)}, not {origin!r}")
    if progress >= 1.0:
        raise InvalidInput("a new goal cannot start complete; give a progress below 1")
    at = iso(now)
    goal_id = int(
        db.execute(
            "INSERT INTO goals (mind, title, status, progress, origin, created_at, updated_at) VALUES (?, ?, 'active', ?, ?, ?, ?)",
            [mind, title, progress, origin, at, at],
        ).lastrowid
        or 0
    )
    event = append(
        db,
        EventDraft(
            mind=mind,
            kind="goal_created",
            actor=actor or ("operator" if origin == "operator" else ACTOR),
            text=title,
            cycle_id=cycle_id,
            causation_id=cause,
            refs=list(cites),
            data={"goal": goal_id, "title": title, "origin": origin, "progress": progress},
        ),
        now,
    )
    db.execute("UPDATE goals SET event_id = ? WHERE id = ?", [event.id, goal_id])
    return get_goal(db, goal_id), event


def update_goal(
    db: Database,
    *,
    goal_id: int,
    cause: int,
    cycle_id: str | None,
    now: float,
    actor: str,
    progress: float | None = None,
    status: str | None = None,
    note: str | None = None,
) -> tuple[Goal, Event]:
    """Progress, complete or abandon an active goal (a writer job, or part of one).

    Progress 1 completes the goal; `completed` sets progress 1; `abandoned`
    keeps the progress (or takes the one given). The event is
    `goal_progressed`, `goal_completed` or `goal_abandoned`, caused by `cause`
    and citing the goal's `goal_created`. `GoalClosed` if the goal is not active.
    """
    goal = get_goal(db, goal_id)
    if goal.status != "active":
        raise GoalClosed(f"goal {goal_id} is {goal.status}; a closed goal takes no more changes (set a new one)")
    if progress is None and status is None:
        raise InvalidInput(f"say how goal {goal_id} changes: a progress, or completed or abandoned")
    if status is not None and status not in CLOSING:
        raise InvalidInput(f"a goal is set {' or '.join(CLOSING)}, not {status!r}; progress moves an active goal")
    new_progress = goal.progress if progress is None else check_progress(progress)
    if status == "completed" or (status is None and new_progress >= 1.0):
        new_status, kind, new_progress = "completed", "goal_completed", 1.0
    elif status == "abandoned":
        new_status, kind = "abandoned", "goal_abandoned"
    else:
        new_status, kind = "active", "goal_progressed"
    db.execute(
        "UPDATE goals SET status = ?, progress = ?, updated_at = ? WHERE id = ?", [new_status, new_progress, iso(now), goal_id]
    )
    data = GoalChange(goal_id, goal.title, goal.progress, new_progress, goal.status, new_status, note).to_data()
    event = append(
        db,
        EventDraft(
            mind=goal.mind,
            kind=kind,
            actor=actor,
            text=note or goal.title,
            cycle_id=cycle_id,
            causation_id=cause,
            refs=[Ref("event", goal.event_id)] if goal.event_id is not None else [],
            data=data,
        ),
        now,
    )
    return get_goal(db, goal_id), event


def completions(db: Database, mind: str, after: int, through: int) -> list[tuple[int, str | None, GoalChange]]:
    """The mind's `goal_completed` events with id in (after, through], oldest first: (event id, its text, the payload)."""
    return [
        (int(event_id), text, GoalChange.from_data(json.loads(raw)))
        for event_id, raw, text in db.execute(
            "SELECT id, data, text FROM events WHERE mind = ? AND kind = 'goal_completed' AND id > ? AND id <= ? ORDER BY id",
            [mind, after, through],
        )
    ]


def events_held(db: Database, low: int, high: int) -> set[int]:
    """The events in [low, high] a goal was set by; archiving keeps them."""
    return {row[0] for row in db.execute("SELECT event_id FROM goals WHERE event_id BETWEEN ? AND ?", [low, high])}
