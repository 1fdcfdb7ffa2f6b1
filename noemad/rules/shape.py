"""A wake rule's one shape: what it matches, the one behaviour it has, and how it is read.

The shape is the agent framework's gate.json, the same in an API body, the
config, the mind's tools and `--json` output::

    {"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*"},
     "behaviour": {"debounce": {"ms": 2000}}, "passthrough": false, "resets": []}

`read_rule` is the one validator every way in uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

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


@dataclass(frozen=True)
class Defer:
    """Store it, in the mind's context for its next turn; wake for nothing."""

    kind: ClassVar[str] = "defer"


@dataclass(frozen=True)
class Debounce:
    """Gather a batch; wake once with all of it after `ms` with no new matching stimulus."""

    kind: ClassVar[str] = "debounce"
    ms: int


@dataclass(frozen=True)
class RateLimit:
    """Wake while a token is left (`tokens`, one back every `refill_ms`), per channel, author or overall."""

    kind: ClassVar[str] = "rate_limit"
    tokens: int
    refill_ms: int
    key_by: KeyBy = "none"


@dataclass(frozen=True)
class PassiveSample:
    """Wake for one matching stimulus in `every` (the first of each run), per channel, author or overall."""

    kind: ClassVar[str] = "passive_sample"
    every: int
    key_by: KeyBy = "none"


Behaviour = Always | Defer | Debounce | RateLimit | PassiveSample
# In the order a reader tries them; the judge will come last (next issue).
BEHAVIOUR_KINDS: tuple[str, ...] = ("always", "defer", "debounce", "rate_limit", "passive_sample")
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
        raise NotImplementedError  # filled in by the rules work


@dataclass(frozen=True)
class ReadRule:
    """A rule as read, with a note for each bound read at its nearest value."""

    rule: Rule
    notes: tuple[str, ...] = ()
