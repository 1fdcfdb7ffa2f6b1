"""The model gateway in process: a scripted provider, a real store and a manual clock.

Covers settings resolution, the ledger row of every call and its cost, holds,
operator pauses and a stopping daemon, daily budgets, cancellation and
reconfiguration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from noemad.clock import ManualClock, iso, parse_iso
from noemad.config.files import parse_config
from noemad.config.schema import Config
from noemad.errors import (
    BudgetExceeded,
    ConfigError,
    ModelError,
    NoModelConfigured,
    Overloaded,
    RateLimited,
    Refused,
)
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway, Prompt
from noemad.models.holds import Hold
from noemad.wire import dump
from noemad.models.scripted import ScriptedProvider
from noemad.models.types import Block, ModelRequest, ModelResponse, Role, Turn
from noemad.store import Store

T = TypeVar("T")
START = parse_iso("2026-01-01T12:00:00Z")
HAIKU = "claude-haiku-5-5"
MTOK = 1_000_000
SCRIPTED = '[models]\nprovider = "scripted"\n'
RESPOND_HAIKU = SCRIPTED + f'[models.respond]\nmodel = "{HAIKU}"\n'


def config(text: str = SCRIPTED) -> Config:
    return parse_config(text, "noemad.toml").config


def haiku(inp: int = 0, out: int = 0, read: int = 0, write_5m: int = 0, write_1h: int = 0, tier: bool = False) -> float:
    """The price of Claude Haiku 5.5, written out: $0.10 in, $0.50 out per MTok, cache 1.25x / 2x / 0.1x, x5 past 100k in."""
    dollars = inp * 0.10 + out * 0.50 + read * 0.10 * 0.1 + write_5m * 0.10 * 1.25 + write_1h * 0.10 * 2.0
    return dollars * (5 if tier else 1) / MTOK


class Env:
    """A store with minds ada and bob, a manual clock, and gateways over them."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.store = Store(tmp_path / "noema.db")
        self.clock = ManualClock(START)
        for name in ("ada", "bob"):
            self.store.writer.run_sync(lambda db, name=name: create_mind(db, name, {}, START, "test"))
        self.cfg = config()

    def gateway(
        self, script: dict[str, Any] | ScriptedProvider | None, text: str | None = None, **kwargs: Any
    ) -> tuple[ModelGateway, ScriptedProvider | None]:
        """A gateway whose config is `text` (kept in self.cfg, so tests may swap it) over a scripted provider."""
        if text is not None:
            self.cfg = config(text)
        provider = ScriptedProvider(script) if isinstance(script, dict) else script
        gw = ModelGateway(config=lambda: self.cfg, clock=self.clock, writer=self.store.writer, provider=provider, **kwargs)
        return gw, provider

    def rows(self, **where: Any) -> list[dict[str, Any]]:
        sql = "SELECT * FROM model_calls"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        cur = self.store.reader().execute(sql + " ORDER BY id", list(where.values()))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    yield e
    e.store.close()


def prompt(role: Role = "judge", mind: str = "ada", text: str = "x" * 400, **kwargs: Any) -> Prompt:
    return Prompt(role=role, mind=mind, messages=(Turn.user(text),), **kwargs)


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


def complete(gw: ModelGateway, p: Prompt) -> ModelResponse:
    return run(gw.complete(p))


def fails(gw: ModelGateway, p: Prompt, kind: type[ModelError] = ModelError) -> ModelError:
    with pytest.raises(kind) as info:
        complete(gw, p)
    return info.value


def last_request(provider: ScriptedProvider | None) -> ModelRequest:
    assert provider is not None
    return provider.requests[-1]


async def settle(rounds: int = 20) -> None:
    """Let every ready task run as far as it can without time passing."""
    for _ in range(rounds):
        await asyncio.sleep(0)


# Settings resolution


