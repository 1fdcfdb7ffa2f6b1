"""The scripted provider: its script format, validation, faults and usage estimates."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from noemad.clock import ManualClock
from noemad.config.files import parse_config
from noemad.config.models import ScriptedSettings
from noemad.errors import (
    AuthFailed,
    ConfigError,
    ContextLength,
    InvalidRequest,
    ModelError,
    ModelTimeout,
    Overloaded,
    RateLimited,
    Unavailable,
)
from noemad.models.gateway import build_provider
from noemad.models.scripted import ScriptedProvider
from noemad.models.types import Block, ModelRequest, ModelResponse, Role, Turn, Usage

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "scripted-demo.toml"

BRIEF_SCRIPT = """
[[judge]]
text = "REPLY"
[[judge]]
fault = "rate_limited"
retry_after = 30
[[judge]]
fault = "context_length"
tokens = 210000

[[respond.rules]]
match = "(?i)weather"
text = "It is sunny."

[respond]
default = "I have nothing to add."
repeat = true
"""


def req(
    text: str = "hello",
    role: Role = "judge",
    *,
    system: tuple[Block, ...] = (),
    messages: tuple[Turn, ...] | None = None,
    max_tokens: int = 1024,
    model: str = "claude-haiku-5-5",
) -> ModelRequest:
    return ModelRequest(
        role=role,
        mind="ada",
        model=model,
        messages=messages if messages is not None else (Turn.user(text),),
        system=system,
        max_tokens=max_tokens,
    )


def call(provider: ScriptedProvider, request: ModelRequest) -> ModelResponse:
    return asyncio.run(provider.complete(request))


def answer(provider: ScriptedProvider, text: str = "hello", role: Role = "judge") -> str:
    return call(provider, req(text, role)).text


def failure(provider: ScriptedProvider, request: ModelRequest) -> ModelError:
    with pytest.raises(ModelError) as info:
        call(provider, request)
    return info.value


def invalid(script: Any) -> str:
    with pytest.raises(ConfigError) as info:
        ScriptedProvider(script) if not isinstance(script, str) else ScriptedProvider.from_text(script)
    return info.value.detail


# The format


def test_the_brief_example_parses_and_answers_in_order() -> None:
    p = ScriptedProvider.from_text(BRIEF_SCRIPT)
    assert p.name == "scripted"
    assert answer(p) == "REPLY"
    err = failure(p, req())
    assert isinstance(err, RateLimited) and err.retry_after == 30 and err.retryable
    err = failure(p, req())
    assert isinstance(err, ContextLength) and err.tokens == 210000
    assert answer(p, "what is the weather like?", "respond") == "It is sunny."
    assert answer(p, "anything else", "respond") == "I have nothing to add."


def test_ordered_replies_are_taken_one_per_call_then_used_up() -> None:
    p = ScriptedProvider({"judge": [{"text": "one"}, "two"]})
    assert [answer(p), answer(p)] == ["one", "two"]
    assert p.used("judge") == 2
    err = failure(p, req())
    assert isinstance(err, InvalidRequest) and err.category == "invalid"
    assert "the script for judge is used up" in err.detail
    assert "repeat = true" in err.detail


def test_a_role_missing_from_the_script_is_used_up_from_the_start() -> None:
    p = ScriptedProvider({"judge": ["yes"]})
    err = failure(p, req(role="critic"))
    assert isinstance(err, InvalidRequest)
    assert err.detail.startswith("the script for critic is used up")


def test_table_form_with_replies_default_and_repeat() -> None:
    p = ScriptedProvider.from_text(
        """
        [narrate]
        replies = ["a", { text = "b" }]
        default = "fallback"
        [summarise]
        replies = ["x", "y"]
        repeat = true
        """
    )
    assert [answer(p, role="narrate") for _ in range(4)] == ["a", "b", "fallback", "fallback"]
    assert [answer(p, role="summarise") for _ in range(5)] == ["x", "y", "x", "y", "x"]
    assert p.used("summarise") == 5


def test_rules_answer_first_in_order_and_do_not_use_up_replies() -> None:
    p = ScriptedProvider(
        {
            "respond": {
                "rules": [
                    {"match": "(?i)weather", "text": "It is sunny."},
                    {"match": "weather", "text": "never: the first rule wins"},
                    {"match": r"\brain\b", "text": "Bring an umbrella."},
                    {"match": "explode", "fault": "overloaded", "retry_after": 5},
                ],
                "replies": ["first", "second"],
            }
        }
    )
    assert answer(p, "WEATHER?", "respond") == "It is sunny."
    assert answer(p, "will it rain", "respond") == "Bring an umbrella."
    assert p.used("respond") == 0
    assert answer(p, "hi", "respond") == "first"
    err = failure(p, req("explode now", "respond"))
    assert isinstance(err, Overloaded) and err.retry_after == 5
    assert answer(p, "hi", "respond") == "second"
    assert answer(p, "rain later", "respond") == "Bring an umbrella."  # rules outlive the replies
    assert isinstance(failure(p, req("hi", "respond")), InvalidRequest)


def test_rules_search_only_the_last_message() -> None:
    p = ScriptedProvider({"respond": {"rules": [{"match": "(?i)weather", "text": "Sunny."}], "default": "?"}})
    assert answer(p, "what is the weather?", "respond") == "Sunny."
    # The system blocks and the history before the last message are not searched.
    assert call(p, req("a draft", "respond", system=(Block("talk about the weather"),))).text == "?"
    history = (Turn.user("what is the weather?"), Turn("assistant", (Block("Sunny."),)), Turn.user("thanks"))
    assert call(p, req(messages=history, role="respond")).text == "?"


def test_default_may_be_a_fault() -> None:
    p = ScriptedProvider({"judge": {"default": {"fault": "unavailable"}}})
    assert isinstance(failure(p, req()), Unavailable)
    assert isinstance(failure(p, req()), Unavailable)


@pytest.mark.parametrize(
    ("fault", "extra", "kind"),
    [
        ("rate_limited", {"retry_after": 30}, RateLimited),
        ("overloaded", {"retry_after": 2.5}, Overloaded),
        ("overloaded", {}, Overloaded),
        ("unavailable", {}, Unavailable),
        ("timeout", {}, ModelTimeout),
        ("context_length", {"tokens": 210000}, ContextLength),
        ("context_length", {}, ContextLength),
        ("invalid", {}, InvalidRequest),
        ("auth", {}, AuthFailed),
    ],
)
def test_each_fault_raises_its_model_error(fault: str, extra: dict[str, Any], kind: type[ModelError]) -> None:
    p = ScriptedProvider({"judge": [{"fault": fault, **extra}, "after"]})
    err = failure(p, req())
    assert type(err) is kind
    assert err.category == fault
    assert err.retry_after == extra.get("retry_after")
    if kind is ContextLength:
        assert isinstance(err, ContextLength) and err.tokens == extra.get("tokens")
    assert "scripted" in err.detail and "judge" in err.detail
    assert answer(p) == "after"  # a fault uses up its reply


def test_a_fault_may_carry_its_own_detail() -> None:
    p = ScriptedProvider({"judge": [{"fault": "auth", "detail": "the API key was revoked"}]})
    assert failure(p, req()).detail == "the API key was revoked"


# Validation


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ({"jduge": ["x"]}, "jduge: unknown role; did you mean 'judge'? (roles: respond, critic, judge, narrate, summarise)"),
        ({"judge": {"repat": True}}, "judge.repat: unknown key; did you mean 'repeat'?"),
        ({"judge": [{"txt": "x"}]}, "judge[1].txt: unknown key; did you mean 'text'?"),
        ({"judge": [{"txt": "x"}]}, "judge[1]: a reply needs exactly one of `text` or `fault`"),
        ({"judge": [{"text": "x", "fault": "auth"}]}, "judge[1]: a reply needs exactly one of `text` or `fault`"),
        ({"judge": [{"fault": "ratelimited"}]}, "judge[1].fault: unknown fault 'ratelimited'; did you mean 'rate_limited'?"),
        ({"judge": [{"fault": "melted"}]}, "(faults: rate_limited, overloaded, unavailable, timeout, context_length, invalid, auth)"),
        ({"respond": {"rules": [{"match": "(", "text": "x"}]}}, "respond.rules[1].match: '(' is not a valid regular expression"),
        ({"respond": {"rules": [{"text": "x"}]}}, "respond.rules[1]: a rule needs `match`"),
        ({"respond": {"rules": [{"match": "a", "txt": "x"}]}}, "respond.rules[1].txt: unknown key; did you mean 'text'?"),
        ({"respond": {"rules": {"match": "a"}}}, "respond.rules: must be a list of rules"),
        ({"judge": [{"fault": "timeout", "retry_after": 3}]}, "judge[1].retry_after: only rate_limited and overloaded faults take retry_after"),
        ({"judge": [{"fault": "rate_limited", "retry_after": -1}]}, "judge[1].retry_after: must be a number of seconds, 0 or more"),
        ({"judge": [{"fault": "rate_limited", "retry_after": "soon"}]}, "judge[1].retry_after: must be a number"),
        ({"judge": [{"fault": "auth", "tokens": 5}]}, "judge[1].tokens: only a context_length fault takes tokens"),
        ({"judge": [{"fault": "context_length", "tokens": 1.5}]}, "judge[1].tokens: must be a whole number of tokens"),
        ({"judge": [{"text": "x", "retry_after": 3}]}, "judge[1].retry_after: only a `fault` reply takes this key"),
        ({"judge": [{"text": 3}]}, "judge[1].text: must be a string"),
        ({"judge": [3]}, "judge[1]: a reply must be a string or a table"),
        ({"judge": "yes"}, "judge: must be a list of replies ([[judge]]) or a table ([judge])"),
        ({"judge": {"repeat": "yes"}}, "judge.repeat: must be true or false"),
        ({"judge": {"replies": "yes"}}, "judge.replies: must be a list of replies"),
        ({"judge": {"default": 7}}, "judge.default: a reply must be a string or a table"),
    ],
)
def test_validation_names_the_place_and_the_problem(script: dict[str, Any], expected: str) -> None:
    detail = invalid(script)
    assert detail.startswith("the model script (in memory) is invalid: ")
    assert detail.endswith(".")
    assert expected in detail


def test_validation_reports_every_problem_at_once() -> None:
    detail = invalid({"jduge": ["x"], "critic": [{"fault": "nope"}], "respond": {"rules": [{"match": "[", "text": "x"}]}})
    assert "jduge: unknown role" in detail
    assert "critic[1].fault: unknown fault 'nope'" in detail
    assert "respond.rules[1].match:" in detail
    assert detail.count("; ") >= 2


def test_invalid_toml_is_a_config_error() -> None:
    detail = invalid("[[judge]\ntext = 'x'")
    assert detail.startswith("the model script (in memory) is not valid TOML: ")


def test_from_settings_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "script.toml"
    path.write_text('[[judge]]\ntext = "from the file"\n')
    p = ScriptedProvider.from_settings(ScriptedSettings(file=str(path)))
    assert p.source == str(path)
    assert answer(p) == "from the file"


def test_from_settings_names_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        ScriptedProvider.from_settings(ScriptedSettings(file=str(missing)))
    assert info.value.detail == (
        f"the model script {missing} does not exist; point [models.scripted] file at a TOML script (see noemad.toml(5))."
    )


def test_from_settings_names_an_unreadable_or_invalid_file(tmp_path: Path) -> None:
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("[[judge]\n")
    with pytest.raises(ConfigError, match=f"^the model script {bad_toml} is not valid TOML: "):
        ScriptedProvider.from_settings(ScriptedSettings(file=str(bad_toml)))
    bad_script = tmp_path / "bad-script.toml"
    bad_script.write_text('[[judge]]\nfault = "melted"\n')
    with pytest.raises(ConfigError, match=f"^the model script {bad_script} is invalid: judge\\[1\\].fault: unknown fault 'melted'"):
        ScriptedProvider.from_settings(ScriptedSettings(file=str(bad_script)))
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match=f"^cannot read the model script {binary}: .*Check its permissions and encoding"):
        ScriptedProvider.from_settings(ScriptedSettings(file=str(binary)))
    with pytest.raises(ConfigError, match=r"^cannot read the model script"):
        ScriptedProvider.from_settings(ScriptedSettings(file=str(tmp_path)))  # a directory


def test_from_settings_without_a_file_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match=r"\[models.scripted\] file is not set"):
        ScriptedProvider.from_settings(ScriptedSettings())


def test_build_provider_uses_the_scripted_settings(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[[judge]]\ntext = "built"\n')
    cfg = parse_config(f'[models]\nprovider = "scripted"\n[models.scripted]\nfile = "{path}"\n', "noemad.toml").config
    provider = build_provider(cfg.models, ManualClock(0.0))
    assert isinstance(provider, ScriptedProvider)
    assert answer(provider) == "built"
    missing = parse_config(f'[models]\nprovider = "scripted"\n[models.scripted]\nfile = "{tmp_path / "x.toml"}"\n', "noemad.toml")
    with pytest.raises(ConfigError, match="does not exist"):
        build_provider(missing.config.models, ManualClock(0.0))


def test_the_example_demo_script_is_valid() -> None:
    p = ScriptedProvider.from_file(EXAMPLE)
    assert set(p.roles) >= {"respond", "judge", "narrate"}
    assert p.roles["respond"].rules
    for role in ("respond", "judge", "narrate"):
        assert call(p, req("hello there", role)).stop_reason == "end_turn"


# Usage estimates


def test_usage_of_an_uncached_call() -> None:
    p = ScriptedProvider({"judge": ["x" * 40]})
    response = call(p, req("y" * 99))
    assert response.usage == Usage(input_tokens=99 // 4 + 1, output_tokens=40 // 4 + 1)
    assert response.stop_reason == "end_turn"
    assert response.model == "claude-haiku-5-5"
    assert response.text == "x" * 40


def test_input_is_the_whole_request_text_system_and_every_turn() -> None:
    p = ScriptedProvider({"judge": {"default": "ok"}})
    request = req(
        system=(Block("s" * 10), Block("t" * 10)),
        messages=(Turn.user("u" * 30), Turn("assistant", (Block("a" * 7),)), Turn.user("v" * 3)),
    )
    assert call(p, request).usage.input_tokens == len(request.text()) // 4 + 1 == (10 + 10 + 30 + 7 + 3 + 4) // 4 + 1


def test_a_long_reply_is_cut_at_max_tokens() -> None:
    p = ScriptedProvider({"judge": {"default": "z" * 50}})
    cut = call(p, req(max_tokens=10))
    assert cut.stop_reason == "max_tokens"
    assert cut.text == "z" * 40
    assert cut.usage.output_tokens == 10
    exact = call(p, req(max_tokens=13))  # 50 chars fit in 13 * 4 = 52
    assert exact.stop_reason == "end_turn" and exact.text == "z" * 50
    assert exact.usage.output_tokens == 13
    edge = call(p, req(max_tokens=12))  # 48 chars: cut
    assert edge.stop_reason == "max_tokens" and len(edge.text) == 48 and edge.usage.output_tokens == 12


def test_a_prefix_is_written_to_the_cache_once_then_read() -> None:
    p = ScriptedProvider({"respond": {"default": "ok"}})
    system = (Block("S" * 400, cache="5m"),)
    first = call(p, req("q" * 40, "respond", system=system))
    assert first.usage == Usage(input_tokens=11, cache_write_tokens=100, output_tokens=1)  # 441 chars: 111 tokens
    second = call(p, req("r" * 80, "respond", system=system))
    assert second.usage == Usage(input_tokens=21, cache_read_tokens=100, output_tokens=1)
    assert second.usage.total_input == len(req("r" * 80, "respond", system=system).text()) // 4 + 1


def test_cache_writes_with_a_1h_ttl_are_counted_apart() -> None:
    p = ScriptedProvider({"respond": {"default": "ok"}})
    system = (Block("S" * 400, cache="1h"),)
    first = call(p, req("q" * 40, "respond", system=system))
    assert first.usage.cache_write_tokens == 100 and first.usage.cache_write_1h_tokens == 100
    second = call(p, req("q" * 40, "respond", system=system))
    assert second.usage.cache_read_tokens == 100 and second.usage.cache_write_tokens == 0
    assert second.usage.cache_write_1h_tokens == 0


def test_several_breakpoints_read_the_longest_cached_prefix_and_write_the_rest() -> None:
    p = ScriptedProvider({"respond": {"default": "ok"}})
    system = (Block("S" * 400, cache="1h"),)
    history = Turn.user("H" * 399, cache="5m")  # the prefix through it is 400 + 1 + 399 = 800 chars
    first = call(p, req(system=system, messages=(history, Turn.user("now")), role="respond"))
    assert first.usage == Usage(
        input_tokens=(804 // 4 + 1) - 200,  # "\nnow" after the last breakpoint
        cache_write_tokens=200,
        cache_write_1h_tokens=100,
        output_tokens=1,
    )
    # The conversation grows: the old history is read, the new turn written.
    grown = (history, Turn("assistant", (Block("A" * 199, cache="5m"),)), Turn.user("next"))
    second = call(p, req(system=system, messages=grown, role="respond"))
    assert second.usage == Usage(
        input_tokens=(1005 // 4 + 1) - 250,
        cache_read_tokens=200,
        cache_write_tokens=50,
        cache_write_1h_tokens=0,
        output_tokens=1,
    )
    # Only the system prefix is shared with a different history: read it, write the rest.
    other = call(p, req(system=system, messages=(Turn.user("X" * 399, cache="5m"), Turn.user("q")), role="respond"))
    assert (other.usage.cache_read_tokens, other.usage.cache_write_tokens, other.usage.cache_write_1h_tokens) == (100, 100, 0)


def test_the_cache_is_per_model_and_per_provider_instance() -> None:
    system = (Block("S" * 400, cache="5m"),)
    p = ScriptedProvider({"respond": {"default": "ok"}})
    call(p, req("q", "respond", system=system))
    assert call(p, req("q", "respond", system=system, model="claude-other")).usage.cache_write_tokens == 100
    assert call(p, req("q", "respond", system=system)).usage.cache_read_tokens == 100
    fresh = ScriptedProvider({"respond": {"default": "ok"}})
    assert call(fresh, req("q", "respond", system=system)).usage.cache_write_tokens == 100


def test_a_failed_call_writes_nothing_to_the_cache() -> None:
    p = ScriptedProvider({"respond": [{"fault": "overloaded"}, "ok"]})
    system = (Block("S" * 400, cache="5m"),)
    failure(p, req("q", "respond", system=system))
    assert call(p, req("q", "respond", system=system)).usage.cache_write_tokens == 100


# Determinism and cancellation


def run_session(provider: ScriptedProvider) -> list[Any]:
    system = (Block("You are ada. " * 50, cache="5m"),)
    outcomes: list[Any] = []
    for i, (role, text) in enumerate(
        [("respond", "hi"), ("judge", "x"), ("respond", "the weather?"), ("judge", "y"), ("respond", "more"), ("judge", "z")] * 2
    ):
        try:
            r = call(provider, req(f"{text} {i}", role, system=system))  # type: ignore[arg-type]
            outcomes.append((r.text, r.stop_reason, r.usage))
        except ModelError as exc:
            outcomes.append((type(exc).__name__, exc.detail, exc.retry_after))
    return outcomes


def test_the_same_script_and_calls_give_the_same_answers() -> None:
    a = run_session(ScriptedProvider.from_text(BRIEF_SCRIPT))
    b = run_session(ScriptedProvider.from_text(BRIEF_SCRIPT))
    assert a == b
    assert ("It is sunny.", "end_turn") == a[2][:2]
    assert a[3][0] == "RateLimited"


def test_complete_yields_so_a_cancelled_call_uses_up_nothing() -> None:
    p = ScriptedProvider({"judge": ["one", "two"]})

    async def main() -> str:
        task = asyncio.ensure_future(p.complete(req()))
        await asyncio.sleep(0)  # the task starts and yields inside complete
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return (await p.complete(req())).text

    assert asyncio.run(main()) == "one"
    assert p.used("judge") == 1
    assert len(p.requests) == 1


def test_aclose_is_a_no_op() -> None:
    p = ScriptedProvider({"judge": ["one"]})
    asyncio.run(p.aclose())
    assert answer(p) == "one"
