"""A mind with a respond model replies, through the scripted provider: in process (noemactl too), and on the real daemon for reloads."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SCRIPTED_RESPOND, Noemad, start_noemad
from inprocess import InProcess, scripted_app

SCRIPT = """
[[respond.rules]]
match = "(?i)weather"
text = "It is sunny."

[respond]
default = "Noted."
"""

CONFIG = SCRIPTED_RESPOND


HOLD_SCRIPT = """
[respond]
replies = [{ fault = "rate_limited", retry_after = 30 }, "Noted."]
"""


@pytest.fixture
def talker(place: Path, request: pytest.FixtureRequest) -> Iterator[Noemad]:
    home = place / "home"
    home.mkdir()
    (home / "script.toml").write_text(getattr(request, "param", SCRIPT))
    (home / "noemad.toml").write_text(CONFIG.format(script=home / "script.toml"))
    daemon = start_noemad(home, place / "s.sock")
    assert daemon.api("POST", "/minds", json={"name": "ada", "settings": {"persona": "You are Ada."}}).status_code == 201
    yield daemon
    daemon.stop()
    daemon.notify.close()


@pytest.fixture
def engine(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[InProcess]:
    """The in-process twin of `talker`: the same script and config, the engine and API in this process."""
    with scripted_app(tmp_path, getattr(request, "param", SCRIPT), CONFIG, {"persona": "You are Ada."}) as app:
        yield app


def say(noemad: Noemad | InProcess, text: str) -> dict:
    resp = noemad.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "channel": "irc:#ops", "text": text})
    assert resp.status_code == 201
    return resp.json()


def test_a_reply_is_caused_by_the_message_and_cites_its_model_call(engine: InProcess) -> None:
    message = say(engine, "What is the weather?")
    reply = engine.wait_for("ada", "reply")
    assert reply["text"] == "It is sunny."
    assert reply["causation_id"] == message["id"] and reply["channel"] == "irc:#ops"
    assert reply["actor"] == "model:respond"
    [ref] = reply["refs"]
    assert ref["type"] == "model_call"
    chain = engine.api("GET", f"/events/{reply['id']}/chain").json()
    node = next(n for n in chain["nodes"] if n["id"] == reply["id"])
    [call] = node["model_calls"]
    assert (call["id"], call["role"], call["model"], call["outcome"], call["provider"]) == (
        ref["id"], "respond", "claude-haiku-5-5", "ok", "scripted"
    )
    assert call["input_tokens"] + call["cache_write_tokens"] > 0 and call["output_tokens"] > 0


def test_usage_and_the_timeline_show_the_model_call(engine: InProcess) -> None:
    say(engine, "hello")
    reply = engine.wait_for("ada", "reply")
    # The timeline shows the call as an artefact on the reply's node.
    tree = engine.ctl("timeline", str(reply["id"]))
    assert tree.returncode == 0 and "respond" in tree.stdout and "claude-haiku-5-5" in tree.stdout
    usage = engine.ctl_json("usage", "ada")
    assert usage["by"] == "role" and usage["mind"] == "ada"
    [row] = usage["rows"]
    assert (row["role"], row["calls"], row["ok"], row["failed"], row["refused"]) == ("respond", 1, 1, 0, 0)
    assert row["cost_usd"] > 0
    by_model = engine.ctl_json("usage", "--by", "model", "--since", "1h")
    assert [r["model"] for r in by_model["rows"]] == ["claude-haiku-5-5"]
    assert engine.ctl_json("usage", "--since", "2030-01-01")["rows"] == []
    human = engine.ctl("usage", "ada")
    assert human.returncode == 0 and "respond" in human.stdout and "HIT RATE" in human.stdout
    bad = engine.ctl("usage", "--since", "last tuesday")
    assert bad.returncode == 2 and "neither an ISO date" in bad.stderr
    assert engine.ctl("usage", "--by", "colour").returncode == 2
    assert engine.ctl("usage", "zed").returncode == 4


@pytest.mark.parametrize("engine", [HOLD_SCRIPT], indirect=True)
def test_a_stated_wait_holds_the_model_and_shows_in_status(engine: InProcess) -> None:
    message = say(engine, "are you busy?")
    failed = engine.wait_for("ada", "reply_failed")
    assert failed["causation_id"] == message["id"]
    assert failed["data"]["category"] == "rate_limited" and failed["data"]["retry_after"] == 30
    holds = engine.api("GET", "/status").json()["models"]["holds"]
    assert [(h["model"], h["reason"], h["until"]) for h in holds] == [
        ("claude-haiku-5-5", "rate_limited", "2026-01-01T00:00:30.000Z")
    ]
    # A respond call waits the hold out on the engine's clock, then replies.
    say(engine, "hello again")
    engine.advance(31)
    reply = engine.wait_for("ada", "reply")
    assert reply["text"] == "Noted."
    assert engine.api("GET", "/status").json()["models"]["holds"] == []


@pytest.mark.parametrize("engine", [HOLD_SCRIPT], indirect=True)
def test_status_shows_a_hold(engine: InProcess) -> None:
    say(engine, "are you busy?")
    engine.wait_for("ada", "reply_failed")
    status = engine.ctl("status")
    assert "hold claude-haiku-5-5 until 2026-01-01 00:00:30" in status.stdout


def test_a_changed_script_is_read_again_on_reload_and_a_broken_one_refused(talker: Noemad) -> None:
    (talker.home / "script.toml").write_text("[respond]\ndefault = 'New script.'\n")
    talker.proc.send_signal(signal.SIGHUP)
    talker.wait_notify("STATUS=config reloaded")
    say(talker, "anything")
    assert talker.wait_for("ada", "reply")["text"] == "New script."
    talker.messages.clear()
    (talker.home / "script.toml").write_text("[respond]\ndefault = { fault = 'meteor' }\n")
    talker.proc.send_signal(signal.SIGHUP)
    refused = talker.wait_notify("STATUS=config reload refused")
    assert "meteor" in refused and "the running config is kept" in refused
    # The last good script still answers.
    message = say(talker, "still there?")
    reply = talker.wait_for("ada", "reply", since=message["id"])
    assert reply["text"] == "New script."


def test_without_a_model_the_mind_records_and_does_not_reply(app: InProcess, mind: str) -> None:
    app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "hi"})
    app.wait_for(mind, "cycle_completed")
    app.settle(mind)  # a reply would come after the cycle: wait for the whole turn
    kinds = [e["kind"] for e in app.api("GET", f"/minds/{mind}/events").json()["events"]]
    assert "reply" not in kinds and "reply_failed" not in kinds
    assert app.api("GET", "/usage").json()["rows"] == []
