"""The scripted provider: replies from a file, per role, with no network.

For tests and the demo. `[models] provider = "scripted"` with
`[models.scripted] file = "/path/to/script.toml"` answers every model call
from the script; usage is estimated the way a real provider would count it,
so budgets, the ledger and costs behave as they do with a real model.

The script
----------
A TOML file with one entry per role (`respond`, `critic`, `judge`,
`narrate`, `summarise`). A role is either an ordered list of replies::

    [[judge]]                 # each call of the role takes the next reply
    text = "yes"
    [[judge]]
    fault = "rate_limited"    # this call fails instead
    retry_after = 30

or a table with any of these keys::

    [respond]
    replies = ["Hello.", { text = "Hello again." }]   # ordered, as above
    default = "I have nothing to add."  # when no rule matches and the replies are used up
    repeat = true                       # cycle the replies instead of running out

    [[respond.rules]]         # the first rule whose `match` is found answers
    match = "(?i)weather"     # a Python regular expression, searched in the last message
    text = "It is sunny."

A reply is a string (its text) or a table holding one of:

    text = "..."              what the model says
    fault = "KIND"            the call fails with that error instead
    tool = "NAME"             the model calls the tool NAME (stop reason
                              `tool_use`); `input = { ... }` is the call's
                              input (default {}), and a `text` may go with it

and, with a fault, these optional keys:

    retry_after = 30          seconds to wait (rate_limited, overloaded); the
                              gateway holds the model that long
    tokens = 210000           the prompt size stated (context_length)
    detail = "..."            the error's sentence (a default names the script)

Faults: `rate_limited`, `overloaded`, `unavailable`, `timeout`,
`context_length`, `invalid`, `auth`. `default` is a reply too (a string or a
table). A rule is a reply table with a `match` key.

A tool call answers only a request that offers tools; the caller
(`ModelGateway.converse`) runs it and calls again with its result as the last
message, so rules then see what the tool answered: write a rule that calls a
tool so that it does not also match that result, or it calls again every round.
Tool call ids are `toolu_scripted_1`, `_2`, ... in the order calls are answered.

How a call is answered: the rules are tried first, in order, against the
text of the request's last message (what was just said, not the history or
the system blocks); a matching rule answers and does not use up a reply.
Otherwise the role's next reply answers (from the start again once they are used up, if `repeat`);
otherwise `default`. When none of these answers (or the script has no entry
for the role), the call fails as `invalid`: the script for that role is used
up. The same script and the same calls always give the same answers.

Usage estimates: the request's input is `len(text) // 4 + 1` tokens (its text
being its tools' definitions as JSON, then the system blocks and the messages). The text
up to each cache breakpoint (a block with `cache = "5m"` or `"1h"`) is a
cacheable prefix: the longest prefix this provider has already seen for the
model is read from the cache; the rest up to the last breakpoint is written
to it (as 1h writes for the segments closed by a `1h` breakpoint); what
follows the last breakpoint is uncached input. Cached prefixes do not expire
within one provider (a config reload that changes `[models]` starts afresh).
Output is `len(reply) // 4 + 1` tokens, at most `max_tokens`; a reply longer
than `max_tokens * 4` characters is cut there and stops with `max_tokens`,
otherwise with `end_turn`. A tool call's output is its text and its call as JSON.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noemad.config.files import FileStamp, file_stamp, read_regular_file
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
from noemad.models.types import ROLES, ModelRequest, ModelResponse, ToolUse, Usage

CHARS_PER_TOKEN = 4

FAULTS: dict[str, type[ModelError]] = {
    "rate_limited": RateLimited,
    "overloaded": Overloaded,
    "unavailable": Unavailable,
    "timeout": ModelTimeout,
    "context_length": ContextLength,
    "invalid": InvalidRequest,
    "auth": AuthFailed,
}
RETRY_AFTER_FAULTS = ("rate_limited", "overloaded")
ROLE_KEYS = ("replies", "rules", "default", "repeat")
REPLY_KEYS = ("text", "fault", "retry_after", "tokens", "detail", "tool", "input")
RULE_KEYS = ("match", *REPLY_KEYS)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a text, or a fault to raise."""

    text: str | None = None
    fault: str | None = None
    retry_after: float | None = None
    tokens: int | None = None
    detail: str | None = None
    tool: str | None = None  # a tool call, with its input
    input: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Rule:
    """A reply given whenever `match` is found in the request text."""

    match: re.Pattern[str]
    reply: Reply


@dataclass(frozen=True)
class RoleScript:
    """What one role answers."""

    replies: tuple[Reply, ...] = ()
    rules: tuple[Rule, ...] = ()
    default: Reply | None = None
    repeat: bool = False


