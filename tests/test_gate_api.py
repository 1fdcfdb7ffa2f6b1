"""The gate's API in process: wake rules, the probe table, refusals, gate status, sleep and wake.

Each route is called as a client would; a refusal is problem+json with the
one validator's sentence; every answer validates against the OpenAPI document.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from inprocess import InProcess, start_app
from test_openapi import check

PROBLEM = "application/problem+json"
DMS = {"name": "dms", "match": {"flags": ["dm"]}, "behaviour": {"always": {}}}
AMBIENT = {"name": "ambient", "match": {"kinds": ["message"]}, "behaviour": {"debounce": {"ms": 2000}}}
MUTE = {"name": "mute", "match": {}, "behaviour": "defer"}


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The OpenAPI document, read once: it is the code's, the same from every engine, and slow to build."""
    engine = start_app(tmp_path_factory.mktemp("doc"))
    try:
        return engine.api("GET", "/openapi.json").json()
    finally:
        engine.stop()


@pytest.fixture
def call(app: InProcess, doc: dict[str, Any]) -> Any:
    """Call a route, check its status, and check the answer against the document."""

    def call(method: str, template: str, path: str, expect: int, **kwargs: Any) -> Any:
        resp = app.api(method, path, **kwargs)
        assert resp.status_code == expect, resp.text
        check(doc, method, template, expect, resp.headers["content-type"].split(";")[0], resp.json())
        if expect >= 400:
            assert resp.headers["content-type"].startswith(PROBLEM)
        return resp.json()

    return call


RULES = "/minds/{mind}/rules"
RULE = "/minds/{mind}/rules/{name}"


def test_a_new_mind_has_no_rules_and_wakes_for_everything(app: InProcess, mind: str, call: Any) -> None:
    got = call("GET", RULES, "/minds/ada/rules", 200)
    assert got == {"mind": "ada", "rules": [], "default": {"always": {}}, "errors": [], "notes": [], "warnings": []}


def test_adding_a_rule_answers_the_change_with_its_probe_table(app: InProcess, mind: str, call: Any) -> None:
    added = call("POST", RULES, "/minds/ada/rules", 201, json={"rule": AMBIENT})
    assert (added["action"], added["rule"], added["position"]) == ("add", "ambient", 1)
    assert [r["name"] for r in added["rules"]] == ["ambient"]
    assert added["rules"][0]["behaviour"] == {"debounce": {"ms": 2000}}
    assert added["rules"][0]["match"]["kinds"] == ["message"]  # the full shape, every match field present
    assert added["rules"][0]["passthrough"] is False and added["rules"][0]["resets"] == []
    assert len(added["probes"]) == 6  # a DM, a mention, a reply, ambient human talk, ambient bot talk, an observation
    *messages, observation = added["probes"]
    assert all("debounce" in p["after"] and p["changed"] for p in messages), messages
    assert not observation["changed"] and observation["before"] == observation["after"]
    event = app.api("GET", f"/events/{added['event']}").json()
    assert event["kind"] == "gate_rules_changed" and event["actor"] == "operator" and event["mind"] == "ada"
    # A second rule goes last unless told where.
    first = call("POST", RULES, "/minds/ada/rules", 201, json={"rule": DMS, "position": 1})
    assert first["position"] == 1 and [r["name"] for r in first["rules"]] == ["dms", "ambient"]
    assert first["probes"][0]["before"] != first["probes"][0]["after"]  # a DM now wakes at once
    assert "dms" in first["probes"][0]["after"]


