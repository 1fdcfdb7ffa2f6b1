"""The gate between a stored stimulus and the mind's turn, in process on the manual clock.

Each stimulus is stored first; the mind's wake rules decide when a turn runs
and why. A turn takes every stimulus no turn has taken (deferred ones too),
its `cycle_started` names the rule that woke the mind, and deliveries that
come while a turn runs or the mind is paused wait for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND
from inprocess import InProcess, hold_turns, start_app
from noemad.events import list_events
from noemad.gate import sleep as gate_sleep
from noemad.rules.shape import read_rule
from noemad.rules.table import add_rule, stored_rules
from noemad.runtime import actor as actor_module
from noemad.store import Store

MIND = "ada"


@pytest.fixture
def ada(app: InProcess) -> Iterator[InProcess]:
    assert app.api("POST", "/minds", json={"name": MIND}).status_code == 201
    app.settle(MIND)
    yield app


def rule(app: InProcess, data: dict[str, Any]) -> None:
    """Store a wake rule as the API will (through the writer, with its event) and tell the mind's actor."""
    read = read_rule(data)
    now = app.clock.now()
    app.run(app.sup.store.writer.run(lambda db: add_rule(db, MIND, read.rule, position=None, actor="operator", now=now)))
    actor = app.sup.actors[MIND]
    app.run(_call(lambda: actor.rules_changed(stored_rules(app.sup.store.reader(), MIND))))


async def _call(fn: Callable[[], Any]) -> Any:
    return fn()


def until(app: InProcess, condition: Callable[[], bool]) -> None:
    """Yield to the engine's loop until `condition` holds (no time passes)."""

    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0)

    app.run(wait())


def say(app: InProcess, text: str, author: str = "alice", **extra: Any) -> int:
    resp = app.api("POST", f"/minds/{MIND}/events", json={"kind": "message", "author": author, "text": text, **extra})
    assert resp.status_code == 201, resp.text
    return int(resp.json()["id"])


def events(app: InProcess, kind: str) -> list[dict[str, Any]]:
    return [e for e in app.api("GET", f"/minds/{MIND}/events", params={"limit": 1000}).json()["events"] if e["kind"] == kind]


def episodes_of(app: InProcess, cycle_id: str) -> list[int]:
    """The stimuli a cycle took: the causes of its episodes."""
    return sorted(e["causation_id"] for e in events(app, "memory_created") if e["cycle_id"] == cycle_id)


AMBIENT = {"name": "ambient", "match": {"kinds": ["message"], "channel": "cli"}, "behaviour": {"debounce": {"ms": 2000}}}


def test_a_debounced_batch_wakes_once_with_every_stimulus_and_names_its_rule(ada: InProcess) -> None:
    rule(ada, AMBIENT)
    first = say(ada, "the build is red")
    ada.advance(1.5)  # each message pushes the quiet period back
    second = say(ada, "ada, can you look?")
    ada.advance(1.5)
    third = say(ada, "never mind, it is green")
    ada.settle(MIND)
    assert events(ada, "cycle_started") == []  # stored, waiting for the quiet period
    ada.advance(2)
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [first, second, third]
    assert started["causation_id"] == second  # the newest stimulus that addresses the mind, not the newest
    assert started["data"]["rule"] == "ambient" and started["data"]["batch"] == 3 and started["data"]["more"] == 0
    assert started["text"] == "woke: rule ambient: debounce 2000 ms, a batch of 3 stimuli after 2000 ms quiet"
    assert episodes_of(ada, started["cycle_id"]) == [first, second, third]