def test_judge_defaults_to_claude_haiku_5_5(env: Env) -> None:
    gw, p = env.gateway({"judge": ["yes"]})
    response = complete(gw, prompt())
    assert response.text == "yes" and response.model == HAIKU
    request = last_request(p)
    assert (request.model, request.effort, request.timeout, request.max_tokens) == (HAIKU, "none", 60.0, 1024)
    assert (request.role, request.mind) == ("judge", "ada")
    assert response.call_id == env.rows()[0]["id"]


def test_a_role_without_a_model_is_refused_and_leaves_no_row(env: Env) -> None:
    gw, p = env.gateway({"respond": ["hello"], "critic": ["fine"]})
    err = fails(gw, prompt("respond"), NoModelConfigured)
    assert err.category == "no_model"
    assert "no model is configured for the respond role" in err.detail
    fails(gw, prompt("critic"), NoModelConfigured)
    assert p is not None and p.requests == [] and p.used("respond") == 0
    assert env.rows() == []


def test_provider_none_means_no_role_has_a_model(env: Env) -> None:
    env.cfg = config("")
    gw = ModelGateway(config=lambda: env.cfg, clock=env.clock, writer=env.store.writer)
    assert gw.provider is None
    assert "no model is configured for the judge role" in fails(gw, prompt("judge"), NoModelConfigured).detail
    assert env.rows() == []


def test_role_settings_from_the_config(env: Env) -> None:
    gw, p = env.gateway(
        {"respond": {"default": "ok"}, "judge": {"default": "ok"}},
        SCRIPTED + '[models.respond]\nmodel = "claude-big"\neffort = "high"\ntimeout = 120\nmax_tokens = 4000\n'
        '[models.judge]\nmodel = "claude-judge"\nmax_tokens = 50\n',
    )
    complete(gw, prompt("respond"))
    r = last_request(p)
    assert (r.model, r.effort, r.timeout, r.max_tokens) == ("claude-big", "high", 120.0, 4000)
    complete(gw, prompt("judge"))
    r = last_request(p)
    assert (r.model, r.effort, r.timeout, r.max_tokens) == ("claude-judge", "none", 60.0, 50)
    complete(gw, prompt("judge", max_tokens=7))
    assert last_request(p).max_tokens == 7  # the caller's limit wins


def test_per_mind_overrides(env: Env) -> None:
    gw, p = env.gateway(
        {"judge": {"default": "ok"}, "respond": {"default": "ok"}},
        SCRIPTED
        + '[minds.ada.models.judge]\nmodel = "claude-other"\neffort = "low"\ntimeout = 5\nmax_tokens = 64\n'
        '[minds.ada.models.respond]\nmodel = "claude-ada"\n'
        '[minds.bob.models.judge]\neffort = "medium"\n',
    )
    complete(gw, prompt("judge", "ada"))
    r = last_request(p)
    assert (r.model, r.effort, r.timeout, r.max_tokens) == ("claude-other", "low", 5.0, 64)
    complete(gw, prompt("judge", "bob"))
    r = last_request(p)
    assert (r.model, r.effort, r.timeout, r.max_tokens) == (HAIKU, "medium", 60.0, 1024)  # only what bob overrides
    complete(gw, prompt("respond", "ada"))
    assert last_request(p).model == "claude-ada"
    fails(gw, prompt("respond", "bob"), NoModelConfigured)  # ada's respond model is hers alone
    assert [(r["mind"], r["role"], r["model"]) for r in env.rows()] == [
        ("ada", "judge", "claude-other"),
        ("bob", "judge", HAIKU),
        ("ada", "respond", "claude-ada"),
    ]


# The ledger and costs


def test_an_ok_call_is_a_full_row_priced_exactly(env: Env) -> None:
    gw, _ = env.gateway({"judge": ["y" * 40]})
    complete(gw, prompt(text="x" * 400))
    [row] = env.rows()
    assert row["mind"] == "ada" and row["role"] == "judge" and row["model"] == HAIKU and row["provider"] == "scripted"
    assert (row["input_tokens"], row["cache_read_tokens"], row["cache_write_tokens"], row["cache_write_1h_tokens"]) == (101, 0, 0, 0)
    assert row["output_tokens"] == 11
    assert row["outcome"] == "ok" and row["error_category"] is None and row["stop_reason"] == "end_turn"
    assert row["latency_ms"] is not None and row["latency_ms"] >= 0
    assert row["at"] == iso(START)
    assert row["cost_usd"] == pytest.approx(haiku(inp=101, out=11), rel=1e-12)
    assert row["cost_usd"] == pytest.approx((101 * 0.10 + 11 * 0.50) / MTOK, rel=1e-12)