def test_a_rule_of_bad_shape_is_refused_with_the_validators_sentence(app: InProcess, mind: str, call: Any) -> None:
    two = {"name": "x", "match": {}, "behaviour": {"always": {}, "defer": {}}}
    refused = call("POST", RULES, "/minds/ada/rules", 422, json={"rule": two})
    assert "exactly one behaviour" in refused["detail"]
    through = {"name": "x", "match": {}, "behaviour": "always", "passthrough": True}
    assert "passthrough" in call("POST", RULES, "/minds/ada/rules", 422, json={"rule": through})["detail"]
    backtracking = {"name": "x", "match": {"text": "(a)\\1", "regex": True}, "behaviour": "always"}
    assert "RE2" in call("POST", RULES, "/minds/ada/rules", 422, json={"rule": backtracking})["detail"]
    call("POST", RULES, "/minds/ada/rules", 422, json={"rule": DMS, "position": 0})
    call("POST", RULES, "/minds/ada/rules", 422, json={"rule": DMS, "extra": 1})
    assert call("GET", RULES, "/minds/ada/rules", 200)["rules"] == []  # nothing was stored
    assert app.api("GET", "/minds/ada/events", params={"kind": "gate_rules_changed"}).json()["events"] == []


def test_a_bound_out_of_range_is_read_at_its_nearest_value_with_a_note(app: InProcess, mind: str, call: Any) -> None:
    fast = {"name": "fast", "match": {}, "behaviour": {"debounce": {"ms": 5}}}
    added = call("POST", RULES, "/minds/ada/rules", 201, json={"rule": fast})
    assert added["rules"][0]["behaviour"] == {"debounce": {"ms": 100}}
    assert added["notes"] and "100" in added["notes"][0]


def test_unknown_minds_and_rules_and_duplicate_names(app: InProcess, mind: str, call: Any) -> None:
    call("GET", RULES, "/minds/zed/rules", 404)
    call("POST", RULES, "/minds/zed/rules", 404, json={"rule": DMS})
    call("POST", RULES, "/minds/ada/rules", 201, json={"rule": DMS})
    assert "dms" in call("POST", RULES, "/minds/ada/rules", 409, json={"rule": DMS})["detail"]
    assert "nope" in call("GET", RULE, "/minds/ada/rules/nope", 404)["detail"]
    call("DELETE", RULE, "/minds/ada/rules/nope", 404)
    call("POST", RULE + "/move", "/minds/ada/rules/nope/move", 404, json={"to": 1})
    call("GET", "/minds/{mind}/gate", "/minds/zed/gate", 404)
    call("POST", "/minds/{mind}/sleep", "/minds/zed/sleep", 404, json={"for": "30m"})


def test_names_a_url_cannot_carry_are_refused_and_any_stored_one_can_still_be_removed(app: InProcess, mind: str, call: Any) -> None:
    for name in (".", "..", "default"):
        refused = call("POST", RULES, "/minds/ada/rules", 422, json={"rule": {**DMS, "name": name}})
        assert f"{name!r} cannot name a rule" in refused["detail"]
    # As an older noemad let one be stored: it is left out of the gate, and its address (dots encoded) reaches it.
    with sqlite3.connect(app.paths.db_file) as conn:
        conn.execute(
            "INSERT INTO gate_rules (mind, name, position, body, notes) VALUES ('ada', '..', 0, ?, '[]')",
            [json.dumps({**DMS, "name": ".."})],
        )
    listed = call("GET", RULES, "/minds/ada/rules", 200)
    assert listed["rules"] == [] and "(noemactl rules rm ada ..)" in listed["errors"][0]
    assert "no wake rule named '..'" in call("GET", RULE, "/minds/ada/rules/%2E%2E", 404)["detail"]
    assert call("POST", RULE + "/move", "/minds/ada/rules/%2E%2E/move", 200, json={"to": 1})["rule"] == ".."
    removed = call("DELETE", RULE, "/minds/ada/rules/%2E%2E", 200)
    assert removed["rule"] == ".." and call("GET", RULES, "/minds/ada/rules", 200)["errors"] == []
    assert call("GET", "/minds/{mind}", "/minds/ada", 200)["name"] == "ada"  # the mind is untouched


