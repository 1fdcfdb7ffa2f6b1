"""Hostile input and faults at the API's edge (issue 10): never a 5xx for bad input, nothing stored that a read cannot answer.

Ids beyond SQLite's integer range, numbers JSON cannot carry (NaN,
Infinity, 1e999), bools where numbers go, times outside the calendar, a full
disk, a turn that fails: each answered as a user can act on, in the
in-process tier.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from inprocess import InProcess, fail_first_turn, hold_writer, start_app
from noemad.events import EventDraft, append

TOO_BIG = 2**63  # one past SQLite's largest integer
LARGEST = 2**63 - 1
EDGE_MIND = "ada"


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    """One engine with a mind `ada` for the cases that must be refused, shared by them.

    A refusal changes nothing, so some forty cases need not each start an
    engine; one that did store something would still show, in its own check
    or in another case's check that nothing of its kind was stored.
    """
    engine = start_app(tmp_path_factory.mktemp("edge"))
    assert engine.api("POST", "/minds", json={"name": EDGE_MIND}).status_code == 201
    yield engine
    engine.stop()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/events/{id}"),
        ("GET", "/events/{id}/chain"),
        ("GET", "/beliefs/{id}"),
        ("GET", "/goals/{id}"),
        ("GET", "/jobs/{id}"),
        ("GET", "/predictions/{id}"),
        ("GET", "/memories/{id}"),
        ("POST", "/notifications/{id}/ack"),
        ("POST", "/memories/{id}/reject"),
    ],
)
def test_an_id_beyond_sqlites_range_is_refused_like_any_bad_id(edge: InProcess, method: str, path: str) -> None:
    beyond = edge.api(method, path.format(id=TOO_BIG))
    assert beyond.status_code == 422, beyond.text
    assert "must be at most 9223372036854775807" in beyond.json()["detail"]
    assert edge.api(method, path.format(id=LARGEST)).status_code == 404  # the largest id is a well-formed one that names nothing


@pytest.mark.parametrize("since", [str(TOO_BIG), "99999999999999999999999"])
def test_a_since_beyond_the_range_is_refused(edge: InProcess, since: str) -> None:
    for path in (f"/minds/{EDGE_MIND}/events?since={since}", f"/minds/{EDGE_MIND}/events/stream?since={since}"):
        answer = edge.api("GET", path)
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"].startswith("since must be at most 9223372036854775807, not ")


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "outcome", "prediction": TOO_BIG, "result": "hit"},
        {"kind": "goal", "goal": TOO_BIG, "progress": 0.5},
        {"kind": "correction", "belief": TOO_BIG, "reason": "wrong", "status": "rejected"},
        {"kind": "message", "author": "bob", "text": "hi", "reply_to": TOO_BIG},
    ],
)
def test_an_id_in_a_stimulus_beyond_the_range_is_refused_before_it_is_stored(edge: InProcess, body: dict[str, Any]) -> None:
    answer = edge.api("POST", f"/minds/{EDGE_MIND}/events", json=body)
    assert answer.status_code == 422, answer.text
    assert edge.api("GET", f"/minds/{EDGE_MIND}/events?kind={body['kind']}").json()["events"] == []


def test_ids_in_other_bodies_are_bounded_too(app: InProcess, mind: str) -> None:
    memory = app.api("POST", f"/minds/{mind}/memories", json={"text": "a fact", "derived_from": [TOO_BIG]})
    assert memory.status_code == 422 and memory.json()["detail"].startswith("derived_from[0] must be at most 9223372036854775807")
    rule = {"name": "all", "match": {}, "behaviour": "always"}
    assert app.api("POST", f"/minds/{mind}/rules", json={"rule": rule, "position": TOO_BIG}).status_code == 422
    assert app.api("POST", f"/minds/{mind}/rules", json={"rule": rule}).status_code == 201
    assert app.api("POST", f"/minds/{mind}/rules/all/move", json={"to": TOO_BIG}).status_code == 422


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_json_cannot_carry_is_refused_before_the_commit(edge: InProcess, number: str) -> None:
    # The fast ingest path reads the raw bytes: Python's and pydantic's parsers both take these.
    raw = '{"kind": "observation", "source": "probe", "text": "reading", "data": {"deep": [1, {"x": %s}]}}' % number
    answer = edge.api("POST", f"/minds/{EDGE_MIND}/events", content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("data: deep[1].x is ")
    assert edge.api("GET", f"/minds/{EDGE_MIND}/events?kind=observation").json()["events"] == []


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        ("/minds/{mind}", '{"settings": {"notify_cooldown": NaN}}'),
        ("/minds/{mind}/rules", '{"rule": {"name": "r", "match": {}, "behaviour": {"debounce": {"ms": 1e999}}}}'),
        ("/minds/{mind}/rules/default", '{"behaviour": {"debounce": {"ms": Infinity}}}'),
        ("/minds/{mind}/trust/bob", '{"value": NaN}'),
        ("/minds/{mind}/events", '{"kind": "prediction", "proposition": "p", "subject": "s", "confidence": NaN, "due": "2h"}'),
    ],
)
def test_no_body_takes_a_non_finite_number(edge: InProcess, path: str, raw: str) -> None:
    method = {"/minds/{mind}": "PATCH", "/minds/{mind}/rules": "POST", "/minds/{mind}/events": "POST"}.get(path, "PUT")
    answer = edge.api(method, path.format(mind=EDGE_MIND), content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text


def test_a_stored_event_holding_nan_does_not_make_reads_fail(app: InProcess, mind: str) -> None:
    """Stored before the edge refused them (or by a path that skipped it): every read still answers."""
    event = app.run(
        app.sup.store.writer.run(
            lambda db: _raw_append(db, mind, '{"source":"probe","data":{"x":NaN,"y":Infinity}}')
        )
    )
    for path in (f"/events/{event}", f"/events/{event}/chain", f"/minds/{mind}/events", f"/minds/{mind}"):
        answer = app.api("GET", path)
        assert answer.status_code == 200, (path, answer.text)
    assert app.api("GET", f"/events/{event}").json()["data"]["data"] == {"x": None, "y": None}


def _raw_append(db: Any, mind: str, data: str) -> int:
    """An observation whose stored data holds NaN, as an older noemad stored it."""
    event = append(db, EventDraft(mind=mind, kind="observation", actor="source:probe", text="reading"), 0)
    db.execute("UPDATE events SET data = ? WHERE id = ?", [data, event.id])
    return event.id


def test_the_writer_refuses_to_store_a_non_finite_number(app: InProcess, mind: str) -> None:
    draft = EventDraft(mind=mind, kind="observation", actor="source:probe", text="t", data={"x": float("nan")})
    with pytest.raises(Exception, match="not finite"):
        app.run(app.sup.store.writer.run(lambda db: append(db, draft, 0)))


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/minds/{mind}/trust/bob", {"value": False}),
        ("PUT", "/minds/{mind}/trust/bob", {"value": "0.5"}),
        ("PUT", "/schedules/reflection", {"paused": 0}),
        ("PUT", "/schedules/reflection", {"paused": "true"}),
        ("POST", "/minds/{mind}/memories", {"text": "a fact", "importance": True}),
        ("POST", "/minds/{mind}/events", {"kind": "prediction", "proposition": "p", "subject": "s", "confidence": True, "due": "2h"}),
        ("POST", "/minds/{mind}/events", {"kind": "message", "author": "bob", "text": "hi", "dm": 1}),
        ("POST", "/minds/{mind}/events", {"kind": "goal", "goal": True, "progress": 0.5}),
        ("POST", "/minds/{mind}/events", {"kind": "outcome", "prediction": "1", "result": "hit"}),
        ("POST", "/clock/advance", {"seconds": True}),
    ],
)
def test_bools_are_not_numbers_nor_numbers_bools(edge: InProcess, method: str, path: str, body: dict[str, Any]) -> None:
    answer = edge.api(method, path.format(mind=EDGE_MIND), json=body)
    assert answer.status_code == 422, answer.text


def test_an_int_is_still_a_number(app: InProcess, mind: str) -> None:
    assert app.api("PUT", f"/minds/{mind}/trust/bob", json={"value": 1}).json()["value"] == 1.0


@pytest.mark.parametrize("since", ["99999999d", "9" * 400 + "d", "0000-01-01"])
def test_a_usage_since_outside_the_calendar_is_refused(edge: InProcess, since: str) -> None:
    answer = edge.api("GET", f"/usage?since={since}")
    assert answer.status_code == 422, answer.text
    assert "since=" in answer.json()["detail"]


# a full disk ------------------------------------------------------------------------------


def _fill_disk(db: Any) -> None:
    """The database may grow no more: SQLite answers the next write that needs a page with SQLITE_FULL, as on a full disk."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")


