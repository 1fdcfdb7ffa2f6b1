"""The window's cache behaviour, measured: the real SDK against the fake Messages API's prompt-cache simulation.

The simulation (tests/fake_messages_api.py `PromptCache`) reads a prefix up
to a breakpoint or any of the 20 block boundaries before it, caches nothing
under 4,096 tokens on Haiku, expires entries on a manual clock and reports
reads and writes in `usage` as the API does. Through it: a window's second
request reads what the first wrote; the end-of-conversation breakpoint reads
the growing tail that the single-breakpoint scheme re-sends; a small window
caches nothing; a prompt too long for the model shrinks the ratio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api import FakeMessagesAPI, PromptCache, count_tokens
from noemad.clock import ManualClock
from noemad.config.files import parse_config
from noemad.errors import ContextLength, InvalidRequest
from noemad.events import append
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway, Prompt
from noemad.models.ratios import OVER_MARGIN, anchor_for, ratio_for
from noemad.models.types import Block, Turn
from noemad.stimuli import Message
from noemad.store import Store
from noemad.store.guard import unrecorded
from noemad.turn.window import window

KEY = "sk-ant-test-cache"
KEY_ENV = "NOEMA_TEST_ANTHROPIC_KEY"
MODEL = "claude-haiku-5-5"
NOW = 1_767_225_600.0


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CREDENTIALS_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)


class Env:
    def __init__(self, tmp_path: Path, api: FakeMessagesAPI, clock: ManualClock) -> None:
        self.store = Store(tmp_path / "noema.db")
        self.store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
        self.api, self.clock = api, clock
        toml = (
            f'[models]\nprovider = "anthropic"\n[models.anthropic]\nbase_url = "{api.url}"\napi_key_env = "{KEY_ENV}"\n'
            f'max_retries = 0\n[models.judge]\nmodel = "{MODEL}"\n[models.respond]\nmodel = "{MODEL}"\n'
        )
        cfg = parse_config(toml, "noemad.toml").config
        self.loop = asyncio.new_event_loop()  # one loop for the SDK client's whole life
        self.gateway = ModelGateway(config=lambda: cfg, clock=clock, writer=self.store.writer)
        self.n = 0

    def run(self, prompt: Prompt) -> Any:
        return self.loop.run_until_complete(self.gateway.complete(prompt))

    def say(self, count: int, size: int = 200) -> None:
        def job(db: Any) -> None:
            for _ in range(count):
                self.n += 1
                text = f"message {self.n}: " + " ".join(["word"] * (size // 5))
                append(db, Message(author=f"user{self.n % 7}", text=text, channel="irc:#ops").draft("ada"), NOW)

        self.store.writer.run_sync(job)

    def ask(self, budget: int = 60_000, breakpoints: int = 3) -> dict[str, Any]:
        """One judge-like request on the window: a system prompt, the window's blocks, then the question; its usage."""
        db = self.store.reader()
        w = window(db, "ada", budget, ratio_for(db, "ada", MODEL), role="judge")
        question = Block(f"Decide now (request {len(self.api.requests) + 1}).")
        prompt = Prompt(
            role="judge",
            mind="ada",
            system=(Block("You judge whether the mind should reply. " * 20),),
            messages=(Turn("user", (*w.blocks(breakpoints=breakpoints), question)),),
            window=w.use(budget),
        )
        self.run(prompt)
        return self.api.cache.usages[-1]  # type: ignore[union-attr]

    def close(self) -> None:
        self.loop.run_until_complete(self.gateway.aclose())
        self.loop.close()
        self.store.close()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    clock = ManualClock(NOW)
    with FakeMessagesAPI(key=KEY, cache=PromptCache(clock.now)) as api:
        e = Env(tmp_path, api, clock)
        yield e
        e.close()


def share(u: dict[str, Any]) -> float:
    total = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
    return u["cache_read_input_tokens"] / total


def test_the_stand_in_tokenizer_has_a_real_ones_densities() -> None:
    prose = "The quick brown fox jumps over the lazy dog, and then it naps in the sun. " * 20
    code = "def f(x: int) -> dict[str, int]:\n    return {'a': x + 1, 'b': x * 2}\n" * 20
    assert 3.2 <= len(prose) / count_tokens(prose) <= 3.8
    assert 2.0 <= len(code) / count_tokens(code) <= 2.6
    assert len("東京の天気は晴れです") / count_tokens("東京の天気は晴れです") == 1.0


