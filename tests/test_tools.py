"""Tool use: the models layer's bounded loop, and the mind's own tools in a turn.

The loop (`ModelGateway.converse`) runs through the scripted provider and
through the real Anthropic SDK against the fake Messages API on loopback:
each round is one call with its own ledger row, the results go back as
tool_result blocks, and a request without tools is byte for byte what it was.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from conftest import SCRIPTED_RESPOND
from fake_messages_api import FakeMessagesAPI
from inprocess import InProcess, start_app

from noemad.clock import ManualClock, parse_iso
from noemad.cognition.actions import ActionDenied
from noemad.config.files import parse_config
from noemad.config.mind import MindSettings
from noemad.config.schema import Config
from noemad.errors import ConfigError, InvalidRequest, RateLimited, RuleRefused, ToolRoundsExhausted
from noemad.events import EventDraft, append, get_event, list_events
from noemad.minds import create_mind
from noemad.models import Conversation, ModelGateway, ModelResponse, Prompt, Tool, ToolResult, ToolUse, Turn
from noemad.models.anthropic import AnthropicProvider
from noemad.models.scripted import ScriptedProvider
from noemad.rules.shape import read_rule
from noemad.rules.table import RulesChange, stored_rules
from noemad.stimuli import Message
from noemad.store import Store
from noemad.turn.emit import ReplySkipped
from noemad.turn.run import Turn as MindTurn
from noemad.turn.run import TurnResult, run_turn
from noemad.turn.tools import MIND_TOOLS, ToolCalled
from noemad.wire import dump

T = TypeVar("T")
START = parse_iso("2026-01-01T12:00:00Z")
HAIKU = "claude-haiku-5-5"
KEY = "sk-ant-test-tools"
KEY_ENV = "NOEMA_TEST_TOOLS_KEY"

ECHO = Tool("echo", "Say a word back.", {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]})
CLOCK = Tool("clock", "The time now.", {"type": "object", "properties": {}})


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


class Env:
    """A store with mind ada, a manual clock, and a gateway over a given provider."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = Store(tmp_path / "noema.db")
        self.clock = ManualClock(START)
        self.store.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "test"))
        self.handled: list[ToolUse] = []

    def gateway(self, config: Config, provider: Any = None) -> ModelGateway:
        return ModelGateway(config=lambda: config, clock=self.clock, writer=self.store.writer, provider=provider)

    async def handle(self, use: ToolUse, asked: ModelResponse) -> ToolResult:
        """A handler: echo says its word back; anything else is an error the model reads."""
        assert use in asked.tool_uses and asked.call_id is not None
        self.handled.append(use)
        if use.name == "echo":
            return ToolResult(use.id, f"echoed {use.input.get('word')}")
        return ToolResult(use.id, f"no tool is named {use.name!r}", is_error=True)

    def rows(self) -> list[dict[str, Any]]:
        cur = self.store.reader().execute("SELECT * FROM model_calls ORDER BY id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    yield e
    e.store.close()


SCRIPTED = parse_config(f'[models]\nprovider = "scripted"\n[models.respond]\nmodel = "{HAIKU}"\n', "noemad.toml").config


def ask(text: str = "please echo hello", tools: tuple[Tool, ...] = (ECHO, CLOCK)) -> Prompt:
    return Prompt(role="respond", mind="ada", messages=(Turn.user(text),), tools=tools)


# -- the loop, through the scripted provider --------------------------------


def test_a_tool_call_then_a_final_text_is_two_calls_each_in_the_ledger(env: Env) -> None:
    provider = ScriptedProvider(
        {
            "respond": {
                "rules": [
                    {"match": "please echo", "tool": "echo", "input": {"word": "hello"}, "text": "Let me echo."},
                    {"match": "^echoed hello$", "text": "I said hello."},
                ]
            }
        }
    )
    gateway = env.gateway(SCRIPTED, provider)
    conversation = run(gateway.converse(ask(), env.handle))
    assert conversation.error is None
    assert conversation.final is not None and conversation.final.text == "I said hello."
    assert [u.name for u in env.handled] == ["echo"] and env.handled[0].input == {"word": "hello"}
    rows = env.rows()
    assert [(r["outcome"], r["stop_reason"]) for r in rows] == [("ok", "tool_use"), ("ok", "end_turn")]
    assert conversation.call_ids == tuple(r["id"] for r in rows)
    assert all(r["output_tokens"] > 0 and r["input_tokens"] > 0 for r in rows)
    # The second call carries the first answer and the tool's result after the original question.
    second = provider.requests[1]
    assert [t.role for t in second.messages] == ["user", "assistant", "user"]
    assert second.messages[1].content[1] == env.handled[0]
    assert second.messages[2].content == (ToolResult(env.handled[0].id, "echoed hello"),)
    assert second.tools == (ECHO, CLOCK)


def test_max_rounds_ends_with_an_honest_error_and_the_last_calls_not_run(env: Env) -> None:
    provider = ScriptedProvider({"respond": {"default": {"tool": "echo", "input": {"word": "again"}}}})
    gateway = env.gateway(SCRIPTED, provider)
    conversation = run(gateway.converse(ask(), env.handle, max_rounds=3))
    assert isinstance(conversation.error, ToolRoundsExhausted)
    assert conversation.error.category == "tool_rounds"
    assert "still asked for tools (echo) after 3 rounds" in conversation.error.detail
    assert conversation.final is None
    assert len(env.handled) == 2  # the third answer's call was not run
    rows = env.rows()
    assert len(rows) == 3 and all(r["stop_reason"] == "tool_use" for r in rows)
    assert conversation.call_ids == tuple(r["id"] for r in rows)


def test_an_error_mid_conversation_ends_it_and_is_cited_with_the_calls_before(env: Env) -> None:
    provider = ScriptedProvider(
        {"respond": [{"tool": "clock"}, {"fault": "rate_limited", "retry_after": 5}]}
    )
    gateway = env.gateway(SCRIPTED, provider)
    conversation = run(gateway.converse(ask(), env.handle))
    assert isinstance(conversation.error, RateLimited)
    # The unknown tool's error went back to the model as a result, not out of the loop.
    assert provider.requests[1].messages[-1].content[0].is_error  # type: ignore[union-attr]
    rows = env.rows()
    assert [r["outcome"] for r in rows] == ["ok", "error"]
    assert conversation.call_ids == tuple(r["id"] for r in rows)


def test_a_scripted_tool_call_the_request_does_not_offer_fails_as_invalid(env: Env) -> None:
    provider = ScriptedProvider({"respond": [{"tool": "launch"}]})
    gateway = env.gateway(SCRIPTED, provider)
    conversation = run(gateway.converse(ask(), env.handle))
    assert isinstance(conversation.error, InvalidRequest)
    assert "the tool 'launch', which the request does not offer (tools offered: echo, clock)" in conversation.error.detail


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ({"respond": [{"input": {"a": 1}}]}, "respond[1]: a reply needs exactly one of `text` or `fault`, or a `tool` call"),
        ({"respond": [{"text": "x", "input": {"a": 1}}]}, "respond[1].input: only a `tool` reply takes an input"),
        ({"respond": [{"tool": "echo", "input": "hello"}]}, "respond[1].input: must be a table"),
        ({"respond": [{"tool": 3}]}, "respond[1].tool: must be the name of a tool"),
        ({"respond": [{"tool": "echo", "fault": "auth"}]}, "a `fault` fails the call, so it takes no `text` or `tool`"),
        ({"respond": [{"tool": "echo", "retry_after": 3}]}, "respond[1].retry_after: only a `fault` reply takes this key"),
    ],
)
def test_script_tool_replies_are_validated_with_a_sentence(script: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        ScriptedProvider(script)
    assert expected in info.value.detail


def test_tool_definitions_count_in_the_estimate_and_lead_the_cached_prefix(env: Env) -> None:
    provider = ScriptedProvider({"respond": {"default": "ok", "repeat": True}})
    gateway = env.gateway(SCRIPTED, provider)
    plain = Prompt(role="respond", mind="ada", messages=(Turn.user("x" * 400, cache="5m"),))
    run(gateway.complete(plain))
    run(gateway.complete(Prompt(role="respond", mind="ada", messages=plain.messages, tools=(ECHO,))))
    first, second = env.rows()
    assert second["cache_write_tokens"] > first["cache_write_tokens"]  # a new prefix: the tool's bytes come first
    assert second["cache_read_tokens"] == 0


# -- the loop, through the real SDK against the fake Messages API -----------


def anthropic_toml(url: str) -> str:
    return f"""
[models]
provider = "anthropic"

[models.anthropic]
api_key_env = "{KEY_ENV}"
base_url = "{url}"
max_retries = 0

[models.respond]
model = "{HAIKU}"
"""


def anthropic_config(url: str) -> Config:
    return parse_config(anthropic_toml(url), "test").config


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CREDENTIALS_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeMessagesAPI(key=KEY) as server:
        yield server


def converse_sdk(env: Env, api: FakeMessagesAPI, prompt: Prompt, max_rounds: int = 4) -> Conversation:
    gateway = env.gateway(anthropic_config(api.url))
    assert isinstance(gateway.provider, AnthropicProvider)

    async def go() -> Conversation:
        try:
            return await gateway.converse(prompt, env.handle, max_rounds=max_rounds)
        finally:
            await gateway.aclose()

    return run(go())


def test_the_sdk_sends_tools_reads_tool_use_and_sends_tool_results(env: Env, api: FakeMessagesAPI) -> None:
    api.tool_use("echo", {"word": "hi"}, id_="toolu_01", text="Echoing.")
    api.tool_use("nope", {}, id_="toolu_02")
    api.message("Done.")
    conversation = converse_sdk(env, api, ask())
    assert conversation.final is not None and conversation.final.text == "Done."
    assert [(u.id, u.name, u.input) for u in env.handled] == [("toolu_01", "echo", {"word": "hi"}), ("toolu_02", "nope", {})]
    first, second, third = (r.body for r in api.requests)
    assert first["tools"] == [ECHO.to_data(), CLOCK.to_data()]
    assert second["tools"] == first["tools"] and third["tools"] == first["tools"]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Echoing."},
                {"type": "tool_use", "id": "toolu_01", "name": "echo", "input": {"word": "hi"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "echoed hi"}]},
    ]
    # A tool_use with no text before it sends no empty text block (the API refuses one); an error result says so.
    assert third["messages"][3:] == [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_02", "name": "nope", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "no tool is named 'nope'", "is_error": True}],
        },
    ]
    # The tools' bytes are the same on every round: they stay inside the cached prefix.
    raw_tools = [json.dumps(r.body["tools"]) for r in api.requests]
    assert len(set(raw_tools)) == 1
    rows = env.rows()
    assert [(r["provider"], r["stop_reason"]) for r in rows] == [("anthropic", "tool_use")] * 2 + [("anthropic", "end_turn")]
    assert conversation.call_ids == tuple(r["id"] for r in rows)


