"""An episode's terms: the Snowball stems of its content words, its speaker prefix dropped.

An episode's text starts with who it is from ("alice said on cli: ...",
"observed from sensor-1: ...", "bob asserted: ..."): everything up to the
first ": " is that *speaker prefix*, and it is dropped (`strip_speaker`), so
a speaker's name or channel alone never makes episodes alike. The rest is
cut into content words (`noemad.words.content_words`: lower-cased
runs of letters and digits of two characters or more, stop-words dropped)
and each is given its Snowball English stem. An episode's *terms* are its
distinct stems.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from itertools import repeat

from noemad.words import STOP_WORDS, WORD, content_words, snowball_stems


def strip_speaker(text: str) -> str:
    """An episode's text without its speaker prefix (everything up to the first ": "), or the text if it has none."""
    head, sep, rest = text.partition(": ")
    return rest if sep else head


def terms(text: str) -> list[str]:
    """The Snowball stems of an episode's content words, its prefix stripped, in order, repeats kept."""
    return snowball_stems(content_words(strip_speaker(text)))


Terms = tuple[str, ...]  # an episode's distinct terms, in order of first appearance


_SEPARATOR = "\x00"  # between two bodies in the text cut at once; no word, and no term
_JOINER = f" {_SEPARATOR} "
# ASCII text is cut by a translation and a split: every ASCII character that is not a letter or a digit becomes a
# space (what `WORD` matches, for ASCII), but the separator, which stays a word of its own.
_ASCII_WORDS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum() and c != _SEPARATOR})
_WORD_OR_SEPARATOR = re.compile(WORD.pattern + "|" + _SEPARATOR)


def episode_terms(texts: Iterable[str]) -> list[Terms]:
    """Each episode's distinct terms (the tokenising stage of a run): `terms` without repeats.

    Tuples of interned strings: a stem shared by a thousand episodes is
    stored once, and a tuple takes a third of a set's memory. The same words
    and stems as `terms`, cut in bulk: a body said again (a sensor's reading,
    a repeated request) is cut once; the distinct bodies, lower-cased, are
    joined by a separator and cut in one pass (a translation and a split when
    they are ASCII, else `WORD`); each distinct word is stemmed once, all in
    one call; then the terms are parted at the separators.
    """
    bodies = [rest if sep else head for head, sep, rest in map(str.partition, texts, repeat(": "))]
    found: dict[str, Terms | None] = dict.fromkeys(bodies)
    distinct = list(found)
    joined = _JOINER.join(map(str.lower, distinct))
    if joined.count(_SEPARATOR) != len(distinct) - 1:  # a body holds the separator: cut one by one
        found.update(zip(distinct, map(_cut, distinct)))
        return list(map(found.__getitem__, bodies))  # type: ignore[arg-type]
    words = joined.translate(_ASCII_WORDS).split() if joined.isascii() else _WORD_OR_SEPARATOR.findall(joined)
    content = [w for w in set(words) if len(w) > 1 and w not in STOP_WORDS]
    term_of: dict[str, str] = dict(zip(content, map(sys.intern, snowball_stems(content))))
    term_of[_SEPARATOR] = _SEPARATOR
    cut = list(filter(None, map(term_of.get, words)))  # the terms, in order, with a separator after each body but the last
    out: list[Terms] = []
    start = 0
    at = cut.index
    for _ in range(len(distinct) - 1):
        end = at(_SEPARATOR, start)
        out.append(tuple(dict.fromkeys(cut[start:end])))
        start = end + 1
    if distinct:
        out.append(tuple(dict.fromkeys(cut[start:])))
    found.update(zip(distinct, out))
    return list(map(found.__getitem__, bodies))  # type: ignore[arg-type]


def _cut(body: str) -> Terms:
    """One body's distinct terms."""
    return tuple(dict.fromkeys(snowball_stems(content_words(body))))
