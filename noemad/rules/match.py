"""Whether a stored stimulus matches a rule: its facts, read once, tested by compiled matchers.

`facts_of` reads what every rule may ask of a stimulus (kind, channel,
author, text, flags, tags) once per stimulus; a `Matcher` is built once per
rule (globs translated to regular expressions, the text pattern compiled by
RE2) so that testing a stimulus against 20 rules costs microseconds.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache

from sqlite_utils import Database

from noemad.events import Event
from noemad.rules.shape import Match, compile_text
from noemad.stimuli import Message, Observation, Stimulus, named

ADDRESSED: frozenset[str] = frozenset({"mention", "dm", "reply"})


@dataclass(frozen=True)
class Facts:
    """What a rule can ask of one stimulus."""

    kind: str
    channel: str
    author: str  # a message's author; an observation's or assertion's source; else the actor
    text: str
    flags: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()

    @property
    def addressed(self) -> bool:
        """Whether the stimulus is said to the mind: a mention, a DM or a reply to it."""
        return not ADDRESSED.isdisjoint(self.flags)

    @cached_property
    def folded(self) -> str:
        """The text case-folded, once for all the rules that look for a substring."""
        return self.text.casefold()


@lru_cache(maxsize=256)
def _name_in_text(mind: str) -> re.Pattern[str]:
    # The mind's name as a whole word, optionally with @: "ada," and "@Ada" address ada; "adam" does not.
    return re.compile(rf"(?<![\w@])@?{re.escape(mind)}(?![\w])", re.IGNORECASE)


def _is_reply_of(db: Database, event_id: int, mind: str) -> bool:
    row = db.execute("SELECT 1 FROM events WHERE id = ? AND mind = ? AND kind = 'reply'", [event_id, mind]).fetchone()
    return row is not None


def facts_of(db: Database, event: Event, mind: str, stimulus: Stimulus | None = None) -> Facts:
    """The facts of a stored stimulus for `mind`'s rules (reads the event a message replies to, if it names one).

    `stimulus`: the one `event` was just stored from, when the caller holds it (ingest), so it is not read back from the event.
    """
    flags: set[str] = set()
    tags: tuple[str, ...] = ()
    text = event.text or ""
    if event.kind == "message":
        message = stimulus if isinstance(stimulus, Message) else Message.of(event)
        author = message.author
        lowered = mind.casefold()
        if any(m.casefold().lstrip("@") == lowered for m in message.mentions) or _name_in_text(mind).search(text):
            flags.add("mention")
        if message.dm:
            flags.add("dm")
        if message.reply_to is not None and _is_reply_of(db, message.reply_to, mind):
            flags.add("reply")
        if message.bot:
            flags.add("from_bot")
        if message.from_self:
            flags.add("from_self")
        tags = message.tags
    elif event.kind == "observation":
        observation = stimulus if isinstance(stimulus, Observation) else Observation.of(event)
        author = observation.source
        tags = observation.tags
    else:
        author = named(event) or event.actor
    if author == mind:
        flags.add("from_self")
    return Facts(event.kind, event.channel or "", author, text, frozenset(flags), frozenset(tags))


def _glob(pattern: str | None) -> Callable[[str], object] | None:
    """A compiled glob (case-sensitive, as channels and names are), or None when it matches anything."""
    if pattern is None or pattern.strip("*") == "" :
        return None
    return re.compile(fnmatch.translate(pattern)).match


class Matcher:
    """One rule's match, compiled once; `test` says whether a stimulus's facts satisfy every field given."""

    __slots__ = ("kinds", "channel", "author", "flags", "text", "pattern", "tags_any", "tags_all", "tags_none", "always")

    def __init__(self, match: Match) -> None:
        self.kinds = frozenset(match.kinds) or None
        self.channel = _glob(match.channel)
        self.author = _glob(match.author)
        self.flags = frozenset(match.flags) or None
        self.pattern = compile_text(match.text, True).search if match.text and match.regex else None
        self.text = match.text.casefold() if match.text and not match.regex else None
        self.tags_any = frozenset(match.tags_any) or None
        self.tags_all = frozenset(match.tags_all) or None
        self.tags_none = frozenset(match.tags_none) or None
        # A match with no fields (a catch-all) skips every test.
        self.always = all(
            getattr(self, f) is None for f in ("kinds", "channel", "author", "flags", "text", "pattern", "tags_any", "tags_all", "tags_none")
        )

    def test(self, facts: Facts) -> bool:
        """Whether `facts` satisfy this match: the cheap tests first, the text last."""
        if self.always:
            return True
        if self.kinds is not None and facts.kind not in self.kinds:
            return False
        if self.flags is not None and self.flags.isdisjoint(facts.flags):
            return False
        if self.tags_any is not None and self.tags_any.isdisjoint(facts.tags):
            return False
        if self.tags_all is not None and not self.tags_all <= facts.tags:
            return False
        if self.tags_none is not None and not self.tags_none.isdisjoint(facts.tags):
            return False
        if self.channel is not None and not self.channel(facts.channel):
            return False
        if self.author is not None and not self.author(facts.author):
            return False
        if self.text is not None and self.text not in facts.folded:
            return False
        return not (self.pattern is not None and self.pattern(facts.text) is None)