def _filling(mind: str) -> Any:
    """A writer job that fills the disk, then writes more than fits."""

    def job(db: Any) -> None:
        _fill_disk(db)
        append(db, EventDraft(mind=mind, kind="observation", actor="source:probe", text="y" * 60_000), 0)

    return job


def _free_disk(db: Any) -> None:
    db.execute("PRAGMA max_page_count = 1073741823")


BIG_MESSAGE = {"kind": "message", "author": "bob", "text": "x" * 60_000}  # needs new pages whatever space is left in the last


def test_a_full_disk_answers_507_with_retry_after_and_reads_keep_working(app: InProcess, mind: str) -> None:
    app.run(app.sup.store.writer.run(_fill_disk))
    full = app.api("POST", f"/minds/{mind}/events", json=BIG_MESSAGE)
    assert full.status_code == 507, full.text
    assert full.headers["retry-after"] == "30"
    assert full.json()["title"] == "Storage full"
    assert "is full, so nothing of this request was stored; free space there, then retry" in full.json()["detail"]
    assert app.api("GET", f"/minds/{mind}/events?kind=message").json()["events"] == []  # not acknowledged, not stored
    assert app.api("GET", "/status").status_code == 200
    assert app.api("GET", f"/minds/{mind}").status_code == 200
    app.run(app.sup.store.writer.run(_free_disk))  # space is back: the writer took no harm
    assert app.api("POST", f"/minds/{mind}/events", json=BIG_MESSAGE).status_code == 201


