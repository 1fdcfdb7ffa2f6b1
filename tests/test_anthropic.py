"""The Anthropic provider: the real SDK against a fake Messages API on loopback.

Nothing here sleeps or reaches the network: held replies wait on events,
the SDK's timeout on a held reply is a real 0.3 s bound, and time for holds
moves on a `ManualClock`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import traceback
from collections.abc import AsyncIterator, Iterator
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest
from fake_messages_api import FakeMessagesAPI, Reply, error_reply, message_reply, usage

from noemad.clock import ManualClock
from noemad.config.files import parse_config
from noemad.config.models import AnthropicSettings
from noemad.errors import (
    AuthFailed,
    ContextLength,
    InvalidRequest,
    ModelError,
    ModelTimeout,
    Overloaded,
    RateLimited,
    Refused,
    Unavailable,
)
from noemad.minds import create_mind
from noemad.models.anthropic import AnthropicProvider, parse_retry_after
from noemad.models.apikey import NO_KEY
from noemad.models.gateway import ModelGateway, Prompt
from noemad.models.types import Block, ModelRequest, Turn
from noemad.store import Store

pytestmark = pytest.mark.anyio

KEY = "sk-ant-test-SECRET-1234"
KEY_ENV = "NOEMA_TEST_ANTHROPIC_KEY"
MODEL = "claude-haiku-5-5"
NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z: the providers' clock
SDK_LOGGERS = ("anthropic", "httpx2", "httpcore2", "httpx", "httpcore", "noemad")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No stray Anthropic variables change what the SDK does; the key is in our own variable."""
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_LOG",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CONFIG_DIR",
        "CREDENTIALS_DIRECTORY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(key=KEY) as server:
        yield server


@contextlib.asynccontextmanager
async def provider(base_url: str, **settings: Any) -> AsyncIterator[AnthropicProvider]:
    settings.setdefault("api_key_env", KEY_ENV)
    settings.setdefault("max_retries", 0)
    p = AnthropicProvider(AnthropicSettings(base_url=base_url, **settings), ManualClock(NOW))
    try:
        yield p
    finally:
        await p.aclose()


def request(text: str = "hi", **kwargs: Any) -> ModelRequest:
    kwargs.setdefault("messages", (Turn.user(text),))
    return ModelRequest(role="judge", mind="ada", model=MODEL, **kwargs)


def closed_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the request as sent ----------------------------------------------------


