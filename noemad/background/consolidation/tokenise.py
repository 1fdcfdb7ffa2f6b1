"""An episode's terms: the Snowball stems of its content words, its speaker prefix dropped.

An episode's text starts with who it is from ("alice said on cli: ...",
"observed from sensor-1: ...", "bob asserted: ..."): everything up to the
first ": " is that *speaker prefix*, and it is dropped (`strip_speaker`), so
a speaker's name or channel alone never makes episodes alike. The rest is
cut into content words (`noemad.cognition.words.content_words`: lower-cased
runs of letters and digits of two characters or more, stop-words dropped)
and each is given its Snowball English stem. An episode's *terms* are its
distinct stems.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from noemad.cognition.words import content_words, snowball_stems

def strip_speaker(text: str) -> str:
    """An episode's text without its speaker prefix (everything up to the first ": "), or the text if it has none."""
    head, sep, rest = text.partition(": ")
    return rest if sep else head


def terms(text: str) -> list[str]:
    """The Snowball stems of an episode's content words, its prefix stripped, in order, repeats kept."""
    return snowball_stems(content_words(strip_speaker(text)))


Terms = tuple[str, ...]  # an episode's distinct terms, in order of first appearance


def episode_terms(texts: Iterable[str]) -> list[Terms]:
    """Each episode's distinct terms (the tokenising stage of a run).

    Tuples of interned strings: a stem shared by a thousand episodes is
    stored once, and a tuple takes a third of a set's memory.
    """
    intern = sys.intern
    return [tuple(dict.fromkeys(map(intern, snowball_stems(content_words(strip_speaker(text)))))) for text in texts]