def test_a_deferred_stimulus_is_taken_by_the_next_wake_and_says_which_rule_deferred_it(ada: InProcess) -> None:
    rule(ada, {"name": "lobby", "match": {"channel": "irc:#lobby"}, "behaviour": "defer"})
    deferred = say(ada, "chatter", channel="irc:#lobby")
    ada.settle(MIND)
    assert events(ada, "cycle_started") == []
    woke = say(ada, "a question", channel="irc:#ops")  # no rule matches: the default, always
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [woke] and started["causation_id"] == woke
    assert started["data"]["rule"] is None and started["data"]["stimuli"] == 2
    assert started["data"]["held_back"] == [{"verdict": "defer", "rule": "lobby", "stimuli": [deferred], "more": 0}]
    assert "1 defer by rule lobby" in started["text"]
    assert episodes_of(ada, started["cycle_id"]) == [deferred, woke]
    # the timeline walks from the deferred stimulus to the cycle that took it
    chain = ada.api("GET", f"/events/{deferred}/chain").json()
    assert started["id"] in [n["id"] for n in chain["nodes"]]


def test_a_batch_stimulus_taken_by_another_wake_is_absorbed(ada: InProcess) -> None:
    rule(ada, AMBIENT)
    ambient = say(ada, "chatter")
    direct = say(ada, "urgent", channel="irc:#ops")  # the default wakes now and takes the ambient one too
    ada.settle(MIND)
    ada.advance(5)  # the batch had only a stimulus already taken: it wakes nothing
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [direct]
    assert started["data"]["held_back"] == [{"verdict": "batch", "rule": "ambient", "stimuli": [ambient], "more": 0}]