def test_cache_writes_and_reads_are_priced_by_ttl(env: Env) -> None:
    gw, _ = env.gateway({"respond": {"default": "ok"}}, RESPOND_HAIKU)
    system_5m = (Block("S" * 4000, cache="5m"),)
    system_1h = (Block("H" * 8000, cache="1h"),)
    ask = (Turn.user("q" * 39),)  # with its newline, 40 chars after the breakpoint
    for system in (system_5m, system_5m, system_1h, system_1h):
        complete(gw, Prompt("respond", "ada", ask, system))
    rows = env.rows()
    four_ways = [(r["input_tokens"], r["cache_read_tokens"], r["cache_write_tokens"], r["cache_write_1h_tokens"]) for r in rows]
    assert four_ways == [(11, 0, 1000, 0), (11, 1000, 0, 0), (11, 0, 2000, 2000), (11, 2000, 0, 0)]
    assert [r["cost_usd"] for r in rows] == pytest.approx(
        [
            haiku(inp=11, out=1, write_5m=1000),
            haiku(inp=11, out=1, read=1000),
            haiku(inp=11, out=1, write_1h=2000),
            haiku(inp=11, out=1, read=2000),
        ],
        rel=1e-12,
    )
    assert rows[0]["cost_usd"] == pytest.approx((11 * 0.10 + 1 * 0.50 + 1000 * 0.125) / MTOK, rel=1e-12)
    assert rows[2]["cost_usd"] == pytest.approx((11 * 0.10 + 1 * 0.50 + 2000 * 0.20) / MTOK, rel=1e-12)
    assert rows[3]["cost_usd"] == pytest.approx((11 * 0.10 + 1 * 0.50 + 2000 * 0.01) / MTOK, rel=1e-12)


def test_a_request_over_100k_input_tokens_costs_five_times(env: Env) -> None:
    gw, _ = env.gateway({"summarise": {"default": "z" * 400}})
    complete(gw, prompt("summarise", text="a" * 399_996))  # exactly 100,000 input tokens: base price
    complete(gw, prompt("summarise", text="a" * 400_000))  # 100,001: the long-context tier
    at, over = env.rows()
    assert (at["input_tokens"], over["input_tokens"]) == (100_000, 100_001)
    assert at["cost_usd"] == pytest.approx(haiku(inp=100_000, out=101), rel=1e-12)
    assert over["cost_usd"] == pytest.approx(haiku(inp=100_001, out=101, tier=True), rel=1e-12)
    assert over["cost_usd"] == pytest.approx((100_001 * 0.10 + 101 * 0.50) * 5 / MTOK, rel=1e-12)


def test_the_long_context_tier_counts_cached_input_too(env: Env) -> None:
    gw, _ = env.gateway({"respond": {"default": "ok"}}, RESPOND_HAIKU)
    system = (Block("S" * 240_000, cache="5m"),)  # 60,000 tokens
    complete(gw, Prompt("respond", "ada", (Turn.user("q" * 3),), system))
    complete(gw, Prompt("respond", "ada", (Turn.user("q" * 199_999),), system))  # 60,000 read + 50,001 uncached
    first, second = env.rows()
    assert first["cost_usd"] == pytest.approx(haiku(inp=2, out=1, write_5m=60_000), rel=1e-12)
    assert (second["cache_read_tokens"], second["input_tokens"]) == (60_000, 50_001)
    assert second["cost_usd"] == pytest.approx(haiku(inp=50_001, out=1, read=60_000, tier=True), rel=1e-12)


