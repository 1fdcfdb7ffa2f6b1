"""The API (in process; one case over the real socket): answers, filters, and every class of bad input."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from conftest import Noemad
from inprocess import InProcess, start_app
from noemad.stimuli import Message


def say(app: InProcess, mind: str, text: str, **extra: object) -> dict:
    resp = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": text, **extra})
    assert resp.status_code == 201, resp.text
    return resp.json()


def test_ingest_answers_the_committed_event(app: InProcess, mind: str) -> None:
    event = say(app, mind, "hello there", channel="discord:guild:general", mentions=["ada"])
    assert event["kind"] == "message" and event["actor"] == "user:alice"
    assert event["channel"] == "discord:guild:general"
    assert event["data"] == {"author": "alice", "mentions": ["ada"]}
    assert event["at"] == "2026-01-01T00:00:00.000Z"  # the daemon's manual clock
    decided = event.pop("gate")  # the ingest answer is the stored event, with the gate's decision beside it
    assert decided["verdict"] == "wake" and decided["reason"] == "the default (no rule matched): always wakes the mind"
    assert app.api("GET", f"/events/{event['id']}").json() == event


def test_requests_consult_no_telemetry_provider(app: InProcess, mind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """noemad exports no telemetry: FastAPI's native OpenTelemetry is off, so no request asks for a provider (CPU per stimulus)."""
    from opentelemetry import _logs, metrics, trace

    asked: list[str] = []
    for module, name in ((trace, "get_tracer_provider"), (metrics, "get_meter_provider"), (_logs, "get_logger_provider")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda real=real, name=name: asked.append(name) or real())
    say(app, mind, "hello there")
    assert app.api("GET", "/status").status_code == 200
    assert asked == []


def test_observation_is_stored_with_its_source(app: InProcess, mind: str) -> None:
    resp = app.api(
        "POST", f"/minds/{mind}/events", json={"kind": "observation", "source": "thermometer", "text": "21C", "data": {"c": 21}}
    )
    assert resp.status_code == 201
    assert resp.json()["actor"] == "source:thermometer"
    assert resp.json()["data"] == {"source": "thermometer", "data": {"c": 21}}


def test_each_message_runs_a_turn_caused_by_it(app: InProcess, mind: str) -> None:
    message = say(app, mind, "wake up")
    started = app.wait_for(mind, "cycle_started")
    done = app.wait_for(mind, "cycle_completed")
    app.wait_for(mind, "narrative_updated")  # the turn's last event: the listing below needs it
    assert started["causation_id"] == message["id"] and started["parents"] == [message["id"]]
    assert done["causation_id"] == started["id"] and done["cycle_id"] == started["cycle_id"] == "ada/1"
    kinds = {e["id"]: e["kind"] for e in app.api("GET", f"/minds/{mind}/events").json()["events"]}
    episode = next(i for i, k in kinds.items() if k == "memory_created")
    attention = next(i for i, k in kinds.items() if k == "attention")
    story = next(i for i, k in kinds.items() if k == "narrative_updated")
    chain = app.api("GET", f"/events/{started['id']}/chain").json()
    edges = {(e["from"], e["to"], e["kind"]) for e in chain["edges"]}
    assert edges >= {
        (message["id"], started["id"], "caused"),
        (message["id"], started["id"], "parent"),
        (started["id"], attention, "caused"),  # the workspace competition
        (message["id"], attention, "cited"),  # the winning thought is about the message
        (started["id"], done["id"], "caused"),
        (done["id"], story, "caused"),  # the narrative, after the cycle
    }
    assert all(e[0] != started["id"] or e[1] in (attention, done["id"]) for e in edges)  # nothing else follows the start
    # The episode is the message's other consequence: a sibling, not on this walk.
    assert episode not in {n["id"] for n in chain["nodes"]}
    [group] = chain["groups"]
    assert group["label"] == "correlation" and group["events"] == [started["id"], attention, done["id"], story]