def test_show_move_remove_and_default(app: InProcess, mind: str, call: Any) -> None:
    for rule in (DMS, AMBIENT, MUTE):
        call("POST", RULES, "/minds/ada/rules", 201, json={"rule": rule})
    shown = call("GET", RULE, "/minds/ada/rules/ambient", 200)
    assert (shown["position"], shown["of"], shown["rule"]["name"]) == (2, 3, "ambient")
    said = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()
    state = call("GET", RULE, "/minds/ada/rules/ambient", 200)["state"]
    assert (state["matches"], state["last_match"], state["pending"]) == (1, said["at"], 1)
    moved = call("POST", RULE + "/move", "/minds/ada/rules/mute/move", 200, json={"to": 1})
    assert [r["name"] for r in moved["rules"]] == ["mute", "dms", "ambient"]
    assert moved["position"] == 1
    assert moved["warnings"], "a catch-all defer ahead of the DM rule swallows DMs"
    dm = moved["probes"][0]
    assert dm["changed"] and "defer" in dm["after"] and "mute" in dm["after"]
    removed = call("DELETE", RULE, "/minds/ada/rules/mute", 200)
    assert removed["position"] is None and [r["name"] for r in removed["rules"]] == ["dms", "ambient"]
    assert removed["warnings"] == []
    default = call("PUT", "/minds/{mind}/rules/default", "/minds/ada/rules/default", 200, json={"behaviour": "defer"})
    assert default["default"] == {"defer": {}} and default["action"] == "default"
    refused = call("PUT", "/minds/{mind}/rules/default", "/minds/ada/rules/default", 422, json={"behaviour": "sometimes"})
    assert "not a behaviour" in refused["detail"]
    kinds = [e["data"].get("action") for e in app.api("GET", "/minds/ada/events", params={"kind": "gate_rules_changed"}).json()["events"]]
    assert kinds == ["add", "add", "add", "move", "remove", "default"]


def test_two_hundred_rules_work(app: InProcess, mind: str, call: Any) -> None:
    for i in range(200):
        rule = {"name": f"r{i:03d}", "match": {"text": f"topic{i}"}, "behaviour": "defer" if i % 2 else "always"}
        assert app.api("POST", "/minds/ada/rules", json={"rule": rule}).status_code == 201
    listed = call("GET", RULES, "/minds/ada/rules", 200)
    assert [r["name"] for r in listed["rules"]] == [f"r{i:03d}" for i in range(200)]
    status = call("GET", "/minds/{mind}/gate", "/minds/ada/gate", 200)
    assert len(status["rules"]) == 200
    said = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "about topic3"}).json()
    app.settle("ada")
    status = app.api("GET", "/minds/ada/gate").json()
    assert status["rules"][3]["matches"] == 1 and status["rules"][3]["last_match"] == said["at"]


def test_gate_status_and_the_overview(app: InProcess, mind: str, call: Any) -> None:
    call("POST", RULES, "/minds/ada/rules", 201, json={"rule": AMBIENT})
    assert app.api("POST", "/minds", json={"name": "bo"}).status_code == 201
    app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hello"})
    status = call("GET", "/minds/{mind}/gate", "/minds/ada/gate", 200)
    assert status["mind"] == "ada" and status["default"] == {"always": {}}
    [ambient] = status["rules"]
    assert ambient["name"] == "ambient" and ambient["matches"] == 1 and ambient["pending"] == 1
    assert ambient["next_delivery"] == "2026-01-01T00:00:02.000Z"
    assert status["upcoming"][0]["at"] == "2026-01-01T00:00:02.000Z" and status["upcoming"][0]["rule"] == "ambient"
    overview = call("GET", "/gate", "/gate", 200)
    assert [m["mind"] for m in overview["minds"]] == ["ada", "bo"]


