"""A mind's sleep and self-wake as stored (`noemad.gate.sleep`): what survives a restart, and its events.

Every write runs on the writer with the guard on (tests/conftest.py), so a
change that recorded no event would fail here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noemad.events import Event, append, get_event
from noemad.gate import sleep as gate_sleep
from noemad.gate.sleep import MindSlept, MindWoke, SelfWakeCancelled, SelfWakeSet, SleepState
from noemad.minds import create_mind, delete_mind
from noemad.stimuli import Message
from noemad.store import Store

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, T0, "operator"))
    yield s
    s.close()


def kinds(store: Store) -> list[str]:
    return [r[0] for r in store.reader().execute("SELECT kind FROM events WHERE mind = 'ada' ORDER BY id")]


def message(store: Store, author: str = "alice") -> Event:
    return store.writer.run_sync(lambda db: append(db, Message(author, "hi").draft("ada"), T0))


def test_a_sleep_is_stored_with_its_event_and_read_back_at_start_up(store: Store) -> None:
    event = store.writer.run_sync(lambda db: gate_sleep.sleep(db, "ada", T0 + 3600, "night shift", actor="operator", now=T0))
    assert (event.kind, event.actor, event.text) == ("mind_slept", "operator", "asleep until 2026-01-01T01:00:00.000Z: night shift")
    assert MindSlept.of(get_event(store.reader(), event.id)) == MindSlept(T0 + 3600, "night shift")
    assert gate_sleep.sleep_state(store.reader(), "ada") == SleepState("ada", T0 + 3600, "night shift", None, None)


def test_waking_early_records_mind_woke_and_clears_the_sleep(store: Store) -> None:
    store.writer.run_sync(lambda db: gate_sleep.sleep(db, "ada", T0 + 3600, None, actor="operator", now=T0))
    woke = store.writer.run_sync(lambda db: gate_sleep.wake(db, "ada", actor="operator", now=T0 + 60))
    assert woke is not None and MindWoke.of(woke) == MindWoke(T0 + 3600)
    assert gate_sleep.sleep_state(store.reader(), "ada") is None
    # Waking a mind that is awake changes nothing and records nothing.
    assert store.writer.run_sync(lambda db: gate_sleep.wake(db, "ada", actor="operator", now=T0 + 61)) is None
    assert kinds(store) == ["mind_created", "mind_slept", "mind_woke"]


def test_a_privileged_authors_message_that_woke_the_mind_is_the_cause_of_mind_woke(store: Store) -> None:
    store.writer.run_sync(lambda db: gate_sleep.sleep(db, "ada", T0 + 3600, None, actor="operator", now=T0))
    said = message(store, "operator")
    woke = store.writer.run_sync(lambda db: gate_sleep.record_woke(db, "ada", actor="operator", cause=said.id, now=T0 + 5))
    assert woke is not None and woke.causation_id == said.id and MindWoke.of(woke).cause == said.id


def test_a_sleep_that_ran_out_is_cleared_without_an_event(store: Store) -> None:
    store.writer.run_sync(lambda db: gate_sleep.sleep(db, "ada", T0 + 60, None, actor="operator", now=T0))
    assert store.writer.run_sync(lambda db: gate_sleep.wake(db, "ada", actor="operator", now=T0 + 120)) is None
    assert gate_sleep.sleep_state(store.reader(), "ada") is None
    assert kinds(store) == ["mind_created", "mind_slept"]


def test_a_self_wake_is_caused_by_the_message_it_skipped_and_survives_beside_a_sleep(store: Store) -> None:
    skipped = message(store)
    set_ = store.writer.run_sync(lambda db: gate_sleep.set_self_wake(db, "ada", at=T0 + 600, message=skipped.id, now=T0))
    assert (set_.kind, set_.causation_id) == ("self_wake_set", skipped.id)
    assert SelfWakeSet.of(get_event(store.reader(), set_.id)) == SelfWakeSet(T0 + 600, skipped.id)
    store.writer.run_sync(lambda db: gate_sleep.sleep(db, "ada", T0 + 3600, "later", actor="operator", now=T0 + 1))
    assert gate_sleep.sleep_state(store.reader(), "ada") == SleepState("ada", T0 + 3600, "later", T0 + 600, set_.id)


def test_a_turn_that_starts_first_cancels_the_self_wake_on_the_timeline(store: Store) -> None:
    set_ = store.writer.run_sync(lambda db: gate_sleep.set_self_wake(db, "ada", at=T0 + 600, message=None, now=T0))
    cancelled = store.writer.run_sync(lambda db: gate_sleep.record_self_wake_cancelled(db, "ada", now=T0 + 30))
    assert cancelled is not None and cancelled.causation_id == set_.id
    assert SelfWakeCancelled.of(cancelled) == SelfWakeCancelled(T0 + 600, set_.id, "a turn started first")
    assert gate_sleep.sleep_state(store.reader(), "ada") is None
    assert store.writer.run_sync(lambda db: gate_sleep.record_self_wake_cancelled(db, "ada", now=T0 + 31)) is None


def test_a_new_self_wake_replaces_the_old_one_and_says_so(store: Store) -> None:
    first = store.writer.run_sync(lambda db: gate_sleep.set_self_wake(db, "ada", at=T0 + 600, message=None, now=T0))
    second = store.writer.run_sync(lambda db: gate_sleep.set_self_wake(db, "ada", at=T0 + 60, message=None, now=T0 + 1))
    assert kinds(store) == ["mind_created", "self_wake_set", "self_wake_cancelled", "self_wake_set"]
    state = gate_sleep.sleep_state(store.reader(), "ada")
    assert state is not None and (state.self_wake_at, state.self_wake_cause) == (T0 + 60, second.id)
    cancel = store.reader().execute("SELECT causation_id FROM events WHERE kind = 'self_wake_cancelled'").fetchone()
    assert cancel == (first.id,)


def test_a_self_wake_that_fired_is_cleared_so_a_restart_does_not_fire_it_again(store: Store) -> None:
    store.writer.run_sync(lambda db: gate_sleep.set_self_wake(db, "ada", at=T0 + 60, message=None, now=T0))
    store.writer.run_sync(lambda db: gate_sleep.record_self_wake_fired(db, "ada", now=T0 + 60))
    assert gate_sleep.sleep_state(store.reader(), "ada") is None
    assert kinds(store) == ["mind_created", "self_wake_set"]  # the turn's cycle_started records the firing


def test_the_row_goes_with_its_mind(store: Store) -> None:
    store.writer.run_sync(lambda db: gate_sleep.sleep(db, "ada", T0 + 3600, None, actor="operator", now=T0))
    store.writer.run_sync(lambda db: delete_mind(db, "ada", "ada"))
    assert store.reader().execute("SELECT count(*) FROM gate_sleep").fetchone() == (0,)


def test_only_the_sleep_module_runs_sql_on_its_table() -> None:
    import ast
    import re

    table = re.compile(r"\b(FROM|JOIN|UPDATE|INTO)\s+gate_sleep\b", re.IGNORECASE)
    root = Path(__file__).resolve().parents[1]
    found = {
        str(p.relative_to(root))
        for p in (root / "noemad").rglob("*.py")
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and table.search(n.value) for n in ast.walk(ast.parse(p.read_text())))
    }
    assert found == {"noemad/gate/sleep.py"}, "read and change a mind's sleep and self-wake through noemad/gate/sleep.py"
