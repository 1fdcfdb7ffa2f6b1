"""Words, stop-words and stems: how text becomes terms.

Retrieval and consolidation both cut text into words the way FTS5's
unicode61 tokenizer does (runs of letters and digits), lower-case them and
drop stop-words. Two stemmers serve two purposes:

- `porter_stems` gives the stems FTS5's `porter` tokenizer stores, so a word
  can be looked up in the index's vocabulary (`memories_fts_vocab`);
- `snowball_stems` gives Snowball English ("Porter2") stems, the better
  stemmer, for consolidation's clustering, which owes nothing to FTS5.

Both are Snowball's own C implementations (PyStemmer). A stemmer object is
not safe to share between threads, so each thread keeps its own.

Text into terms is a leaf of the layers (it imports nothing of noemad): the
store's migrations count terms the same way memory retrieval does.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

import Stemmer

# unicode61 separates tokens at everything that is not a letter or a number;
# `[^\W_]` is a letter or a number (\w without the underscore).
WORD = re.compile(r"[^\W_]+")

# Common English function words: they match most memories and say little.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves also let lets ok okay yes oh
    """.split()
)

_local = threading.local()


def _stemmer(algorithm: str) -> Stemmer.Stemmer:
    stemmers: dict[str, Stemmer.Stemmer] = getattr(_local, "stemmers", None) or {}
    if not stemmers:
        _local.stemmers = stemmers
    if algorithm not in stemmers:
        stemmers[algorithm] = Stemmer.Stemmer(algorithm)
    return stemmers[algorithm]


def content_words(text: str) -> list[str]:
    """The lower-cased words of `text` of two characters or more that are not stop-words, in order, repeats kept."""
    return [w for w in WORD.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS]


def porter_stems(words: Iterable[str]) -> list[str]:
    """The stems FTS5's porter tokenizer stores for these lower-case words (the original Porter algorithm)."""
    return list(_stemmer("porter").stemWords(list(words)))


def snowball_stems(words: Iterable[str]) -> list[str]:
    """Snowball English (Porter2) stems of these lower-case words."""
    return list(_stemmer("english").stemWords(list(words)))


def index_stems(text: str) -> list[str]:
    """The distinct stems `memory_terms` counts for a memory's text: porter stems of its content words, sorted."""
    return sorted(set(porter_stems(dict.fromkeys(content_words(text)))))
