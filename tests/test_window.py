"""The token-budgeted window and the token ratio it is sized by.

A window is what the respond call and the reply judge read of a mind's
conversation: whole messages from an anchor that stays put while it grows,
cut into ~6K-token chunks whose bytes never change, with cache breakpoints
after the last full chunk and at the end. The ratio turns characters into
tokens, calibrated per mind and model by the gateway from each answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from noemad.clock import ManualClock, parse_iso
from noemad.config.files import parse_config
from noemad.config.mind import MindSettings
from noemad.errors import ContextLength
from noemad.events import EventDraft, append
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway, Prompt
from noemad.models.ratios import OVER_MARGIN, START, Anchor, TokenRatio, anchor_for, ratio_for
from noemad.models.types import ModelRequest, ModelResponse, Turn, Usage
from noemad.stimuli import Message
from noemad.store import Store
from noemad.config.mind import DEFAULT_CONTEXT_TOKENS
from noemad.turn.context import respond_context
from noemad.turn.window import CHUNK_TOKENS, CUT, REGROW, SPACING, breakpoint_indexes, window

NOW = parse_iso("2026-01-01T00:00:00Z")
MODEL = "claude-haiku-5-5"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "noema.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    yield s
    s.close()


def say(store: Store, *texts: str, author: str = "alice") -> list[int]:
    def job(db: object) -> list[int]:
        return [append(db, Message(author=author, text=t, channel="irc:#ops").draft("ada"), NOW).id for t in texts]  # type: ignore[arg-type]

    return store.writer.run_sync(job)


def reply(store: Store, text: str) -> int:
    return store.writer.run_sync(lambda db: append(db, EventDraft(mind="ada", kind="reply", actor="model:respond", text=text), NOW).id)


def lines(n: int, start: int = 0, size: int = 100) -> list[str]:
    return [f"line {i:05d} " + "x" * (size - 11) for i in range(start, start + n)]


# The window


def test_a_window_that_fits_starts_at_the_first_message_and_is_cut_into_full_chunks(store: Store) -> None:
    ids = say(store, *lines(300))  # ~30K characters: 15K tokens at the start ratio
    w = window(store.reader(), "ada", 60_000, START, anchor=None)
    assert w.anchor_id == ids[0] and len(w.entries) == 300
    assert w.chunk_chars == int(CHUNK_TOKENS * START)
    assert [c.full for c in w.chunks] == [True, True, False]
    # each full chunk reaches the chunk size; the last one holds what is left
    for chunk in w.chunks[:2]:
        assert sum(e.size for e in w.entries[chunk.start : chunk.end]) >= w.chunk_chars
    assert w.estimated_tokens == TokenRatio(START).tokens(w.chars) <= 60_000
    assert w.text.startswith("alice (irc:#ops): line 00000 ") and w.text.endswith("line 00299 " + "x" * 89 + "\n")


def test_the_builder_writes_nothing(store: Store) -> None:
    say(store, *lines(10))
    db = store.reader()  # query_only: a write would raise
    (before,) = db.execute("SELECT total_changes()").fetchone()
    window(db, "ada", 1_000, 2.0)
    assert db.execute("SELECT total_changes()").fetchone() == (before,)


def test_earlier_chunks_are_byte_identical_while_the_anchor_stays(store: Store) -> None:
    say(store, *lines(200))
    first = window(store.reader(), "ada", 40_000, START, anchor=None)
    kept = Anchor(first.anchor_id, first.chunk_chars)
    full = [c for c in first.chunks if c.full]
    end = full[-1].end
    for step in range(1, 40):
        say(store, *lines(3, start=1000 + 3 * step))
        later = window(store.reader(), "ada", 40_000, START, anchor=kept)
        assert later.anchor_id == first.anchor_id and not later.moved
        # every chunk that was full before is still there, byte for byte, block for block
        assert later.chunks[: len(full)] == tuple(full)
        assert [b.text for b in later.blocks()[:end]] == [b.text for b in first.blocks()[:end]]
    assert sum(c.full for c in later.chunks) > len(full)  # and more filled meanwhile


def test_the_anchor_moves_only_when_the_window_outgrows_its_budget_and_then_to_65_percent(store: Store) -> None:
    say(store, *lines(100))  # 10,100 characters
    budget = 10_000  # tokens: 20,000 characters at the start ratio
    w = window(store.reader(), "ada", budget, START, anchor=None)
    anchor = Anchor(w.anchor_id, w.chunk_chars)
    moves = 0
    for step in range(100):
        say(store, *lines(5, start=1000 + 5 * step))
        nxt = window(store.reader(), "ada", budget, START, anchor=anchor)
        assert nxt.estimated_tokens <= budget
        if nxt.anchor_id != anchor.anchor_id:
            moves += 1
            assert nxt.moved and nxt.anchor_id is not None and anchor.anchor_id is not None and nxt.anchor_id > anchor.anchor_id
            # it moved because the window from the old anchor no longer fit, and now fills about 65%
            assert REGROW * budget * 0.95 <= nxt.estimated_tokens <= REGROW * budget
        else:
            assert not nxt.moved and nxt.estimated_tokens >= w.estimated_tokens
        anchor, w = Anchor(nxt.anchor_id, nxt.chunk_chars), nxt
    # 50,500 characters added, each move makes room for 35% of 20,000: about 7 moves
    assert 6 <= moves <= 8


def test_with_no_anchor_a_long_conversation_starts_at_65_percent_of_the_budget(store: Store) -> None:
    say(store, *lines(1000))
    w = window(store.reader(), "ada", 10_000, START, anchor=None)
    assert w.moved and REGROW * 10_000 * 0.95 <= w.estimated_tokens <= REGROW * 10_000
    assert w.entries[-1].text.startswith("alice (irc:#ops): line 00999")


def test_a_message_longer_than_half_the_budget_is_cut_and_the_newest_is_always_there(store: Store) -> None:
    say(store, "y" * 50_000)
    w = window(store.reader(), "ada", 1_000, START, anchor=None)
    [entry] = w.entries
    assert entry.cut and entry.text.endswith(CUT) and len(entry.text) == len("alice (irc:#ops): ") + 1_000
    assert w.estimated_tokens <= 1_000


def test_the_chunk_size_stays_with_the_anchor_when_the_ratio_is_recalibrated(store: Store) -> None:
    say(store, *lines(200))
    first = window(store.reader(), "ada", 40_000, 2.0, anchor=None)
    again = window(store.reader(), "ada", 40_000, 3.1, anchor=Anchor(first.anchor_id, first.chunk_chars))
    assert again.chunks == first.chunks and again.anchor_id == first.anchor_id and not again.moved


# Breakpoints


def test_breakpoints_after_the_last_full_chunk_at_the_end_and_back_every_16_blocks() -> None:
    assert breakpoint_indexes(50, 3, 1) == {3}  # the single-breakpoint scheme
    assert breakpoint_indexes(50, 3, 2) == {3, 49}
    assert breakpoint_indexes(50, 3, 4) == {3, 49, 49 - SPACING, 49 - 2 * SPACING}
    assert breakpoint_indexes(10, 3, 4) == {3, 9}  # spare ones only where they add something after the chunk's
    assert breakpoint_indexes(5, None, 3) == {4}
    assert breakpoint_indexes(5, None, 1) == set()  # no full chunk: nothing the single scheme caches
    assert breakpoint_indexes(4, 3, 4) == {3}
    assert all(len(breakpoint_indexes(n, f, 4)) <= 4 for n in range(0, 80) for f in [None, *range(n)])


def test_window_blocks_are_one_per_message_with_breakpoints_after_the_last_full_chunk_and_at_the_end(store: Store) -> None:
    say(store, *lines(130))
    w = window(store.reader(), "ada", 60_000, START, anchor=None)
    blocks = w.blocks(ttl="1h", breakpoints=3)
    assert "".join(b.text for b in blocks) == w.text and len(blocks) == 130
    assert w.last_full is not None
    assert [i for i, b in enumerate(blocks) if b.cache] == [w.last_full, 129 - SPACING, 129]
    assert {b.cache for b in blocks} == {None, "1h"}
    assert [i for i, b in enumerate(w.blocks(breakpoints=1)) if b.cache] == [w.last_full]


# The respond context on the window


def test_the_respond_context_marks_the_last_full_chunk_and_the_end(store: Store) -> None:
    say(store, *lines(150))
    reply(store, "Noted.")
    say(store, "and now?")
    prompt = respond_context(store.reader(), "ada", MindSettings())
    texts = [b.text for t in prompt.messages for b in t.content]
    marks = [i for t in prompt.messages for i, b in enumerate(t.content) if b.cache]
    assert texts[-2:] == ["Noted.", "alice (irc:#ops): and now?"]
    assert [t.role for t in prompt.messages] == ["user", "assistant", "user"]
    assert 2 <= len(marks) <= 3 and prompt.messages[-1].content[-1].cache == "5m"
    assert prompt.window is not None and prompt.window.budget_tokens == DEFAULT_CONTEXT_TOKENS == 60_000


# The ratio


def test_the_ratio_starts_conservatively_takes_denser_at_once_and_sparser_slowly() -> None:
    r = TokenRatio()
    assert r.chars_per_token == START == 2.0
    sparser = r.observed(chars=35_000, tokens=10_000)  # English chat: 3.5 a token
    assert START < sparser.chars_per_token < 3.5 / 1.05
    assert sparser.chars_per_token == pytest.approx(2.0 + 0.25 * (3.5 / 1.05 - 2.0))
    denser = sparser.observed(chars=10_000, tokens=10_000)  # CJK: 1 a token
    assert denser.chars_per_token == pytest.approx(1 / 1.05)
    over = TokenRatio(2.0).observed(chars=180_000, tokens=180_000, budget=90_000)
    assert over.chars_per_token == pytest.approx(1 / OVER_MARGIN)
    assert over.samples == 1


def test_a_context_length_error_shrinks_the_ratio_by_the_stated_count_or_by_half() -> None:
    assert TokenRatio(3.0).shrunk(420_000, 210_000).chars_per_token == pytest.approx(2 / OVER_MARGIN)
    assert TokenRatio(3.0).shrunk(420_000, None).chars_per_token == pytest.approx(1.5)
    assert TokenRatio(1.0).shrunk(420_000, 210_000).chars_per_token == 1.0  # never sparser for it


class Counting:
    """A provider whose tokenizer counts one token per `per` characters of the request, or refuses it as too long."""

    name = "counting"

    def __init__(self, per: float, limit: int | None = None) -> None:
        self.per, self.limit = per, limit
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        tokens = round(len(request.text()) / self.per)
        if self.limit is not None and tokens > self.limit:
            raise ContextLength("the prompt is too long", tokens=tokens)
        return ModelResponse("ok", "end_turn", Usage(input_tokens=tokens // 10, cache_read_tokens=tokens - tokens // 10, output_tokens=3))

    async def aclose(self) -> None:
        pass


def gateway(store: Store, provider: Counting) -> ModelGateway:
    cfg = parse_config(f'[models]\nprovider = "scripted"\n[models.judge]\nmodel = "{MODEL}"\n', "noemad.toml").config
    return ModelGateway(config=lambda: cfg, clock=ManualClock(NOW), writer=store.writer, provider=provider)  # type: ignore[arg-type]


def judge_once(store: Store, gw: ModelGateway, budget: int) -> tuple[int, int]:
    """Build a window at the stored ratio, send it, and say (estimated, counted) tokens of the request."""
    db = store.reader()
    ratio = ratio_for(db, "ada", MODEL)
    w = window(db, "ada", budget, ratio, role="judge")
    prompt = Prompt(role="judge", mind="ada", messages=(Turn("user", w.blocks()),), window=w.use(budget))
    try:
        asyncio.run(gw.complete(prompt))
    except ContextLength:
        pass
    sent = gw.provider.requests[-1]  # type: ignore[union-attr]
    return ratio.tokens(len(sent.text())), round(len(sent.text()) / gw.provider.per)  # type: ignore[union-attr]


def test_the_gateway_calibrates_the_ratio_per_mind_and_model_and_keeps_the_anchor(store: Store, tmp_path: Path) -> None:
    say(store, *lines(2000, size=120))  # far more than the budget
    gw = gateway(store, Counting(per=1.2))  # a dense tokenizer: 1.2 characters a token
    estimated, counted = judge_once(store, gw, 20_000)
    assert counted > 20_000  # the conservative start still undercounts this dense text once
    ratio = ratio_for(store.reader(), "ada", MODEL)
    assert ratio.samples == 1 and ratio.chars_per_token < 1.2
    first_anchor = anchor_for(store.reader(), "ada", "judge")
    assert first_anchor is not None and first_anchor.anchor_id is not None
    for _ in range(5):  # after the first calibration, never over budget
        say(store, *lines(3, size=120))
        estimated, counted = judge_once(store, gw, 20_000)
        assert counted <= 20_000
    assert ratio_for(store.reader(), "ada", "claude-other") == TokenRatio()  # per model
    assert anchor_for(store.reader(), "ada", "respond") is None  # per role


def test_the_ratio_survives_a_restart(store: Store, tmp_path: Path) -> None:
    say(store, *lines(50))
    judge_once(store, gateway(store, Counting(per=3.0)), 20_000)
    kept = ratio_for(store.reader(), "ada", MODEL)
    store.close()
    again = Store(tmp_path / "noema.db")
    try:
        assert ratio_for(again.reader(), "ada", MODEL) == kept and kept.samples == 1
    finally:
        again.close()


def test_a_context_length_error_shrinks_the_ratio_before_the_next_call(store: Store) -> None:
    say(store, *lines(2000, size=120))
    gw = gateway(store, Counting(per=1.0, limit=50_000))  # the model takes 50K; 90K asked at 2 chars a token is 180K
    estimated, counted = judge_once(store, gw, 90_000)
    assert counted > 50_000
    shrunk = ratio_for(store.reader(), "ada", MODEL)
    assert shrunk.chars_per_token == pytest.approx(1.0 / OVER_MARGIN, rel=0.01)
    # the next request is built at the shrunk ratio: within what the model takes when the budget is
    estimated, counted = judge_once(store, gw, 45_000)
    assert counted <= 45_000


def test_a_window_built_on_the_last_one_is_the_window_built_from_scratch(store: Store) -> None:
    from noemad.turn import window as module

    say(store, *lines(300))
    budget = 12_000
    w = window(store.reader(), "ada", budget, START, anchor=None)
    anchor = Anchor(w.anchor_id, w.chunk_chars)
    for step in range(30):
        say(store, *lines(7, start=1000 + 7 * step))
        if step % 5 == 0:
            reply(store, "Sure. " * 40)
        ratio = TokenRatio(START + step * 0.05)
        built = window(store.reader(), "ada", budget, ratio, anchor=anchor)
        module._MEMO.clear()
        fresh = window(store.reader(), "ada", budget, ratio, anchor=anchor)
        assert built == fresh
        anchor = Anchor(built.anchor_id, built.chunk_chars)


def test_a_mind_deleted_and_made_anew_is_not_shown_its_predecessors_words(store: Store) -> None:
    from noemad.minds import delete_mind

    say(store, "the old ada's secret")
    assert "secret" in window(store.reader(), "ada", 5_000, START, anchor=None).text
    store.writer.run_sync(lambda db: delete_mind(db, "ada", "ada"))
    store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    say(store, "hello again")
    assert window(store.reader(), "ada", 5_000, START, anchor=None).text == "alice (irc:#ops): hello again\n"


def test_a_different_renderer_is_not_served_the_last_ones_texts(store: Store) -> None:
    say(store, *lines(20))
    plain = window(store.reader(), "ada", 5_000, START, anchor=None)
    shouted = window(store.reader(), "ada", 5_000, START, anchor=None, render=lambda s: s.text.upper())
    assert plain.text.startswith("alice (irc:#ops): line 00000") and shouted.text.startswith("LINE 00000")
    closure = window(store.reader(), "ada", 5_000, START, anchor=None, render=lambda s: s.text.upper())
    assert closure == shouted  # a closure made anew that renders alike reuses it


def test_a_minds_context_tokens_bound_its_respond_window(store: Store) -> None:
    say(store, *lines(3000))  # ~300K characters
    wide = respond_context(store.reader(), "ada", MindSettings())
    narrow = respond_context(store.reader(), "ada", MindSettings(context_tokens=8_000))
    size = lambda p: sum(len(b.text) for t in p.messages for b in t.content)  # noqa: E731
    # at the conservative start ratio, 2 characters a token, less the persona and tools; a fresh anchor fills 65%
    assert 0.6 * 2 * 60_000 * 0.65 < size(wide) <= 2 * 60_000 * 0.65
    assert size(narrow) <= 2 * 8_000 * 0.65 < size(wide) / 5
    assert narrow.window is not None and narrow.window.budget_tokens == 8_000
    with pytest.raises(ValueError):
        MindSettings(context_tokens=1_000)
