"""Each command family whose cases run in process, once through the real noemactl and a real noemad, on one daemon.

Their cases (refusals, wording, JSON keys, rendering) run noemactl's own code
in process (`app.ctl`, in test_goals, test_predictions, test_cognition,
test_gate_config, test_notifications, test_governance_daemon and test_events_cli); what those cannot prove is that the
installed noemactl sends each command over the socket and that noemad names
the socket's peer as the operator who stored it. One daemon for the module:
each case adds its own stimuli to `ada` and waits for its own turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import OPERATOR, Noemad, own_noemad
from test_notifications import predict_and_miss, wait_notification


@pytest.fixture(scope="module")
def daemon() -> Iterator[Noemad]:
    """One daemon with mind `ada` for the module."""
    with own_noemad() as running:
        assert running.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        yield running


def taken(daemon: Noemad, event: dict[str, Any]) -> dict[str, Any]:
    """Wait for the cycle that takes a stored stimulus; return its cycle_completed."""
    return daemon.wait_for("ada", "cycle_completed", since=event["id"])


def test_goal_and_goals(daemon: Noemad) -> None:
    said = daemon.ctl_json("goal", "ada", "ship the parser rewrite")
    assert said["kind"] == "goal" and said["actor"] == OPERATOR and said["data"] == {"title": "ship the parser rewrite"}
    taken(daemon, said)
    listed = daemon.ctl("goals", "ada")
    assert listed.returncode == 0 and "ship the parser rewrite" in listed.stdout, listed.stderr


def test_predict_outcome_and_predictions(daemon: Noemad) -> None:
    said = daemon.ctl_json("predict", "ada", "The deploy finishes cleanly", "--subject", "Deploy", "--confidence", "0.8", "--due", "2h")
    assert said["kind"] == "prediction" and said["actor"] == OPERATOR
    taken(daemon, said)
    [prediction] = [p for p in daemon.ctl_json("predictions", "ada")["predictions"] if p["subject"] == "deploy"]
    came = daemon.ctl_json("outcome", str(prediction["id"]), "--hit", "--observed", "took 4 minutes")
    assert came["kind"] == "outcome" and came["data"] == {"prediction": prediction["id"], "result": "hit", "observed": "took 4 minutes"}
    taken(daemon, came)
    human = daemon.ctl("predictions", "ada")
    assert human.returncode == 0 and f"#{prediction['id']}" in human.stdout and "took 4 minutes" in human.stdout


def test_remember_and_correct(daemon: Noemad) -> None:
    out = daemon.ctl("remember", "ada", "Alice prefers Go")
    assert out.returncode == 0 and out.stdout.startswith("remembered #"), out.stderr
    claim = {"kind": "observation", "source": "ci", "text": "green", "claim": {"proposition": "the socket build is green", "subject": "sockets"}}
    seen = daemon.api("POST", "/minds/ada/events", json=claim).json()
    taken(daemon, seen)
    [belief] = [b for b in daemon.api("GET", "/minds/ada/beliefs").json()["beliefs"] if b["subject"] == "sockets"]
    fixed = daemon.ctl("correct", str(belief["id"]), "--confidence", "0.9", "--reason", "I looked at the dashboard")
    assert fixed.returncode == 0, fixed.stderr
    sent = daemon.api("GET", "/minds/ada/events", params={"kind": "correction"}).json()["events"][-1]
    assert sent["actor"] == OPERATOR and sent["data"]["belief"] == belief["id"]


def test_say_and_observe_send_the_rule_fields(daemon: Noemad) -> None:
    said = daemon.ctl_json("say", "ada", "ping", "--dm", "--tag", "ops")
    assert (said["data"]["dm"], said["data"]["tags"], said["data"]["operator"]) == (True, ["ops"], OPERATOR)
    seen = daemon.ctl_json("observe", "ada", "green", "--source", "ci", "--tag", "build")
    assert seen["data"] == {"source": "ci", "tags": ["build"], "operator": OPERATOR}


def test_ack(daemon: Noemad) -> None:
    came = predict_and_miss(daemon, "ada", "the cache stays warm", 0.9)
    nid = wait_notification(daemon, "ada", came["id"])["data"]["notification"]
    out = daemon.ctl("ack", str(nid))
    assert out.returncode == 0 and out.stdout.startswith(f"acknowledged notification #{nid} (prediction_miss): prediction #"), out.stderr
    [acked] = [n for n in daemon.ctl_json("notifications", "ada", "--status", "acked")["notifications"] if n["id"] == nid]
    assert daemon.api("GET", f"/events/{acked['acked_event_id']}").json()["actor"] == OPERATOR


def test_usage(daemon: Noemad) -> None:
    out = daemon.ctl("usage", "--by", "role")
    assert out.returncode == 0, out.stderr


def test_retract(daemon: Noemad) -> None:
    """The real noemactl retracts over the socket (the command's other cases run in process, in test_events_cli)."""
    memory = daemon.ctl_json("remember", "ada", "the build server is in Oslo")["id"]
    out = daemon.ctl("retract", "ada", str(memory), "--reason", "it moved to Bergen")
    assert out.returncode == 0 and out.stdout.startswith(f"retracted memory #{memory}: the build server is in Oslo\n"), out.stderr