def test_configured_prices_override_and_unknown_models_cost_nothing(env: Env) -> None:
    gw, _ = env.gateway(
        {"judge": {"default": "y" * 40}},
        SCRIPTED + '[pricing."claude-haiku-5-5"]\ninput = 1.0\noutput = 2.0\n[minds.bob.models.judge]\nmodel = "claude-mystery"\n',
    )
    complete(gw, prompt("judge", "ada"))
    complete(gw, prompt("judge", "bob"))
    ada, bob = env.rows()
    assert ada["cost_usd"] == pytest.approx((101 * 1.0 + 11 * 2.0) / MTOK, rel=1e-12)
    assert bob["cost_usd"] == 0.0 and bob["outcome"] == "ok"


def test_a_max_tokens_stop_is_recorded(env: Env) -> None:
    gw, _ = env.gateway({"judge": ["w" * 100]})
    response = complete(gw, prompt(max_tokens=5))
    assert response.stop_reason == "max_tokens" and response.text == "w" * 20
    [row] = env.rows()
    assert row["stop_reason"] == "max_tokens" and row["output_tokens"] == 5


@pytest.mark.parametrize(
    ("fault", "category"),
    [
        ({"fault": "unavailable"}, "unavailable"),
        ({"fault": "timeout"}, "timeout"),
        ({"fault": "context_length", "tokens": 210000}, "context_length"),
        ({"fault": "invalid"}, "invalid"),
        ({"fault": "auth"}, "auth"),
        ({"fault": "overloaded"}, "overloaded"),
    ],
)
def test_a_failed_call_is_an_error_row(env: Env, fault: dict[str, Any], category: str) -> None:
    gw, _ = env.gateway({"judge": [fault]})
    err = fails(gw, prompt())
    [row] = env.rows()
    assert row["outcome"] == "error" and row["error_category"] == category == err.category
    assert row["detail"] == err.detail
    assert row["latency_ms"] is not None
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (0, 0, 0.0)
    assert row["retry_after"] is None
    assert gw.holds.in_force() == []  # no stated wait, no hold


def test_a_used_up_script_is_an_invalid_error_row(env: Env) -> None:
    gw, _ = env.gateway({"judge": ["only"]})
    complete(gw, prompt())
    err = fails(gw, prompt())
    assert "the script for judge is used up" in err.detail
    assert [(r["outcome"], r["error_category"]) for r in env.rows()] == [("ok", None), ("error", "invalid")]


# Holds


def test_a_429_holds_the_model_and_refuses_auxiliary_calls(env: Env) -> None:
    gw, p = env.gateway({"judge": [{"fault": "rate_limited", "retry_after": 30}, "after"], "narrate": ["told"]})
    assert p is not None
    err = fails(gw, prompt(), RateLimited)
    assert err.retry_after == 30
    assert gw.holds.in_force() == [Hold(HAIKU, START + 30, "rate_limited", START)]
    assert dump(gw.holds.in_force()[0]) == {
        "model": HAIKU,
        "until": "2026-01-01T12:00:30.000Z",
        "since": "2026-01-01T12:00:00.000Z",
        "reason": "rate_limited",
    }
    env.clock.advance(10)
    for role in ("judge", "narrate"):  # the hold is on the model, whatever role calls it
        refused = fails(gw, prompt(role), Refused)
        assert type(refused) is Refused and refused.category == "refused"
        assert refused.until == "2026-01-01T12:00:30.000Z"
        assert refused.retry_after == 20
        assert "on hold until 2026-01-01T12:00:30.000Z (rate_limited)" in refused.detail
    assert len(p.requests) == 1 and p.used("judge") == 1 and p.used("narrate") == 0  # never reached the provider
    rows = env.rows()
    assert [(r["outcome"], r["error_category"], r["retry_after"]) for r in rows] == [
        ("error", "rate_limited", 30.0),
        ("refused", "refused", 20.0),
        ("refused", "refused", 20.0),
    ]
    assert rows[1]["latency_ms"] is None and rows[1]["cost_usd"] == 0.0
    env.clock.advance(20)  # the hold ends at exactly now + 30
    assert gw.holds.in_force() == []
    assert complete(gw, prompt()).text == "after"


