"""Reading a mind as an operator does, in process: events' tail, search, times and kinds; trust levels; retraction; news; a stimulus's way to a turn."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

from inprocess import InProcess

from noemad.events import KNOWN_KINDS

ROOT = Path(__file__).resolve().parents[1]


def say(app: InProcess, mind: str, text: str) -> int:
    answer = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "channel": "cli", "text": text})
    assert answer.status_code == 201, answer.text
    app.settle(mind)
    return int(answer.json()["id"])


def page(app: InProcess, mind: str, **params: Any) -> dict[str, Any]:
    answer = app.api("GET", f"/minds/{mind}/events", params=params)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def refused(app: InProcess, path: str, **params: Any) -> str:
    answer = app.api("GET", path, params=params)
    assert answer.status_code == 422, answer.text
    return str(answer.json()["detail"])


def test_tail_is_the_newest_matching_events_oldest_first(app: InProcess, mind: str) -> None:
    ids = [say(app, mind, f"note {n}") for n in range(4)]
    everything = page(app, mind, limit=1000)["events"]
    newest = page(app, mind, tail=3)
    assert [e["id"] for e in newest["events"]] == [e["id"] for e in everything[-3:]]
    assert newest["last_id"] == everything[-1]["id"]
    messages = page(app, mind, tail=2, kind="message")
    assert [e["id"] for e in messages["events"]] == ids[-2:]
    # the old page is unchanged: the oldest `limit` after `since`
    assert [e["id"] for e in page(app, mind, since=ids[0], limit=2)["events"]] == [ids[0] + 1, ids[0] + 2]


def test_grep_ignores_case_and_tail_counts_matches(app: InProcess, mind: str) -> None:
    texts = ["Deploy the api", "lunch?", "deploy the web", "DEPLOY the db", "Émile deploys nothing"]
    ids = dict(zip(texts, (say(app, mind, t) for t in texts)))
    found = page(app, mind, grep="deploy", tail=2, kind="message")["events"]
    assert [e["text"] for e in found] == ["DEPLOY the db", "Émile deploys nothing"]
    assert [e["id"] for e in page(app, mind, grep="éMILE", kind="message")["events"]] == [ids["Émile deploys nothing"]]
    # every event's text is searched: the episode and the attention of the turn too
    assert {e["kind"] for e in page(app, mind, grep="lunch")["events"]} >= {"message", "memory_created"}
    assert page(app, mind, grep="no such words")["events"] == []


def test_since_time_takes_a_span_or_an_iso_time(app: InProcess, mind: str) -> None:
    say(app, mind, "early")
    app.advance(3600)
    late = say(app, mind, "late")
    recent = page(app, mind, since_time="30m", kind="message")["events"]
    assert [e["id"] for e in recent] == [late]
    assert [e["id"] for e in page(app, mind, since_time="2026-01-01T00:30:00Z", kind="message")["events"]] == [late]
    assert len(page(app, mind, since_time="2h", kind="message")["events"]) == 2
    assert "neither an ISO date or time" in refused(app, f"/minds/{mind}/events", since_time="soonish")


def test_an_unknown_kind_is_refused_with_a_suggestion_and_the_kinds(app: InProcess, mind: str) -> None:
    detail = refused(app, f"/minds/{mind}/events", kind="mesage")
    assert detail.startswith("'mesage' is not an event kind; did you mean 'message'? the kinds are: ")
    assert "cycle_completed" in detail and "memory_retracted" in detail
    # a kind no event of this mind has yet, but a known one, is an empty page, not an error
    assert page(app, mind, kind="reply")["events"] == []


def test_every_input_is_bounded(app: InProcess, mind: str) -> None:
    path = f"/minds/{mind}/events"
    for params in ({"grep": "x" * 201}, {"grep": ""}, {"tail": 0}, {"tail": 1001}, {"since_time": "1" * 65}, {"kind": [f"kind{n}" for n in range(65)]}):
        detail = refused(app, path, **params)  # type: ignore[arg-type]
        assert detail and not detail.startswith("["), (params, detail)


def _draft_kinds(tree: ast.AST, module: Any) -> list[str]:
    """The kinds each `EventDraft(...)` in a module is written with: literals, both arms of an `if`, module constants."""
    out: list[str] = []

    def kinds_of(node: ast.expr) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.IfExp):
            return kinds_of(node.body) + kinds_of(node.orelse)
        if isinstance(node, ast.Name) and isinstance(getattr(module, node.id, None), str):
            return [getattr(module, node.id)]
        return []  # a variable or f-string: checked by hand below

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "EventDraft":
            for keyword in node.keywords:
                if keyword.arg == "kind":
                    out.extend(kinds_of(keyword.value))
    return out


def test_every_kind_written_is_known() -> None:
    written: set[str] = set()
    for path in sorted((ROOT / "noemad").rglob("*.py")):
        if path.name == "__main__.py":
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        written.update(_draft_kinds(ast.parse(path.read_text()), importlib.import_module(name)))
    assert len(written) > 30  # the scan finds the writers
    assert written - set(KNOWN_KINDS) == set()
    from noemad.cognition.goals import CHANGE_KINDS  # written through a variable

    assert set(CHANGE_KINDS) <= set(KNOWN_KINDS) and {"schedule_paused", "schedule_resumed"} <= set(KNOWN_KINDS)


def test_trust_levels_are_listed_by_source_with_the_default(app: InProcess, mind: str) -> None:
    empty = app.api("GET", f"/minds/{mind}/trust").json()
    assert empty == {"mind": mind, "default": 0.6, "trust": []}
    for source, value in (("wiki", 0.3), ("bob", 0.9), ("wiki", 0.2)):
        assert app.api("PUT", f"/minds/{mind}/trust/{source}", json={"value": value}).status_code == 200
    listed = app.api("GET", f"/minds/{mind}/trust").json()["trust"]
    assert [(t["source"], t["value"]) for t in listed] == [("bob", 0.9), ("wiki", 0.2)]
    assert app.api("GET", "/minds/nobody/trust").status_code == 404


def test_a_retracted_memory_is_not_recalled_is_listed_and_is_an_event(app: InProcess, mind: str) -> None:
    made = app.api("POST", f"/minds/{mind}/memories", json={"kind": "semantic", "text": "the build server is in Oslo"}).json()
    assert [m["id"] for m in app.api("GET", f"/minds/{mind}/memories", params={"search": "Oslo"}).json()["memories"]] == [made["id"]]
    done = app.api("POST", f"/memories/{made['id']}/retract", json={"reason": "it moved to Bergen"})
    assert done.status_code == 200, done.text
    assert done.json()["memory"]["status"] == "retracted"
    event = done.json()["event"]
    assert (event["kind"], event["text"], event["subject"]) == ("memory_retracted", "it moved to Bergen", {"type": "memory", "id": made["id"]})
    assert app.api("GET", f"/minds/{mind}/memories", params={"search": "Oslo"}).json()["memories"] == []
    retracted = app.api("GET", f"/minds/{mind}/memories", params={"status": "retracted"}).json()["memories"]
    assert [m["id"] for m in retracted] == [made["id"]]
    assert app.api("GET", f"/minds/{mind}/memories", params={"status": "active"}).json()["memories"] == []
    again = app.api("POST", f"/memories/{made['id']}/retract", json={"reason": "still wrong"})
    assert (again.status_code, again.json()["detail"]) == (409, f"memory {made['id']} is already retracted; nothing was changed")
    assert app.api("POST", f"/memories/{made['id']}/retract", json={"reason": ""}).status_code == 422
    assert app.api("POST", f"/memories/{made['id']}/retract", json={}).status_code == 422
    assert app.api("POST", "/memories/999/retract", json={"reason": "x"}).status_code == 404


def test_news_says_which_minds_had_something_since_their_last_job(app: InProcess, mind: str) -> None:
    assert app.api("POST", "/minds", json={"name": "bob"}).status_code == 201
    job = app.api("POST", f"/minds/{mind}/jobs", json={"kind": "reflection"}).json()
    app.wait_job(job["id"])
    news = {m["mind"]: m for m in app.api("GET", "/schedules/reflection/news").json()["minds"]}
    assert (news[mind]["news"], news["bob"]["news"]) == (False, True)
    assert news[mind]["last_started_at"] is not None and news["bob"]["last_started_at"] is None
    say(app, mind, "something new")
    assert app.api("GET", "/schedules/reflection/news").json()["minds"][0]["news"] is True
    assert app.api("GET", "/schedules/dreaming/news").status_code == 422


def test_a_stimulus_turn_says_what_the_gate_did(app: InProcess, mind: str) -> None:
    taken = say(app, mind, "hello")
    state = app.api("GET", f"/events/{taken}/turn").json()
    assert (state["waiting"], state["verdict"], state["respond_model"]) == (False, None, False)
    rule = {"name": "quiet", "match": {"kinds": ["message"]}, "behaviour": {"defer": {}}}
    assert app.api("POST", f"/minds/{mind}/rules", json={"rule": rule}).status_code == 201
    held = say(app, mind, "psst")
    state = app.api("GET", f"/events/{held}/turn").json()
    assert (state["waiting"], state["verdict"], state["rule"]) == (True, "defer", "quiet")
