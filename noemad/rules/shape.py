"""A wake rule's one shape: what it matches, the one behaviour it has, and how it is read.

The shape is the agent framework's gate.json, the same in an API body, the
config, the mind's tools and `--json` output::

    {"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*"},
     "behaviour": {"debounce": {"ms": 2000}}, "passthrough": false, "resets": []}

`read_rule` is the one validator every way in uses: it refuses a rule of bad
shape with one sentence that says what is wrong and what to write, and
reads an out-of-range bound at its nearest value with a note. It sits at
the base of the layers (with the config) because the config reads
`[[minds.NAME.gate.rules]]` with it when the file is loaded.

Text patterns are compiled by RE2 (google-re2), which matches in time
linear in the text: no pattern can stall the gate. RE2 has no backtracking
constructs (backreferences, lookahead, lookbehind) and such patterns are
refused.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import re2

from noemad.errors import RuleRefused
from noemad.rules.phrasing import behaviour_words

KeyBy = Literal["channel", "author", "none"]
KEY_BY: tuple[KeyBy, ...] = ("channel", "author", "none")
Flag = Literal["mention", "dm", "reply", "from_bot", "from_self"]
FLAGS: tuple[Flag, ...] = ("mention", "dm", "reply", "from_bot", "from_self")


@dataclass(frozen=True)
class Match:
    """What a rule matches: every field given must hold (omitted means any)."""

    kinds: tuple[str, ...] = ()  # stimulus kinds
    channel: str | None = None  # a glob (fnmatch: * ? [..]) on the channel
    author: str | None = None  # a glob on the author (a message's) or source (an observation's, an assertion's)
    flags: tuple[Flag, ...] = ()  # any of
    text: str | None = None  # case-insensitive: a substring, or a pattern when `regex`
    regex: bool = False
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    tags_none: tuple[str, ...] = ()


@dataclass(frozen=True)
class Always:
    """Wake for every matching stimulus."""

    kind: ClassVar[str] = "always"

    def params(self) -> dict[str, Any]:
        """Its settings, as its one-key object holds them."""
        return {}

    def does(self) -> str:
        """What it does with a stimulus it matches, as the probe table says it."""
        return "wake"


@dataclass(frozen=True)
class Defer:
    """Store it, in the mind's context for its next turn; wake for nothing."""

    kind: ClassVar[str] = "defer"

    def params(self) -> dict[str, Any]:
        return {}

    def does(self) -> str:
        return "defer"


@dataclass(frozen=True)
class Debounce:
    """Gather a batch; wake once with all of it after `ms` with no new matching stimulus."""

    kind: ClassVar[str] = "debounce"
    ms: int

    def params(self) -> dict[str, Any]:
        return {"ms": self.ms}

    def does(self) -> str:
        return f"debounce {self.ms} ms"


@dataclass(frozen=True)
class RateLimit:
    """Wake while a token is left (`tokens`, one back every `refill_ms`), per channel, author or overall."""

    kind: ClassVar[str] = "rate_limit"
    tokens: int
    refill_ms: int
    key_by: KeyBy = "none"

    def params(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "refill_ms": self.refill_ms, "key_by": self.key_by}

    def does(self) -> str:
        return f"rate_limit {self.tokens} per {self.refill_ms} ms{_per(self.key_by)}: wake while tokens last"


@dataclass(frozen=True)
class PassiveSample:
    """Wake for one matching stimulus in `every` (the first of each run), per channel, author or overall."""

    kind: ClassVar[str] = "passive_sample"
    every: int
    key_by: KeyBy = "none"

    def params(self) -> dict[str, Any]:
        return {"every": self.every, "key_by": self.key_by}

    def does(self) -> str:
        return f"passive_sample 1 in {self.every}{_per(self.key_by)}: wake for the first of each {self.every}"