def test_a_full_disk_fails_every_write_of_its_group_not_the_writer(app: InProcess, mind: str) -> None:
    """SQLITE_FULL rolls back the whole transaction: a job that ran before it in the group was not stored either."""
    from noemad.errors import StoreFull

    writer = app.sup.store.writer
    blocker = hold_writer(writer)  # the writer is in the blocker's group: the next two jobs queue up behind it, as one group
    small = writer.submit(lambda db: append(db, EventDraft(mind=mind, kind="observation", actor="source:probe", text="small"), 0).id)
    filler = writer.submit(_filling(mind))
    blocker.release.set()
    blocker.job.result(30)
    with pytest.raises(StoreFull):
        filler.result(30)
    with pytest.raises(StoreFull):
        small.result(30)  # acknowledged would be a lie: its transaction is gone
    assert app.api("GET", f"/minds/{mind}/events?kind=observation").json()["events"] == []
    app.run(writer.run(_free_disk))
    assert app.api("POST", f"/minds/{mind}/events", json=BIG_MESSAGE).status_code == 201


def test_a_full_disk_answers_the_stimuli_a_group_took_in_and_had_not_run_yet(app: InProcess, mind: str) -> None:
    """Stimuli taken into a turn's group (they go first) and lost with its transaction are answered, never left waiting."""
    import asyncio

    from noemad.errors import StoreFull

    writer = app.sup.store.writer
    blocker = hold_writer(writer)  # not first: the stimuli asked while it runs end its group, and run in it

    async def stimuli() -> list[BaseException | int]:
        asked = [
            asyncio.ensure_future(writer.run(_filling(mind), first=True)),
            asyncio.ensure_future(writer.run(lambda db: append(db, EventDraft(mind=mind, kind="observation", actor="source:probe", text="small"), 0).id, first=True)),
        ]
        for _ in range(3):  # handed to the writer at the end of this turn of the loop
            await asyncio.sleep(0)
        blocker.release.set()
        return await asyncio.wait_for(asyncio.gather(*asked, return_exceptions=True), 30)

    outcomes = app.run(stimuli())
    blocker.job.result(30)
    assert [type(o) for o in outcomes] == [StoreFull, StoreFull]
    assert app.api("GET", f"/minds/{mind}/events?kind=observation").json()["events"] == []
    app.run(writer.run(_free_disk))
    assert app.api("POST", f"/minds/{mind}/events", json=BIG_MESSAGE).status_code == 201


# a failed turn's stimuli are retried -------------------------------------------------------


def _debounced(app: InProcess, mind: str) -> None:
    """Stimuli wait 10 s for their turn: the disk can fill between their 201 and the turn."""
    answer = app.api("PUT", f"/minds/{mind}/rules/default", json={"behaviour": {"debounce": {"ms": 10_000}}})
    assert answer.status_code == 200, answer.text


def _retry(app: InProcess, mind: str) -> dict[str, Any] | None:
    status = app.api("GET", "/status").json()
    return next(m for m in status["minds"] if m["name"] == mind)["retry"]


def _kinds(app: InProcess, mind: str, kind: str) -> list[dict[str, Any]]:
    return app.api("GET", f"/minds/{mind}/events?kind={kind}").json()["events"]