def test_an_overload_with_a_stated_wait_holds_too(env: Env) -> None:
    gw, _ = env.gateway({"judge": [{"fault": "overloaded", "retry_after": 5}]})
    fails(gw, prompt(), Overloaded)
    assert [(h.model, h.until, h.reason) for h in gw.holds.in_force()] == [(HAIKU, START + 5, "overloaded")]


def test_a_hold_is_per_model(env: Env) -> None:
    gw, _ = env.gateway(
        {"judge": [{"fault": "rate_limited", "retry_after": 30}, "bob's verdict"]},
        SCRIPTED + '[minds.bob.models.judge]\nmodel = "claude-other"\n',
    )
    fails(gw, prompt("judge", "ada"), RateLimited)
    assert complete(gw, prompt("judge", "bob")).text == "bob's verdict"


def test_a_respond_call_waits_out_the_hold(env: Env) -> None:
    gw, p = env.gateway({"judge": [{"fault": "rate_limited", "retry_after": 30}], "respond": ["at last"]}, RESPOND_HAIKU)
    assert p is not None
    fails(gw, prompt("judge"), RateLimited)

    async def scenario() -> ModelResponse:
        task = asyncio.create_task(gw.complete(prompt("respond")))
        await settle()
        assert not task.done()
        env.clock.advance(29)
        await settle()
        assert not task.done()  # one second of hold is left
        assert len(p.requests) == 1  # only the judge call reached the provider
        env.clock.advance(2)  # past the hold: the clock wakes the waiting call
        return await asyncio.wait_for(task, timeout=5)

    response = run(scenario())
    assert response.text == "at last"
    rows = env.rows()
    assert [(r["role"], r["outcome"]) for r in rows] == [("judge", "error"), ("respond", "ok")]
    assert rows[1]["at"] == iso(START + 31)


def test_a_later_hold_replaces_an_earlier_one_but_not_the_reverse(env: Env) -> None:
    gw, _ = env.gateway({"judge": [{"fault": "rate_limited", "retry_after": 30}]})
    fails(gw, prompt("judge"), RateLimited)
    # No call reaches the provider under the hold: arm the next ones directly, as a concurrent call's 429 would.
    gw.holds.arm(HAIKU, 5, "rate_limited")
    assert gw.holds.in_force()[0].until == START + 30
    gw.holds.arm(HAIKU, 60, "overloaded")
    assert (gw.holds.in_force()[0].until, gw.holds.in_force()[0].reason) == (START + 60, "overloaded")


# Operator pause and a stopping daemon


def test_a_paused_mind_makes_no_auxiliary_calls_but_still_responds(env: Env) -> None:
    script = {role: {"default": f"{role} ok"} for role in ("respond", "critic", "judge", "narrate", "summarise")}
    gw, p = env.gateway(script, RESPOND_HAIKU + f'[models.critic]\nmodel = "{HAIKU}"\n', paused=lambda mind: mind == "ada")
    assert p is not None
    for role in ("critic", "judge", "narrate", "summarise"):
        err = fails(gw, prompt(role, "ada"), Refused)
        assert err.detail == "mind 'ada' is paused by an operator; auxiliary model calls are not made"
    assert p.requests == []
    assert complete(gw, prompt("respond", "ada")).text == "respond ok"
    assert complete(gw, prompt("judge", "bob")).text == "judge ok"
    rows = env.rows()
    assert [(r["mind"], r["role"], r["outcome"], r["error_category"]) for r in rows] == [
        ("ada", "critic", "refused", "refused"),
        ("ada", "judge", "refused", "refused"),
        ("ada", "narrate", "refused", "refused"),
        ("ada", "summarise", "refused", "refused"),
        ("ada", "respond", "ok", None),
        ("bob", "judge", "ok", None),
    ]


def test_a_stopping_daemon_makes_no_auxiliary_calls_but_still_responds(env: Env) -> None:
    gw, p = env.gateway({"respond": ["last words"], "judge": ["never"]}, RESPOND_HAIKU, stopping=lambda: True)
    assert p is not None
    err = fails(gw, prompt("judge", "bob"), Refused)
    assert err.detail == "noemad is stopping; auxiliary model calls are not made"
    assert p.used("judge") == 0
    assert complete(gw, prompt("respond")).text == "last words"
    assert [(r["role"], r["outcome"]) for r in env.rows()] == [("judge", "refused"), ("respond", "ok")]


