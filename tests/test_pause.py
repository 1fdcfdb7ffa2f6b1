"""Pausing a mind: stimuli stored, no turns, auxiliary model calls refused; resume takes the backlog."""

from __future__ import annotations

from pathlib import Path

from conftest import Noemad, start_noemad


def kinds(noemad: Noemad, mind: str) -> list[str]:
    return [e["kind"] for e in noemad.api("GET", f"/minds/{mind}/events").json()["events"]]


def test_pause_stores_without_turns_and_resume_takes_one_turn_over_the_backlog(noemad: Noemad, mind: str) -> None:
    out = noemad.ctl("pause", mind)
    assert (out.returncode, out.stdout) == (0, "mind ada is paused (mode paused)\n")
    first = noemad.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "one"}).json()
    second = noemad.api("POST", f"/minds/{mind}/events", json={"kind": "observation", "source": "s", "text": "two"}).json()
    changed = noemad.wait_for(mind, "mode_changed")
    assert changed["data"] == {"from": "idle", "to": "paused"} and changed["actor"] == "operator"
    status = noemad.ctl_json("status")
    assert status["minds"] == [{"name": "ada", "events": 4, "turn_running": False, "paused": True}]
    assert "paused" in noemad.ctl("status").stdout
    assert noemad.ctl_json("pause", mind)["mode"] == "paused"  # pausing again changes nothing
    assert kinds(noemad, mind) == ["mind_created", "mode_changed", "message", "observation"]

    assert noemad.ctl("resume", mind).stdout == "mind ada is running again (mode idle)\n"
    started = noemad.wait_for(mind, "cycle_started")
    assert started["parents"] == [first["id"], second["id"]]  # one turn over everything that waited
    noemad.wait_for(mind, "narrative_updated")
    assert kinds(noemad, mind) == [
        "mind_created", "mode_changed", "message", "observation", "mode_changed",
        "cycle_started", "memory_created", "memory_created", "attention", "cycle_completed", "narrative_updated",
    ]  # fmt: skip


def test_a_pause_survives_a_restart(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    first = start_noemad(home, place / "s.sock")
    first.api("POST", "/minds", json={"name": "ada"})
    assert first.api("POST", "/minds/ada/pause").json()["mode"] == "paused"
    first.api("POST", "/minds/ada/events", json={"kind": "message", "author": "a", "text": "while down"})
    first.stop()
    first.notify.close()
    second = start_noemad(home, place / "s.sock")
    try:
        assert second.api("GET", "/status").json()["minds"][0]["paused"] is True
        assert "cycle_started" not in kinds(second, "ada")
        second.api("POST", "/minds/ada/resume")
        assert second.wait_for("ada", "cycle_completed")["kind"] == "cycle_completed"
    finally:
        second.stop()


def test_pausing_an_unknown_mind_says_so(noemad: Noemad) -> None:
    out = noemad.ctl("pause", "zed")
    assert out.returncode == 1 and "no mind is named 'zed'" in out.stderr
