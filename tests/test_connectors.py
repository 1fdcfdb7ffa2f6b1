"""Connectors: the manager that runs them, their config, and the context that stores what they bring in.

In process, on the manual clock: a connector here is a test double built by
a factory given to `noemad.connectors.kinds`, configured as a webhook (the
kind's table is what the config checks; its factory is what the test gives).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inprocess import InProcess, start_app
from noemad.config.files import load_config
from noemad.connectors import kinds
from noemad.connectors.port import Connector, ConnectorContext, ConnectorSettings, ConnectorState, Delivery, Sent
from noemad.errors import ConfigError
from noemad.inbox import Inbound
from noemad.stimuli import Message


def secret(home: Path, name: str = "hook.secret", mode: int = 0o600) -> Path:
    path = home / name
    path.write_text("s3cret-value\n")
    os.chmod(path, mode)
    return path


def webhook_config(home: Path, *names: str, extra: str = "") -> str:
    key = secret(home)
    return "".join(
        f'[[minds.ada.connectors]]\nkind = "webhook"\nname = "{n}"\nurl = "http://127.0.0.1:9/{n}"\nsecret_file = "{key}"\n{extra}\n'
        for n in names
    )


def matrix_config(home: Path, extra: str = "") -> str:
    token = secret(home, "ada.token")
    return (
        '[[minds.ada.connectors]]\nkind = "matrix"\nhomeserver = "http://127.0.0.1:9"\nuser_id = "@ada:example.org"\n'
        f'access_token_file = "{token}"\n{extra}\n'
    )


class Double:
    """A connector whose run fails the first `failures` times, then brings `bring` in and waits to be cancelled."""

    def __init__(self, settings: ConnectorSettings, context: ConnectorContext, failures: int, bring: list[Inbound]) -> None:
        self.key = settings.key
        self.context = context
        self.failures = failures
        self.bring = bring
        self.runs: list[float] = []  # when each run began, on the daemon's clock
        self.cancelled = 0
        self.ingested: list[Any] = []
        self.brought = asyncio.Event()  # set once its batch is stored (built on the engine's loop)
        self.outcomes: list[Sent | Exception] = []  # what the next sends answer, in order; then Sent
        self.sends: list[tuple[float, Delivery]] = []  # each send asked for, with when
        self.sent = asyncio.Event()  # set at each send that succeeds

    async def run(self) -> None:
        self.runs.append(self.context.clock.now())
        if len(self.runs) <= self.failures:
            raise ConnectionError(f"homeserver unreachable (attempt {len(self.runs)})")
        if self.bring:
            self.ingested += await self.context.ingest(self.bring, "cursor-after-batch")
            self.brought.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise

    async def send(self, delivery: Delivery) -> Sent:
        self.sends.append((self.context.clock.now(), delivery))
        outcome = self.outcomes.pop(0) if self.outcomes else Sent(f"$sent{len(self.sends)}", "accepted")
        if isinstance(outcome, Exception):
            raise outcome
        self.sent.set()
        return outcome

    def state(self) -> ConnectorState:
        return ConnectorState(phase="connected")


@pytest.fixture
def doubles(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Webhook and Matrix connectors built as `Double`s; the dict holds each built one by key and how the next ones behave."""
    made: dict[str, Any] = {"failures": 0, "bring": []}

    def build(settings: ConnectorSettings, context: ConnectorContext) -> Connector:
        double = Double(settings, context, made["failures"], made["bring"])
        made[settings.key] = double
        return double

    monkeypatch.setitem(kinds.FACTORIES, "webhook", build)
    monkeypatch.setitem(kinds.FACTORIES, "matrix", build)
    yield made


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[InProcess]:
    engine = start_app(tmp_path)
    yield engine
    engine.stop()


def with_ada(tmp_path: Path, config: str) -> InProcess:
    """An engine whose config names `config`'s connectors for mind ada, with ada created."""
    engine = start_app(tmp_path, config)
    assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    return engine


def settle(engine: InProcess) -> None:
    """Let the engine's loop run what is ready (no time passes)."""

    async def spin() -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    engine.run(spin())


def test_a_failing_connector_is_restarted_with_growing_delays(tmp_path: Path, doubles: dict[str, Any]) -> None:
    doubles["failures"] = 3
    engine = with_ada(tmp_path, webhook_config(tmp_path, "ops"))
    try:
        settle(engine)
        double = doubles["webhook:ops"]
        start = double.runs[0]
        running = engine.connectors.get("ada", "webhook:ops")
        assert running is not None
        state = running.state()
        assert (state.phase, state.why) == ("backing_off", "homeserver unreachable (attempt 1)")
        assert state.retry_at == start + 2
        for delay in (2, 4, 8):
            engine.advance(delay - 0.5)
            settle(engine)
            runs = len(double.runs)
            engine.advance(0.5)  # not restarted before its delay is over, restarted once it is
            settle(engine)
            assert len(double.runs) == runs + 1
        # Restarted 2 s after the first failure, 4 s after the second, 8 s after the third: then it runs.
        assert [t - start for t in double.runs] == [0, 2, 6, 14]
        state = running.state()
        assert (state.phase, state.restarts) == ("connected", 3)
        assert state.last_error == "homeserver unreachable (attempt 3)"
    finally:
        engine.stop()
    assert double.cancelled == 1  # stopped with the engine