# Budgets


BUDGET_SCRIPT: dict[str, Any] = {role: {"default": "y" * 40} for role in ("judge", "narrate", "respond")}
# Each call: 400 chars in (101 tokens), 40 out (11 tokens): 112 tokens, $0.0000156.
# With max_tokens = 100 the gateway estimates 101 + 100 = 201 tokens, at worst $0.0000601.
LIMITED = SCRIPTED + f'[models.judge]\nmodel = "{HAIKU}"\nmax_tokens = 100\n[models.narrate]\nmodel = "{HAIKU}"\nmax_tokens = 100\n'


def test_tokens_per_day_refuses_the_call_that_would_exceed(env: Env) -> None:
    gw, p = env.gateway(BUDGET_SCRIPT, LIMITED + "[budgets.judge]\ntokens_per_day = 400\n")
    assert p is not None
    complete(gw, prompt())  # 0 + 201 <= 400
    complete(gw, prompt())  # 112 + 201 <= 400
    err = fails(gw, prompt(), BudgetExceeded)  # 224 + 201 > 400
    assert err.category == "budget"
    assert err.detail == (
        "mind 'ada' has spent 224 of its 400 judge tokens today and this call may take 201;"
        " raise [budgets.judge] or wait for the next UTC day"
    )
    assert len(p.requests) == 2
    rows = env.rows()
    assert [(r["outcome"], r["error_category"]) for r in rows] == [("ok", None), ("ok", None), ("refused", "budget")]
    assert (rows[2]["input_tokens"], rows[2]["output_tokens"], rows[2]["cost_usd"]) == (0, 0, 0.0)
    # Per mind and per role: bob and ada's narrate are untouched.
    complete(gw, prompt("judge", "bob"))
    complete(gw, prompt("narrate", "ada"))
    # A small enough call still fits today.
    complete(gw, prompt(text="x" * 4, max_tokens=50))  # 224 + 2 + 50 <= 400


def test_a_budget_resets_on_the_next_utc_day(env: Env) -> None:
    gw, _ = env.gateway(BUDGET_SCRIPT, LIMITED + "[budgets.judge]\ntokens_per_day = 300\n")
    complete(gw, prompt())
    fails(gw, prompt(), BudgetExceeded)
    env.clock.advance(12 * 3600 - 1)  # 23:59:59, the same UTC day
    fails(gw, prompt(), BudgetExceeded)
    env.clock.advance(1)  # midnight UTC
    complete(gw, prompt())
    assert [r["outcome"] for r in env.rows()] == ["ok", "refused", "refused", "ok"]
    assert env.rows()[-1]["at"] == "2026-01-02T00:00:00.000Z"


def test_cost_per_day_refuses_the_call_that_would_exceed(env: Env) -> None:
    gw, _ = env.gateway(BUDGET_SCRIPT, LIMITED + "[budgets.judge]\ncost_per_day = 0.0001\n")
    for _ in range(3):  # 0, 15.6, 31.2 microdollars spent, plus 60.1 at worst: within 100
        complete(gw, prompt())
    err = fails(gw, prompt(), BudgetExceeded)  # 46.8 + 60.1 > 100
    assert err.detail == (
        "mind 'ada' has spent $0.0000 of its $0.0001 judge budget today and this call may cost $0.0001;"
        " raise [budgets.judge] or wait for the next UTC day"
    )
    rows = env.rows()
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(3 * haiku(inp=101, out=11), rel=1e-12)
    assert rows[-1]["outcome"] == "refused" and rows[-1]["error_category"] == "budget"
    complete(gw, prompt("judge", "bob"))  # bob has his own day
    env.clock.advance(12 * 3600)
    complete(gw, prompt())


