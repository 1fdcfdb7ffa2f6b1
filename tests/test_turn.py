"""One mind turn, in process: its steps in order, and a respond context built without writing anything."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noemad.clock import ManualClock, parse_iso
from noemad.config.files import parse_config
from noemad.config.mind import MindSettings
from noemad.events import Event, EventDraft, append, list_events
from noemad.minds import create_mind
from noemad.models import Block
from noemad.models.gateway import ModelGateway
from noemad.models.scripted import ScriptedProvider
from noemad.stimuli import Message, Observation
from noemad.store import Store
from noemad.turn.context import DEFAULT_PERSONA, respond_context
from noemad.turn.run import Turn, TurnResult, run_turn

START = parse_iso("2026-01-01T00:00:00Z")
WITH_RESPOND = '[models]\nprovider = "scripted"\n[models.respond]\nmodel = "claude-haiku-5-5"\n'
WITHOUT_RESPOND = '[models]\nprovider = "scripted"\n'
BUDGET = 56  # statements a turn over one message may run, its two commits included (before issue 27 item 3: 80)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
    yield s
    s.close()


def stored(store: Store, stimulus: Message | Observation) -> Event:
    return store.writer.run_sync(lambda db: append(db, stimulus.draft("ada"), START))


def turn(store: Store, config: str, script: dict[str, Any], stimuli: list[int], settings: MindSettings | None = None) -> TurnResult:
    cfg = parse_config(config, "noemad.toml").config
    clock = ManualClock(START)
    gateway = ModelGateway(config=lambda: cfg, clock=clock, writer=store.writer, provider=ScriptedProvider(script))
    return asyncio.run(run_turn(store, clock, gateway, Turn("ada", 1, stimuli, "a test woke it", settings or MindSettings())))


def kinds_after(store: Store, event: Event) -> list[str]:
    return [e.kind for e in list_events(store.reader(), "ada", kinds=(), since=event.id, limit=100)]


def test_a_turn_runs_the_cycle_then_replies_then_tells_its_narrative(store: Store) -> None:
    seen = stored(store, Observation(source="radar", text="rain at noon"))
    message = stored(store, Message(author="alice", text="What is the weather?", channel="irc:#ops"))
    result = turn(store, WITH_RESPOND, {"respond": {"default": "It is raining."}}, [seen.id, message.id])

    kinds = kinds_after(store, message)
    assert kinds[0] == "cycle_started" and kinds[-3:] == ["cycle_completed", "reply", "narrative_updated"]
    reply = result.reply
    assert reply is not None and (reply.kind, reply.text, reply.channel) == ("reply", "It is raining.", "irc:#ops")
    assert (reply.causation_id, list(reply.parents), reply.cycle_id) == (message.id, [seen.id, message.id], "ada/1")
    assert result.narrative is not None and result.narrative.causation_id == result.cycle.completed.id
    assert result.rephrased is None  # the mind does not ask for narrative_llm


def test_a_failed_draft_is_recorded_and_the_turn_goes_on(store: Store) -> None:
    message = stored(store, Message(author="alice", text="hello"))
    result = turn(store, WITH_RESPOND, {"respond": [{"fault": "rate_limited", "retry_after": 30}]}, [message.id])

    assert kinds_after(store, message)[-3:] == ["cycle_completed", "reply_failed", "narrative_updated"]
    failed = result.reply
    assert failed is not None and failed.causation_id == message.id
    assert (failed.data["category"], failed.data["retry_after"]) == ("rate_limited", 30)


def test_without_a_respond_model_or_a_message_the_turn_drafts_nothing(store: Store) -> None:
    message = stored(store, Message(author="alice", text="hello"))
    assert turn(store, WITHOUT_RESPOND, {"respond": {"default": "unheard"}}, [message.id]).reply is None
    observation = stored(store, Observation(source="radar", text="rain at noon"))
    quiet = turn(store, WITH_RESPOND, {"respond": {"default": "unheard"}}, [observation.id])
    assert quiet.reply is None
    assert "reply" not in kinds_after(store, message)


def test_a_turn_reads_no_event_or_belief_twice(store: Store) -> None:
    message = stored(store, Message(author="alice", text="the parser is slow again"))
    statements: list[str] = []
    store.writer.run_sync(lambda db: db.conn.set_trace_callback(statements.append))
    turn(store, WITHOUT_RESPOND, {}, [message.id])
    store.writer.run_sync(lambda db: db.conn.set_trace_callback(None))

    # What the cycle read (its stimuli, the contested beliefs) is handed on, not read again by a later step.
    reads = [s for s in statements if s.startswith("SELECT") and ("FROM beliefs" in s or s.startswith("SELECT id, mind, kind, actor"))]
    assert reads and len(reads) == len(set(reads)), sorted(reads)


def test_a_turn_over_a_message_runs_few_statements(store: Store) -> None:
    for text in ("the build is red", "the parser is slow", "the deploy is due"):
        turn(store, WITHOUT_RESPOND, {}, [stored(store, Message(author="alice", text=text)).id])
    message = stored(store, Message(author="alice", text="the parser is slow again"))
    statements: list[str] = []
    store.writer.run_sync(lambda db: db.conn.set_trace_callback(statements.append))
    turn(store, WITHOUT_RESPOND, {}, [message.id])
    store.writer.run_sync(lambda db: db.conn.set_trace_callback(None))

    # A turn's CPU goes mostly to statements: what it has checked, written or read in the turn is not looked up again.
    ran = [s for s in statements if not s.startswith("--")]  # statements FTS5 runs inside one are counted in it
    assert len(ran) <= BUDGET, "\n".join(ran)


def test_the_respond_context_is_built_on_a_read_only_connection_and_writes_nothing(store: Store) -> None:
    stored(store, Message(author="alice", text="good morning"))
    store.writer.run_sync(lambda db: append(db, EventDraft(mind="ada", kind="reply", actor="model:respond", text="Morning."), START))
    stored(store, Message(author="bob", text="any news?", channel="irc:#ops"))
    db = store.reader()  # query_only: a write here would raise
    (events_before,) = db.execute("SELECT count(*) FROM events").fetchone()

    prompt = respond_context(db, "ada", MindSettings())

    assert db.execute("SELECT count(*) FROM events").fetchone() == (events_before,)
    assert prompt.system == (Block(DEFAULT_PERSONA.format(mind="ada"), "1h"),)
    assert [(t.role, [b.text for b in t.content]) for t in prompt.messages] == [
        ("user", ["alice (cli): good morning"]),
        ("assistant", ["Morning."]),
        ("user", ["bob (irc:#ops): any news?"]),
    ]
    # no chunk is full yet: the one breakpoint is at the end of the conversation, for the next turn to read
    assert [b.cache for t in prompt.messages for b in t.content] == [None, None, "5m"]
    assert respond_context(db, "ada", MindSettings(persona="You are Ada.")).system[0].text == "You are Ada."
