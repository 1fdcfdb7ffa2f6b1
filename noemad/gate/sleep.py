"""A mind's sleep and self-wake as stored: the one writer of the `gate_sleep` table.

The gate (`noemad.gate.engine`) keeps both in memory; this module stores
them so they survive a restart, each change with its event on the mind's
timeline:

- `mind_slept` (`MindSlept`): put to sleep until a time, with a note;
- `mind_woke` (`MindWoke`): the sleep ended early, by the operator or by a
  privileged author's stimulus (`cause`); a sleep that simply runs out
  writes nothing: its end was on the timeline from the start;
- `self_wake_set` (`SelfWakeSet`): the mind chose not to reply and set its
  own timer (caused by the message it skipped);
- `self_wake_cancelled` (`SelfWakeCancelled`): a turn started first, or it
  was cancelled by hand.

A self-wake that fires is cleared without an event of its own: the
`cycle_started` of the turn it wakes is caused by its `self_wake_set`.

One row per mind (`mind` is the key); a row with neither a sleep nor a
self-wake is deleted. Times are stored as ISO text, as everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.events import Event, EventDraft, append, data_of
from noemad.store.guard import unrecorded

__all__ = [
    "MindSlept",
    "MindWoke",
    "SelfWakeCancelled",
    "SelfWakeSet",
    "SleepState",
    "record_self_wake_cancelled",
    "record_self_wake_fired",
    "record_woke",
    "set_self_wake",
    "sleep",
    "sleep_state",
    "wake",
]


def _time(value: Any) -> float | None:
    return None if value in (None, "") else parse_iso(str(value))


@dataclass(frozen=True)
class SleepState:
    """A mind's stored sleep and self-wake (either may be None)."""

    mind: str
    until: float | None
    note: str | None
    self_wake_at: float | None
    self_wake_cause: int | None  # the self_wake_set event


@dataclass(frozen=True)
class MindSlept:
    """The data of a `mind_slept` event."""

    until: float
    note: str | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"until": iso(self.until)}
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def of(cls, event: Event) -> MindSlept:
        data = data_of(event, "mind_slept")
        return cls(_time(data.get("until")) or 0.0, data.get("note"))


@dataclass(frozen=True)
class MindWoke:
    """The data of a `mind_woke` event: the sleep it ended early and, for a privileged author's stimulus, that stimulus."""

    until: float  # when the sleep would have ended
    cause: int | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"until": iso(self.until)}
        if self.cause is not None:
            data["cause"] = self.cause
        return data

    @classmethod
    def of(cls, event: Event) -> MindWoke:
        data = data_of(event, "mind_woke")
        cause = data.get("cause")
        return cls(_time(data.get("until")) or 0.0, None if cause is None else int(cause))


@dataclass(frozen=True)
class SelfWakeSet:
    """The data of a `self_wake_set` event: when the mind wakes itself, and the message it chose not to answer."""

    at: float
    message: int | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": iso(self.at)}
        if self.message is not None:
            data["message"] = self.message
        return data

    @classmethod
    def of(cls, event: Event) -> SelfWakeSet:
        data = data_of(event, "self_wake_set")
        message = data.get("message")
        return cls(_time(data.get("at")) or 0.0, None if message is None else int(message))


@dataclass(frozen=True)
class SelfWakeCancelled:
    """The data of a `self_wake_cancelled` event: the timer that will not fire, and why."""

    at: float
    set_by: int  # its self_wake_set event
    why: str

    def to_data(self) -> dict[str, Any]:
        return {"at": iso(self.at), "set_by": self.set_by, "why": self.why}

    @classmethod
    def of(cls, event: Event) -> SelfWakeCancelled:
        data = data_of(event, "self_wake_cancelled")
        return cls(_time(data.get("at")) or 0.0, int(data.get("set_by") or 0), str(data.get("why") or ""))


_COLUMNS = "mind, until, note, self_wake_at, self_wake_cause"


def sleep_state(db: Database, mind: str) -> SleepState | None:
    """The mind's stored sleep and self-wake, read at start-up (None: neither)."""
    row = db.execute(f"SELECT {_COLUMNS} FROM gate_sleep WHERE mind = ?", [mind]).fetchone()
    if row is None:
        return None
    return SleepState(row[0], _time(row[1]), row[2], _time(row[3]), row[4])