def test_a_cost_budget_of_zero_refuses_everything_priced(env: Env) -> None:
    gw, p = env.gateway(BUDGET_SCRIPT, LIMITED + "[budgets.judge]\ncost_per_day = 0\n")
    fails(gw, prompt(), BudgetExceeded)
    assert p is not None and p.requests == []


def test_budgets_apply_to_respond_too(env: Env) -> None:
    gw, _ = env.gateway(BUDGET_SCRIPT, RESPOND_HAIKU + "[budgets.respond]\ntokens_per_day = 1000\n")
    fails(gw, prompt("respond"), BudgetExceeded)  # 101 + 1024 > 1000
    complete(gw, prompt("respond", max_tokens=100))


def test_a_minds_own_budgets_replace_the_global_ones_whole(env: Env) -> None:
    gw, _ = env.gateway(
        BUDGET_SCRIPT,
        LIMITED
        + "[budgets.judge]\ntokens_per_day = 250\n[budgets.narrate]\ntokens_per_day = 250\n"
        + "[minds.ada.budgets.judge]\ntokens_per_day = 1000\n",
    )
    for _ in range(8):  # 7 * 112 + 201 <= 1000
        complete(gw, prompt("judge", "ada"))
    fails(gw, prompt("judge", "ada"), BudgetExceeded)  # 8 * 112 + 201 > 1000
    complete(gw, prompt("judge", "bob"))
    fails(gw, prompt("judge", "bob"), BudgetExceeded)  # bob keeps the global 250
    for _ in range(3):  # ada's [budgets] has no narrate limit: the global one no longer applies to her
        complete(gw, prompt("narrate", "ada"))


# Cancellation


class Stalling(ScriptedProvider):
    """A scripted provider whose calls wait until released (a slow model)."""

    def __init__(self, script: dict[str, Any]) -> None:
        super().__init__(script)
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.entered.set()
        await self.release.wait()
        return await super().complete(request)


