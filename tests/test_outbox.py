"""The outbox: a reply's deliveries written with it, sent by each connector's worker, retried, given up visibly.

In process on the manual clock, with the connector doubles of test_connectors
(a Matrix and a webhook table whose factories the test gives) and a scripted
respond model that answers every message "Noted.".
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND
from inprocess import InProcess, start_app
from noemad.clock import parse_iso
from noemad.config.files import load_config
from noemad.connectors.port import DeliveryFailed
from noemad.inbox import Inbound
from noemad.stimuli import Message
from test_connectors import doubles, matrix_config, settle, webhook_config  # noqa: F401 - doubles is a fixture

SCRIPT = """
[respond]
default = "Noted."
"""


async def reload(engine: InProcess) -> None:
    """Apply the engine's noemad.toml as a reload does."""
    engine.sup.apply_config(load_config(engine.home / "noemad.toml"))


def engine_with(home: Path, connectors: str) -> InProcess:
    (home / "script.toml").write_text(SCRIPT)
    engine = start_app(home, SCRIPTED_RESPOND.format(script=home / "script.toml") + "\n" + connectors)
    assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    settle(engine)
    return engine


@pytest.fixture
def room(tmp_path: Path, doubles: dict[str, Any]) -> Iterator[tuple[InProcess, dict[str, Any]]]:  # noqa: F811
    engine = engine_with(tmp_path, matrix_config(tmp_path) + webhook_config(tmp_path, "ops", extra='give_up_after = "90s"'))
    yield engine, doubles
    engine.stop()


def said_in_room(engine: InProcess, double: Any, text: str, remote_id: str, thread: str | None = None) -> int:
    """A message said in the double's room, brought in as its connector does; the stimulus' id."""
    message = Message(author="matrix:@bob:example.org", text=text, channel="matrix:!garden:example.org")
    (stored,) = engine.run(double.context.ingest([Inbound(message, remote_id, "!garden:example.org", thread)], f"after-{remote_id}"))
    return int(stored.id)


def wait_sent(engine: InProcess, double: Any) -> None:
    async def sent() -> None:
        await asyncio.wait_for(double.sent.wait(), 30)
        double.sent.clear()

    engine.run(sent())


def next_delivery(engine: InProcess, since: int, connector: str | None = None) -> dict[str, Any]:
    """The first `delivery` event after id `since` (of `connector`, if given), waited for as it is committed."""
    while True:
        event = engine.wait_for("ada", "delivery", since)
        if connector is None or event["data"]["connector"] == connector:
            return event
        since = event["id"]


def deliveries(engine: InProcess, **params: Any) -> list[dict[str, Any]]:
    """Every `delivery` event of ada, oldest first."""
    answer = engine.api("GET", "/minds/ada/events", params={"kind": "delivery", **params})
    return list(answer.json()["events"])