def test_the_sdk_at_max_rounds_makes_no_further_request(env: Env, api: FakeMessagesAPI) -> None:
    api.tool_use("echo", {"word": "a"}, id_="toolu_a")
    api.tool_use("echo", {"word": "b"}, id_="toolu_b")
    conversation = converse_sdk(env, api, ask(), max_rounds=2)
    assert isinstance(conversation.error, ToolRoundsExhausted)
    assert len(api.requests) == 2 and [u.id for u in env.handled] == ["toolu_a"]


def test_without_tools_the_request_is_byte_for_byte_the_plain_one(env: Env, api: FakeMessagesAPI) -> None:
    plain = Prompt(role="respond", mind="ada", messages=(Turn.user("hi"),))
    conversation = converse_sdk(env, api, plain)
    assert conversation.final is not None and conversation.final.text == "Hello."
    gateway = env.gateway(anthropic_config(api.url))

    async def complete() -> None:
        try:
            await gateway.complete(plain)
        finally:
            await gateway.aclose()

    run(complete())
    through_converse, through_complete = api.requests
    assert "tools" not in through_converse.body
    assert through_converse.raw == through_complete.raw
    assert json.loads(through_converse.raw) == {
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "model": HAIKU,
    }


# -- the mind's tools in a turn, in process ---------------------------------