def test_stimuli_whose_turn_failed_on_a_full_disk_are_retried_with_backoff(app: InProcess, mind: str) -> None:
    _debounced(app, mind)
    said = [app.api("POST", f"/minds/{mind}/events", json=BIG_MESSAGE).json()["id"] for _ in range(3)]
    app.run(app.sup.store.writer.run(_fill_disk))
    app.advance(10)  # the batch is due: its turn fails on the full disk
    app.settle(mind)
    assert _kinds(app, mind, "cycle_started") == []
    first = _retry(app, mind)
    assert first is not None
    assert (first["attempt"], first["stimuli"], first["at"]) == (1, 3, "2026-01-01T00:00:15.000Z")
    assert "is full" in first["error"]
    app.advance(5)  # still full: the second try fails too, and waits twice as long
    app.settle(mind)
    second = _retry(app, mind)
    assert second is not None and (second["attempt"], second["at"]) == (2, "2026-01-01T00:00:25.000Z")
    app.run(app.sup.store.writer.run(_free_disk))
    app.advance(9)
    app.settle(mind)
    assert _kinds(app, mind, "cycle_started") == []  # not before its time
    app.advance(1)
    started = app.wait_for(mind, "cycle_started")
    assert set(said) <= set(started["parents"])
    app.settle(mind)
    assert _retry(app, mind) is None
    assert app.sup.actors[mind].retry is None


def test_a_failed_turn_is_recorded_and_shown_and_its_stimuli_taken_by_the_retry(
    app: InProcess, mind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_first_turn(monkeypatch)
    said = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "bob", "text": "hello"}).json()["id"]
    failed = app.wait_for(mind, "turn_failed")
    assert failed["text"] == "a turn failed (injected write failure); its stimulus is retried at 2026-01-01T00:00:05.000Z"
    assert failed["data"]["stimuli"] == [said] and failed["data"]["attempt"] == 1
    assert failed["causation_id"] == said
    app.settle(mind)
    shown = _retry(app, mind)
    assert shown == {"attempt": 1, "at": "2026-01-01T00:00:05.000Z", "stimuli": 1, "error": "injected write failure"}

    from noemactl import daemon_view
    from rich.console import Console

    console = Console(width=200, record=True)
    for part in daemon_view.status(app.api("GET", "/status").json()):
        console.print(part)
    assert f"turn failed {mind}: 1 stimulus retried at 2026-01-01 00:00:05 (attempt 1: injected write failure)" in console.export_text()

    app.advance(5)
    started = app.wait_for(mind, "cycle_started")
    assert said in started["parents"]
    app.settle(mind)
    assert _retry(app, mind) is None


@pytest.mark.parametrize("data", ['{"x": NaN}', '{"x": 1e999}', '{"x": [-Infinity]}'])
def test_noemactl_refuses_a_number_json_cannot_carry_with_a_sentence(app: InProcess, data: str) -> None:
    """noemactl's own parsing refuses it (in process): nothing reaches the engine."""
    assert app.api("POST", "/minds", json={"name": EDGE_MIND}).status_code == 201
    done = app.ctl("observe", EDGE_MIND, "reading", "--source", "probe", "--data", data)
    assert done.returncode == 2, done.stderr
    assert "--data is not valid JSON (" in done.stderr and "Traceback" not in done.stderr
    assert app.api("GET", f"/minds/{EDGE_MIND}/events?kind=observation").json()["events"] == []


def test_a_gate_that_fails_after_the_commit_answers_201_and_the_stimulus_still_wakes_the_mind(
    app: InProcess, mind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 5xx after the commit would make a retrying client store the stimulus twice."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected gate failure")

    monkeypatch.setattr(app.sup.actors[mind].gate, "offer", broken)
    answer = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "bob", "text": "hello"})
    assert answer.status_code == 201, answer.text
    started = app.wait_for(mind, "cycle_started")
    assert started["parents"] == [answer.json()["id"]]


@pytest.mark.parametrize(
    ("method", "path", "raw"),
    [
        ("PATCH", "/minds/{mind}", r'{"settings": {"persona": "a\ud800"}}'),
        ("POST", "/minds", r'{"name": "other", "settings": {"persona": "\udfff"}}'),
        ("POST", "/minds/{mind}/rules", r'{"rule": {"name": "r", "match": {"text": "a\ud800"}, "behaviour": "always"}}'),
    ],
)
def test_a_lone_surrogate_in_free_json_is_refused_and_reads_keep_working(edge: InProcess, method: str, path: str, raw: str) -> None:
    """JSON's \\ud800 escape parses, but the text cannot be written back out: stored, it would break every read of it.

    (The fast ingest path's parser already refuses it as malformed JSON, 400.)
    """
    answer = edge.api(method, path.format(mind=EDGE_MIND), content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert "lone surrogate" in answer.json()["detail"]
    assert edge.api("GET", f"/minds/{EDGE_MIND}").status_code == 200
    assert edge.api("GET", "/minds").status_code == 200
    assert edge.api("GET", f"/minds/{EDGE_MIND}/rules").status_code == 200