@dataclass(frozen=True)
class JudgeBehaviour:
    """Gather a batch as debounce does; when it is due, a small model decides whether it wakes the mind (REPLY) or not (WAIT).

    Read only where `[gate.judge] enabled = true` (the `judge` flag of the
    readers); stored rows always read, so a host that turns judging off
    keeps its rules, which then run as a debounce of `debounce_ms`.
    """

    kind: ClassVar[str] = "judge"
    debounce_ms: int
    max_wait_ms: int | None = None  # judge the batch by then even while stimuli keep pushing the quiet period back
    instructions: str | None = None  # the mind's own word to the judge

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"debounce_ms": self.debounce_ms}
        if self.max_wait_ms is not None:
            params["max_wait_ms"] = self.max_wait_ms
        if self.instructions is not None:
            params["instructions"] = self.instructions
        return params

    def does(self) -> str:
        return f"judged after {self.debounce_ms} ms quiet: wake only if the judge says REPLY"


def _per(key_by: KeyBy) -> str:
    return "" if key_by == "none" else f" per {key_by}"


Behaviour = Always | Defer | Debounce | RateLimit | PassiveSample | JudgeBehaviour
# In the order a reader tries them; the judge comes last, so older kinds still win.
BEHAVIOUR_KINDS: tuple[str, ...] = ("always", "defer", "debounce", "rate_limit", "passive_sample", "judge")
# Without judging on a host, the readers know only these, and no sentence of theirs names the judge
# but the one refusing a judge behaviour, which says what turns judging on.
PLAIN_KINDS: tuple[str, ...] = BEHAVIOUR_KINDS[:-1]
PASSTHROUGH_KINDS: frozenset[str] = frozenset({"rate_limit", "passive_sample"})


@dataclass(frozen=True)
class Rule:
    """A named wake rule: a match, one behaviour, and what it does beside."""

    name: str
    match: Match
    behaviour: Behaviour
    passthrough: bool = False  # when it denies, later rules decide (rate_limit and passive_sample only)
    resets: tuple[str, ...] = ()  # rules whose state is cleared when this one fires

    def to_data(self) -> dict[str, Any]:
        """The rule in its one JSON shape (every match field present)."""
        return {
            "name": self.name,
            "match": match_data(self.match),
            "behaviour": behaviour_data(self.behaviour),
            "passthrough": self.passthrough,
            "resets": list(self.resets),
        }


@dataclass(frozen=True)
class ReadRule:
    """A rule as read, with a note for each bound read at its nearest value."""

    rule: Rule
    notes: tuple[str, ...] = ()


# Bounds. A number outside them is read at its nearest value, with a note.
DEBOUNCE_MS = (100, 300_000)
TOKENS = (1, 1000)
REFILL_MS = (100, 86_400_000)
EVERY = (2, 10_000)
MAX_WAIT_MS = (100, 3_600_000)
MAX_INSTRUCTIONS = 4000  # characters of a judge rule's instructions
MAX_TEXT = 500  # characters of a text filter
MAX_GLOB = 200  # characters of a channel or author glob (a channel itself is at most 200)
MAX_RESETS = 50
MAX_LIST = 50  # kinds, tags in one match field
NAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# The stimulus kinds a rule may name: `noemad.stimuli.STIMULUS_KINDS`, which
# sits above this module; tests/test_rules.py keeps the two the same.
KINDS: tuple[str, ...] = ("message", "observation", "assertion", "correction", "goal", "prediction", "outcome")

RULE_KEYS = ("name", "match", "behaviour", "passthrough", "resets")
MATCH_KEYS = ("kinds", "channel", "author", "flags", "text", "regex", "tags_any", "tags_all", "tags_none")
EXAMPLE = '{"name": "ambient", "match": {"kinds": ["message"]}, "behaviour": {"debounce": {"ms": 2000}}}'
_PARAMS: dict[str, tuple[str, ...]] = {
    "always": (),
    "defer": (),
    "debounce": ("ms",),
    "rate_limit": ("tokens", "refill_ms", "key_by"),
    "passive_sample": ("every", "key_by"),
    "judge": ("debounce_ms", "max_wait_ms", "instructions"),
}
_EXAMPLES: dict[str, str] = {
    "always": '"always"',
    "defer": '"defer"',
    "debounce": '{"debounce": {"ms": 2000}}',
    "rate_limit": '{"rate_limit": {"tokens": 3, "refill_ms": 60000, "key_by": "channel"}}',
    "passive_sample": '{"passive_sample": {"every": 10, "key_by": "channel"}}',
    "judge": '{"judge": {"debounce_ms": 5000, "instructions": "wake me when asked something"}}',
}
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.log_errors = False  # a refused pattern is the user's, answered with a sentence; not the daemon's log's