def _put(db: Database, mind: str, **values: Any) -> None:
    """Write some columns of the mind's row (creating it), then delete it if nothing is left in it."""
    db.execute("INSERT INTO gate_sleep (mind) VALUES (?) ON CONFLICT (mind) DO NOTHING", [mind])
    sets = ", ".join(f"{column} = ?" for column in values)
    db.execute(f"UPDATE gate_sleep SET {sets} WHERE mind = ?", [*values.values(), mind])
    db.execute("DELETE FROM gate_sleep WHERE mind = ? AND until IS NULL AND self_wake_at IS NULL", [mind])


def sleep(db: Database, mind: str, until: float, note: str | None, *, actor: str, now: float) -> Event:
    """Put the mind to sleep until `until` (a writer job): stored, with `mind_slept`."""
    _put(db, mind, until=iso(until), note=note)
    text = f"asleep until {iso(until)}" + (f": {note}" if note else "")
    return append(db, EventDraft(mind=mind, kind="mind_slept", actor=actor, text=text, data=MindSlept(until, note).to_data()), now)


def wake(db: Database, mind: str, *, actor: str, now: float, cause: int | None = None) -> Event | None:
    """End the mind's sleep now (a writer job), with `mind_woke`; None when it was not asleep (nothing changes)."""
    state = sleep_state(db, mind)
    if state is None or state.until is None:
        return None
    _put(db, mind, until=None, note=None)
    if state.until <= now:
        # The sleep had run out: its end needs no event of its own, only the row cleared.
        unrecorded("a sleep that ran out ends at the time its mind_slept event gave")
        return None
    text = f"woken by {actor}" + (" (a privileged author's message)" if cause is not None else "")
    draft = EventDraft(mind=mind, kind="mind_woke", actor=actor, text=text, data=MindWoke(state.until, cause).to_data(), causation_id=cause)
    return append(db, draft, now)


def record_woke(db: Database, mind: str, *, actor: str, cause: int, now: float) -> Event | None:
    """A privileged author's stimulus (`cause`) ended the sleep (a writer job): `wake` with that cause."""
    return wake(db, mind, actor=actor, now=now, cause=cause)


def set_self_wake(db: Database, mind: str, *, at: float, message: int | None, now: float, actor: str = "mind") -> Event:
    """Store the mind's self-wake at `at` (a writer job), with `self_wake_set` caused by the message it skipped.

    A self-wake already set is replaced (the gate keeps one timer): its
    `self_wake_cancelled` is written first.
    """
    _cancel(db, mind, now, "replaced by a new self-wake")
    draft = EventDraft(
        mind=mind, kind="self_wake_set", actor=actor, text=f"will wake itself at {iso(at)}",
        data=SelfWakeSet(at, message).to_data(), causation_id=message,
    )
    event = append(db, draft, now)
    _put(db, mind, self_wake_at=iso(at), self_wake_cause=event.id)
    return event


def _cancel(db: Database, mind: str, now: float, why: str, actor: str = "process:gate") -> Event | None:
    state = sleep_state(db, mind)
    if state is None or state.self_wake_at is None or state.self_wake_cause is None:
        return None
    _put(db, mind, self_wake_at=None, self_wake_cause=None)
    draft = EventDraft(
        mind=mind, kind="self_wake_cancelled", actor=actor, text=f"self-wake at {iso(state.self_wake_at)} cancelled: {why}",
        data=SelfWakeCancelled(state.self_wake_at, state.self_wake_cause, why).to_data(), causation_id=state.self_wake_cause,
    )
    return append(db, draft, now)


def record_self_wake_cancelled(db: Database, mind: str, *, now: float, why: str = "a turn started first", actor: str = "process:gate") -> Event | None:
    """The self-wake will not fire (a writer job), with `self_wake_cancelled`; None when none was stored."""
    return _cancel(db, mind, now, why, actor)


def record_self_wake_fired(db: Database, mind: str, *, now: float) -> None:
    """The self-wake fired (a writer job): its row is cleared so a restart does not fire it again."""
    state = sleep_state(db, mind)
    if state is None or state.self_wake_at is None:
        return
    _put(db, mind, self_wake_at=None, self_wake_cause=None)
    unrecorded("a self-wake that fires is recorded by the cycle_started its self_wake_set event causes")


def events_held(db: Database, mind: str, low: int, high: int) -> set[int]:
    """The event in [low, high] a pending self-wake answers, if any; archiving keeps it."""
    rows = db.execute("SELECT self_wake_cause FROM gate_sleep WHERE mind = ? AND self_wake_cause BETWEEN ? AND ?", [mind, low, high])
    return {row[0] for row in rows}