def test_the_end_breakpoint_lets_each_request_read_what_the_previous_one_wrote(env: Env) -> None:
    env.say(400)  # ~20K tokens
    first = env.ask()
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 15_000
    shares = []
    for _ in range(10):
        env.say(3)
        env.clock.advance(20)
        shares.append(share(env.ask()))
    assert min(shares) > 0.97  # the three new messages and the question are all that is not read


def test_with_the_chunk_breakpoint_alone_the_growing_tail_is_resent(env: Env) -> None:
    env.say(400)
    env.ask(breakpoints=1)
    shares = []
    for _ in range(10):
        env.say(3)
        env.clock.advance(20)
        shares.append(share(env.ask(breakpoints=1)))
    assert min(shares) < 0.95  # the tail after the last full chunk goes uncached, and grows until the next one fills


def test_a_window_under_the_haiku_minimum_caches_nothing(env: Env) -> None:
    env.say(20)  # ~1,000 tokens
    env.ask()
    env.say(1)
    again = env.ask()
    assert again["cache_read_input_tokens"] == 0 and again["cache_creation_input_tokens"] == 0


def test_a_cached_prefix_expires_after_its_ttl_on_the_clock_and_a_read_refreshes_it(env: Env) -> None:
    env.say(400)
    env.ask()
    env.clock.advance(299)
    assert share(env.ask()) > 0.97  # read: and refreshed for another five minutes
    env.clock.advance(299)
    assert share(env.ask()) > 0.97
    env.clock.advance(301)
    assert env.ask()["cache_read_input_tokens"] == 0  # gone


def test_more_than_four_breakpoints_are_refused_as_the_api_refuses_them(env: Env) -> None:
    prompt = Prompt(role="judge", mind="ada", messages=(Turn("user", tuple(Block(f"b{i}", "5m") for i in range(5))),))
    with pytest.raises(InvalidRequest):
        env.run(prompt)


def far_too_sparse(db: Any) -> None:
    unrecorded("a test sets the ratio by hand")
    db.execute("UPDATE token_ratios SET chars_per_token = 8.0")


def test_a_prompt_too_long_for_the_model_shrinks_the_ratio_by_the_count_it_states(tmp_path: Path) -> None:
    clock = ManualClock(NOW)
    with FakeMessagesAPI(key=KEY, cache=PromptCache(clock.now, context_limit=10_000)) as api:
        e = Env(tmp_path, api, clock)
        try:
            e.say(2000)  # ~90K tokens: at the start ratio a 90K budget asks ~24K of them
            with pytest.raises(ContextLength):
                e.ask(budget=90_000)
            # the stated count (prose at ~3.3 characters a token, asked at the start's 2) makes it sparser, never denser
            ratio = ratio_for(e.store.reader(), "ada", MODEL)
            assert ratio.samples == 1 and ratio.chars_per_token == 2.0
            e.store.writer.run_sync(far_too_sparse)
            assert ratio_for(e.store.reader(), "ada", MODEL).chars_per_token == 8.0
            with pytest.raises(ContextLength):  # a ratio far too sparse: the request is far too long
                e.ask(budget=9_000)
            ratio = ratio_for(e.store.reader(), "ada", MODEL)
            # taken from the count the error stated: this text runs ~4.5 characters a token, less the 10% margin
            assert 4.4 / OVER_MARGIN < ratio.chars_per_token < 4.6 / OVER_MARGIN
            e.ask(budget=9_000)  # at the shrunk ratio the next request fits
        finally:
            e.close()


def test_a_respond_call_reads_the_previous_turns_conversation_from_the_cache(tmp_path: Path) -> None:
    from noemad.config.mind import MindSettings
    from noemad.events import EventDraft
    from noemad.turn.context import respond_context

    clock = ManualClock(NOW)
    with FakeMessagesAPI(key=KEY, cache=PromptCache(clock.now)) as api:
        e = Env(tmp_path, api, clock)
        try:
            e.say(200)  # ~9K tokens: past the Haiku minimum
            shares = []
            for turn in range(5):
                prompt = respond_context(e.store.reader(), "ada", MindSettings(), MODEL)
                e.run(prompt)
                shares.append(share(api.cache.usages[-1]))  # type: ignore[union-attr]
                e.store.writer.run_sync(
                    lambda db: append(db, EventDraft(mind="ada", kind="reply", actor="model:respond", text=f"Answer {turn}."), NOW)
                )
                e.say(2)
                clock.advance(60)
            assert shares[0] == 0 and min(shares[1:]) > 0.95
            kept = anchor_for(e.store.reader(), "ada", "respond")
            assert kept is not None and kept.anchor_id is not None  # the gateway kept the respond window's anchor
        finally:
            e.close()