def _near(word: str, valid: tuple[str, ...] | list[str]) -> str:
    """`; did you mean 'x'?` for the valid word nearest `word`, or nothing."""
    found = difflib.get_close_matches(word, list(valid), n=1, cutoff=0.6)
    return f"; did you mean {found[0]!r}?" if found else ""


def _unknown_keys(data: dict[str, Any], valid: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in valid:
            raise RuleRefused(f"{where}: unknown key {key!r}{_near(str(key), valid)} (valid keys: {', '.join(valid)})")


def match_data(match: Match) -> dict[str, Any]:
    """A match in its JSON shape, every field present (None: any)."""
    return {
        "kinds": list(match.kinds),
        "channel": match.channel,
        "author": match.author,
        "flags": list(match.flags),
        "text": match.text,
        "regex": match.regex,
        "tags_any": list(match.tags_any),
        "tags_all": list(match.tags_all),
        "tags_none": list(match.tags_none),
    }


def behaviour_data(b: Behaviour) -> dict[str, Any]:
    """A behaviour as its one-key object: {"debounce": {"ms": 2000}}; {"always": {}}."""
    return {b.kind: b.params()}


def describe_behaviour(b: Behaviour) -> str:
    """A behaviour in a few words, as the CLI, gate-status, the dashboard and the rules' events say it: "debounce 2000 ms"."""
    return behaviour_words(behaviour_data(b))


# A rule's name is a segment of its URL (/minds/MIND/rules/NAME): "." and ".." are
# that URL's own directory and its parent, so a client resolves them away before
# sending, and "default" is the route that sets the default behaviour.
RESERVED_NAMES: frozenset[str] = frozenset({".", "..", "default"})


def check_name(name: Any, where: str) -> str:
    """A rule's name, or `RuleRefused`: 1-64 letters, digits, '_', '.', ':' or '-', and not one the URLs reserve."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise RuleRefused(
            f"{where}: {name!r} is not a rule name; write 1-64 letters, digits, '_', '.', ':' or '-', such as \"ambient\""
        )
    if name in RESERVED_NAMES:
        meaning = "the default behaviour's own address" if name == "default" else "a directory in a URL, not a name"
        raise RuleRefused(
            f"{where}: {name!r} cannot name a rule: in the rule's address (/minds/MIND/rules/NAME) it is {meaning},"
            " so the rule could not be shown, edited, moved or removed; pick a name with a letter or digit in it, such as \"ambient\""
        )
    return name


def _whole(value: Any, where: str, example: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleRefused(f"{where} must be a whole number such as {example}, not {value!r:.60}")
    return value


def _bounded(value: Any, where: str, bounds: tuple[int, int], unit: str, notes: list[str]) -> int:
    """A whole number read at its nearest value within `bounds`, with a note when it was outside."""
    low, high = bounds
    number = _whole(value, where, str(low if low > 1 else high // 10))
    near = min(high, max(low, number))
    if near != number:
        notes.append(f"{where} {number} is {'below' if number < low else 'above'} the {'least' if number < low else 'most'} allowed; read as {near}{unit}")
    return near


def _key_by(value: Any, where: str) -> KeyBy:
    if value not in KEY_BY:
        hint = _near(value, KEY_BY) if isinstance(value, str) else ""
        raise RuleRefused(f"{where}: key_by is one of {', '.join(KEY_BY)}, not {value!r:.60}{hint}")
    return value  # type: ignore[no-any-return]


def _judging_off(where: str) -> str:
    """The refusal of a judge behaviour where judging is off: what turns it on, and what works without it."""
    return (
        f"{where}: judge rules need judging, which is off on this noemad; set [gate.judge] enabled = true in noemad.toml"
        f" (with a judge model in [models]) and reload it, or use a debounce here, such as {_EXAMPLES['debounce']}"
    )


def read_behaviour(data: Any, where: str = "default", *, judge: bool = False) -> tuple[Behaviour, list[str]]:
    """A behaviour from its JSON shape ("always", {"always": {}}, {"debounce": {"ms": 2000}}), and the clamp notes.

    `judge`: the host has `[gate.judge] enabled = true`; without it a judge
    behaviour is refused with what turns judging on, and no other sentence
    here names the judge.
    """
    valid = BEHAVIOUR_KINDS if judge else PLAIN_KINDS
    kinds = ", ".join(valid)
    if isinstance(data, str):
        if data in ("always", "defer"):
            return (Always() if data == "always" else Defer()), []
        if data in _PARAMS and data in valid:
            raise RuleRefused(f"{where}: {data} needs its settings; write {_EXAMPLES[data]}")
        if data == "judge":
            raise RuleRefused(_judging_off(where))
        raise RuleRefused(f"{where}: {data!r:.60} is not a behaviour{_near(data, valid)} (one of {kinds}, such as {_EXAMPLES['debounce']})")
    if not isinstance(data, dict) or not data:
        raise RuleRefused(f"{where}: a behaviour is one of {kinds}, written as \"always\" or a one-key object such as {_EXAMPLES['debounce']}, not {data!r:.60}")
    if len(data) > 1:
        names = ", ".join(map(str, data))
        raise RuleRefused(f"{where}: a rule has exactly one behaviour, and this names {len(data)} ({names}); keep one, such as {_EXAMPLES['debounce']}")
    ((kind, params),) = data.items()
    if kind not in valid:
        if kind == "judge":
            raise RuleRefused(_judging_off(where))
        raise RuleRefused(f"{where}: {kind!r:.60} is not a behaviour{_near(str(kind), valid)} (one of {kinds}, such as {_EXAMPLES['debounce']})")
    at = f"{where}.{kind}"
    if kind in ("always", "defer"):
        if params not in ({}, None, True):
            raise RuleRefused(f"{at} takes no settings; write {_EXAMPLES[kind]}")
        return (Always() if kind == "always" else Defer()), []
    if not isinstance(params, dict):
        raise RuleRefused(f"{at} needs its settings as an object; write {_EXAMPLES[kind]}")
    _unknown_keys(params, _PARAMS[kind], at)
    notes: list[str] = []
    if kind == "debounce":
        if "ms" not in params:
            raise RuleRefused(f"{at} needs ms, the quiet period in milliseconds; write {_EXAMPLES[kind]}")
        return Debounce(_bounded(params["ms"], f"{at}.ms", DEBOUNCE_MS, " ms", notes)), notes
    if kind == "judge":
        return _read_judge(params, at, notes), notes
    key_by = _key_by(params.get("key_by", "none"), at)
    if kind == "rate_limit":
        missing = [k for k in ("tokens", "refill_ms") if k not in params]
        if missing:
            raise RuleRefused(f"{at} needs {' and '.join(missing)}; write {_EXAMPLES[kind]}")
        tokens = _bounded(params["tokens"], f"{at}.tokens", TOKENS, "", notes)
        refill = _bounded(params["refill_ms"], f"{at}.refill_ms", REFILL_MS, " ms", notes)
        return RateLimit(tokens, refill, key_by), notes
    if "every" not in params:
        raise RuleRefused(f"{at} needs every, how many matching stimuli per wake; write {_EXAMPLES[kind]}")
    return PassiveSample(_bounded(params["every"], f"{at}.every", EVERY, "", notes), key_by), notes


def _read_judge(params: dict[str, Any], at: str, notes: list[str]) -> JudgeBehaviour:
    if "debounce_ms" not in params:
        raise RuleRefused(f"{at} needs debounce_ms, the quiet period in milliseconds before the batch is judged; write {_EXAMPLES['judge']}")
    debounce = _bounded(params["debounce_ms"], f"{at}.debounce_ms", DEBOUNCE_MS, " ms", notes)
    max_wait = params.get("max_wait_ms")
    if max_wait is not None:
        max_wait = _bounded(max_wait, f"{at}.max_wait_ms", MAX_WAIT_MS, " ms", notes)
    instructions = params.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str) or not instructions.strip():
            raise RuleRefused(f"{at}.instructions is your word to the judge as text, such as \"wake me when asked something\", not {instructions!r:.60}")
        if len(instructions) > MAX_INSTRUCTIONS:
            raise RuleRefused(f"{at}.instructions is {len(instructions)} characters; at most {MAX_INSTRUCTIONS}. Say it shorter")
    return JudgeBehaviour(debounce, max_wait, instructions)


def _names(value: Any, where: str, what: str, valid: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """A list of names (a lone string reads as a list of one), each checked against `valid` if given."""
    if isinstance(value, str):
        value = [value]
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleRefused(f"{where} is a list of {what}, such as [\"{(valid or ('name',))[0]}\"], not {value!r:.60}")
    if len(value) > MAX_LIST:
        raise RuleRefused(f"{where} names {len(value)} {what}; at most {MAX_LIST}")
    for v in value:
        if valid is not None and v not in valid:
            raise RuleRefused(f"{where}: {v!r:.60} is not one of the {what}{_near(v, valid)} ({', '.join(valid)})")
        if valid is None and not 1 <= len(v) <= 200:
            raise RuleRefused(f"{where}: a name is 1-200 characters, not {len(v)}")
    return tuple(dict.fromkeys(value))


def check_glob(value: Any, where: str) -> str | None:
    """A channel or author glob (fnmatch: * ? [..]), or None for any."""
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_GLOB:
        raise RuleRefused(f"{where} is a glob of 1-{MAX_GLOB} characters such as \"discord:*\" (* any run, ? one character, [abc] one of), not {value!r:.60}")
    # fnmatch reads an unclosed [ as a plain character: almost always a typo, so say so.
    depth = 0
    for char in value:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth = 0
    if depth:
        raise RuleRefused(f"{where}: the glob {value!r} opens a [ it never closes; close it (\"[abc]\" is one of a, b, c) or write [[] for a literal [")
    return value


def compile_text(text: str, regex: bool) -> Any:
    """The compiled RE2 pattern of a text filter (case-insensitive), or `re2.error` with RE2's reason."""
    return re2.compile(text, _OPTIONS) if regex else None


# What a backtracking engine has and RE2 refuses, caught first for a plainer sentence than RE2's.
_BACKTRACKING = re.compile(r"(?<!\\)(?:\\\\)*(?:\\[1-9]|\\k<)|\(\?(?:=|!|<=|<!|P=|>)")


def _text(value: Any, regex: bool, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise RuleRefused(f"{where} is the text to look for (case-insensitive), such as \"deploy\", not {value!r:.60}")
    if len(value) > MAX_TEXT:
        raise RuleRefused(f"{where} is {len(value)} characters; a text filter is at most {MAX_TEXT}")
    if regex:
        if _BACKTRACKING.search(value):
            raise RuleRefused(
                f"{where}: {value!r:.80} uses a backreference or lookaround; patterns run on RE2, which matches in linear time and has"
                " no backtracking constructs. Write a plain pattern (alternatives, classes, repeats), or match the text as a substring"
            )
        try:
            compile_text(value, True)
        except re2.error as exc:
            reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            raise RuleRefused(_pattern_refusal(value, reason, where)) from None
    return value


def _pattern_refusal(value: str, reason: str, where: str) -> str:
    """What is wrong with a pattern RE2 refused, and what to write instead, by RE2's reason."""
    if reason.startswith("pattern too large"):  # the compiled program passed RE2's memory bound: a size, not a syntax
        return (
            f"{where}: {value!r:.80} is too large for RE2 once compiled ({reason}): its repeats multiply out to more states than"
            " a pattern may have. Use smaller repeat counts, or fewer repeats of a class or group, or match a substring instead"
        )
    if reason.startswith("invalid repetition size"):  # {n} past 1000, or nested repeats whose product is
        return (
            f"{where}: {value!r:.80} repeats too much for RE2 ({reason}): a count is at most 1000, nested counts multiplied"
            " too. Use smaller counts, or + or * where any number will do"
        )
    return f"{where}: {value!r:.80} is not a pattern RE2 takes ({reason}). Fix the pattern, or set regex to false to match it as a substring"


def read_match(data: Any, where: str = "match") -> Match:
    """A match from its JSON shape; omitted (or null) fields mean any."""
    if data is None:
        return Match()
    if not isinstance(data, dict):
        raise RuleRefused(f"{where} is an object of fields that must all hold, such as {{\"kinds\": [\"message\"], \"channel\": \"discord:*\"}}, not {data!r:.60}")
    _unknown_keys(data, MATCH_KEYS, where)
    regex = data.get("regex", False)
    if not isinstance(regex, bool):
        raise RuleRefused(f"{where}.regex is true (text is an RE2 pattern) or false (a substring), not {regex!r:.60}")
    return Match(
        kinds=_names(data.get("kinds"), f"{where}.kinds", "stimulus kinds", KINDS),
        channel=check_glob(data.get("channel"), f"{where}.channel"),
        author=check_glob(data.get("author"), f"{where}.author"),
        flags=_names(data.get("flags"), f"{where}.flags", "flags", FLAGS),  # type: ignore[arg-type]
        text=_text(data.get("text"), regex, f"{where}.text"),
        regex=regex,
        tags_any=_names(data.get("tags_any"), f"{where}.tags_any", "tags"),
        tags_all=_names(data.get("tags_all"), f"{where}.tags_all", "tags"),
        tags_none=_names(data.get("tags_none"), f"{where}.tags_none", "tags"),
    )


def read_rule(data: Any, where: str = "rule", *, judge: bool = False) -> ReadRule:
    """A rule from its JSON shape (an API body, a config table, a tool call, a stored row), or `RuleRefused` with one sentence.

    `judge`: judge rules are read (`[gate.judge] enabled = true`, or a stored row).
    """
    if not isinstance(data, dict):
        raise RuleRefused(f"{where} must be an object such as {EXAMPLE}, not {data!r:.60}")
    _unknown_keys(data, RULE_KEYS, where)
    if "name" not in data:
        raise RuleRefused(f"{where} needs a name (unique in the mind), such as {EXAMPLE}")
    name = check_name(data["name"], f"{where}.name")
    if where == "rule":
        where = f"rule {name!r}"
    if "behaviour" not in data:
        raise RuleRefused(f"{where} needs a behaviour, one of {', '.join(BEHAVIOUR_KINDS if judge else PLAIN_KINDS)}, such as \"behaviour\": {_EXAMPLES['debounce']}")
    match = read_match(data.get("match"), f"{where}: match")
    behaviour, notes = read_behaviour(data["behaviour"], f"{where}: behaviour", judge=judge)
    passthrough = data.get("passthrough", False)
    if not isinstance(passthrough, bool):
        raise RuleRefused(f"{where}: passthrough is true or false, not {passthrough!r:.60}")
    if passthrough and behaviour.kind not in PASSTHROUGH_KINDS:
        raise RuleRefused(
            f"{where}: passthrough is only for rate_limit and passive_sample (when they deny, later rules decide);"
            f" {'an' if behaviour.kind == 'always' else 'a'} {behaviour.kind} rule always decides. Remove passthrough, or use one of those behaviours"
        )
    resets_value = data.get("resets")
    if isinstance(resets_value, list) and len(resets_value) > MAX_RESETS:
        raise RuleRefused(f"{where}: resets names {len(resets_value)} rules; at most {MAX_RESETS}")
    resets = _names(resets_value, f"{where}: resets", "rule names")
    for reset in resets:
        check_name(reset, f"{where}: resets")
    if name in resets:
        raise RuleRefused(
            f"{where}: resets names the rule itself; resets clears other rules' state when this one fires"
            f" (its own goes on as its behaviour says). Remove {name!r} from resets"
        )
    return ReadRule(Rule(name, match, behaviour, passthrough, resets), tuple(f"{where}: {n}" if not n.startswith(where) else n for n in notes))
