"""Pausing a mind: stimuli stored, no turns, auxiliary model calls refused; resume takes the backlog."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from inprocess import InProcess, hold_writer, start_app
from noemad.runtime.actor import CATCH_UPS
from noemad.stimuli import Message


def kinds(engine: InProcess, mind: str) -> list[str]:
    return [e["kind"] for e in engine.api("GET", f"/minds/{mind}/events").json()["events"]]


def test_pause_stores_without_turns_and_resume_takes_one_turn_over_the_backlog(app: InProcess, mind: str) -> None:
    assert app.api("POST", f"/minds/{mind}/pause").json()["mode"] == "paused"
    first = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "one"}).json()
    second = app.api("POST", f"/minds/{mind}/events", json={"kind": "observation", "source": "s", "text": "two"}).json()
    changed = app.wait_for(mind, "mode_changed")
    assert changed["data"] == {"from": "idle", "to": "paused"} and changed["actor"] == "operator"
    status = app.api("GET", "/status").json()
    assert status["minds"] == [{"name": "ada", "events": 4, "turn_running": False, "paused": True, "retry": None}]
    assert app.api("POST", f"/minds/{mind}/pause").json()["mode"] == "paused"  # pausing again changes nothing
    assert kinds(app, mind) == ["mind_created", "mode_changed", "message", "observation"]

    assert app.api("POST", f"/minds/{mind}/resume").json()["mode"] == "idle"
    started = app.wait_for(mind, "cycle_started")
    assert started["parents"] == [first["id"], second["id"]]  # one turn over everything that waited
    app.wait_for(mind, "narrative_updated")
    assert kinds(app, mind) == [
        "mind_created", "mode_changed", "message", "observation", "mode_changed",
        "cycle_started", "memory_created", "memory_created", "attention", "cycle_completed", "narrative_updated",
    ]  # fmt: skip


def _paused_with_the_writer_held(app: InProcess, mind: str) -> tuple[int, threading.Event]:
    """Pause `mind`, store one message for it, then hold the writer with a job of its own: the message's id, and
    the event that lets the writer go."""
    app.api("POST", f"/minds/{mind}/pause")
    waiting = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "waited"}).json()
    return waiting["id"], hold_writer(app.sup.store.writer).release


def test_a_turn_takes_the_stimuli_still_being_stored_when_it_began(app: InProcess, mind: str) -> None:
    """Stimuli asked of the writer before a turn began are in it, not in a turn of their own once they commit."""
    waiting, hold = _paused_with_the_writer_held(app, mind)

    async def burst() -> list[int]:
        asked = [asyncio.ensure_future(app.sup.ingest(mind, Message(author="b", text=f"burst {i}"))) for i in range(3)]
        await asyncio.sleep(0)  # asked of the writer, which is busy
        app.sup.actors[mind].resume()  # the turn over `waiting` begins now (the actor's resume; the API's also writes a mode change)
        await asyncio.sleep(0)
        hold.set()
        return [(await a).id for a in asked]

    stored = app.run(burst())
    started = app.wait_for(mind, "cycle_started", waiting)
    assert started["data"]["stimuli"] == 4 and started["parents"] == [waiting, *stored]


def test_a_stimulus_stored_while_a_turn_waits_for_the_writer_goes_ahead_and_joins_it(app: InProcess, mind: str) -> None:
    """A stimulus is committed ahead of the turn's work queued before it (a client waits on it), and the turn takes it."""
    waiting, hold = _paused_with_the_writer_held(app, mind)

    async def late() -> int:
        app.sup.actors[mind].resume()  # the turn over `waiting` asks the writer first...
        for _ in range(3):
            await asyncio.sleep(0)
        asked = asyncio.ensure_future(app.sup.ingest(mind, Message(author="b", text="late")))  # ...and this, after it
        for _ in range(3):  # handed to the writer at the end of this turn of the loop, before the writer is let go
            await asyncio.sleep(0)
        hold.set()
        return (await asked).id

    stored = app.run(late())
    started = app.wait_for(mind, "cycle_started", waiting)
    assert started["parents"] == [waiting, stored] and started["id"] > stored


def test_a_turn_catches_up_again_while_stimuli_keep_arriving_and_at_most_catch_ups_times(app: InProcess, mind: str, monkeypatch: Any) -> None:
    """Under load a turn waits for the writer once more each time that brought the mind stimuli, so it takes them too."""
    writer = app.sup.store.writer
    real = writer.caught_up
    said: list[int] = []
    rounds: list[int] = []

    async def busy_catch_up() -> None:
        # Stimuli keep arriving: one is asked of the writer just before each catch-up, and commits ahead of it.
        rounds.append(len(rounds) + 1)
        asked = asyncio.ensure_future(app.sup.ingest(mind, Message(author="b", text=f"busy {len(rounds)}")))
        await asyncio.sleep(0)
        await real()
        said.append((await asked).id)

    app.api("POST", f"/minds/{mind}/pause")
    waiting = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "waited"}).json()["id"]
    monkeypatch.setattr(writer, "caught_up", busy_catch_up)  # read by the actor when a turn begins
    app.api("POST", f"/minds/{mind}/resume")
    started = app.wait_for(mind, "cycle_started", waiting)
    assert rounds == list(range(1, CATCH_UPS + 1))  # each round brought a stimulus; the last is the bound
    assert started["parents"] == [waiting, *said]
    monkeypatch.setattr(writer, "caught_up", real)
    app.wait_for(mind, "narrative_updated", started["id"])
    quiet = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "alone"}).json()["id"]
    assert app.wait_for(mind, "cycle_started", quiet)["parents"] == [quiet]


def test_pause_and_resume_through_the_cli(app: InProcess, mind: str) -> None:
    out = app.ctl("pause", mind)
    assert (out.returncode, out.stdout) == (0, "mind ada is paused (mode paused)\n")
    app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "one"})
    status = app.ctl_json("status")
    assert status["minds"] == [{"name": "ada", "events": 3, "turn_running": False, "paused": True, "retry": None}]
    assert "paused" in app.ctl("status").stdout
    assert app.ctl_json("pause", mind)["mode"] == "paused"  # pausing again changes nothing
    assert app.ctl("resume", mind).stdout == "mind ada is running again (mode idle)\n"
    assert app.wait_for(mind, "cycle_started")["kind"] == "cycle_started"


def test_a_pause_survives_a_restart(tmp_path: Path) -> None:
    first = start_app(tmp_path)
    try:
        first.api("POST", "/minds", json={"name": "ada"})
        assert first.api("POST", "/minds/ada/pause").json()["mode"] == "paused"
        first.api("POST", "/minds/ada/events", json={"kind": "message", "author": "a", "text": "while down"})
    finally:
        first.stop()
    second = start_app(tmp_path)
    try:
        assert second.api("GET", "/status").json()["minds"][0]["paused"] is True
        assert "cycle_started" not in kinds(second, "ada")
        second.api("POST", "/minds/ada/resume")
        assert second.wait_for("ada", "cycle_completed")["kind"] == "cycle_completed"
    finally:
        second.stop()


def test_pausing_an_unknown_mind_says_so(app: InProcess) -> None:
    out = app.ctl("pause", "zed")
    assert out.returncode == 4 and "no mind is named 'zed'" in out.stderr
