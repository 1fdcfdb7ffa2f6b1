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

import sys
from collections.abc import Iterable

from noemad.words import STOP_WORDS, WORD, content_words, snowball_stems


def strip_speaker(text: str) -> str:
    """An episode's text without its speaker prefix (everything up to the first ": "), or the text if it has none."""
    head, sep, rest = text.partition(": ")
    return rest if sep else head


def terms(text: str) -> list[str]:
    """The Snowball stems of an episode's content words, its prefix stripped, in order, repeats kept."""
    return snowball_stems(content_words(strip_speaker(text)))


Terms = tuple[str, ...]  # an episode's distinct terms, in order of first appearance


class _Terms(dict[str, "str | None"]):
    """word -> its term (its interned Snowball stem), or None if it is no content word; each word stemmed on first sight.

    A month of episodes uses a few thousand distinct words a hundred
    thousand times: looking each up costs less than stemming it again.
    """

    def __missing__(self, word: str) -> str | None:
        term = None if len(word) < 2 or word in STOP_WORDS else sys.intern(snowball_stems([word])[0])
        self[word] = term
        return term


def episode_terms(texts: Iterable[str]) -> list[Terms]:
    """Each episode's distinct terms (the tokenising stage of a run): `terms` without repeats.

    Tuples of interned strings: a stem shared by a thousand episodes is
    stored once, and a tuple takes a third of a set's memory. The loop is
    `terms` unrolled (the same words, the same stems), with a word's stem
    looked up rather than computed again.
    """
    term_of = _Terms().__getitem__
    findall = WORD.findall
    seen: dict[str, Terms] = {}  # a body said again (a sensor's reading, a repeated request) is cut once
    out: list[Terms] = []
    for text in texts:
        head, sep, rest = text.partition(": ")
        body = rest if sep else head
        found = seen.get(body)
        if found is None:
            distinct = dict.fromkeys(map(term_of, findall(body.lower())))
            distinct.pop(None, None)  # the words that are no content words
            found = seen[body] = tuple(distinct)
        out.append(found)
    return out
