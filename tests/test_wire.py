"""The JSON the API answers for each wire object stays the same: names, nesting and values.

One scenario on the engine in process (manual clock, so times and ids are fixed)
touches every object the API shows — minds, events, beliefs with evidence,
memories, goals, predictions, notifications, calibration, jobs, schedules,
the causal walk, the narrative, a rejected generalisation — and compares each
answer with `tests/wire/answers.json`, which was recorded from the
hand-written serialisers before the records' dataclasses replaced them. A
change to a wire object's shape fails here with the path of the first
difference. Key order is not compared: JSON objects are unordered, and a
derived value (`support`, `misses`, `truncated`…) now follows the fields.
When an answer is meant to change, record it anew with `NOEMA_WIRE_RECORD=1`
and say why in the commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conftest import OPERATOR
from inprocess import ME, InProcess

ANSWERS = Path(__file__).parent / "wire" / "answers.json"


def first_difference(want: Any, got: Any, path: str = "$") -> str | None:
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(want) != sorted(got):
            return f"{path}: keys {sorted(got)}, recorded {sorted(want)}"
        for key in want:
            if (found := first_difference(want[key], got[key], f"{path}.{key}")) is not None:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path}: {len(got)} items, recorded {len(want)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if (found := first_difference(w, g, f"{path}[{i}]")) is not None:
                return found
        return None
    if type(want) is not type(got) or want != got:
        return f"{path}: {got!r}, recorded {want!r}"
    return None


def scenario(engine: InProcess) -> dict[str, Any]:
    """Drive one mind through every wire object; the answers by name."""
    out: dict[str, Any] = {}

    def call(name: str, method: str, path: str, expect: int = 200, **kwargs: Any) -> Any:
        resp = engine.api(method, path, **kwargs)
        assert resp.status_code == expect, resp.text
        out[name] = resp.json()
        return out[name]

    def say(body: dict[str, Any]) -> dict[str, Any]:
        resp = engine.api("POST", "/minds/ada/events", json=body)
        assert resp.status_code == 201, resp.text
        return settled(resp.json())

    def settled(stored: dict[str, Any]) -> dict[str, Any]:
        # Each stimulus's turn ends (narrative_updated is its last event) before the next is sent: a stimulus
        # sent during a turn would land between its events, or join the next turn's batch, as timing falls.
        engine.wait_for("ada", "narrative_updated", since=stored["id"])
        return stored

    call("mind_created", "POST", "/minds", 201, json={"name": "ada", "settings": {"notify_cooldown": "1h"}})
    settled(call("message", "POST", "/minds/ada/events", 201, json={"kind": "message", "author": "alice", "text": "the build is green", "channel": "cli"}))
    settled(call("observation", "POST", "/minds/ada/events", 201, json={
        "kind": "observation", "source": "ci", "text": "build 41 passed", "data": {"build": 41},
        "claim": {"proposition": "the build is green", "subject": "build"},
    }))
    say({"kind": "assertion", "source": "bob", "claim": {"proposition": "the build is green", "subject": "build", "stance": "contradicts"}})
    say({"kind": "goal", "title": "ship the parser rewrite"})
    say({"kind": "prediction", "proposition": "the deploy finishes", "subject": "deploy", "confidence": 0.9, "due": "2h"})
    for text in ("the parser rewrite ships on friday", "the parser rewrite needs review", "the parser rewrite passes tests"):
        say({"kind": "message", "author": "alice", "text": text})
    engine.advance(3 * 3600)
    say({"kind": "message", "author": "alice", "text": "later"})

    call("events", "GET", "/minds/ada/events", params={"limit": 1000})
    call("event", "GET", f"/events/{out['observation']['id']}")
    call("chain", "GET", f"/events/{out['message']['id']}/chain")
    call("chain_cut", "GET", f"/events/{out['observation']['id']}/chain", params={"back": 1, "forward": 1, "limit": 5})
    beliefs = call("beliefs", "GET", "/minds/ada/beliefs")
    call("belief", "GET", f"/beliefs/{beliefs['beliefs'][0]['id']}")
    goals = call("goals", "GET", "/minds/ada/goals")
    call("goal", "GET", f"/goals/{goals['goals'][0]['id']}")
    predictions = call("predictions", "GET", "/minds/ada/predictions")
    call("prediction_overdue", "GET", f"/predictions/{predictions['predictions'][0]['id']}")
    say({"kind": "outcome", "prediction": predictions["predictions"][0]["id"], "result": "miss", "observed": "rolled back"})
    say({"kind": "goal", "goal": goals["goals"][0]["id"], "status": "completed", "note": "done"})
    call("prediction_resolved", "GET", f"/predictions/{predictions['predictions'][0]['id']}")
    call("calibration", "GET", "/minds/ada/calibration")
    notes = call("notifications", "GET", "/minds/ada/notifications")
    call("notification_acked", "POST", f"/notifications/{notes['notifications'][-1]['id']}/ack")
    call("memory_created", "POST", "/minds/ada/memories", 201, json={"kind": "procedural", "text": "run the tests before a deploy"})
    call("memories", "GET", "/minds/ada/memories")
    call("memories_found", "GET", "/minds/ada/memories", params={"search": "parser rewrite"})
    call("memory", "GET", f"/memories/{out['memory_created']['id']}")
    for kind in ("consolidation", "reflection"):
        job = call(f"{kind}_started", "POST", "/minds/ada/jobs", 202, json={"kind": kind})
        finished(engine, job["id"])
        call(kind, "GET", f"/jobs/{job['id']}")
    call("jobs", "GET", "/jobs", params={"mind": "ada"})
    call("schedule_paused", "PUT", "/schedules/reflection", json={"paused": True})
    call("schedules", "GET", "/schedules")
    call("narrative", "GET", "/minds/ada/narrative")
    call("usage", "GET", "/usage", params={"by": "mind"})
    call("trust", "PUT", "/minds/ada/trust/bob", json={"value": 0.25})
    call("paused", "POST", "/minds/ada/pause")
    call("resumed", "POST", "/minds/ada/resume")
    call("minds", "GET", "/minds")
    overview = engine.api("GET", "/minds/ada").json()
    out["overview"] = {k: v for k, v in overview.items() if k != "turn_running"}  # a race with the resumed turn
    generalised = [m for m in engine.api("GET", "/minds/ada/memories", params={"kind": "semantic"}).json()["memories"] if m["derived_from"]]
    if generalised:
        call("rejected", "POST", f"/memories/{generalised[0]['id']}/reject", json={"reason": "too broad"})
    status = engine.api("GET", "/status").json()
    out["status_shape"] = ordered_keys(status)
    return out


def finished(engine: InProcess, job: int) -> None:
    """Follow the mind's events until job `job` hands the mind back (its closing mode_changed)."""
    since = 0
    while True:
        event = engine.wait_for("ada", "mode_changed", since=since)
        if event["data"].get("job") == job and event["data"]["to"] == "idle":
            return
        since = event["id"]


