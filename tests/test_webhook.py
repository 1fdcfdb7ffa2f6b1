"""Outbound webhooks against a real HTTP receiver on loopback (a port of its own, picked by binding 0).

The receiver fails the first attempts (500, 500, then a 429 with
Retry-After), then accepts: exactly one delivery is accepted, its signature
verifies with the README's snippet, every attempt carries the same
Idempotency-Key, and the retries show in `noemactl connectors` and the
timeline. A real noemad proves that a restart resumes a pending delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND, Noemad, start_noemad
from inprocess import InProcess, start_app
from noemad.clock import parse_iso

SCRIPT = """
[respond]
default = "The roses are fine."
"""
SECRET = "whsec-test-0123456789"


@dataclass
class Receiver:
    """A webhook receiver: answers each POST with the next of `answers` (status, headers), then 200; keeps what it got.

    With `hold` set, the first POST is kept unanswered until `release` is set (a send in flight).
    """

    answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    got: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)  # (status answered, headers, body)
    url: str = ""
    hold: bool = False
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def accepted(self) -> list[tuple[dict[str, str], bytes]]:
        return [(h, b) for s, h, b in self.got if s == 200]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if state.hold and not state.arrived.is_set():
                state.arrived.set()
                state.release.wait(30)
            with lock:
                status, headers = state.answers.pop(0) if state.answers else (200, {})
                state.got.append((status, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/noema"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def config(home: Path, url: str) -> str:
    (home / "script.toml").write_text(SCRIPT)
    key = home / "hook.secret"
    key.write_text(SECRET + "\n")
    os.chmod(key, 0o600)
    return SCRIPTED_RESPOND.format(script=home / "script.toml") + (
        f'\n[[minds.ada.connectors]]\nkind = "webhook"\nname = "ops"\nurl = "{url}"\nsecret_file = "{key}"\n'
    )


def verify(secret: str, header: str, body: bytes) -> bool:
    # The README's snippet, as a receiver would write it.
    parts = dict(p.split("=", 1) for p in header.split(","))
    expected = hmac.new(secret.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


def test_a_failing_then_accepting_receiver_gets_one_signed_delivery_and_the_retries_show(
    tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    receiver.answers = [(500, {}), (500, {}), (429, {"Retry-After": "7"})]
    engine: InProcess = start_app(tmp_path, config(tmp_path, receiver.url))
    try:
        assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        asked = engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "how are the roses?"})
        event = engine.wait_for("ada", "delivery", asked.json()["id"])
        while event["data"]["outcome"] == "failed":
            engine.advance(parse_iso(event["data"]["retry_at"]) - engine.clock.now())
            event = engine.wait_for("ada", "delivery", event["id"])
        assert event["data"]["outcome"] == "sent"
        reply = engine.wait_for("ada", "reply", asked.json()["id"])

        assert [s for s, _, _ in receiver.got] == [500, 500, 429, 200]
        ((headers, body),) = receiver.accepted
        assert verify(SECRET, headers["noema-signature"], body)
        assert not verify("another secret", headers["noema-signature"], body)
        assert {h["idempotency-key"] for _, h, _ in receiver.got} == {f"noema-ada-{reply['id']}"}
        sent = json.loads(body)
        assert (sent["type"], sent["mind"], sent["event"], sent["text"], sent["answers"]) == (
            "reply", "ada", reply["id"], "The roses are fine.", asked.json()["id"],
        )
        assert sent["attempt"] == 4

        # The retries, in `noemactl connectors` and the timeline (message -> reply -> each delivery event).
        (shown,) = engine.ctl_json("connectors", "ada")["connectors"]
        assert (shown["key"], shown["state"]["phase"], shown["outbox"]) == ("webhook:ops", "connected", {"pending": 0, "sent": 1, "given_up": 0})
        assert shown["state"]["last_error"] == "HTTP 429"
        walked = engine.api("GET", f"/events/{reply['id']}/chain", params={"forward": 1}).json()
        outcomes = sorted((n["id"], n["text"]) for n in walked["nodes"] if n["kind"] == "delivery")
        assert [t.split(" (")[0] for _, t in outcomes] == [
            f"delivery of reply {reply['id']} to webhook:ops failed",
            f"delivery of reply {reply['id']} to webhook:ops failed",
            f"delivery of reply {reply['id']} to webhook:ops failed",
            f"delivered reply {reply['id']} to webhook:ops",
        ]
        # 5 s after the first 500, 10 s after the second, then the 7 s the 429 asked for.
        times = [parse_iso(e["at"]) for e in engine.api("GET", "/minds/ada/events", params={"kind": "delivery"}).json()["events"]]
        assert [round(b - a) for a, b in zip(times, times[1:])] == [5, 10, 7]
        # The secret is in no event, no log line, no answer of config show.
        assert SECRET not in engine.api("GET", "/minds/ada/events", params={"limit": 1000}).text
        assert SECRET not in caplog.text and "failed" in caplog.text
        assert SECRET not in engine.ctl("config", "show", "--json").stdout
    finally:
        engine.stop()


def test_a_restart_resumes_a_pending_delivery_with_the_same_key(place: Path, receiver: Receiver) -> None:
    home = place / "home"
    home.mkdir()
    (home / "noemad.toml").write_text(config(home, receiver.url))
    receiver.answers = [(503, {})]
    daemon: Noemad = start_noemad(home, place / "s.sock")
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        asked = daemon.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()
        failed = daemon.wait_for("ada", "delivery", asked["id"])
        assert failed["data"]["outcome"] == "failed"
        assert daemon.stop() == 0
        # Restarted before the retry was due: the pending delivery is sent again, with the same key, once.
        daemon = start_noemad(home, place / "s.sock")
        daemon.advance(5)
        sent = daemon.wait_for("ada", "delivery", failed["id"])
        assert sent["data"]["outcome"] == "sent"
        keys = [h["idempotency-key"] for _, h, _ in receiver.got]
        assert len(keys) == 2 and len(set(keys)) == 1
        assert len(receiver.accepted) == 1
        shown = daemon.ctl("connectors", "ada")
        assert shown.returncode == 0, shown.stderr
        assert "webhook:ops" in shown.stdout
    finally:
        daemon.stop()
        daemon.notify.close()


def test_a_send_in_flight_when_noemad_is_killed_is_sent_again_with_the_same_key(place: Path, receiver: Receiver) -> None:
    home = place / "home"
    home.mkdir()
    (home / "noemad.toml").write_text(config(home, receiver.url))
    receiver.hold = True
    daemon: Noemad = start_noemad(home, place / "s.sock")
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        asked = daemon.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).json()
        reply = daemon.wait_for("ada", "reply", asked["id"])
        assert receiver.arrived.wait(30)  # the POST is in flight, unanswered
        daemon.stop(signal.SIGKILL)
        receiver.release.set()
        daemon = start_noemad(home, place / "s.sock")
        sent = daemon.wait_for("ada", "delivery", reply["id"])
        assert (sent["data"]["outcome"], sent["data"]["attempt"]) == ("sent", 1)  # the killed attempt recorded nothing
        keys = [h["idempotency-key"] for _, h, _ in receiver.got]
        assert keys == [f"noema-ada-{reply['id']}"] * 2  # both tries carry one key: the receiver keeps one
        deliveries = daemon.api("GET", "/minds/ada/events", params={"kind": "delivery"}).json()["events"]
        assert [d["data"]["outcome"] for d in deliveries] == ["sent"]
    finally:
        daemon.stop()
        daemon.notify.close()
