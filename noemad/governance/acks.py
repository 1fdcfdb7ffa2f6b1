"""Whether a draft is a trivial acknowledgment: short, claim-free, and the whole of it an ack in a known language.

The draft is folded (`text.fold`), cut into clauses at punctuation, and
each clause must be made, end to end, of the acknowledgment phrases of one
language (`languages.ACK_CLAUSES`): one ("vale"), or several as people
string them ("vale vale", "super danke dir", "ok merci beaucoup", "thanks
and bye"), with yes-words, interjections and laughter beside them ("sí,
claro", "ah ok", "haha ok", "kkkk beleza") counting for nothing. Letters
drawn out are read back ("okkk", "graciasss", "holaa"), and ASCII
emoticons (":)", ";-)", "xD", "<3") only react, like the emoji faces. "ok" and
the reactions (`emoji.REACTIONS`: faces, hearts, 👍 👌 🙏 🤝 …) go with
any language. An emoji that carries meaning (✅ ❌ ⚠️ 🚀 👎, a flag, a
clock, a keycap: every other class of `emoji`) makes the draft content:
"Got it ✅" says that something is done. So "Got it, thanks!",
"Vale, gracias", "Alles klar, danke dir", "D'accord, merci" and "Pode
deixar, obrigado" are acks, and "Got it, sending the invoice to Alice" is
not (one clause is not an ack), nor is "了解です、明日やります" (a clause
outside the closed phrases), nor anything in a language not listed: every
ambiguity fires.

A draft with a question mark (of any script), quotes or brackets is never an ack, nor one
over `MAX_CHARS` characters or `MAX_WORDS` words, nor one with any claim
(`claims.draft_has_claims`). An adopter's `trivial_ack_patterns` (regular
expressions matched against the whole draft, case-insensitively, as
written or folded) add acks on top of the built-in ones; the length and
claim checks hold for them too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from noemad.governance import languages
from noemad.governance.claims import draft_has_claims
from noemad.governance.emoji import emoji_class, is_symbol, meaningful
from noemad.governance.text import QUESTION_MARKS, fold

MAX_CHARS = 160
MAX_WORDS = 20

_SPLIT = re.compile(r"\s*(?:[.,!¡;:…。，！；：、\n\u2013\u2014~]+|\s-+\s)\s*")
# "and" in the known languages joins two acks ("thanks and bye"); inside a phrase it is a word ("je vous en prie").
_AND = frozenset({"and", "y", "e", "und", "et", "en", "и"})
_NEVER = re.compile("[\"“”„«»‹›()\\[\\]{}<>「」『』]")  # quotes and brackets; question marks are `text.QUESTION_MARKS`
_EMOJI_CATEGORIES = ("Sk", "Cs")  # modifier letters and lone surrogates: blanked like the symbols
_ACKS: dict[str, frozenset[str]] = {lang: frozenset(fold(p) for p in phrases) for lang, phrases in languages.ACK_CLAUSES.items()}
_ANY_LANGUAGE = frozenset({"ok", "okay", "k", "kk"})
_VOCABULARY: dict[str, frozenset[str]] = {
    lang: frozenset(w for p in phrases for w in p.split()) | _ANY_LANGUAGE | languages.YES_WORDS | languages.INTERJECTIONS | _AND
    for lang, phrases in _ACKS.items()
}
_LONGEST = max(len(p.split()) for phrases in _ACKS.values() for p in phrases)
_LAUGH = re.compile(languages.LAUGHTER)
_DRAWN = re.compile(r"([^\W\d_])\1{2,}")
_DOUBLED = re.compile(r"([^\W\d_])\1+")
# Emoticons typed in ASCII: a face, like the emoji faces, only reacts (":)", ":-D", ";)", "xD", "<3", "^^").
_EMOTICON = re.compile(r"(?:(?<=\s)|^)(?:[:;=8][-'^o]?[)(\]\[dDpP3/\\|*oO]+|<3+|\^[_.-]?\^|[xX][dD]+|\(:)(?=\s|$|[.,!])")


def _without_emoji(draft: str) -> tuple[str, list[str]]:
    """The draft with its symbols blanked out, and the symbols (emoji, and their modifiers and joiners)."""
    if draft.isascii():
        return draft, []
    text: list[str] = []
    emoji: list[str] = []
    for char in draft:
        if is_symbol(char) or unicodedata.category(char) in _EMOJI_CATEGORIES:
            emoji.append(char)
            text.append(" ")
        else:
            text.append(char)
    return "".join(text), emoji


def _clauses(text: str) -> list[str]:
    folded = fold(text).replace("’", "'").replace("`", "'")
    return [c.strip(" '-") for c in _SPLIT.split(folded) if c.strip(" '-")]


def _spellings(clause: str) -> tuple[str, ...]:
    """The clause as written, and with letters drawn out put back ("okkk", "graciasss", "holaa", "coool")."""
    if _DOUBLED.search(clause) is None:
        return (clause,)
    return tuple(dict.fromkeys((clause, _DRAWN.sub(r"\1\1", clause), _DOUBLED.sub(r"\1", clause))))


def _acks_in(words: Sequence[str], acks: frozenset[str]) -> int | None:
    """How many ack phrases of `acks` the words are, end to end ("vale vale", "super danke dir"), or None if they are not.

    Yes-words, interjections and laughter fit between them and count for nothing ("si, claro", "ah ok", "haha ok").
    """
    best: list[int | None] = [0] + [None] * len(words)
    for i in range(len(words)):
        done = best[i]
        if done is None:
            continue
        for j in range(i + 1, min(len(words), i + _LONGEST) + 1):
            part = " ".join(words[i:j])
            if part in acks or part in _ANY_LANGUAGE:
                gain = 1
            elif part in languages.YES_WORDS or (
                j == i + 1 and (part in languages.INTERJECTIONS or _LAUGH.fullmatch(part) or (part in _AND and 0 < i < len(words) - 1))
            ):
                gain = 0
            else:
                continue
            if best[j] is None or best[j] < done + gain:  # type: ignore[operator]
                best[j] = done + gain
    return best[-1]


def _count(spelling: str, lang: str) -> int | None:
    acks = _ACKS[lang]
    if spelling in acks or spelling in _ANY_LANGUAGE:
        return 1
    words = spelling.split()
    vocabulary = _VOCABULARY[lang]
    if not all(w in vocabulary or _LAUGH.fullmatch(w) for w in words):
        return None  # a word no ack of this language holds: no need to try every split
    return _acks_in(words, acks)


def _language_of(clauses: Sequence[str]) -> str | None:
    """The one language every clause is made of acks of (a yes-word or a laugh only beside an ack), or None."""
    spelled = [_spellings(clause) for clause in clauses]
    for lang in _ACKS:
        plain = 0
        for spellings in spelled:
            counts = [n for spelling in spellings if (n := _count(spelling, lang)) is not None]
            if not counts:
                break
            plain += max(counts)
        else:
            if plain:
                return lang
    return None


@lru_cache(maxsize=2048)
def ack_language(draft: str) -> str | None:
    """The language `draft` is a built-in acknowledgment in ("en", "es", …, "emoji"), or None: not a trivial ack."""
    if len(draft) > MAX_CHARS or QUESTION_MARKS.search(draft):
        return None
    draft = _EMOTICON.sub(" ", draft)
    if _NEVER.search(draft):
        return None
    text, emoji = _without_emoji(draft)
    if len(text.split()) > MAX_WORDS or meaningful(emoji):
        return None  # an emoji that carries meaning (✅ ❌ ⚠️ 🚀 👎) is content, not a reaction
    clauses = _clauses(text)
    if not clauses:
        return "emoji" if any(emoji_class(c) for c in emoji) else None
    if draft_has_claims(text):
        return None
    return _language_of(clauses)


def draft_is_trivial_ack(draft: str, patterns: Sequence[re.Pattern[str] | str] = ()) -> bool:
    """Whether the whole of `draft` is a short, claim-free acknowledgment in a recognized language (or matches `patterns`)."""
    if ack_language(draft) is not None:
        return True
    if not patterns or len(draft) > MAX_CHARS or len(draft.split()) > MAX_WORDS or draft_has_claims(draft):
        return False
    stripped, folded = draft.strip(), fold(draft)
    for pattern in patterns:
        compiled = re.compile(pattern, re.IGNORECASE) if isinstance(pattern, str) else pattern
        if compiled.fullmatch(stripped) or compiled.fullmatch(folded):
            return True
    return False