def _near(key: str, valid: tuple[str, ...]) -> str:
    near = difflib.get_close_matches(key, valid, n=1)
    return f"; did you mean '{near[0]}'?" if near else ""


class _Parser:
    """Validates a script, collecting every problem with where it is."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, where: str, what: str) -> None:
        self.problems.append(f"{where}: {what}")

    def script(self, raw: Mapping[str, Any]) -> dict[str, RoleScript]:
        roles: dict[str, RoleScript] = {}
        for key, value in raw.items():
            if key not in ROLES:
                self.problem(key, f"unknown role{_near(key, ROLES)} (roles: {', '.join(ROLES)})")
                continue
            parsed = self.role(key, value)
            if parsed is not None:
                roles[key] = parsed
        return roles

    def role(self, role: str, value: Any) -> RoleScript | None:
        if isinstance(value, list):
            return RoleScript(replies=self.replies(role, value))
        if not isinstance(value, Mapping):
            self.problem(role, "must be a list of replies ([[" + role + "]]) or a table ([" + role + "])")
            return None
        for key in value:
            if key not in ROLE_KEYS:
                self.problem(f"{role}.{key}", f"unknown key{_near(key, ROLE_KEYS)} (valid here: {', '.join(ROLE_KEYS)})")
        replies: tuple[Reply, ...] = ()
        if "replies" in value:
            if isinstance(value["replies"], list):
                replies = self.replies(f"{role}.replies", value["replies"])
            else:
                self.problem(f"{role}.replies", "must be a list of replies")
        rules: list[Rule] = []
        if "rules" in value:
            if isinstance(value["rules"], list):
                for i, item in enumerate(value["rules"], 1):
                    rule = self.rule(f"{role}.rules[{i}]", item)
                    if rule is not None:
                        rules.append(rule)
            else:
                self.problem(f"{role}.rules", "must be a list of rules ([[" + role + ".rules]])")
        default = self.reply(f"{role}.default", value["default"]) if "default" in value else None
        repeat = value.get("repeat", False)
        if not isinstance(repeat, bool):
            self.problem(f"{role}.repeat", "must be true or false")
            repeat = False
        return RoleScript(replies, tuple(rules), default, repeat)

    def replies(self, where: str, items: list[Any]) -> tuple[Reply, ...]:
        out = []
        for i, item in enumerate(items, 1):
            reply = self.reply(f"{where}[{i}]", item)
            if reply is not None:
                out.append(reply)
        return tuple(out)

    def rule(self, where: str, item: Any) -> Rule | None:
        if not isinstance(item, Mapping):
            self.problem(where, "must be a table with `match` and a reply (`text`, `fault` or `tool`)")
            return None
        for key in item:
            if key not in RULE_KEYS:
                self.problem(f"{where}.{key}", f"unknown key{_near(key, RULE_KEYS)} (valid here: {', '.join(RULE_KEYS)})")
        pattern = item.get("match")
        compiled = None
        if pattern is None:
            self.problem(where, "a rule needs `match`, a regular expression searched in the last message")
        elif not isinstance(pattern, str):
            self.problem(f"{where}.match", "must be a string (a regular expression)")
        else:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                self.problem(f"{where}.match", f"{pattern!r} is not a valid regular expression ({exc})")
        reply = self.reply(where, {k: v for k, v in item.items() if k in REPLY_KEYS}, known_checked=True)
        if compiled is None or reply is None:
            return None
        return Rule(compiled, reply)

    def reply(self, where: str, item: Any, *, known_checked: bool = False) -> Reply | None:
        if isinstance(item, str):
            return Reply(text=item)
        if not isinstance(item, Mapping):
            self.problem(where, "a reply must be a string or a table with `text`, `fault` or `tool`")
            return None
        before = len(self.problems)
        if not known_checked:
            for key in item:
                if key not in REPLY_KEYS:
                    self.problem(f"{where}.{key}", f"unknown key{_near(key, REPLY_KEYS)} (valid here: {', '.join(REPLY_KEYS)})")
        text, fault, tool = item.get("text"), item.get("fault"), item.get("tool")
        if fault is not None and (text is not None or tool is not None):
            self.problem(where, "a reply needs exactly one of `text` or `fault` (a `fault` fails the call, so it takes no `text` or `tool`)")
        elif text is None and fault is None and tool is None:
            self.problem(where, "a reply needs exactly one of `text` or `fault`, or a `tool` call")
        if tool is not None and (not isinstance(tool, str) or not tool):
            self.problem(f"{where}.tool", "must be the name of a tool, a string")
        if "input" in item:
            if tool is None:
                self.problem(f"{where}.input", "only a `tool` reply takes an input")
            elif not isinstance(item["input"], Mapping):
                self.problem(f"{where}.input", "must be a table, the tool call's input (such as input = { name = \"x\" })")
        if text is not None and not isinstance(text, str):
            self.problem(f"{where}.text", "must be a string")
        if fault is None:
            for key in ("retry_after", "tokens", "detail"):
                if key in item:
                    self.problem(f"{where}.{key}", "only a `fault` reply takes this key")
        if fault is not None:
            if fault not in FAULTS:
                self.problem(f"{where}.fault", f"unknown fault {fault!r}{_near(str(fault), tuple(FAULTS))} (faults: {', '.join(FAULTS)})")
            if "retry_after" in item:
                ra = item["retry_after"]
                if fault not in RETRY_AFTER_FAULTS:
                    self.problem(f"{where}.retry_after", f"only {' and '.join(RETRY_AFTER_FAULTS)} faults take retry_after")
                elif isinstance(ra, bool) or not isinstance(ra, (int, float)) or ra < 0:
                    self.problem(f"{where}.retry_after", "must be a number of seconds, 0 or more")
            if "tokens" in item:
                tk = item["tokens"]
                if fault != "context_length":
                    self.problem(f"{where}.tokens", "only a context_length fault takes tokens")
                elif isinstance(tk, bool) or not isinstance(tk, int) or tk < 1:
                    self.problem(f"{where}.tokens", "must be a whole number of tokens, 1 or more")
            if "detail" in item and not isinstance(item["detail"], str):
                self.problem(f"{where}.detail", "must be a string")
        if len(self.problems) > before:
            return None
        ra = item.get("retry_after")
        return Reply(
            text=text,
            fault=fault,
            retry_after=None if ra is None else float(ra),
            tokens=item.get("tokens"),
            detail=item.get("detail"),
            tool=tool,
            input=dict(item.get("input") or {}) if tool is not None else None,
        )


def parse_script(raw: Mapping[str, Any], source: str) -> dict[str, RoleScript]:
    """Validate a parsed script into role scripts, or raise `ConfigError` naming every problem."""
    parser = _Parser()
    roles = parser.script(raw)
    if parser.problems:
        raise ConfigError(f"the model script {source} is invalid: {'; '.join(parser.problems)}.")
    return roles


def _tokens(chars: int) -> int:
    return chars // CHARS_PER_TOKEN


class ScriptedProvider:
    """Answers model calls from a script (see the module docstring for its format)."""

    name = "scripted"

    def __init__(self, script: Mapping[str, Any], source: str = "(in memory)") -> None:
        """Build from a script already parsed (a mapping shaped like the TOML file); `ConfigError` if invalid."""
        self.source = source
        self.roles = parse_script(script, source)
        self._next: dict[str, int] = {}  # role -> how many replies it has used
        self._cached: set[tuple[str, str]] = set()  # (model, prefix text) written to the cache
        self.requests: list[ModelRequest] = []  # every request answered or failed, in order
        self._file: tuple[Path, FileStamp | None] | None = None  # the script file and its version, if read from one
        self._tool_calls = 0  # tool call ids answered so far

    @classmethod
    def from_text(cls, text: str, source: str = "(in memory)") -> ScriptedProvider:
        """Build from TOML text; `ConfigError` if it is not valid TOML or not a valid script."""
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"the model script {source} is not valid TOML: {exc}.") from None
        return cls(raw, source)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """Build from a script file; `ConfigError` naming the file if it is missing, unreadable or invalid."""
        path = Path(path).expanduser()
        try:
            text = read_regular_file(path)  # a FIFO here must not block the loop
        except FileNotFoundError:
            raise ConfigError(
                f"the model script {path} does not exist; point [models.scripted] file at a TOML script (see noemad.toml(5))."
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the model script {path}: {exc}. Check its permissions and encoding (UTF-8).") from None
        provider = cls.from_text(text, str(path))
        provider._file = (path, file_stamp(path))
        return provider

    def changed_on_disk(self) -> bool:
        """Whether the script file differs from the one read: a config reload then reads it again."""
        if self._file is None:
            return False
        path, stamp = self._file
        return file_stamp(path) != stamp

    @classmethod
    def from_settings(cls, settings: ScriptedSettings) -> ScriptedProvider:
        """Build from `[models.scripted]`; `ConfigError` if no file is set or the file is unusable."""
        if not settings.file:
            raise ConfigError(
                "[models] provider is \"scripted\" but [models.scripted] file is not set; name a TOML script of replies (see noemad.toml(5))."
            )
        return cls.from_file(settings.file)

    def used(self, role: str) -> int:
        """How many of `role`'s ordered replies calls have taken so far (rules and defaults do not count)."""
        return self._next.get(role, 0)

    async def aclose(self) -> None:
        return None

    async def complete(self, request: ModelRequest) -> ModelResponse:
        # Yield once, so a caller's cancellation is observable; a cancelled call uses up nothing.
        await asyncio.sleep(0)
        self.requests.append(request)
        reply = self._choose(request)
        if reply.fault is not None:
            raise self._fault(request, reply)
        if reply.tool is not None:
            return self._tool_call(request, reply)
        assert reply.text is not None
        text, stop_reason = reply.text, "end_turn"
        limit = request.max_tokens * CHARS_PER_TOKEN
        if len(text) > limit:
            text, stop_reason = text[:limit], "max_tokens"
        output = min(_tokens(len(text)) + 1, request.max_tokens)
        usage = self._input_usage(request, output)
        return ModelResponse(text, stop_reason, usage, request.model)

    def _tool_call(self, request: ModelRequest, reply: Reply) -> ModelResponse:
        assert reply.tool is not None
        if not any(tool.name == reply.tool for tool in request.tools):
            offered = ", ".join(tool.name for tool in request.tools) or "none"
            raise InvalidRequest(
                f"the script answers the {request.role} role with a call of the tool {reply.tool!r},"
                f" which the request does not offer (tools offered: {offered}); {self.source}"
            )
        self._tool_calls += 1
        use = ToolUse(f"toolu_scripted_{self._tool_calls}", reply.tool, dict(reply.input or {}))
        text = reply.text or ""
        output = min(_tokens(len(text) + len(use.text)) + 1, request.max_tokens)
        return ModelResponse(text, "tool_use", self._input_usage(request, output), request.model, tool_uses=(use,))

    def _choose(self, request: ModelRequest) -> Reply:
        role = request.role
        script = self.roles.get(role)
        if script is None:
            raise InvalidRequest(
                f"the script for {role} is used up: {self.source} has no replies for the {role} role; add [[{role}]] replies or a default"
            )
        if script.rules:
            # What was just said, not the history around it: a rule about the
            # weather answers a question about the weather, not every later one.
            text = "\n".join(block.text for block in request.messages[-1].content) if request.messages else ""
            for rule in script.rules:
                if rule.match.search(text):
                    return rule.reply
        used = self._next.get(role, 0)
        if script.replies and (used < len(script.replies) or script.repeat):
            self._next[role] = used + 1
            return script.replies[used % len(script.replies)]
        if script.default is not None:
            return script.default
        raise InvalidRequest(
            f"the script for {role} is used up: all {len(script.replies)} of its replies in {self.source} have been given;"
            f" add replies, a default, or set repeat = true"
        )

    def _fault(self, request: ModelRequest, reply: Reply) -> ModelError:
        kind = reply.fault
        assert kind is not None
        detail = reply.detail or f"scripted {kind} fault for the {request.role} role of {request.mind!r} ({self.source})"
        if kind == "context_length":
            return ContextLength(detail, tokens=reply.tokens)
        cls = FAULTS[kind]
        return cls(detail, retry_after=reply.retry_after) if kind in RETRY_AFTER_FAULTS else cls(detail)

    def _input_usage(self, request: ModelRequest, output: int) -> Usage:
        """Split the request's estimated input into uncached, cache read and cache write (5m and 1h)."""
        total = _tokens(len(request.text())) + 1
        # Prefixes ending at each breakpoint: (tokens up to it, its text, its TTL).
        prefixes: list[tuple[int, str, str]] = []
        length = -1  # blocks are joined by one newline; the first has none before it
        texts: list[str] = []
        for text, cache in request.pieces():  # tools first, as the API caches them
            texts.append(text)
            length += len(text) + 1
            if cache is not None:
                prefixes.append((_tokens(length), "\n".join(texts), cache))
        if not prefixes:
            return Usage(input_tokens=total, output_tokens=output)
        hit = -1  # the last breakpoint whose prefix is already cached
        for i, (_, text, _) in enumerate(prefixes):
            if (request.model, text) in self._cached:
                hit = i
        read = prefixes[hit][0] if hit >= 0 else 0
        write = write_1h = 0
        previous = read
        for tokens, text, ttl in prefixes[hit + 1 :]:
            segment = tokens - previous
            write += segment
            if ttl == "1h":
                write_1h += segment
            previous = tokens
            self._cached.add((request.model, text))
        cached = prefixes[-1][0]
        return Usage(
            input_tokens=total - cached,
            cache_read_tokens=read,
            cache_write_tokens=write,
            output_tokens=output,
            cache_write_1h_tokens=write_1h,
        )