def test_a_reload_starts_new_connectors_stops_removed_ones_and_restarts_changed_ones(tmp_path: Path, doubles: dict[str, Any]) -> None:
    engine = with_ada(tmp_path, webhook_config(tmp_path, "a", "b"))
    try:
        settle(engine)
        a, b = doubles["webhook:a"], doubles["webhook:b"]
        config = webhook_config(tmp_path, "b", "c").replace('url = "http://127.0.0.1:9/b"', 'url = "http://127.0.0.1:9/b2"')
        (tmp_path / "noemad.toml").write_text(config)

        async def reload() -> None:
            engine.sup.apply_config(load_config(tmp_path / "noemad.toml"))

        engine.run(reload())
        settle(engine)
        assert sorted(k for m, k in engine.connectors.running) == ["webhook:b", "webhook:c"]
        assert (a.cancelled, b.cancelled) == (1, 1)  # a removed; b changed, so restarted as a new connector
        assert doubles["webhook:b"] is not b and len(doubles["webhook:b"].runs) == 1
    finally:
        engine.stop()


def test_a_mind_created_after_start_gets_its_connectors(tmp_path: Path, doubles: dict[str, Any]) -> None:
    engine = start_app(tmp_path, webhook_config(tmp_path, "ops"))
    try:
        assert engine.connectors.running == {}
        assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        settle(engine)
        assert list(engine.connectors.running) == [("ada", "webhook:ops")]
        assert engine.api("DELETE", "/minds/ada", json={"confirm": "ada"}).status_code in (200, 204)
        settle(engine)
        assert engine.connectors.running == {}
    finally:
        engine.stop()


def test_a_batch_and_its_cursor_are_stored_once(tmp_path: Path, doubles: dict[str, Any]) -> None:
    doubles["bring"] = [
        Inbound(Message(author="matrix:@bob:example.org", text="hello", channel="matrix:!room:example.org"), "$e1", "!room:example.org"),
        Inbound(Message(author="matrix:@bob:example.org", text="again", channel="matrix:!room:example.org"), "$e2", "!room:example.org", "$e1"),
        Inbound(Message(author="matrix:@bob:example.org", text="hello", channel="matrix:!room:example.org"), "$e1", "!room:example.org"),
    ]
    engine = with_ada(tmp_path, webhook_config(tmp_path, "ops"))
    try:
        settle(engine)
        double = doubles["webhook:ops"]
        engine.run(double.brought.wait())
        assert [e.text for e in double.ingested] == ["hello", "again"]  # $e1 twice in the batch is stored once
        assert double.context.cursor() == "cursor-after-batch"
        assert double.context.find_stimulus("$e2") == double.ingested[1].id
        assert double.context.find_stimulus("$nope") is None
        # The same batch again (a cursor that did not move): nothing is stored twice.
        again = engine.run(double.context.ingest(doubles["bring"], "cursor-2"))
        assert again == []
        messages = engine.api("GET", "/minds/ada/events", params={"kind": "message"}).json()["events"]
        assert [m["text"] for m in messages] == ["hello", "again"]
        assert double.context.cursor() == "cursor-2"
    finally:
        engine.stop()


def test_turn_hooks_hear_a_turn_start_and_end(tmp_path: Path, doubles: dict[str, Any]) -> None:
    engine = with_ada(tmp_path, webhook_config(tmp_path, "ops"))
    try:
        settle(engine)
        heard: list[bool] = []
        double = doubles["webhook:ops"]
        double.context.on_turn(heard.append)
        assert engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).status_code == 201
        engine.settle("ada")
        assert heard == [True, False]
    finally:
        engine.stop()


def test_a_secret_readable_by_others_or_missing_is_refused_with_a_sentence(tmp_path: Path) -> None:
    open_key = secret(tmp_path, "open.secret", 0o644)
    (tmp_path / "noemad.toml").write_text(
        f'[[minds.ada.connectors]]\nkind = "webhook"\nurl = "http://127.0.0.1:9/"\nsecret_file = "{open_key}"\n\n'
        f'[[minds.ada.connectors]]\nkind = "matrix"\nhomeserver = "https://m.example.org"\nuser_id = "@ada:example.org"\n'
        f'access_token_file = "{tmp_path}/missing.token"\n\n'
        '[[minds.ada.connectors]]\nkind = "irc"\n'
    )
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path / "noemad.toml")
    said = str(refused.value)
    assert f"minds.ada.connectors[1].secret_file: '{open_key}' is readable or writable by group or others (mode 0644); chmod 600 it" in said
    assert f"minds.ada.connectors[2].access_token_file: '{tmp_path}/missing.token' does not exist" in said
    assert "minds.ada.connectors[3]: kind = \"irc\" is not one this table takes; write one of 'matrix', 'webhook'" in said


def test_connectors_are_not_a_stored_setting(engine: InProcess) -> None:
    answer = engine.api("POST", "/minds", json={"name": "ada", "settings": {"connectors": []}})
    assert answer.status_code == 422
    assert "connectors name credentials on the daemon's host" in answer.json()["detail"]


def test_config_show_names_a_connectors_secret_as_set_never_its_value(tmp_path: Path, doubles: dict[str, Any]) -> None:
    engine = with_ada(tmp_path, webhook_config(tmp_path, "ops"))
    try:
        shown = engine.ctl("config", "show", "--json")
        assert shown.returncode == 0, shown.stderr
        assert "s3cret-value" not in shown.stdout
        view = json.loads(shown.stdout)
        secrets = {s["key"]: s for s in view["secrets"]}
        assert secrets["minds.ada.connectors[1].secret"]["set"] is True
        assert secrets["minds.ada.connectors[1].secret"]["source"] == f"file ({tmp_path / 'hook.secret'})"
        ada = next(m for m in view["minds"] if m["mind"] == "ada")
        connectors = next(v for v in ada["values"] if v["key"] == "connectors")["value"]
        assert connectors[0]["url"] == "http://127.0.0.1:9/ops"
        assert "s3cret-value" not in engine.ctl("config", "show").stdout
    finally:
        engine.stop()
