"""Live runtime state (actors, gates) is read only on the event loop that changes it.

A route that runs in the thread pool while the loop offers a stimulus to the
same gate could see a bucket or a batch half changed. In process, every GET
route of the API is called while every read of the supervisor's actors and
every `Gate.status` records the thread it came from: all must be the loop's.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from inprocess import InProcess
from noemad.gate.engine import Gate

MIND = "ada"
FILL = {"mind": MIND, "name": "room", "kind": "reflection", "event_id": "1", "job_id": "1", "memory_id": "1",
        "belief_id": "1", "goal_id": "1", "prediction_id": "1", "source": "bob"}


class Watched(dict):  # type: ignore[type-arg]
    """The supervisor's actors, noting the thread of every read."""

    threads: set[str]

    def _saw(self) -> None:
        self.threads.add(threading.current_thread().name)

    def get(self, *args: Any) -> Any:
        self._saw()
        return super().get(*args)

    def __getitem__(self, key: Any) -> Any:
        self._saw()
        return super().__getitem__(key)

    def __contains__(self, key: Any) -> bool:
        self._saw()
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self._saw()
        return super().__iter__()

    def items(self) -> Any:
        self._saw()
        return super().items()

    def values(self) -> Any:
        self._saw()
        return super().values()


def test_no_route_reads_actors_or_gates_off_the_loop(app: InProcess, mind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rule = {"name": "room", "match": {"kinds": ["message"]}, "behaviour": {"debounce": {"ms": 2000}}}
    assert app.api("POST", f"/minds/{MIND}/rules", json={"rule": rule}).status_code == 201
    assert app.api("POST", f"/minds/{MIND}/events", json={"kind": "message", "author": "bob", "text": "hi"}).status_code == 201
    watched = Watched(app.sup.actors)
    watched.threads = set()
    app.sup.actors = watched
    statuses: set[str] = set()
    real = Gate.status

    def status(self: Gate, now: float) -> Any:
        statuses.add(threading.current_thread().name)
        return real(self, now)

    monkeypatch.setattr(Gate, "status", status)
    doc = app.api("GET", "/openapi.json").json()
    called = []
    for template, ops in doc["paths"].items():
        if "get" not in ops or template.endswith("/stream") or template.endswith("/backup"):
            continue
        path = template.removeprefix("/api/v1")
        for name, value in FILL.items():
            path = path.replace("{" + name + "}", value)
        assert "{" not in path, path
        app.api("GET", path)
        called.append(path)
    assert {"/minds/ada/gate", "/gate", "/minds/ada/rules/room", "/events/1/turn", "/status", "/minds/ada", "/metrics", "/config"} <= set(called)
    assert watched.threads == {app.thread.name} and statuses == {app.thread.name}


def test_ingest_answers_with_the_gates_decision(app: InProcess, mind: str) -> None:
    rule = {"name": "room", "match": {"kinds": ["message"]}, "behaviour": {"debounce": {"ms": 2000}}}
    assert app.api("POST", f"/minds/{MIND}/rules", json={"rule": rule}).status_code == 201
    batched = app.api("POST", f"/minds/{MIND}/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()
    assert batched["kind"] == "message" and batched["text"] == "hi" and batched["mind"] == MIND  # the event's fields, as before
    assert batched["gate"] == {
        "verdict": "batch", "rule": "room", "due": "2026-01-01T00:00:02.000Z", "paused": False, "respond_model": False,
        "reason": "rule room: debounce 2000 ms, due at 2026-01-01T00:00:02.000Z (1 stimulus in the batch)",
    }
    woke = app.api("POST", f"/minds/{MIND}/events", json={"kind": "observation", "source": "s", "text": "t"}).json()
    assert woke["gate"]["verdict"] == "wake" and woke["gate"]["rule"] is None and "due" not in woke["gate"]


class _Client:
    """noemactl's client, as `reply.wait` uses it: a stream replaying the turn, and no second question."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.asked = 0

    def stream(self, mind: str, since: int | None = None, idle: float | None = None) -> Any:
        from contextlib import contextmanager

        from noemactl.sse import Message

        @contextmanager
        def opened() -> Any:
            yield iter([Message("message", json.dumps(e)) for e in self.events])

        return opened()

    def stimulus_turn(self, event_id: int) -> dict[str, Any]:
        self.asked += 1
        return {"waiting": True, "verdict": "batch", "rule": "room", "paused": False, "respond_model": True}


def test_say_wait_takes_the_gates_decision_from_the_ingest_answer(capsys: pytest.CaptureFixture[str]) -> None:
    from noemactl import reply
    from noemactl.session import Session

    turn = [
        {"kind": "cycle_started", "cycle_id": "c1", "parents": [7], "refs": []},
        {"kind": "reply", "cycle_id": "c1", "text": "Hello.", "parents": [], "refs": []},
    ]
    session = Session()
    session._client = client = _Client(turn)  # type: ignore[assignment]
    gate = {"verdict": "batch", "rule": "room", "reason": "...", "paused": False, "respond_model": True}
    outcome = reply.wait(session, "ada", 7, 5.0, gate)
    assert outcome.reply is not None and outcome.reply["text"] == "Hello." and client.asked == 0
    assert "batched by rule room: waiting for the batch's turn" in capsys.readouterr().err
    deferred = reply.wait(session, "ada", 7, 5.0, {**gate, "verdict": "defer"})
    assert deferred.why == "deferred by rule room: stored and in context, but it wakes no turn" and client.asked == 0
    reply.wait(session, "ada", 7, 5.0)  # an older noemad's answer has no decision: asked
    assert client.asked == 1