def test_event_filters(app: InProcess, mind: str) -> None:
    first = say(app, mind, "one")
    app.wait_for(mind, "cycle_completed")
    second = say(app, mind, "two")
    app.wait_for(mind, "cycle_completed", since=second["id"])
    messages = app.api("GET", f"/minds/{mind}/events", params={"kind": "message"}).json()
    assert [e["text"] for e in messages["events"]] == ["one", "two"]
    assert messages["next_since"] == second["id"]
    after = app.api("GET", f"/minds/{mind}/events", params={"since": first["id"], "limit": 1}).json()
    assert len(after["events"]) == 1 and after["events"][0]["id"] > first["id"]
    both = app.api("GET", f"/minds/{mind}/events", params=[("kind", "message"), ("kind", "mind_created")]).json()
    assert [e["kind"] for e in both["events"]] == ["mind_created", "message", "message"]


def test_follow_replays_then_streams(app: InProcess, mind: str) -> None:
    say(app, mind, "before")
    event = app.wait_for(mind, "message", since=0)
    assert event["text"] == "before"


def test_mind_lifecycle(app: InProcess) -> None:
    assert app.api("POST", "/minds", json={"name": "ada", "settings": {"notify_proactively": True}}).status_code == 201
    assert app.api("POST", "/minds", json={"name": "bob"}).status_code == 201
    assert [m["name"] for m in app.api("GET", "/minds").json()["minds"]] == ["ada", "bob"]
    overview = app.api("GET", "/minds/ada").json()
    assert overview["settings"] == {"notify_proactively": True} and overview["events"] == 1
    assert overview["recent"][0]["kind"] == "mind_created"
    refused = app.api("DELETE", "/minds/ada", json={"confirm": "bob"})
    assert refused.status_code == 409 and "confirm" in refused.json()["detail"]
    gone = app.api("DELETE", "/minds/ada", json={"confirm": "ada"})
    assert gone.json() == {"name": "ada", "events_removed": 1}
    assert app.api("GET", "/minds/ada").status_code == 404
    assert [m["name"] for m in app.api("GET", "/minds").json()["minds"]] == ["bob"]
    counts = app.api("GET", "/status").json()["counts"]
    assert (counts["minds"], counts["events"], counts["last_event_id"]) == (1, 1, 2)


def test_openapi_describes_every_route(app: InProcess) -> None:
    doc = app.api("GET", "/openapi.json").json()
    assert set(doc["paths"]) >= {
        "/api/v1/status",
        "/api/v1/minds",
        "/api/v1/minds/{mind}",
        "/api/v1/minds/{mind}/events",
        "/api/v1/minds/{mind}/events/stream",
        "/api/v1/events/{event_id}",
        "/api/v1/events/{event_id}/chain",
    }
    ingest = doc["paths"]["/api/v1/minds/{mind}/events"]["post"]
    assert "201" in ingest["responses"] and "422" in ingest["responses"]