TURN_SCRIPT = """
[respond]
default = "Noted."

[[respond.rules]]
match = "(?i)make a bad rule"
tool = "wake_add_rule"
input = { name = "bad", behaviour = "sometimes" }

[[respond.rules]]
match = "is not a behaviour"
text = "I could not add it."

[[respond.rules]]
match = "(?i)quiet for bots"
tool = "wake_add_rule"
input = { name = "bots", match = { flags = ["from_bot"] }, behaviour = "defer", position = 1 }

[[respond.rules]]
match = "^added rule"
text = "Done."

[[respond.rules]]
match = "(?i)wake for bots after all"
tool = "wake_add_rule"
input = { name = "bots", match = { flags = ["from_bot"] }, behaviour = "always" }

[[respond.rules]]
match = "^changed rule"
text = "Changed."

[[respond.rules]]
match = "(?i)list your rules"
tool = "wake_rules_list"

[[respond.rules]]
match = "(?i)peek at the rules"
tool = "wake_rules_list"
input = { verbose = true }

[[respond.rules]]
match = "takes no input"
text = "I could not look."

[[respond.rules]]
match = '^\\{"rules"'
text = "Listed."

[[respond.rules]]
match = "(?i)forget the bots rule"
tool = "wake_remove_rule"
input = { name = "bots" }

[[respond.rules]]
match = "^removed rule"
text = "Removed."

[[respond.rules]]
match = "(?i)hush"
tool = "skip_reply"
input = { wake_in = 600 }

[[respond.rules]]
match = "(?i)say nothing"
text = ""
"""