def test_sleep_and_wake(app: InProcess, mind: str, call: Any) -> None:
    slept = call("POST", "/minds/{mind}/sleep", "/minds/ada/sleep", 200, json={"for": "30m", "note": "night"})
    assert slept["sleeping"] is True and slept["until"] == "2026-01-01T00:30:00.000Z" and slept["note"] == "night"
    assert "operator" in slept["privileged"]
    event = app.api("GET", f"/events/{slept['event']}").json()
    assert event["kind"] == "mind_slept"
    status = app.api("GET", "/minds/ada/gate").json()
    assert status["sleeping"]["until"] == "2026-01-01T00:30:00.000Z" and status["sleeping"]["note"] == "night"
    woke = call("POST", "/minds/{mind}/wake", "/minds/ada/wake", 200)
    assert woke["sleeping"] is False and app.api("GET", f"/events/{woke['event']}").json()["kind"] == "mind_woke"
    assert app.api("GET", "/minds/ada/gate").json()["sleeping"] is None
    assert "event" not in call("POST", "/minds/{mind}/wake", "/minds/ada/wake", 200)  # awake already: nothing changed
    until = call("POST", "/minds/{mind}/sleep", "/minds/ada/sleep", 200, json={"until": "2026-01-02T08:00:00Z"})
    assert until["until"] == "2026-01-02T08:00:00.000Z"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "until"),
        ({"for": "30m", "until": "2026-01-02T00:00:00Z"}, "not both"),
        ({"for": "soon"}, "not a span"),
        ({"until": "tomorrow"}, "not an ISO time"),
        ({"until": "2025-01-01T00:00:00Z"}, "future"),
        ({"for": "400d"}, "366 days"),
    ],
)
def test_a_sleep_that_cannot_be_is_refused(app: InProcess, mind: str, call: Any, body: dict[str, Any], words: str) -> None:
    refused = call("POST", "/minds/{mind}/sleep", "/minds/ada/sleep", 422, json=body)
    assert words in refused["detail"]


def test_an_edit_is_one_change_in_place_that_keeps_the_rules_counters(app: InProcess, mind: str, call: Any) -> None:
    for rule in (DMS, AMBIENT, MUTE):
        call("POST", RULES, "/minds/ada/rules", 201, json={"rule": rule})
    said = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()
    slower = {"match": {"kinds": ["message"], "channel": "irc:*"}, "behaviour": {"debounce": {"ms": 5000}}}
    edited = call("PUT", RULE, "/minds/ada/rules/ambient", 200, json={"rule": slower})  # no name: the path's
    assert (edited["action"], edited["rule"], edited["position"]) == ("edit", "ambient", 2)
    assert [r["name"] for r in edited["rules"]] == ["dms", "ambient", "mute"]
    assert edited["rules"][1]["behaviour"] == {"debounce": {"ms": 5000}} and edited["rules"][1]["match"]["channel"] == "irc:*"
    state = call("GET", RULE, "/minds/ada/rules/ambient", 200)["state"]
    assert (state["matches"], state["last_match"]) == (1, said["at"])  # counted before the edit, still counted
    [event] = [e for e in app.api("GET", "/minds/ada/events", params={"kind": "gate_rules_changed"}).json()["events"]
               if e["data"]["action"] == "edit"]
    assert event["text"] == "wake rule 'ambient' edited at position 2: debounce 5000 ms"
    assert event["data"]["was"]["behaviour"] == {"debounce": {"ms": 2000}} and event["data"]["body"]["behaviour"] == {"debounce": {"ms": 5000}}
    moved = call("PUT", RULE, "/minds/ada/rules/mute", 200, json={"rule": MUTE, "position": 1})
    assert [r["name"] for r in moved["rules"]] == ["mute", "dms", "ambient"] and moved["position"] == 1
    assert "no wake rule named 'nope'" in call("PUT", RULE, "/minds/ada/rules/nope", 404, json={"rule": {"behaviour": "defer"}})["detail"]
    renamed = call("PUT", RULE, "/minds/ada/rules/mute", 422, json={"rule": {**MUTE, "name": "hush"}})["detail"]
    assert "an edit keeps the name" in renamed
    assert "not a behaviour" in call("PUT", RULE, "/minds/ada/rules/mute", 422, json={"rule": {"behaviour": "sometimes"}})["detail"]
    actions = [e["data"]["action"] for e in app.api("GET", "/minds/ada/events", params={"kind": "gate_rules_changed"}).json()["events"]]
    assert actions == ["add", "add", "add", "edit", "edit"]  # refusals write nothing