BAD_INPUT = [
    # (method, path, kwargs, status, words in the detail)
    ("POST", "/minds/ada/events", {"content": b'{"kind": "message",', "headers": {"content-type": "application/json"}}, 400, "not valid JSON"),
    ("POST", "/minds/ada/events", {"json": {"kind": "message", "author": "a", "text": "x", "colour": 1}}, 422, "colour is not a field here; remove it"),
    ("POST", "/minds/ada/events", {"json": {"kind": "message", "author": "a"}}, 422, "text is missing; it is required here"),
    ("POST", "/minds/ada/events", {"json": {"author": "a", "text": "x"}}, 422, "kind is missing; use 'message'"),
    ("POST", "/minds/ada/events", {"json": {"kind": "dream", "text": "x"}}, 422, "'dream' is not a stimulus kind"),
    ("POST", "/minds/ada/events", {"json": {"kind": "message", "author": "a", "text": ""}}, 422, "text"),
    ("POST", "/minds/ada/events", {"json": {"kind": "message", "author": "a", "text": "x", "channel": "no spaces"}}, 422, "channel"),
    ("POST", "/minds/ada/events", {"json": ["not", "an", "object"]}, 422, "must be a JSON object"),
    ("POST", "/minds/zed/events", {"json": {"kind": "message", "author": "a", "text": "x"}}, 404, "no mind is named 'zed'"),
    ("POST", "/minds", {"json": {"name": "Bad Name!"}}, 422, "not a valid mind name"),
    ("POST", "/minds", {"json": {"name": "ada"}}, 409, "already exists"),
    ("POST", "/minds", {"json": {"name": "x", "settings": "loud"}}, 422, "settings must be a JSON object, not 'loud'"),
    ("DELETE", "/minds/ada", {"json": {}}, 422, "confirm is missing"),
    ("GET", "/minds/ada/events", {"params": {"limit": 0}}, 422, "limit"),
    ("GET", "/minds/ada/events", {"params": {"since": "yesterday"}}, 422, "since"),
    ("GET", "/events/999999", {}, 404, "event 999999 does not exist"),
    ("GET", "/events/abc", {}, 422, "event_id"),
    ("GET", "/events/1/chain", {"params": {"back": 7}}, 422, "back"),
    ("GET", "/events/1/chain", {"params": {"limit": 0}}, 422, "limit"),
    ("GET", "/nowhere", {}, 404, "no such endpoint"),
    ("PUT", "/status", {}, 405, "not allowed"),
]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    """One engine for the read-only bad-input cases (each leaves the store as it was)."""
    engine = start_app(tmp_path_factory.mktemp("shared"))
    assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    yield engine
    engine.stop()


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "words"), BAD_INPUT)
def test_bad_input_gets_a_4xx_sentence_and_changes_nothing(
    shared: InProcess, method: str, path: str, kwargs: dict, status: int, words: str
) -> None:
    before = shared.api("GET", "/status").json()["counts"]
    resp = shared.api(method, path, **kwargs)
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    problem = resp.json()
    assert problem["status"] == status and problem["title"]
    assert words in problem["detail"]
    assert shared.api("GET", "/status").json()["counts"]["events"] == before["events"]


def test_oversized_bodies_are_refused_before_parsing(app: InProcess, mind: str) -> None:
    big = {"kind": "message", "author": "a", "text": "x" * 2_000_000}
    resp = app.api("POST", f"/minds/{mind}/events", json=big)
    assert resp.status_code == 413 and "1048576 bytes" in resp.json()["detail"]

    def chunks():  # no Content-Length: the limit is counted as the body arrives
        yield b'{"kind": "message", "author": "a", "text": "'
        for _ in range(40):
            yield b"y" * 32768
        yield b'"}'

    resp = app.api("POST", f"/minds/{mind}/events", content=chunks(), headers={"content-type": "application/json"})
    assert resp.status_code == 413
    assert app.api("GET", f"/minds/{mind}/events", params={"kind": "message"}).json()["events"] == []


def test_text_at_the_limit_is_accepted(app: InProcess, mind: str) -> None:
    event = say(app, mind, "z" * 100_000)
    assert len(event["text"]) == 100_000
    resp = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "a", "text": "z" * 100_001})
    assert resp.status_code == 422


def test_unicode_and_control_text_round_trips(app: InProcess, mind: str) -> None:
    text = "naïve “quotes” — 日本語 \x00 nul and\nnew line 🙂"
    event = say(app, mind, text)
    assert app.api("GET", f"/events/{event['id']}").json()["text"] == text


def test_connection_is_plain_http_over_the_socket(noemad: Noemad) -> None:
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(noemad.socket))) as c:
        assert c.get("http://anything/api/v1/status").status_code == 200