TURN_CONFIG = SCRIPTED_RESPOND + """
[gate]
mind_tools = {tools}
"""


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[InProcess]:
    (tmp_path / "script.toml").write_text(TURN_SCRIPT)
    app = start_app(tmp_path, TURN_CONFIG.format(script=tmp_path / "script.toml", tools="true"))
    assert app.api("POST", "/minds", json={"name": "ada", "settings": {"persona": "You are Ada."}}).status_code == 201
    yield app
    app.stop()


def say(app: InProcess, text: str) -> dict[str, Any]:
    resp = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "channel": "irc:#ops", "text": text})
    assert resp.status_code == 201
    return resp.json()


def events_of(app: InProcess, kind: str, since: int) -> list[dict[str, Any]]:
    app.settle("ada")
    return [dump(e) for e in list_events(app.sup.store.reader(), "ada", kinds=(kind,), since=since, limit=100)]


def test_a_refused_rule_goes_back_to_the_model_as_its_sentence(engine: InProcess) -> None:
    message = say(engine, "Please make a bad rule")
    reply = engine.wait_for("ada", "reply", since=message["id"])
    assert reply["text"] == "I could not add it."
    with pytest.raises(RuleRefused) as refused:
        read_rule({"name": "bad", "behaviour": "sometimes"})
    [called] = events_of(engine, "tool_called", message["id"])
    assert called["data"] == {
        "name": "wake_add_rule",
        "input": {"name": "bad", "behaviour": "sometimes"},
        "result": refused.value.detail,
        "is_error": True,
    }
    assert (called["causation_id"], called["actor"], called["cycle_id"]) == (message["id"], "model:respond", reply["cycle_id"])
    assert events_of(engine, "gate_rules_changed", message["id"]) == []
    # The reply cites both model calls: the one that called the tool and the one that answered.
    calls = [r["id"] for r in reply["refs"] if r["type"] == "model_call"]
    rows = engine.sup.store.reader().execute("SELECT id, stop_reason FROM model_calls ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [(calls[0], "tool_use"), (calls[1], "end_turn")]
    # The tool call cites the model call that asked for it.
    assert called["refs"] == [{"type": "model_call", "id": calls[0]}]


def test_a_refused_action_is_a_denied_action_that_notifies(engine: InProcess) -> None:
    message = say(engine, "Please make a bad rule")
    reply = engine.wait_for("ada", "reply", since=message["id"])
    [called] = events_of(engine, "tool_called", message["id"])
    [denied] = events_of(engine, "action_denied", message["id"])
    # Caused by the refused call, citing the model call that asked for it, in the turn's cycle.
    assert (denied["causation_id"], denied["actor"], denied["cycle_id"], denied["refs"]) == (
        called["id"], "model:respond", reply["cycle_id"], called["refs"]
    )
    reason = called["data"]["result"]
    assert ActionDenied.of(get_event(engine.sup.store.reader(), denied["id"])) == ActionDenied("wake_add_rule", reason)
    assert denied["text"] == f"wake_add_rule refused: {reason}"
    # The denied_action rule fires on it: a notification caused by the denial.
    [note] = events_of(engine, "notification", message["id"])
    assert (note["causation_id"], note["data"]["rule"]) == (denied["id"], "denied_action")
    [shown] = engine.api("GET", "/minds/ada/notifications").json()["notifications"]
    assert (shown["rule"], shown["key"], shown["title"]) == ("denied_action", "denied_action:action:wake_add_rule", f"action denied: wake_add_rule ({reason})")
    assert shown["values"] == {"action": "wake_add_rule", "reason": reason, "actor": "model:respond"}

    # A refused listing would have changed nothing: a mistake the model reads, not a denied action.
    peek = say(engine, "peek at the rules")
    assert engine.wait_for("ada", "reply", since=peek["id"])["text"] == "I could not look."
    [looked] = events_of(engine, "tool_called", peek["id"])
    assert looked["data"]["is_error"] is True
    assert events_of(engine, "action_denied", peek["id"]) == []


def test_an_answer_with_no_text_is_no_reply_but_a_failure_that_says_so(engine: InProcess) -> None:
    message = say(engine, "Please say nothing at all")
    failed = engine.wait_for("ada", "reply_failed", since=message["id"])
    assert failed["data"]["category"] == "empty_answer"
    assert failed["data"]["detail"] == "the respond model ended its answer with no text (stop reason end_turn)"
    assert events_of(engine, "reply", message["id"]) == []


def test_a_rule_the_mind_adds_is_stored_listed_and_removed_by_actor_mind(engine: InProcess) -> None:
    message = say(engine, "Be quiet for bots, please")
    assert engine.wait_for("ada", "reply", since=message["id"])["text"] == "Done."
    assert [r.name for r in stored_rules(engine.sup.store.reader(), "ada").rules] == ["bots"]
    [changed] = events_of(engine, "gate_rules_changed", message["id"])
    assert changed["actor"] == "mind"
    assert changed["data"]["action"] == "add" and changed["data"]["rule"] == "bots"
    [called] = events_of(engine, "tool_called", message["id"])
    assert called["data"]["is_error"] is False and called["data"]["result"].startswith("added rule 'bots' at position 1 of 1")

    listing = say(engine, "Now list your rules")
    assert engine.wait_for("ada", "reply", since=listing["id"])["text"] == "Listed."
    [listed] = events_of(engine, "tool_called", listing["id"])
    shown = json.loads(listed["data"]["result"])
    assert [(r["position"], r["name"], r["behaviour"]) for r in shown["rules"]] == [(1, "bots", {"defer": {}})]
    assert shown["default"] == {"always": {}}

    forget = say(engine, "Forget the bots rule")
    assert engine.wait_for("ada", "reply", since=forget["id"])["text"] == "Removed."
    assert stored_rules(engine.sup.store.reader(), "ada").rules == ()
    [removed] = events_of(engine, "gate_rules_changed", forget["id"])
    assert removed["actor"] == "mind"
    change = RulesChange.of(get_event(engine.sup.store.reader(), removed["id"]))
    assert (change.action, change.rule, change.rules) == ("remove", "bots", ())


def test_adding_a_rule_by_a_name_the_mind_has_edits_it_in_place(engine: InProcess) -> None:
    message = say(engine, "Be quiet for bots, please")
    assert engine.wait_for("ada", "reply", since=message["id"])["text"] == "Done."
    dms = {"name": "dms", "match": {"flags": ["dm"]}, "behaviour": "always"}
    assert engine.api("POST", "/minds/ada/rules", json={"rule": dms, "position": 1}).status_code == 201
    again = say(engine, "Wake for bots after all")
    assert engine.wait_for("ada", "reply", since=again["id"])["text"] == "Changed."
    rules = stored_rules(engine.sup.store.reader(), "ada").rules
    assert [(r.name, r.behaviour.kind) for r in rules] == [("dms", "always"), ("bots", "always")]  # in its place
    [changed] = events_of(engine, "gate_rules_changed", again["id"])  # one change, not a remove and an add
    assert (changed["actor"], changed["data"]["action"], changed["data"]["position"]) == ("mind", "edit", 2)
    assert changed["data"]["was"]["behaviour"] == {"defer": {}}
    [called] = events_of(engine, "tool_called", again["id"])
    assert called["data"]["is_error"] is False and called["data"]["result"].startswith("changed rule 'bots' at position 2 of 2")


def test_skip_reply_leaves_no_reply_but_a_reply_skipped_event(engine: InProcess) -> None:
    message = say(engine, "hush now")
    skipped = engine.wait_for("ada", "reply_skipped", since=message["id"])
    assert skipped["causation_id"] == message["id"] and skipped["actor"] == "model:respond"
    assert skipped["data"] == {"in_reply_to": message["id"], "wake_in": 600}
    assert skipped["text"] == "chose not to reply; will wake itself in 600 s"
    assert events_of(engine, "reply", message["id"]) == []
    [called] = events_of(engine, "tool_called", message["id"])
    assert called["data"]["name"] == "skip_reply" and called["data"]["is_error"] is False
    # The conversation ended with the skip: one model call, cited by the event.
    rows = engine.sup.store.reader().execute("SELECT id FROM model_calls").fetchall()
    assert [r["id"] for r in skipped["refs"]] == [rows[0][0]] and len(rows) == 1

    assert ReplySkipped.of(get_event(engine.sup.store.reader(), skipped["id"])) == ReplySkipped(message["id"], 600)


# -- the turn's result, for the actor ---------------------------------------


def direct_turn(tmp_path: Path, script: dict[str, Any], text: str, tools: bool = True) -> tuple[Store, tuple[TurnResult, Any], ScriptedProvider]:
    store = Store(tmp_path / "turn.db")
    store.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
    message = store.writer.run_sync(lambda db: append(db, Message(author="alice", text=text).draft("ada"), START))
    cfg = parse_config(
        f'[models]\nprovider = "scripted"\n[models.respond]\nmodel = "{HAIKU}"\n[gate]\nmind_tools = {str(tools).lower()}\n', "noemad.toml"
    ).config
    clock = ManualClock(START)
    provider = ScriptedProvider(script)
    gateway = ModelGateway(config=lambda: cfg, clock=clock, writer=store.writer, provider=provider)
    result = asyncio.run(run_turn(store, clock, gateway, MindTurn("ada", 1, [message.id], "a test woke it", MindSettings())))
    return store, (result, message), provider


def test_the_turn_result_tells_the_actor_to_wake_later_and_to_reload_rules(tmp_path: Path) -> None:
    script = {
        "respond": [
            {"tool": "wake_add_rule", "input": {"name": "dms", "match": {"flags": ["dm"]}, "behaviour": "always"}},
            {"tool": "skip_reply", "input": {"wake_in": 7200}},
        ]
    }
    store, (result, message), _ = direct_turn(tmp_path, script, "hello")
    try:
        assert result.reply is None and result.rules_changed is True
        assert result.skipped is not None
        assert (result.skipped.wake_in, result.skipped.cause) == (3600, message.id)  # read at the nearest bound
        skipped_event = store.reader().execute("SELECT kind, causation_id FROM events WHERE id = ?", [result.skipped.event]).fetchone()
        assert tuple(skipped_event) == ("reply_skipped", message.id)
        calls = [ToolCalled.of(e) for e in list_events(store.reader(), "ada", kinds=("tool_called",), limit=10)]
        assert [c.name for c in calls] == ["wake_add_rule", "skip_reply"]
        assert calls[1].result == "no reply will be sent this turn; you will wake yourself in 3600 s (wake_in 7200 read as 3600: it is 1 to 3600 seconds)"
    finally:
        store.close()


def test_without_mind_tools_the_turn_is_one_plain_call(tmp_path: Path) -> None:
    store, (result, _), provider = direct_turn(tmp_path, {"respond": {"default": "Plain."}}, "hello", tools=False)
    try:
        assert result.reply is not None and result.reply.text == "Plain." and not result.rules_changed and result.skipped is None
        [request] = provider.requests
        assert request.tools == ()
    finally:
        store.close()


def respond_request(tmp_path: Path, api: FakeMessagesAPI, gate: str = "") -> Any:
    """The one request a turn over "hello" sends through the real SDK, in the in-process tier (`gate`: a [gate] table)."""
    app = start_app(tmp_path, anthropic_toml(api.url) + gate)
    try:
        assert app.api("POST", "/minds", json={"name": "ada", "settings": {"persona": "You are Ada."}}).status_code == 201
        message = say(app, "hello")
        assert app.wait_for("ada", "reply", since=message["id"])["text"] == "Hello."
    finally:
        app.stop()
    [sent] = api.requests
    return sent


def test_without_mind_tools_the_respond_request_is_byte_for_byte_todays(tmp_path: Path, api: FakeMessagesAPI) -> None:
    """The body as noemad sends it without tools: no tool definitions at all (the window puts a breakpoint at the conversation's end)."""
    sent = respond_request(tmp_path, api, "[gate]\nmind_tools = false\n")
    end = {"cache_control": {"type": "ephemeral", "ttl": "5m"}}
    expected = {
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "alice (irc:#ops): hello", **end}]}],
        "model": HAIKU,
        "system": [{"type": "text", "text": "You are Ada.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    }
    assert sent.raw == json.dumps(expected, separators=(",", ":")).encode()


def test_with_mind_tools_the_same_request_offers_the_four_tools(tmp_path: Path, api: FakeMessagesAPI) -> None:
    sent = respond_request(tmp_path, api)
    assert [t["name"] for t in sent.body["tools"]] == ["wake_rules_list", "wake_add_rule", "wake_remove_rule", "skip_reply"]
    assert sent.body["tools"] == [t.to_data() for t in MIND_TOOLS]


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("tool_called", ToolCalled("wake_remove_rule", {"name": "x"}, "mind 'ada' has no wake rule named 'x'", True)),
        ("reply_skipped", ReplySkipped(7, 600)),
        ("reply_skipped", ReplySkipped(7)),
    ],
)
def test_the_new_events_payloads_read_back(tmp_path: Path, kind: str, payload: Any) -> None:
    store = Store(tmp_path / "p.db")
    try:
        store.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
        message = store.writer.run_sync(lambda db: append(db, Message(author="alice", text="hi").draft("ada"), START))
        data = payload.to_data() if kind == "tool_called" else {**payload.to_data(), "in_reply_to": message.id}
        event = store.writer.run_sync(lambda db: append(db, EventDraft(mind="ada", kind=kind, actor="model:respond", data=data), START))
        read = type(payload).of(get_event(store.reader(), event.id))
        assert read.to_data() == data
    finally:
        store.close()
