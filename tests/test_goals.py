"""Goals: set by operators and by the mind, progressed, completed, abandoned — each change an event."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import OPERATOR, Noemad
from inprocess import ME, InProcess

from noemad.cognition.goals import GoalClosed, GoalNotFound, active_goals, create_goal, get_goal, list_goals, update_goal
from noemad.errors import InvalidInput
from noemad.events import EventDraft, Ref, append
from noemad.minds import create_mind
from noemad.store import Store

NOW = 1_767_225_600.0


# in process ---------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    yield s
    s.close()


def cause(store: Store, kind: str = "metacognition") -> int:
    return store.writer.run_sync(lambda db: append(db, EventDraft("ada", kind, "process:metacognition", text=kind), NOW)).id


def test_the_mind_sets_an_investigation_goal_and_it_is_active(store: Store) -> None:
    warning = cause(store)
    goal, event = store.writer.run_sync(
        lambda db: create_goal(
            db, mind="ada", title="  investigate  whether the build is green ", origin="mind", cause=warning,
            cycle_id="ada/3", now=NOW, cites=[Ref("event", warning)],
        )
    )
    assert (goal.title, goal.status, goal.progress, goal.origin, goal.event_id) == (
        "investigate whether the build is green", "active", 0.0, "mind", event.id,
    )
    assert event.kind == "goal_created" and event.actor == "process:goals" and event.causation_id == warning
    assert event.cycle_id == "ada/3" and event.data == {"goal": goal.id, "title": goal.title, "origin": "mind", "progress": 0.0}
    assert [g.id for g in active_goals(store.reader(), "ada")] == [goal.id]


def test_progress_completes_at_one_and_a_closed_goal_takes_no_more_changes(store: Store) -> None:
    brought = cause(store, "goal")
    goal, created = store.writer.run_sync(
        lambda db: create_goal(db, mind="ada", title="ship v2", origin="operator", cause=brought, cycle_id=None, now=NOW)
    )
    assert created.actor == "operator"

    def change(**kw: Any):
        brought = cause(store, "goal")
        return store.writer.run_sync(lambda db: update_goal(db, goal_id=goal.id, cause=brought, cycle_id=None, now=NOW + 60, actor="operator", **kw))

    moved, progressed = change(progress=0.5, note="half way")
    assert (moved.progress, moved.status, progressed.kind) == (0.5, "active", "goal_progressed")
    assert progressed.data["progress"] == {"from": 0.0, "to": 0.5} and progressed.data["note"] == "half way"
    assert progressed.refs == (Ref("event", created.id),)  # every change cites the goal's beginning
    done, completed = change(progress=1.0)
    assert (done.status, done.progress, completed.kind) == ("completed", 1.0, "goal_completed")
    assert completed.data["status"] == {"from": "active", "to": "completed"}
    assert active_goals(store.reader(), "ada") == []
    with pytest.raises(GoalClosed, match="is completed; a closed goal takes no more changes"):
        change(progress=0.2)
    dropped, _ = store.writer.run_sync(
        lambda db: create_goal(db, mind="ada", title="learn rust", origin="operator", cause=brought, cycle_id=None, now=NOW)
    )
    abandoned, event = store.writer.run_sync(
        lambda db: update_goal(db, goal_id=dropped.id, status="abandoned", cause=brought, cycle_id=None, now=NOW, actor="operator")
    )
    assert (abandoned.status, event.kind) == ("abandoned", "goal_abandoned")
    assert [g.title for g in list_goals(store.reader(), "ada", status="abandoned")] == ["learn rust"]
    assert [g.title for g in list_goals(store.reader(), "ada")] == ["ship v2", "learn rust"]


def test_goal_input_is_checked(store: Store) -> None:
    brought = cause(store)
    for kw, words in (
        ({"title": "  "}, "a goal needs a title"),
        ({"title": "x", "origin": "someone"}, "origin is operator or mind"),
        ({"title": "x", "progress": 1.0}, "cannot start complete"),
        ({"title": "x", "progress": 1.5}, "between 0 and 1"),
    ):
        args = {"origin": "mind", **kw}
        with pytest.raises(InvalidInput, match=words):
            store.writer.run_sync(lambda db: create_goal(db, mind="ada", cause=brought, cycle_id=None, now=NOW, **args))
    with pytest.raises(GoalNotFound, match="goal 42 does not exist"):
        get_goal(store.reader(), 42)
    assert list_goals(store.reader(), "ada") == []  # nothing half-written


# through the API and noemactl, in process (the real noemactl over a socket: test_cli_over_the_socket) ---


def taken(engine: Noemad | InProcess, mind: str, event: dict[str, Any]) -> dict[str, Any]:
    return engine.wait_for(mind, "cycle_completed", since=event["id"])


def post(engine: Noemad | InProcess, mind: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = engine.api("POST", f"/minds/{mind}/events", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def test_an_operator_sets_progresses_and_completes_a_goal(app: InProcess, mind: str) -> None:
    said = post(app, mind, {"kind": "goal", "title": "ship the parser rewrite"})
    assert said["kind"] == "goal" and said["actor"] == "operator" and said["data"] == {"title": "ship the parser rewrite"}
    taken(app, mind, said)
    [goal] = app.api("GET", f"/minds/{mind}/goals").json()["goals"]
    assert (goal["title"], goal["status"], goal["progress"], goal["origin"]) == ("ship the parser rewrite", "active", 0.0, "operator")
    created = app.api("GET", f"/events/{goal['event_id']}").json()
    assert created["kind"] == "goal_created" and created["causation_id"] == said["id"] and created["data"]["goal"] == goal["id"]

    moved = post(app, mind, {"kind": "goal", "goal": goal["id"], "progress": 0.5, "note": "the lexer is done"})
    taken(app, mind, moved)
    [progressed] = app.api("GET", f"/minds/{mind}/events", params={"kind": "goal_progressed"}).json()["events"]
    assert progressed["causation_id"] == moved["id"] and {"type": "event", "id": created["id"]} in progressed["refs"]
    assert progressed["data"]["progress"] == {"from": 0.0, "to": 0.5} and progressed["text"] == "the lexer is done"
    assert app.api("GET", f"/goals/{goal['id']}").json()["progress"] == 0.5

    done = post(app, mind, {"kind": "goal", "goal": goal["id"], "status": "completed"})
    taken(app, mind, done)
    [completed] = app.api("GET", f"/minds/{mind}/events", params={"kind": "goal_completed"}).json()["events"]
    assert completed["causation_id"] == done["id"] and completed["data"]["status"] == {"from": "active", "to": "completed"}
    shown = app.api("GET", f"/goals/{goal['id']}").json()
    assert (shown["status"], shown["progress"]) == ("completed", 1.0)
    # Why is the goal complete? The walk goes back to the operator's stimulus and the goal's beginning.
    chain = app.api("GET", f"/events/{completed['id']}/chain", params={"forward": 0}).json()
    assert {done["id"], created["id"], said["id"]} <= {n["id"] for n in chain["nodes"]}
    assert app.api("GET", f"/minds/{mind}/goals", params={"status": "active"}).json()["goals"] == []
    again = app.api("POST", f"/minds/{mind}/events", json={"kind": "goal", "goal": goal["id"], "progress": 0.9})
    assert again.status_code == 409 and again.json()["detail"].startswith(f"goal {goal['id']} is completed; a closed goal takes no more changes")


def test_goal_and_goals_through_the_cli(app: InProcess, mind: str) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    said = app.ctl_json("goal", mind, "ship the parser rewrite")
    assert said["kind"] == "goal" and said["actor"] == OPERATOR and said["data"] == {"title": "ship the parser rewrite"}
    taken(app, mind, said)
    [goal] = app.ctl_json("goals", mind)["goals"]
    assert goal == app.api("GET", f"/minds/{mind}/goals").json()["goals"][0]  # the API's answer
    moved = app.ctl_json("goal", mind, "--id", str(goal["id"]), "--progress", "0.5", "--note", "the lexer is done")
    assert moved["kind"] == "goal" and moved["data"] == {"goal": goal["id"], "progress": 0.5, "note": "the lexer is done"}
    taken(app, mind, moved)
    done = app.ctl_json("goal", mind, "--id", str(goal["id"]), "--complete")
    assert done["data"] == {"goal": goal["id"], "status": "completed"}
    taken(app, mind, done)
    assert app.ctl_json("goals", mind, "--status", "active")["goals"] == []
    human = app.ctl("goals", mind)
    assert human.returncode == 0, human.stderr
    assert human.stdout.splitlines() == [
        "ID  STATUS     PROGRESS  ORIGIN    SET                  TITLE",
        f"#{goal['id']}  completed      100%  operator  2026-01-01 00:00:00  ship the parser rewrite",
    ]
    again = app.ctl("goal", mind, "--id", str(goal["id"]), "--progress", "0.9")
    assert again.returncode == 5
    assert again.stderr.startswith(f"noemactl: goal {goal['id']} is completed; a closed goal takes no more changes")


def test_bad_goals_are_refused_and_nothing_is_stored(app: InProcess, mind: str) -> None:
    app.api("POST", "/minds", json={"name": "bob"})
    taken(app, mind, post(app, mind, {"kind": "goal", "title": "keep the docs current"}))
    [goal] = app.api("GET", f"/minds/{mind}/goals").json()["goals"]
    gid = goal["id"]
    # Closing twice is refused at once, even before the first close is perceived.
    first = app.api("POST", f"/minds/{mind}/events", json={"kind": "goal", "goal": gid, "status": "abandoned"})
    assert first.status_code == 201
    second = app.api("POST", f"/minds/{mind}/events", json={"kind": "goal", "goal": gid, "progress": 0.3})
    assert second.status_code == 409, second.text
    taken(app, mind, first.json())
    app.settle(mind)  # the turn may write its narrative after cycle_completed
    before = app.api("GET", "/status").json()["counts"]["events"]
    cases = [
        ({"kind": "goal"}, 422, "a goal stimulus sets a new goal (title) or changes one"),
        ({"kind": "goal", "title": "  "}, 422, "title"),
        ({"kind": "goal", "title": "x", "status": "completed"}, 422, "a new goal is active"),
        ({"kind": "goal", "title": "x", "progress": 1}, 422, "cannot start complete"),
        ({"kind": "goal", "title": "x", "goal": gid}, 422, "title names a new goal"),
        ({"kind": "goal", "goal": gid}, 422, f"say how goal {gid} changes"),
        ({"kind": "goal", "goal": 999, "progress": 0.5}, 404, "goal 999 does not exist"),
        ({"kind": "goal", "goal": gid, "progress": 0.5}, 409, f"goal {gid} is abandoned"),
        ({"kind": "goal", "goal": gid, "progress": 1.5}, 422, "progress"),
        ({"kind": "goal", "goal": gid, "status": "paused"}, 422, "status"),
    ]
    for body, status, words in cases:
        resp = app.api("POST", f"/minds/{mind}/events", json=body)
        assert resp.status_code == status, (body, resp.text)
        assert words in resp.json()["detail"], (body, resp.json())
    assert app.api("GET", "/status").json()["counts"]["events"] == before
    taken(app, mind, post(app, mind, {"kind": "goal", "title": "another"}))
    app.settle(mind)
    before = app.api("GET", "/status").json()["counts"]["events"]
    other = app.api("GET", f"/minds/{mind}/goals", params={"status": "active"}).json()["goals"][0]["id"]
    resp = app.api("POST", "/minds/bob/events", json={"kind": "goal", "goal": other, "progress": 0.5})
    assert resp.status_code == 422 and f"goal {other} belongs to mind 'ada', not 'bob'" in resp.json()["detail"]
    assert app.api("GET", "/status").json()["counts"]["events"] == before
    assert app.api("GET", "/goals/999").status_code == 404
    assert app.api("GET", "/minds/zed/goals").status_code == 404


def test_the_cli_refuses_bad_goals_and_sends_nothing(app: InProcess, mind: str) -> None:
    before = app.api("GET", "/status").json()["counts"]["events"]
    for args, sentence in {
        ("goal", mind): "noemactl: give a TITLE to set a new goal, or --id N to change goal N",
        ("goal", mind, "x", "--id", "1"): "noemactl: TITLE sets a new goal",
        ("goal", mind, "--id", "1"): "noemactl: say how goal 1 changes",
        ("goal", mind, "--id", "1", "--complete", "--abandon"): "noemactl: --complete and --abandon contradict each other",
        ("goal", mind, "x", "--complete"): "noemactl: --complete closes an existing goal; give its --id",
        ("goal", mind, "x", "--progress", "2"): "noemactl: --progress must be from 0 to 1",
        ("goal", mind, "   "): "noemactl: the goal text is empty",
        ("goals", mind, "--status", "done"): "noemactl: --status 'done' is not one of active, completed, abandoned",
    }.items():
        out = app.ctl(*args)
        assert (out.returncode, out.stdout) == (2, ""), (args, out.stderr)
        assert out.stderr.startswith(sentence), (args, out.stderr)
    assert app.api("GET", "/status").json()["counts"]["events"] == before


def test_goal_answers_match_the_openapi_document(app: InProcess, mind: str) -> None:
    from test_openapi import check

    doc = app.api("GET", "/openapi.json").json()
    said = app.api("POST", f"/minds/{mind}/events", json={"kind": "goal", "title": "t", "progress": 0.25})
    check(doc, "POST", "/minds/{mind}/events", 201, "application/json", said.json())
    taken(app, mind, said.json())
    listed = app.api("GET", f"/minds/{mind}/goals")
    check(doc, "GET", "/minds/{mind}/goals", 200, "application/json", listed.json())
    [goal] = listed.json()["goals"]
    assert goal["progress"] == 0.25
    check(doc, "GET", "/goals/{goal_id}", 200, "application/json", app.api("GET", f"/goals/{goal['id']}").json())
    check(doc, "GET", "/minds/{mind}/goals", 422, "application/problem+json", app.api("GET", f"/minds/{mind}/goals", params={"status": "x"}).json())
