"""What a draft asserts that a critic could check: numbers, money, dates, IDs, links, citations, names.

`draft_claims(draft)` lists them, each with its kind; `draft_has_claims(draft)` is
whether there is any. Deterministic and cheap (a few compiled patterns and
set lookups), and deliberately eager: a claim that is not one costs a
critic call, a claim missed could let a fabrication through unreviewed.

The kinds: `number` (any digit, in any script), `spelled_number` ("three",
"drei", "trois", "três", "veinte", "einundzwanzig"), `money` (a currency
sign or word), `percent`, `date` (month and day names, "tomorrow", "mañana",
"demain", "Uhr"), `id` (hashes, #tags, snake_case and camelCase
identifiers), `url`, `email`, `path`, `citation` ("[..]", quotes, "§",
"according to", "laut", "selon"), `entity`, `emoji` (one that carries
meaning: ✅ "done", ❌ "failed", ⚠️, 🚀, 👎, a flag, a clock, a keycap; see
`emoji`: a face, a heart or 👍 only reacts).

Names are the hard part. A capitalised word that does not start a sentence
is counted as a name, except the words in `languages.NOT_NAMES` and the
words of the acknowledgments: German capitalises every noun, so "Danke für
die Info" must not make "Info" a name, while "Ich habe Müller angerufen"
must make "Müller" one — capitalisation alone is not an entity, and an
unknown capitalised word is still treated as one (the conservative side).
Acronyms (two capitals or more) and words with inner capitals ("iPhone")
are names; so is an @mention. Scripts without case (Chinese, Japanese,
Arabic, Hebrew, Thai, Korean, the Indic scripts) give no capital to go by:
a katakana run (how Japanese writes foreign names) is a name, and any other
text in them that is not one of the closed acknowledgment phrases counts as
a possible name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from noemad.governance import languages
from noemad.governance.emoji import meaningful
from noemad.governance.text import CASELESS, KATAKANA_RUN, WORD, fold

CURRENCY = re.compile("[$¢£¤¥֏؋৲৳৻૱௹฿៛₠-⃀﷼﹩＄￠￡￥￦]")
PERCENT = re.compile("[%‰‱٪]")
DIGIT = re.compile(r"\d")
URL = re.compile(r"(?i)\b(?:https?|ftp)://|\bwww\.|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}\b(?!['’])")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
MENTION = re.compile(r"(?<![\w.])@\w")
PATH = re.compile(r"\w[/\\]\w|(?:^|[\s(])(?:~|\.{1,2})?[/\\]\w|\b[A-Za-z]:\\")
HASHTAG = re.compile(r"#\w")
HEX = re.compile(r"\b[a-f]{8,}\b")
IDENT = re.compile(r"\b\w+_\w+\b")
CITE_MARKS = re.compile("[\\[\\]§¶\"“”„«»‹›「」『』]")
SENTENCE_END = re.compile(r"[.!?…。！？\n]+")

ACK_WORDS: frozenset[str] = frozenset(
    word for phrases in languages.ACK_CLAUSES.values() for phrase in phrases for word in phrase.split()
) | languages.YES_WORDS
KNOWN_CAPITALS = languages.NOT_NAMES | ACK_WORDS
CASELESS_ACKS: frozenset[str] = frozenset(
    fold(phrase).replace(" ", "") for lang in ("ja", "zh") for phrase in languages.ACK_CLAUSES[lang]
)
_CITATIONS = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in languages.CITATION_WORDS) + r")\b")
_PERCENT_WORDS = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in languages.PERCENT_WORDS) + r")\b")
# Phrases that hold a day or number word without naming one ("Guten Morgen" is not "tomorrow", "très bien" not "three",
# "mil gracias" is no count of thanks, "have a good one" no number).
_GREETINGS = re.compile(
    r"\b(?:guten morgen|good morning|bom dia|tres bien|mil gracias|gracias mil|tausend dank|mille mercis|merci mille fois|grazie mille"
    r"|(?:nice|good|great) one|have a (?:good|great|nice|lovely) (?:one|weekend))\b"
)
_NOT_ALNUM = re.compile(r"[\W_]+")
_NOT_NUMBER_STEMS = frozenset({"einzig", "leipzig"})


@dataclass(frozen=True)
class Claim:
    """One thing a draft asserts: its kind (see the module) and the text that asserts it."""

    kind: str
    text: str


def _word_claims(folded: str) -> list[Claim]:
    found: list[Claim] = []
    text = _GREETINGS.sub(" ", folded)
    for word in (part for whole in WORD.findall(text) for part in {whole, *whole.split("-")}):
        if word in languages.NUMBER_WORDS or (
            len(word) > 5 and word.endswith(languages.NUMBER_STEMS) and word not in _NOT_NUMBER_STEMS
        ):
            found.append(Claim("spelled_number", word))
        elif word in languages.MONTHS_AND_DAYS or word in languages.RELATIVE_DAYS:
            found.append(Claim("date", word))
        elif word in languages.MONEY_WORDS:
            found.append(Claim("money", word))
    if _PERCENT_WORDS.search(text):
        found.append(Claim("percent", _PERCENT_WORDS.search(text).group(0)))  # type: ignore[union-attr]
    if _CITATIONS.search(text):
        found.append(Claim("citation", _CITATIONS.search(text).group(0)))  # type: ignore[union-attr]
    return found


def _names(draft: str) -> list[Claim]:
    found: list[Claim] = []
    for sentence in SENTENCE_END.split(draft):
        for index, word in enumerate(WORD.findall(sentence)):
            if word.islower():
                continue  # no capital: no name by capitals (the commonest case, so it is looked at first)
            folded = fold(word).replace("’", "'")
            if len(word) > 1 and word.isupper():
                if folded not in KNOWN_CAPITALS:
                    found.append(Claim("entity", word))  # an acronym (not a shouted ack)
            elif any(c.isupper() for c in word[1:]):
                found.append(Claim("entity", word))  # inner capitals: iPhone, McDonald, OpenAI
            elif index > 0 and word[0].isupper() and folded not in KNOWN_CAPITALS:
                found.append(Claim("entity", word))
    return found


def _caseless(draft: str) -> list[Claim]:
    if not CASELESS.search(draft):
        return []
    found = [Claim("entity", run) for run in KATAKANA_RUN.findall(draft)]
    if not found:
        folded = fold(draft)
        bare = "".join(c for c in folded if c.isalnum())
        # The whole a closed phrase, or each piece between punctuation one ("好的，没问题"): no name in it.
        pieces = [p for p in _NOT_ALNUM.split(folded) if p]
        if bare not in CASELESS_ACKS and not all(p in CASELESS_ACKS or p in languages.YES_WORDS for p in pieces):
            found.append(Claim("entity", draft[:40]))  # no case to tell a name by: anything unknown may be one
    return found


@lru_cache(maxsize=2048)
def draft_claims(draft: str) -> tuple[Claim, ...]:
    """Every claim in `draft` (see the module for the kinds), in a stable order."""
    found: list[Claim] = []
    patterns: tuple[tuple[str, re.Pattern[str]], ...] = (
        ("number", DIGIT), ("money", CURRENCY), ("percent", PERCENT), ("email", EMAIL), ("url", URL),
        ("entity", MENTION), ("path", PATH), ("id", HASHTAG), ("id", HEX), ("id", IDENT), ("citation", CITE_MARKS),
    )
    for kind, pattern in patterns:
        match = pattern.search(draft)
        if match:
            found.append(Claim(kind, match.group(0).strip()))
    if not draft.isascii():
        found += [Claim("emoji", c) for c in meaningful(draft)[:1]]
    found += _word_claims(fold(draft).replace("’", "'"))
    found += _names(draft)
    found += _caseless(draft)
    return tuple(found)


def draft_has_claims(draft: str) -> bool:
    """Whether `draft` asserts anything checkable: a number, amount, date, ID, link, path, citation or name."""
    return bool(draft_claims(draft))