def test_both_ingest_paths_answer_alike(app: InProcess, mind: str) -> None:
    """JSON bodies take the fast path; other JSON media types go through the FastAPI route."""
    body = b'{"kind": "message", "author": "alice", "text": "same", "mentions": ["ada"]}'
    fast = app.api("POST", f"/minds/{mind}/events", content=body, headers={"content-type": "application/json"})
    routed = app.api("POST", f"/minds/{mind}/events", content=body, headers={"content-type": "application/vnd.noema+json"})
    assert fast.status_code == routed.status_code == 201
    a, b = fast.json(), routed.json()
    assert a.pop("id") != b.pop("id")
    assert a == b
    bad = b'{"kind": "message", "author": "alice", "text": "x", "colour": 1}'
    for media in ("application/json", "application/vnd.noema+json"):
        resp = app.api("POST", f"/minds/{mind}/events", content=bad, headers={"content-type": media})
        assert resp.status_code == 422 and resp.json()["detail"] == "colour is not a field here; remove it (a typo?)", media


def test_both_ingest_paths_refuse_a_body_that_grows_too_large_alike(app: InProcess, mind: str) -> None:
    """A chunked body over the limit is refused mid-read by either path, with one title and sentence (one error mapping)."""

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is counted as the body arrives
        yield b'{"kind": "message", "author": "a", "text": "'
        for _ in range(40):
            yield b"y" * 32768
        yield b'"}'

    answers = [
        app.api("POST", f"/minds/{mind}/events", content=chunks(), headers={"content-type": media}).json()
        for media in ("application/json", "application/vnd.noema+json")
    ]
    assert answers[0] == answers[1]
    assert answers[0]["status"] == 413 and answers[0]["title"] == "Body too large" and "1048576 bytes" in answers[0]["detail"]


def test_a_body_that_is_not_json_is_refused_with_a_sentence(app: InProcess, mind: str) -> None:
    resp = app.api("POST", f"/minds/{mind}/events", content=b"hello", headers={"content-type": "text/plain"})
    assert resp.status_code in (400, 422)
    assert resp.headers["content-type"] == "application/problem+json"
    assert resp.json()["detail"]


def test_an_unexpected_error_on_either_ingest_path_is_a_500_problem(app: InProcess, mind: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The fast path runs in front of FastAPI's error middleware, so it answers a bug as that middleware would: logged, 500, no details."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in ingest")

    monkeypatch.setattr(app.sup, "ingest", broken)
    body = b'{"kind": "message", "author": "alice", "text": "hello"}'
    for media in ("application/json", "application/vnd.noema+json"):
        resp = app.api("POST", f"/minds/{mind}/events", content=body, headers={"content-type": media})
        assert resp.status_code == 500 and resp.headers["content-type"] == "application/problem+json", media
        assert resp.json()["title"] == "Internal error" and "a bug" not in resp.text
    assert sum("a bug in ingest" in r.getMessage() for r in caplog.records) == 2


def test_a_follower_replays_then_follows_and_ends_when_its_mind_is_deleted(app: InProcess, mind: str) -> None:
    first = say(app, mind, "stored before")["id"]

    async def scenario() -> list[tuple[str, str | None]]:
        following = app.sup.follow(mind, since=first - 1)
        seen: list[tuple[str, str | None]] = []
        try:
            async for event in following:
                seen.append((event.kind, event.text))
                if event.text == "stored before":
                    # Committed after the follower subscribed: it must arrive exactly once, live.
                    await app.sup.ingest(mind, Message(author="alice", text="said while following"))
                if event.text == "said while following":
                    await app.sup.delete_mind(mind, confirm=mind)
        finally:
            following.close()
        return seen

    seen = app.run(scenario())
    texts = [text for _, text in seen]
    assert texts[0] == "stored before"
    assert texts.count("said while following") == 1
    # That `run` returned at all (it times out otherwise) means the iteration ended by itself at the deletion.
