"""The wording guard: a model may reword a plain text; its wording is kept only if it adds nothing.

The check (`Support.added`) is pure; `reword` runs against the real model
gateway with the scripted provider (or none) over a real store, so refusals
and failures go through the ledger as they do for narrative, reflection and
consolidation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noemad.clock import ManualClock, parse_iso
from noemad.cognition.wording import (
    PROSE,
    STEMS,
    Objection,
    Support,
    Worded,
    adds_nothing,
    numbers,
    reword,
    unquote,
)
from noemad.config.files import parse_config
from noemad.minds import create_mind
from noemad.models import Block, Prompt, Turn
from noemad.models.gateway import ModelGateway
from noemad.models.scripted import ScriptedProvider
from noemad.store import Store

NOW = parse_iso("2026-02-01T00:00:00Z")
SCRIPTED = '[models]\nprovider = "scripted"\n'
PLAIN = "I saw 3 builds fail on main; alice restarted the runner at 10:30."


# --- the check -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "At 10:30 alice restarted the runner; I saw 3 builds fail on main.",
        "Alice restarted the runners at 10:30, and I saw 3 builds fail on main.",  # a plural folded
        "Alice restarted the runner at 10:30.",  # saying less adds nothing
    ],
)
def test_prose_that_only_reorders_or_shortens_adds_nothing(answer: str) -> None:
    assert Support.of(PROSE, [PLAIN]).added(answer).all == ()


@pytest.mark.parametrize(
    ("answer", "numbers_added", "words_added"),
    [
        ("I saw 4 builds fail on main.", ("4",), ()),
        ("Bob restarted the runner at 10:30.", (), ("bob",)),
        ("I did not see builds fail.", (), ("not", "see")),
        ("alice probably restarted the runner at 11:00 and 11:00 again.", ("11:00",), ("probably",)),
    ],
)
def test_a_new_number_name_or_claim_is_found_each_once(answer: str, numbers_added: tuple[str, ...], words_added: tuple[str, ...]) -> None:
    added = Support.of(PROSE, [PLAIN]).added(answer)
    assert (added.numbers, added.words) == (numbers_added, words_added)
    assert added.all == numbers_added + words_added and bool(added)


def test_numbers_are_compared_after_unicode_folding() -> None:
    assert numbers("build ４４１７ at 10:30") == ["4417", "10:30"]
    assert not Support.of(PROSE, ["build 4417 failed"]).added("build ４４１７ failed")


def test_stems_take_word_forms_and_a_callers_keys_as_support() -> None:
    support = Support.of(STEMS, ["alice"], keys={"select", "go", "usual", "time"}, numbers_from=["select Go 2 times"])
    assert not support.added("alice usually selected Go 2 times")  # selected -> select, usually -> usual
    added = support.added("alice selected Rust 3 times")
    assert (added.numbers, added.words) == (("3",), ("rust",))


def test_adds_nothing_names_what_was_added_in_one_sentence() -> None:
    check = adds_nothing(Support.of(PROSE, [PLAIN]), "the rewording says what the report does not")
    assert check("alice restarted the runner at 10:30.") is None
    objection = check("Bob restarted the runner twice.")
    assert objection == Objection(("the rewording says what the report does not: bob, twice",), ("bob", "twice"))
    assert objection.detail == "the rewording says what the report does not: bob, twice"


def test_a_quoted_answer_is_unquoted() -> None:
    assert unquote(' "alice restarted it" ') == "alice restarted it"
    assert unquote("“alice restarted it”") == "alice restarted it"
    assert unquote('"alice" said "hi') == '"alice" said "hi'


# --- asking ------------------------------------------------------------------------------------


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.store = Store(tmp_path / "noema.db")
        self.clock = ManualClock(NOW)
        self.calls: list[int | None] = []
        self.store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "test"))

    def gateway(self, script: dict[str, Any] | None, text: str = SCRIPTED) -> ModelGateway:
        cfg = parse_config(text, "noemad.toml").config
        provider = ScriptedProvider(script) if script is not None else None
        return ModelGateway(config=lambda: cfg, clock=self.clock, writer=self.store.writer, provider=provider)

    def reword(self, gateway: ModelGateway, max_tokens: int = 200) -> Worded:
        prompt = Prompt(role="narrate", mind="ada", system=(Block("Reword."),), messages=(Turn.user(PLAIN),), max_tokens=max_tokens)
        check = adds_nothing(Support.of(PROSE, [PLAIN, "ada"]), "the rewording says what the text does not")
        return asyncio.run(reword(gateway, prompt, PLAIN, check, on_call=self.calls.append))

    def ledger(self) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.store.reader().execute("SELECT id, outcome FROM model_calls ORDER BY id").fetchall()]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    yield e
    e.store.close()


def test_a_rewording_that_adds_nothing_is_kept_with_its_call(env: Env) -> None:
    answer = "At 10:30 alice restarted the runner, after I saw 3 builds fail on main."
    worded = env.reword(env.gateway({"narrate": [f'"{answer}"']}))
    [(call, _)] = env.ledger()
    assert (worded.text, worded.rendered_by, worded.reason, worded.call_id, worded.answer) == (answer, "model", None, call, answer)
    assert env.calls == [call] and not worded.discarded and worded.model


def test_a_rewording_that_adds_something_is_discarded_and_the_plain_text_kept_with_the_reason(env: Env) -> None:
    answer = "Bob restarted the runner 4 times."
    worded = env.reword(env.gateway({"narrate": [answer]}))
    [(call, _)] = env.ledger()
    assert (worded.text, worded.rendered_by, worded.reason) == (PLAIN, "plain", "unsupported_content")
    assert worded.unsupported == ("4", "bob", "times") and worded.answer == answer and worded.discarded
    assert worded.detail == "the rewording says what the text does not: 4, bob, times" and worded.why == (worded.detail,)
    assert worded.call_id == call and env.calls == [call]


def test_an_answer_cut_short_or_empty_is_discarded(env: Env) -> None:
    cut = env.reword(env.gateway({"narrate": ["alice restarted the runner " * 20]}), max_tokens=10)
    assert (cut.text, cut.rendered_by, cut.reason, cut.detail) == (PLAIN, "plain", "truncated", "the narrate model ran out of tokens before it finished")
    empty = env.reword(env.gateway({"narrate": ['""']}))
    assert (empty.text, empty.reason, empty.detail, empty.answer) == (PLAIN, "empty_answer", "the narrate model answered nothing", "")
    assert len(env.calls) == 2 and None not in env.calls


@pytest.mark.parametrize("case", ["no_model", "budget", "model_error"])
def test_a_call_refused_or_failed_leaves_the_plain_text_and_says_why(env: Env, case: str) -> None:
    script: dict[str, Any] | None = {"narrate": ["alice restarted the runner."]}
    text = SCRIPTED
    if case == "no_model":
        script, text = None, "[models]\n"
    elif case == "budget":
        text += "[budgets.narrate]\ntokens_per_day = 10\n"
    else:
        script = {"narrate": [{"fault": "overloaded"}]}
    worded = env.reword(env.gateway(script, text))
    assert (worded.text, worded.rendered_by, worded.reason) == (PLAIN, "plain", case) and worded.detail
    assert worded.answer is None and not worded.discarded
    # A refused or failed call is in the ledger and reported; with no model none was made.
    recorded = [call for call, _ in env.ledger()]
    assert worded.call_id == (None if case == "no_model" else recorded[0]) and env.calls == [worded.call_id]