def test_a_reply_goes_back_to_the_room_and_thread_as_an_answer_to_the_message_and_to_every_webhook(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, made = room
    matrix, hook = made["matrix:@ada:example.org"], made["webhook:ops"]
    message = said_in_room(engine, matrix, "how are the roses?", "$m1", thread="$root")
    next_delivery(engine, message, matrix.key)
    next_delivery(engine, message, hook.key)
    reply = engine.wait_for("ada", "reply")
    ((_, to_room),) = matrix.sends
    assert (to_room.room, to_room.thread, to_room.in_reply_to) == ("!garden:example.org", "$root", "$m1")
    assert (to_room.text, to_room.event_id, to_room.answers, to_room.what) == ("Noted.", reply["id"], message, "reply")
    assert to_room.idempotency_key == f"noema-ada-{reply['id']}"
    ((_, to_hook),) = hook.sends
    assert (to_hook.room, to_hook.in_reply_to, to_hook.text, to_hook.event_id) == (None, None, "Noted.", reply["id"])
    # Each outcome is a delivery event caused by the reply: the timeline walks message -> reply -> delivery.
    walked = engine.api("GET", f"/events/{message}/chain", params={"forward": 3}).json()
    kinds = {n["id"]: n["kind"] for n in walked["nodes"]}
    sent = [e for e in deliveries(engine) if e["data"]["outcome"] == "sent"]
    assert sorted(e["data"]["connector"] for e in sent) == ["matrix:@ada:example.org", "webhook:ops"]
    assert all(e["causation_id"] == reply["id"] and kinds.get(e["id"]) == "delivery" for e in sent)
    assert sent[0]["text"].startswith(f"delivered reply {reply['id']} to ")


def test_a_reply_to_a_message_from_the_api_goes_to_the_webhooks_only(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, made = room
    stimulus = engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()["id"]
    next_delivery(engine, stimulus, "webhook:ops")
    engine.settle("ada")
    assert made["matrix:@ada:example.org"].sends == []
    assert len(made["webhook:ops"].sends) == 1


def test_transient_failures_are_retried_after_a_backoff_or_what_the_remote_side_asked(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, made = room
    matrix = made["matrix:@ada:example.org"]
    matrix.outcomes = [
        DeliveryFailed("HTTP 502", transient=True),
        DeliveryFailed("HTTP 429: rate limited", transient=True, retry_after=42.0),
    ]
    stimulus = said_in_room(engine, matrix, "hello", "$m1")
    failed = next_delivery(engine, stimulus, matrix.key)
    first = matrix.sends[0][0]
    engine.advance(4.9)
    settle(engine)
    assert len(matrix.sends) == 1  # the backoff's first step is 5 s
    engine.advance(0.1)
    limited = next_delivery(engine, failed["id"], matrix.key)
    engine.advance(41.9)
    settle(engine)
    assert len(matrix.sends) == 2  # then what the 429 asked: 42 s
    engine.advance(0.1)
    next_delivery(engine, limited["id"], matrix.key)
    assert [t - first for t, _ in matrix.sends] == [0, 5, 47]
    assert {d.idempotency_key for _, d in matrix.sends} == {matrix.sends[0][1].idempotency_key}  # one key for every attempt
    assert [d.attempt for _, d in matrix.sends] == [1, 2, 3]
    outcomes = [(e["data"]["outcome"], e["data"].get("error")) for e in deliveries(engine) if e["data"]["connector"].startswith("matrix")]
    assert outcomes == [("failed", "HTTP 502"), ("failed", "HTTP 429: rate limited"), ("sent", None)]


def test_a_delivery_is_given_up_after_its_time_visibly_and_can_be_retried_by_hand(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, made = room
    hook = made["webhook:ops"]
    hook.outcomes = [DeliveryFailed("HTTP 500", transient=True) for _ in range(10)]
    stimulus = engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()["id"]
    event = next_delivery(engine, stimulus, hook.key)
    while event["data"]["outcome"] == "failed":  # 5, 10, 20, 40 s ... the last at the give-up time, 90 s after the reply
        engine.advance(parse_iso(event["data"]["retry_at"]) - engine.clock.now())
        event = next_delivery(engine, event["id"], hook.key)
    assert (event["data"]["outcome"], event["data"]["error"]) == ("given_up", "HTTP 500")
    delivery = event["data"]["delivery"]
    assert [round(t - hook.sends[0][0]) for t, _ in hook.sends] == [0, 5, 15, 35, 75, 90]
    (notification,) = engine.api("GET", "/minds/ada/notifications").json()["notifications"]
    assert notification["rule"] == "delivery_given_up"
    assert f"`noemactl connectors retry ada {delivery}`" in notification["title"]
    # Visible: in status, noemactl connectors, and the metrics.
    assert "connectors ada: 2 of 2 connectors up, 0 pending, 1 given up (noemactl connectors ada)" in engine.ctl("status").stdout
    shown = engine.ctl("connectors", "ada").stdout
    assert f"ada webhook:ops: delivery {delivery} (reply " in shown
    assert f"given up after 6 attempts: HTTP 500; `noemactl connectors retry ada {delivery}` sends it again" in shown
    assert "connector webhook:ops: connected, 0 pending, 1 given up" in engine.ctl("gate-status", "ada").stdout
    page = engine.run(engine.client.get("/minds/ada")).text
    assert 'id="connectors"' in page and "webhook:ops" in page and "HTTP 500" in page
    assert f"/api/v1/minds/ada/deliveries/{delivery}/retry" in page  # the Retry button of the delivery given up
    metrics = engine.api("GET", "/metrics").text
    assert 'noemad_deliveries{mind="ada",connector="webhook:ops",status="given_up"} 1' in metrics
    # Given up: no more tries, however long one waits.
    engine.advance(3600)
    settle(engine)
    assert len(hook.sends) == 6
    # By hand: tried again at once, and sent.
    hook.outcomes = []
    retried = engine.api("POST", f"/minds/ada/deliveries/{delivery}/retry")
    assert retried.status_code == 200, retried.text
    assert retried.json()["delivery"]["status"] == "pending"
    sent = next_delivery(engine, retried.json()["event"], hook.key)
    assert sent["data"]["outcome"] == "sent"
    assert [e["data"]["outcome"] for e in deliveries(engine)][-2:] == ["retried", "sent"]
    again = engine.api("POST", f"/minds/ada/deliveries/{delivery}/retry")
    assert again.status_code == 409
    assert again.json()["detail"] == f"delivery {delivery} was sent; only a delivery given up can be retried by hand"


def test_a_permanent_failure_is_given_up_at_once(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, made = room
    hook = made["webhook:ops"]
    hook.outcomes = [DeliveryFailed("HTTP 410 Gone", transient=False)]
    stimulus = engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()["id"]
    event = next_delivery(engine, stimulus, hook.key)
    assert (event["data"]["outcome"], event["data"]["error"]) == ("given_up", "HTTP 410 Gone (not worth retrying)")


def test_a_webhook_that_asks_for_notifications_gets_each_new_one_and_the_others_do_not(tmp_path: Path, doubles: dict[str, Any]) -> None:  # noqa: F811
    engine = engine_with(tmp_path, webhook_config(tmp_path, "ops") + webhook_config(tmp_path, "pager", extra="notifications = true"))
    try:
        seen = {"source": "smoke-detector", "text": "smoke in the greenhouse", "data": {"salience": 0.95}}
        stimulus = engine.api("POST", "/minds/ada/events", json={"kind": "observation", **seen}).json()["id"]
        notification = engine.wait_for("ada", "notification", stimulus)
        pager, ops = doubles["webhook:pager"], doubles["webhook:ops"]
        wait_sent(engine, pager)
        ((_, sent),) = pager.sends
        assert (sent.what, sent.event_id, sent.text) == ("notification", notification["id"], notification["text"])
        engine.settle("ada")
        assert ops.sends == []  # no reply (an observation is not answered), and it did not ask for notifications
    finally:
        engine.stop()


def test_a_connector_that_cannot_start_says_why_and_its_deliveries_are_given_up_in_time(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, webhook_config(tmp_path, "ops", extra='give_up_after = "30s"').replace("minds.ada.", "minds.bob."))
    try:
        # Its secret became readable by others after the config was loaded: bob's connector cannot start.
        os.chmod(tmp_path / "hook.secret", 0o644)
        assert engine.api("POST", "/minds", json={"name": "bob"}).status_code == 201
        settle(engine)
        (shown,) = engine.api("GET", "/minds/bob/connectors").json()["connectors"]
        assert shown["state"]["phase"] == "stopped"
        assert "is readable or writable by group or others (mode 0644); chmod 600 it" in shown["state"]["why"]
        stimulus = engine.api("POST", "/minds/bob/events", json={"kind": "message", "author": "al", "text": "hi"}).json()["id"]
        event = engine.wait_for("bob", "delivery", stimulus)
        assert event["data"]["outcome"] == "failed" and event["data"]["error"].startswith("the connector is not running: ")
        while event["data"]["outcome"] == "failed":
            engine.advance(parse_iso(event["data"]["retry_at"]) - engine.clock.now())
            event = engine.wait_for("bob", "delivery", event["id"])
        assert event["data"]["outcome"] == "given_up"
    finally:
        engine.stop()


def test_removing_a_connector_gives_up_what_waits_in_its_outbox(room: tuple[InProcess, dict[str, Any]], tmp_path: Path) -> None:
    engine, made = room
    hook = made["webhook:ops"]
    hook.outcomes = [DeliveryFailed("HTTP 503", transient=True)]
    stimulus = engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()["id"]
    failed = next_delivery(engine, stimulus, hook.key)
    assert failed["data"]["outcome"] == "failed"
    (tmp_path / "noemad.toml").write_text((tmp_path / "noemad.toml").read_text().split('[[minds.ada.connectors]]\nkind = "webhook"')[0])
    engine.run(reload(engine))
    given_up = next_delivery(engine, failed["id"], hook.key)
    assert (given_up["data"]["outcome"], given_up["data"]["error"]) == ("given_up", "its connector was removed from the config")
    assert hook.cancelled == 1
    assert engine.api("GET", "/minds/ada/notifications").json()["notifications"][0]["rule"] == "delivery_given_up"


def test_retrying_a_delivery_that_does_not_exist_says_so(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, _ = room
    out = engine.ctl("connectors", "retry", "ada", "999")
    assert out.returncode != 0
    assert out.stderr.strip() == "noemactl: mind 'ada' has no delivery 999; list them with `noemactl connectors ada --json`"
    assert engine.ctl("connectors", "retry", "nobody", "1").returncode != 0


def test_a_later_reply_waits_for_an_earlier_one_being_retried(room: tuple[InProcess, dict[str, Any]]) -> None:
    engine, made = room
    matrix = made["matrix:@ada:example.org"]
    matrix.outcomes = [DeliveryFailed("HTTP 502", transient=True)]
    first = said_in_room(engine, matrix, "one", "$m1")
    failed = next_delivery(engine, first, matrix.key)
    second = said_in_room(engine, matrix, "two", "$m2")
    engine.wait_for("ada", "reply", second)
    engine.settle("ada")
    for _ in range(5):  # the worker has been told of the second reply and looked: it waits for the first
        settle(engine)
        engine.api("GET", "/minds/ada/connectors")
    assert [d.in_reply_to for _, d in matrix.sends] == ["$m1"]
    engine.advance(5)
    sent = next_delivery(engine, failed["id"], matrix.key)
    next_delivery(engine, sent["id"], matrix.key)
    assert [d.in_reply_to for _, d in matrix.sends] == ["$m1", "$m1", "$m2"]
