"""The model calls of a turn an operator's stimulus woke are recorded as the operator's, as a job's are.

In process there is no socket, so the operator is the bare `operator` (a
real noemad names `operator:<user>`: tests/test_operator.py). A message's
author is who said it, not an operator: its turn's calls name nobody.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND
from inprocess import InProcess, start_app

CONFIG = SCRIPTED_RESPOND + """
[models.narrate]
model = "claude-haiku-5-5"

[gate]
mind_tools = false
"""

SCRIPT = """
[narrate]
default = "I am Ada, and I keep track of what I am told."

[respond]
default = "Noted."
"""


@pytest.fixture
def app(tmp_path: Path) -> Iterator[InProcess]:
    (tmp_path / "script.toml").write_text(SCRIPT)
    engine = start_app(tmp_path, CONFIG.format(script=tmp_path / "script.toml"))
    # narrative_llm: every turn that changes the narrative asks the narrate model to reword it.
    assert engine.api("POST", "/minds", json={"name": "ada", "settings": {"narrative_llm": True}}).status_code == 201
    yield engine
    engine.stop()


def turn_calls(app: InProcess, stimulus: dict[str, Any]) -> list[dict[str, Any]]:
    """The model calls the turn that took `stimulus` made, as the timeline shows them."""
    app.wait_for("ada", "cycle_completed", stimulus["id"] - 1)
    app.settle("ada")
    events = app.api("GET", f"/minds/ada/events?since={stimulus['id']}").json()["events"]
    calls = []
    for event in events:
        chain = app.api("GET", f"/events/{event['id']}/chain", params={"back": 0, "forward": 0}).json()
        calls += [c for n in chain["nodes"] if n["id"] == event["id"] for c in n["model_calls"]]
    return calls


def stimulus(app: InProcess, body: dict[str, Any]) -> dict[str, Any]:
    resp = app.api("POST", "/minds/ada/events", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def test_a_correction_s_turn_records_its_calls_as_the_operator_s(app: InProcess) -> None:
    seen = stimulus(app, {"kind": "observation", "source": "ci", "text": "the build is green",
                          "claim": {"proposition": "the build is green", "subject": "build"}})
    by_source = turn_calls(app, seen)
    assert by_source and {c["actor"] for c in by_source} == {None}  # a sensor's stimulus: the mind's own calls
    [belief] = app.api("GET", "/minds/ada/beliefs").json()["beliefs"]
    corrected = stimulus(app, {"kind": "correction", "belief": belief["id"], "reason": "the build broke at noon", "status": "rejected"})
    assert corrected["actor"] == "operator"
    calls = turn_calls(app, corrected)
    assert calls and {c["role"] for c in calls} == {"narrate"}
    assert {c["actor"] for c in calls} == {"operator"}


def test_an_operator_s_goal_names_them_and_a_message_after_it_does_not(app: InProcess) -> None:
    goal = stimulus(app, {"kind": "goal", "title": "ship the release"})
    assert {c["actor"] for c in turn_calls(app, goal)} == {"operator"}
    said = stimulus(app, {"kind": "message", "author": "alice", "channel": "irc:#ops", "text": "how is the release?"})
    calls = turn_calls(app, said)
    assert "respond" in {c["role"] for c in calls}
    assert {c["actor"] for c in calls} == {None}  # alice is no operator, and the goal's turn is over