def ordered_keys(value: Any) -> Any:
    """The key names of `value`, nested, in order (for answers whose values vary from run to run)."""
    if isinstance(value, dict):
        return {k: ordered_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [ordered_keys(v) for v in value[:1]]
    return None


def as_any_user(value: Any) -> Any:
    """`value` with this user's operator actor (`operator:alice`) written `operator:USER`, so the record holds for any user.

    A memory's importance counts the words of its text: a login name of one
    plain word (root, alice, runner) scores as USER does; one with a digit would not.
    """
    if isinstance(value, str):
        return value.replace(OPERATOR, "operator:USER")
    if isinstance(value, list):
        return [as_any_user(v) for v in value]
    if isinstance(value, dict):
        return {as_any_user(k): as_any_user(v) for k, v in value.items()}
    return value


def test_every_wire_object_answers_as_recorded(app: InProcess) -> None:
    app.peer = ME  # the operator a real socket names, as the answers were recorded
    got = as_any_user(scenario(app))
    if os.environ.get("NOEMA_WIRE_RECORD"):
        ANSWERS.parent.mkdir(exist_ok=True)
        ANSWERS.write_text(json.dumps(got, indent=1) + "\n")
    want = json.loads(ANSWERS.read_text())
    assert list(got) == list(want), "the scenario's answers changed; record them anew if meant"
    for name in want:
        assert (found := first_difference(want[name], got[name], name)) is None, found


def test_the_cli_prints_the_same_objects(app: InProcess) -> None:
    """`noemactl --json` prints what the API answers, unchanged."""
    created = app.ctl_json("mind", "create", "ada")
    assert created == app.api("GET", "/minds").json()["minds"][0]
    said = app.ctl_json("say", "ada", "hello")
    assert said["gate"]["verdict"] == "wake"  # the ingest answer: the stored event, with the gate's decision beside it
    assert {k: v for k, v in said.items() if k != "gate"} == app.api("GET", f"/events/{said['id']}").json()
    app.wait_for("ada", "cycle_completed")
    chain = app.ctl_json("timeline", str(said["id"]))
    assert chain == app.api("GET", f"/events/{said['id']}/chain").json()


def test_the_document_describes_the_wire_objects_fields(app: InProcess) -> None:
    """The docstring under a record's field is its description in the OpenAPI document, inherited ones included."""
    schemas = app.api("GET", "/openapi.json").json()["components"]["schemas"]
    described = {
        "Node": ["hop", "model_calls"],
        "Edge": ["via"],
        "Truncation": ["by"],
        "Goal": ["event_id"],
        "PredictionOut": ["belief_id", "event_id", "resolved_event_id", "overdue"],
        "Notification": ["key", "values", "count", "updated_at", "event_id", "last_event_id", "acked_event_id"],
        "Calibration": ["gap", "brier", "rule"],
        "Job": ["progress", "stage", "inputs", "outputs", "model_calls"],
        "BeliefOut": ["events", "support", "contradict"],
        "MindOverview": ["settings_problems", "settings_in_force", "warnings"],
    }
    missing = [f"{name}.{field}" for name, fields in described.items() for field in fields
               if not schemas[name]["properties"][field].get("description")]
    assert missing == []
    assert schemas["ListedBelief"]["properties"]["evidence"] == {"title": "Evidence", "type": "null"}
    assert "from" in schemas["Edge"]["properties"] and "source" not in schemas["Edge"]["properties"]