def test_cancelling_a_call_records_it_as_cancelled(env: Env) -> None:
    provider = Stalling({"judge": ["never heard"]})
    gw, _ = env.gateway(provider)

    async def scenario() -> None:
        task = asyncio.create_task(gw.complete(prompt()))
        await asyncio.wait_for(provider.entered.wait(), timeout=5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    [row] = env.rows()
    assert row["outcome"] == "cancelled" and row["error_category"] == "cancelled"
    assert row["detail"] == "the caller cancelled the call"
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (0, 0, 0.0)
    assert row["latency_ms"] is not None
    assert provider.used("judge") == 0


def test_cancelling_during_the_scripted_providers_yield(env: Env) -> None:
    gw, p = env.gateway({"judge": ["one", "two"]})
    assert p is not None

    async def scenario() -> str:
        task = asyncio.create_task(gw.complete(prompt()))
        await asyncio.sleep(0)  # the call runs until the provider yields
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return (await gw.complete(prompt())).text

    assert run(scenario()) == "one"  # the cancelled call used up nothing
    assert [r["outcome"] for r in env.rows()] == ["cancelled", "ok"]


# Reconfiguration


class Closing(ScriptedProvider):
    closed = False

    async def aclose(self) -> None:
        self.closed = True


def script_file(env: Env, name: str, reply: str) -> Path:
    path = env.tmp_path / name
    path.write_text(f'[judge]\ndefault = "{reply}"\n')
    return path


def test_reconfigure_swaps_the_provider_when_models_change(env: Env) -> None:
    a, b = script_file(env, "a.toml", "from a"), script_file(env, "b.toml", "from b")
    env.cfg = config(SCRIPTED + f'[models.scripted]\nfile = "{a}"\n')
    gw = ModelGateway(config=lambda: env.cfg, clock=env.clock, writer=env.store.writer)
    assert isinstance(gw.provider, ScriptedProvider) and gw.provider.source == str(a)
    assert complete(gw, prompt()).text == "from a"

    before = gw.provider
    env.cfg = config(SCRIPTED + f'[models.scripted]\nfile = "{a}"\n[daemon]\nlog_level = "debug"\n')
    run(gw.reconfigure())
    assert gw.provider is before  # [models] unchanged: the same provider, its state kept

    env.cfg = config(SCRIPTED + f'[models.scripted]\nfile = "{b}"\n')
    run(gw.reconfigure())
    assert gw.provider is not before
    assert complete(gw, prompt()).text == "from b"

    env.cfg = config("")  # provider = "none"
    run(gw.reconfigure())
    assert gw.provider is None
    fails(gw, prompt(), NoModelConfigured)
    assert [r["outcome"] for r in env.rows()] == ["ok", "ok"]


def test_reconfigure_closes_the_old_provider(env: Env) -> None:
    old = Closing({"judge": ["old"]})
    gw, _ = env.gateway(old)
    env.cfg = config(SCRIPTED + f'[models.scripted]\nfile = "{script_file(env, "new.toml", "new")}"\n')
    run(gw.reconfigure())
    assert old.closed
    assert complete(gw, prompt()).text == "new"


def test_reconfigure_with_a_bad_script_keeps_the_old_provider(env: Env) -> None:
    good = script_file(env, "good.toml", "still here")
    env.cfg = config(SCRIPTED + f'[models.scripted]\nfile = "{good}"\n')
    gw = ModelGateway(config=lambda: env.cfg, clock=env.clock, writer=env.store.writer)
    env.cfg = config(SCRIPTED + f'[models.scripted]\nfile = "{env.tmp_path / "missing.toml"}"\n')
    with pytest.raises(ConfigError, match="missing.toml does not exist"):
        run(gw.reconfigure())
    assert complete(gw, prompt()).text == "still here"


def test_a_role_change_applies_without_reconfigure(env: Env) -> None:
    gw, p = env.gateway({"judge": {"default": "ok"}})
    complete(gw, prompt())
    env.cfg = config(SCRIPTED + '[models.judge]\nmodel = "claude-new"\n')
    complete(gw, prompt())
    assert last_request(p).model == "claude-new"


# Fixed gateway bugs (found by these tests)


def test_the_ledger_names_the_provider_that_made_the_call(env: Env) -> None:
    gw, _ = env.gateway({"judge": ["yes"]}, "")  # [models] provider defaults to none
    complete(gw, prompt())
    assert env.rows()[0]["provider"] == "scripted"


def test_concurrent_calls_cannot_overspend_a_budget(env: Env) -> None:
    gw, p = env.gateway(BUDGET_SCRIPT, LIMITED + "[budgets.judge]\ntokens_per_day = 300\n")  # room for one call of 201

    async def scenario() -> list[Any]:
        return await asyncio.gather(*(gw.complete(prompt()) for _ in range(3)), return_exceptions=True)

    results = run(scenario())
    assert sum(isinstance(r, ModelResponse) for r in results) == 1
    assert sum(isinstance(r, BudgetExceeded) for r in results) == 2


def test_cancelling_a_respond_call_waiting_on_a_hold_is_recorded(env: Env) -> None:
    gw, _ = env.gateway({"judge": [{"fault": "rate_limited", "retry_after": 30}], "respond": ["never"]}, RESPOND_HAIKU)
    fails(gw, prompt("judge"), RateLimited)

    async def scenario() -> None:
        task = asyncio.create_task(gw.complete(prompt("respond")))
        await settle()
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    assert [(r["role"], r["outcome"]) for r in env.rows()] == [("judge", "error"), ("respond", "cancelled")]


def test_tuning_a_role_keeps_its_default_model(env: Env) -> None:
    gw, p = env.gateway({"judge": {"default": "ok"}}, SCRIPTED + "[models.judge]\nmax_tokens = 50\n")
    complete(gw, prompt())
    assert (last_request(p).model, last_request(p).max_tokens) == (HAIKU, 50)


class Broken(ScriptedProvider):
    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise RuntimeError("a provider bug")


def test_an_unexpected_provider_exception_is_still_recorded(env: Env) -> None:
    gw, _ = env.gateway(Broken({}))
    with pytest.raises(Exception):
        complete(gw, prompt())
    assert [r["outcome"] for r in env.rows()] == ["error"]