async def test_request_as_sent_blocks_cache_breakpoints_effort_and_key(api: FakeMessagesAPI) -> None:
    req = ModelRequest(
        role="critic",
        mind="ada",
        model=MODEL,
        system=(Block("You are Ada.", cache="1h"), Block("Today is Tuesday.")),
        messages=(
            Turn("user", (Block("stable context", cache="5m"), Block("the question"))),
            Turn("assistant", (Block("an answer"),)),
            Turn.user("and now?", cache="5m"),
        ),
        max_tokens=321,
        effort="high",
        timeout=5.0,
    )
    async with provider(api.url) as p:
        await p.complete(req)
    (sent,) = api.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.body == {
        "model": MODEL,
        "max_tokens": 321,
        "system": [
            {"type": "text", "text": "You are Ada.", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
            {"type": "text", "text": "Today is Tuesday."},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "stable context", "cache_control": {"type": "ephemeral", "ttl": "5m"}},
                    {"type": "text", "text": "the question"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "an answer"}]},
            {"role": "user", "content": [{"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]},
        ],
        "output_config": {"effort": "high"},
    }
    # The key goes as x-api-key, never as a Bearer token (which this SDK release would send by itself).
    assert sent.headers["x-api-key"] == KEY
    assert "authorization" not in sent.headers
    assert sent.headers["anthropic-version"]
    assert sent.headers["x-stainless-timeout"] == "5.0"


async def test_effort_none_sends_no_output_config_and_no_system(api: FakeMessagesAPI) -> None:
    async with provider(api.url) as p:
        await p.complete(request(effort="none", max_tokens=64))
    body = api.requests[0].body
    assert "output_config" not in body
    assert "system" not in body
    assert body["max_tokens"] == 64
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


# -- the key ----------------------------------------------------------------


async def test_key_from_a_bare_name_in_credentials_directory(
    api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    (tmp_path / "anthropic-key").write_text(f"  {KEY}\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    async with provider(api.url, api_key_file="anthropic-key") as p:
        await p.complete(request())
    assert api.requests[0].headers["x-api-key"] == KEY


async def test_key_file_by_path_wins_over_the_variable(api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-ant-the-wrong-one")
    (tmp_path / "key").write_text(KEY + "\n")
    async with provider(api.url, api_key_file=str(tmp_path / "key")) as p:
        await p.complete(request())
    assert api.requests[0].headers["x-api-key"] == KEY


async def test_key_from_the_default_variable(api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    async with provider(api.url, api_key_env="ANTHROPIC_API_KEY") as p:
        await p.complete(request())
    assert api.requests[0].headers["x-api-key"] == KEY


async def test_missing_key_fails_every_call_without_a_request_until_the_key_appears(
    api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    async with provider(api.url) as p:  # builds fine without a key
        assert p.name == "anthropic"
        for _ in range(2):
            with pytest.raises(AuthFailed) as info:
                await p.complete(request())
            assert info.value.detail.startswith(NO_KEY)
            assert info.value.category == "auth" and not info.value.retryable
        assert api.requests == []
        monkeypatch.setenv(KEY_ENV, KEY)
        assert (await p.complete(request())).text == "Hello."
    assert len(api.requests) == 1


@pytest.mark.parametrize(
    ("settings", "environ", "expected"),
    [
        ({"api_key_file": "anthropic-key"}, {}, "$CREDENTIALS_DIRECTORY"),
        ({"api_key_file": "/nonexistent/anthropic-key"}, {}, "cannot read the Anthropic API key file '/nonexistent/anthropic-key'"),
        ({}, {KEY_ENV: "   \n"}, NO_KEY),
        ({}, {KEY_ENV: KEY + "\nInjected: header"}, "has characters no API key has"),
    ],
)
async def test_unusable_key_settings_fail_as_auth_without_a_request(
    api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch, settings: dict[str, str], environ: dict[str, str], expected: str
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    async with provider(api.url, **settings) as p:
        with pytest.raises(AuthFailed) as info:
            await p.complete(request())
    assert expected in info.value.detail
    assert KEY not in info.value.detail
    assert api.requests == []


# -- the answer -------------------------------------------------------------


async def test_answer_text_stop_reason_model_and_usage_four_ways(api: FakeMessagesAPI) -> None:
    api.push(
        message_reply(
            content=[
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "Hello, "},
                {"type": "text", "text": "Ada."},
            ],
            stop_reason="max_tokens",
            model="claude-haiku-5-5-20260101",
            usage_=usage(120, 45, cache_read=3000, cache_write_5m=200, cache_write_1h=800),
        )
    )
    async with provider(api.url) as p:
        answer = await p.complete(request())
    assert answer.text == "Hello, Ada."
    assert answer.stop_reason == "max_tokens"
    assert answer.model == "claude-haiku-5-5-20260101"
    u = answer.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.output_tokens) == (
        120,
        3000,
        1000,
        800,
        45,
    )


async def test_usage_without_cache_fields_is_zero(api: FakeMessagesAPI) -> None:
    api.push(message_reply("ok", usage_={"input_tokens": 7, "output_tokens": 2}))
    async with provider(api.url) as p:
        u = (await p.complete(request())).usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.output_tokens) == (7, 0, 0, 0, 2)


# -- faults -----------------------------------------------------------------


def http_date(seconds_from_now: float) -> str:
    """An HTTP date `seconds_from_now` after the providers' clock (NOW), not the wall clock."""
    return formatdate(NOW + seconds_from_now, usegmt=True)


FAULTS: list[tuple[str, Reply, type[ModelError], float | None]] = [
    ("429 retry-after seconds", error_reply(429, "rate_limit_error", "slow down", {"retry-after": "30"}), RateLimited, 30.0),
    ("429 retry-after-ms", error_reply(429, "rate_limit_error", "slow down", {"retry-after-ms": "1500"}), RateLimited, 1.5),
    ("429 no wait stated", error_reply(429, "rate_limit_error", "slow down"), RateLimited, None),
    ("529 overloaded", error_reply(529, "overloaded_error", "Overloaded"), Overloaded, None),
    ("529 with retry-after", error_reply(529, "overloaded_error", "Overloaded", {"retry-after": "5"}), Overloaded, 5.0),
    ("500 api_error", error_reply(500, "api_error", "Internal server error"), Unavailable, None),
    ("502", error_reply(502, "api_error", "Bad gateway"), Unavailable, None),
    ("503 with retry-after", error_reply(503, "api_error", "Unavailable", {"retry-after": "12"}), Unavailable, 12.0),
    ("504", error_reply(504, "api_error", "Gateway timeout"), Unavailable, None),
    ("400 invalid", error_reply(400, "invalid_request_error", "messages: roles must alternate"), InvalidRequest, None),
    ("404 model", error_reply(404, "not_found_error", "model: claude-nope"), InvalidRequest, None),
    ("413 too large", error_reply(413, "request_too_large", "Request exceeds the maximum allowed number of bytes"), InvalidRequest, None),
    ("422", error_reply(422, "invalid_request_error", "unprocessable"), InvalidRequest, None),
    ("401", error_reply(401, "authentication_error", "invalid x-api-key"), AuthFailed, None),
    ("403", error_reply(403, "permission_error", "Your API key does not have permission"), AuthFailed, None),
]


@pytest.mark.parametrize(("reply", "error", "retry_after"), [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
async def test_fault_maps_to_its_error(api: FakeMessagesAPI, reply: Reply, error: type[ModelError], retry_after: float | None) -> None:
    api.push(reply)
    async with provider(api.url) as p:
        with pytest.raises(ModelError) as info:
            await p.complete(request())
    err = info.value
    assert type(err) is error
    assert err.retry_after == retry_after
    assert f"HTTP {reply.status}" in err.detail
    assert reply.body["error"]["message"] in err.detail
    assert "req_fake_" in err.detail  # the request id, for the provider's support
    assert err.__cause__ is None and err.__context__ is None  # the SDK's exception (and its request) is not attached
    assert len(api.requests) == 1


async def test_retry_after_as_an_http_date(api: FakeMessagesAPI) -> None:
    api.rate_limited(http_date(120))
    async with provider(api.url) as p:
        with pytest.raises(RateLimited) as info:
            await p.complete(request())
    assert info.value.retry_after == 120.0  # counted from the provider's clock: on the wall clock that date is long past


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "x", "retry-after": "9"}, 9.0),
        ({"retry-after": "Thu, 01 Jan 2026 00:01:00 GMT"}, 60.0),
        ({"retry-after": "Wed, 31 Dec 2025 23:00:00 GMT"}, 0.0),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


async def test_prompt_too_long_states_its_tokens(api: FakeMessagesAPI) -> None:
    api.prompt_too_long(210_000, 200_000)
    async with provider(api.url) as p:
        with pytest.raises(ContextLength) as info:
            await p.complete(request())
    assert info.value.tokens == 210_000
    assert info.value.category == "context_length"
    assert "prompt is too long: 210000 tokens > 200000 maximum" in info.value.detail


async def test_unreachable_api_is_unavailable() -> None:
    async with provider(f"http://127.0.0.1:{closed_port()}") as p:
        with pytest.raises(Unavailable) as info:
            await p.complete(request())
    assert "cannot reach the Anthropic API at http://127.0.0.1:" in info.value.detail
    assert info.value.retryable and info.value.retry_after is None


async def test_slow_answer_times_out_and_the_connection_is_dropped(api: FakeMessagesAPI) -> None:
    hold = api.slow()
    async with provider(api.url) as p:
        with pytest.raises(ModelTimeout) as info:
            await p.complete(request(timeout=0.3))
    assert "within 0.3 s" in info.value.detail
    assert info.value.category == "timeout" and info.value.retryable
    await hold.wait_disconnected()
    assert api.requests[0].disconnected


async def test_released_slow_answer_arrives(api: FakeMessagesAPI) -> None:
    hold = api.slow(message_reply("at last"))
    async with provider(api.url) as p:
        call = asyncio.create_task(p.complete(request(timeout=30)))
        await hold.wait_arrived()
        assert not call.done()
        hold.release()
        assert (await call).text == "at last"


async def test_cancelling_the_call_aborts_the_http_request(api: FakeMessagesAPI) -> None:
    hold = api.slow()
    async with provider(api.url) as p:
        call = asyncio.create_task(p.complete(request(timeout=30)))
        await hold.wait_arrived()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await hold.wait_disconnected()  # the fake API saw the client go away
        assert api.requests[0].disconnected and not hold.answered.is_set()
        # The provider still works after a cancelled call.
        assert (await p.complete(request())).text == "Hello."


# -- the SDK's own retries --------------------------------------------------


async def test_sdk_does_not_sleep_out_a_stated_wait_the_gateway_holds_instead(api: FakeMessagesAPI) -> None:
    api.rate_limited("3600")
    api.overloaded("60")
    async with provider(api.url, max_retries=3) as p:
        with pytest.raises(RateLimited) as limited:
            await p.complete(request())
        with pytest.raises(Overloaded) as overloaded:
            await p.complete(request())
    assert (limited.value.retry_after, overloaded.value.retry_after) == (3600.0, 60.0)
    assert len(api.requests) == 2  # one attempt each: no retry, no hour-long sleep inside the call


async def test_sdk_retries_faults_without_a_stated_wait(api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    api.server_error(500)
    api.overloaded()
    api.message("third time lucky")
    async with provider(api.url, max_retries=2) as p:
        assert p._client is not None
        # The SDK backs off 0.5 s and more between attempts on the wall clock; no test waits for that.
        monkeypatch.setattr(p._client, "_calculate_retry_timeout", lambda *args, **kwargs: 0.0)
        assert (await p.complete(request())).text == "third time lucky"
    assert [r.headers["x-stainless-retry-count"] for r in api.requests] == ["0", "1", "2"]


async def test_close_lets_the_calls_in_flight_finish(api: FakeMessagesAPI) -> None:
    hold = api.slow(message_reply("finished"))
    p = AnthropicProvider(AnthropicSettings(api_key_env=KEY_ENV, base_url=api.url, max_retries=0), ManualClock(NOW))
    call = asyncio.create_task(p.complete(request(timeout=30)))
    await hold.wait_arrived()
    await p.aclose()  # as the gateway does when a reload changes [models]
    with pytest.raises(Refused):
        await p.complete(request())  # no new calls
    assert p._client is not None  # still serving the call in flight
    hold.release()
    assert (await call).text == "finished"
    assert p._client is None  # closed once it ended
    assert len(api.requests) == 1


async def test_closed_provider_makes_no_calls(api: FakeMessagesAPI) -> None:
    p = AnthropicProvider(AnthropicSettings(api_key_env=KEY_ENV, base_url=api.url, max_retries=0), ManualClock(NOW))
    await p.aclose()
    await p.aclose()  # twice is fine
    with pytest.raises(Refused):
        await p.complete(request())
    assert api.requests == []


# -- the key never leaks ----------------------------------------------------


def everything_said(err: BaseException, records: list[logging.LogRecord], caplog_text: str) -> str:
    parts = [str(err), repr(err), getattr(err, "detail", ""), "".join(traceback.format_exception(err)), caplog_text]
    formatter = logging.Formatter()
    for record in records:
        parts.append(record.getMessage())
        parts.append(repr(record.args))
        if record.exc_info:
            parts.append(formatter.formatException(record.exc_info))
        if record.stack_info:
            parts.append(record.stack_info)
    return "\n".join(parts)


async def test_the_key_appears_in_no_error_traceback_or_log(
    api: FakeMessagesAPI, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in SDK_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    faults = [reply for _, reply, _, _ in FAULTS] + [error_reply(400, "invalid_request_error", "prompt is too long: 9 tokens > 8 maximum")]
    errors: list[BaseException] = []
    async with provider(api.url) as p:
        for reply in faults:
            api.push(reply)
            with pytest.raises(ModelError) as info:
                await p.complete(request())
            errors.append(info.value)
        api.slow()
        with pytest.raises(ModelTimeout) as timed_out:
            await p.complete(request(timeout=0.3))
        errors.append(timed_out.value)
        hold = api.slow()
        call = asyncio.create_task(p.complete(request(timeout=30)))
        await hold.wait_arrived()
        call.cancel()
        with pytest.raises(asyncio.CancelledError) as cancelled:
            await call
        errors.append(cancelled.value)
        await p.complete(request())  # and a call that works
    async with provider(f"http://127.0.0.1:{closed_port()}") as p:
        with pytest.raises(Unavailable) as unreachable:
            await p.complete(request())
        errors.append(unreachable.value)
    # A key that could not go in a header at all (httpx's error would quote it).
    monkeypatch.setenv(KEY_ENV, KEY + "\r\nX-Injected: 1")
    async with provider(api.url) as p:
        with pytest.raises(AuthFailed) as bad_key:
            await p.complete(request())
        errors.append(bad_key.value)

    assert len(api.requests) == len(faults) + 3  # the bad key made no request
    assert any(r.name.startswith("anthropic") for r in caplog.records)  # the SDK did log, at DEBUG
    assert any(r.name.startswith("httpcore2") for r in caplog.records)
    for err in errors:
        said = everything_said(err, caplog.records, caplog.text)
        assert KEY not in said, f"{type(err).__name__} leaks the key"
        assert "SECRET" not in said


# -- through the gateway ----------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "noema.db")
    try:
        yield s
    finally:
        s.close()


def gateway_config(url: str) -> Any:
    text = f"""
[models]
provider = "anthropic"

[models.anthropic]
api_key_env = "{KEY_ENV}"
base_url = "{url}"
max_retries = 0

[models.judge]
model = "{MODEL}"
"""
    return parse_config(text, "test").config


async def test_gateway_ledger_cost_and_a_hold_from_retry_after(api: FakeMessagesAPI, store: Store) -> None:
    clock = ManualClock(NOW)
    config = gateway_config(api.url)
    await store.writer.run(lambda db: create_mind(db, "ada", {}, clock.now(), "test"))
    gateway = ModelGateway(lambda: config, clock, store.writer)
    assert isinstance(gateway.provider, AnthropicProvider)
    prompt = Prompt(role="judge", mind="ada", messages=(Turn.user("hi", cache="1h"),))
    try:
        api.message("fine", usage_=usage(100, 50, cache_read=1000, cache_write_5m=500, cache_write_1h=1500))
        answer = await gateway.complete(prompt)
        assert answer.text == "fine" and answer.call_id is not None
        assert api.requests[0].body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
        assert api.requests[0].body["model"] == MODEL

        api.rate_limited("30")
        with pytest.raises(RateLimited):
            await gateway.complete(prompt)
        assert len(api.requests) == 2

        with pytest.raises(Refused) as refused:
            await gateway.complete(prompt)
        assert refused.value.until == "2026-01-01T00:00:30.000Z"
        assert len(api.requests) == 2  # the held call never reached the API

        clock.advance(31)
        api.message("again")
        assert (await gateway.complete(prompt)).text == "again"
        assert len(api.requests) == 3
    finally:
        await gateway.aclose()

    rows = store.reader().execute(
        "SELECT id, provider, model, outcome, error_category, input_tokens, cache_read_tokens, cache_write_tokens,"
        " cache_write_1h_tokens, output_tokens, cost_usd, retry_after, detail, stop_reason FROM model_calls ORDER BY id"
    ).fetchall()
    assert [(r[3], r[4]) for r in rows] == [("ok", None), ("error", "rate_limited"), ("refused", "refused"), ("ok", None)]
    ok = rows[0]
    assert ok[0] == answer.call_id
    assert ok[1:3] == ("anthropic", MODEL)
    assert ok[5:10] == (100, 1000, 2000, 1500, 50)
    # Haiku 5.5: $0.10 in / $0.50 out per MTok; cache read 0.1x, 5m write 1.25x, 1h write 2x.
    expected = (100 * 0.10 + 1000 * 0.10 * 0.1 + 500 * 0.10 * 1.25 + 1500 * 0.10 * 2 + 50 * 0.50) / 1_000_000
    assert ok[10] == pytest.approx(expected)
    assert ok[13] == "end_turn"
    limited = rows[1]
    assert limited[11] == 30.0 and "rate-limited" in limited[12]
    assert all(KEY not in (r[12] or "") for r in rows)