def test_deliveries_during_a_turn_wait_and_go_as_one_turn(ada: InProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    held = hold_turns(monkeypatch)  # the first turn runs until the test lets it end
    first = say(ada, "one")
    until(ada, lambda: held.started)
    second, third = say(ada, "two"), say(ada, "three")
    assert ada.sup.actors[MIND].gate.status(ada.clock.now()).held == 2
    ada.run(_call(held.release.set))
    ada.settle(MIND)
    one, two = events(ada, "cycle_started")
    assert one["parents"] == [first] and two["parents"] == [second, third]


def test_a_pause_holds_deliveries_up_to_100_and_resume_takes_everything(ada: InProcess) -> None:
    ada.api("POST", f"/minds/{MIND}/pause")
    ids = [say(ada, f"message {i}") for i in range(105)]
    ada.settle(MIND)
    assert events(ada, "cycle_started") == []
    status = ada.sup.actors[MIND].gate.status(ada.clock.now())
    assert (status.held, status.dropped) == (100, 5)  # the oldest five dropped from the delivery, and counted
    ada.api("POST", f"/minds/{MIND}/resume")
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["data"]["stimuli"] == 105  # dropped from the delivery, still taken: they are stored
    assert started["data"]["batch"] == 100 and started["data"]["more"] == 36
    assert started["parents"] == ids[-64:]
    assert episodes_of(ada, started["cycle_id"]) == ids


def test_a_70_stimulus_batch_names_its_newest_64_and_counts_the_rest(ada: InProcess) -> None:
    rule(ada, AMBIENT)
    ids = [say(ada, f"message {i}") for i in range(70)]
    ada.advance(2)
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert len(started["parents"]) == 64 and started["parents"] == ids[6:]
    assert (started["data"]["batch"], started["data"]["more"]) == (70, 6)
    assert started["causation_id"] == ids[-1]


def test_nothing_is_delivered_once_stop_begins_and_a_restart_takes_what_was_stored(tmp_path: Path) -> None:
    first = start_app(tmp_path)
    try:
        first.api("POST", "/minds", json={"name": MIND})
        first.settle(MIND)
        rule(first, AMBIENT)
        stored = say(first, "said just before the stop")

        async def begin_stop() -> None:
            first.sup.stopping = True  # as the daemon does first, before its HTTP server drains

        first.run(begin_stop())
        first.advance(5)  # the batch's quiet period ends after shutdown began
        first.settle(MIND)
        assert events(first, "cycle_started") == []
    finally:
        first.stop()
    second = start_app(tmp_path)  # as after a crash between storing and the turn
    try:
        second.settle(MIND)
        [started] = events(second, "cycle_started")
        assert started["parents"] == [stored] and started["data"]["wake"] == actor_module.BACKLOG
        assert started["cycle_id"] == f"{MIND}/1"
    finally:
        second.stop()


def test_a_restart_takes_every_untaken_stimulus_even_below_the_last_cycle(tmp_path: Path) -> None:
    """Taken is a set: a deferred stimulus older than the last cycle's parents is still found after a restart."""
    first = start_app(tmp_path)
    try:
        first.api("POST", "/minds", json={"name": MIND})
        rule(first, {"name": "lobby", "match": {"channel": "irc:#lobby"}, "behaviour": "defer"})
        first.api("POST", f"/minds/{MIND}/pause")
        deferred = say(first, "chatter", channel="irc:#lobby")
        say(first, "a question")
        first.settle(MIND)
    finally:
        first.stop()
    db = Store(tmp_path / "noema.db")
    try:
        from noemad.runtime.actor import pending_stimuli

        cycles, backlog = pending_stimuli(db.reader(), MIND)
        assert cycles == 0 and deferred in backlog and len(backlog) == 2
    finally:
        db.close()


def self_wake(app: InProcess, seconds: float, message: int) -> int:
    """Set the mind's self-wake as a turn's skip_reply does; the self_wake_set event's id."""
    now = app.clock.now()
    event = app.run(
        app.sup.store.writer.run(lambda db: gate_sleep.set_self_wake(db, MIND, at=now + seconds, message=message, now=now))
    )
    actor = app.sup.actors[MIND]
    app.run(_call(lambda: (actor.gate.set_self_wake(now + seconds, event.id), actor._arm())))
    return int(event.id)


def test_a_self_wake_runs_a_turn_with_nothing_new(ada: InProcess) -> None:
    asked = say(ada, "anyone?")
    ada.settle(MIND)
    cause = self_wake(ada, 30, asked)
    ada.advance(29)
    ada.settle(MIND)
    assert len(events(ada, "cycle_started")) == 1
    ada.advance(1)
    ada.settle(MIND)
    _, woke = events(ada, "cycle_started")
    assert woke["causation_id"] == cause and woke["parents"] == [] and woke["data"]["stimuli"] == 0


def test_a_turn_cancels_the_self_wake(ada: InProcess) -> None:
    asked = say(ada, "anyone?")
    ada.settle(MIND)
    self_wake(ada, 30, asked)
    say(ada, "me")
    ada.settle(MIND)
    assert len(events(ada, "self_wake_cancelled")) == 1
    ada.advance(60)
    ada.settle(MIND)
    assert len(events(ada, "cycle_started")) == 2  # the two messages' turns, no self-wake


def test_sleep_stores_without_waking_and_the_operator_wakes_it(ada: InProcess) -> None:
    now = ada.clock.now()
    ada.run(ada.sup.store.writer.run(lambda db: gate_sleep.sleep(db, MIND, until=now + 3600, note="quiet hours", actor="operator", now=now)))
    actor = ada.sup.actors[MIND]
    ada.run(_call(lambda: actor.slept(now + 3600, "quiet hours")))
    asleep = say(ada, "hello?")
    ada.settle(MIND)
    assert events(ada, "cycle_started") == []
    wake = say(ada, "wake up", author="operator")
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [asleep, wake] and started["causation_id"] == wake  # what it stored asleep is delivered
    assert episodes_of(ada, started["cycle_id"]) == [asleep, wake]
    assert len(events(ada, "mind_woke")) == 1
    store = ada.sup.store.reader()
    assert not actor.gate.sleeping(ada.clock.now()) and list_events(store, MIND, kinds=("mind_woke",))


# --- the mind's own tools, through the scripted respond model ------------------------------------

CONFIG = SCRIPTED_RESPOND


def with_script(tmp_path: Path, script: str) -> InProcess:
    (tmp_path / "script.toml").write_text(script)
    app = start_app(tmp_path, CONFIG.format(script=tmp_path / "script.toml"))
    assert app.api("POST", "/minds", json={"name": MIND}).status_code == 201
    return app


def test_skip_reply_wakes_the_mind_itself_later_and_it_answers_the_message_it_skipped(tmp_path: Path) -> None:
    app = with_script(tmp_path, '[respond]\nreplies = [{ tool = "skip_reply", input = { wake_in = 30 } }, "I am here."]\n')
    try:
        asked = say(app, "anyone?")
        app.settle(MIND)
        [skipped] = events(app, "reply_skipped")
        [set_] = events(app, "self_wake_set")
        assert set_["causation_id"] == asked and set_["data"]["message"] == asked
        assert events(app, "reply") == []
        app.advance(30)
        app.settle(MIND)
        _, woke = events(app, "cycle_started")
        assert woke["causation_id"] == set_["id"] and woke["data"]["stimuli"] == 0
        [reply] = events(app, "reply")
        assert reply["text"] == "I am here." and reply["causation_id"] == asked and reply["cycle_id"] == woke["cycle_id"]
        assert skipped["cycle_id"] != woke["cycle_id"]
    finally:
        app.stop()


def test_a_rule_the_mind_adds_holds_from_the_next_stimulus(tmp_path: Path) -> None:
    app = with_script(
        tmp_path,
        '[respond]\nreplies = [{ tool = "wake_add_rule", input = { name = "lobby", match = { channel = "irc:#lobby" },'
        ' behaviour = "defer" } }, "Noted.", "Hello."]\n',
    )
    try:
        say(app, "please ignore the lobby")
        app.settle(MIND)
        assert [e["text"] for e in events(app, "reply")] == ["Noted."]
        chatter = say(app, "chatter", channel="irc:#lobby")
        app.settle(MIND)
        assert len(events(app, "cycle_started")) == 1  # deferred by the mind's own rule
        status = app.sup.actors[MIND].gate.status(app.clock.now())
        assert [r.name for r in status.rules] == ["lobby"]
        say(app, "hi", channel="irc:#ops")
        app.settle(MIND)
        second = events(app, "cycle_started")[1]
        assert second["data"]["held_back"] == [{"verdict": "defer", "rule": "lobby", "stimuli": [chatter], "more": 0}]
    finally:
        app.stop()


def test_sleep_and_self_wake_survive_a_restart_and_the_sleep_end_takes_what_waited(tmp_path: Path) -> None:
    first = start_app(tmp_path)
    try:
        first.api("POST", "/minds", json={"name": MIND})
        asked = say(first, "anyone?")
        first.settle(MIND)
        self_wake(first, 600, asked)
        now = first.clock.now()
        first.run(first.sup.store.writer.run(lambda db: gate_sleep.sleep(db, MIND, until=now + 60, note=None, actor="operator", now=now)))
        first.run(_call(lambda: first.sup.actors[MIND].slept(now + 60, None)))
        waited = say(first, "while it sleeps")
        first.settle(MIND)
    finally:
        first.stop()
    second = start_app(tmp_path, start="2026-01-01T00:00:10Z")
    try:
        second.settle(MIND)
        assert len(events(second, "cycle_started")) == 1  # asleep: the stored message waits, no backlog turn
        second.advance(50)  # the sleep ends
        second.settle(MIND)
        _, woke = events(second, "cycle_started")
        assert episodes_of(second, woke["cycle_id"]) == [waited]
        assert len(events(second, "self_wake_cancelled")) == 1  # that turn cancelled the stored self-wake
        second.advance(600)
        second.settle(MIND)
        assert len(events(second, "cycle_started")) == 2
    finally:
        second.stop()


def test_a_stored_self_wake_fires_after_a_restart(tmp_path: Path) -> None:
    first = start_app(tmp_path)
    try:
        first.api("POST", "/minds", json={"name": MIND})
        asked = say(first, "anyone?")
        first.settle(MIND)
        cause = self_wake(first, 30, asked)
    finally:
        first.stop()
    second = start_app(tmp_path, start="2026-01-01T00:00:10Z")
    try:
        second.settle(MIND)
        assert len(events(second, "cycle_started")) == 1
        second.advance(20)
        second.settle(MIND)
        _, woke = events(second, "cycle_started")
        assert woke["causation_id"] == cause
    finally:
        second.stop()
    third = start_app(tmp_path, start="2026-01-01T00:01:00Z")
    try:
        third.settle(MIND)
        assert len(events(third, "cycle_started")) == 2  # a self-wake that fired is not stored any more
    finally:
        third.stop()
