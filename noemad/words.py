"""Words, stop-words and stems: how text becomes terms.

Retrieval and consolidation both cut text into words the way FTS5's
unicode61 tokenizer does (runs of letters and digits), lower-case them and
drop stop-words and the pieces contractions leave (`NOT_TERMS`; "n't" is
read as " not" first, so "don't" leaves no "don" while "Don" stays a word).
Two stemmers serve two purposes:

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

# What contractions leave once the apostrophe has cut them, in the five languages the detectors cover: no word a
# text is about. English 'll 've 're (and 'd 'm 's 't, one letter: too short to be words anyway); French elisions
# qu' jusqu' lorsqu' puisqu' quoiqu' presqu' (l' d' j' c' n' s' m' t', one letter); Portuguese d' (one letter);
# German 's (one letter); and the contracted function words: Spanish del, al; French du, au, aux; Portuguese
# do, da, dos, das, no, na, nos, nas, ao, aos, pelo, pela, pelos, pelas, num, numa, dum, duma; German im, ins, ans,
# zum, zur, beim, vom, ums. (A few are also English names for things, "NAS", "DOS": in five languages a
# contraction is much the likelier reading.)
NOT_TERMS = frozenset(
    """
    ll ve re
    qu jusqu lorsqu puisqu quoiqu presqu
    del al
    du au aux
    do da dos das no na nos nas ao aos pelo pela pelos pelas num numa dum duma
    im ins ans zum zur beim vom ums
    """.split()
)
NOT_CONTENT = STOP_WORDS | NOT_TERMS  # a word of two letters or more is a content word unless it is one of these

# English negations, read before the words are cut: the apostrophe would leave "don", "isn", "won" (which, without
# it, are words: "Don", "won"). The irregular ones first; each with a straight and a curly apostrophe.
_NEGATIONS = tuple(
    (f"{head}{apostrophe}t", replacement)
    for head, replacement in (("won", "will not"), ("can", "can not"), ("shan", "shall not"), ("ain", "is not"), ("n", " not"))
    for apostrophe in ("'", "\u2019")
)


def expand_negations(text: str) -> str:
    """`text` (lower-cased) with English negations read as "not": "don't" -> "do not", "won't" -> "will not"."""
    if "n'" not in text and "n\u2019" not in text:
        return text
    for contracted, expanded in _NEGATIONS:
        text = text.replace(contracted, expanded)
    return text


_local = threading.local()


def _stemmer(algorithm: str) -> Stemmer.Stemmer:
    stemmers: dict[str, Stemmer.Stemmer] = getattr(_local, "stemmers", None) or {}
    if not stemmers:
        _local.stemmers = stemmers
    if algorithm not in stemmers:
        stemmers[algorithm] = Stemmer.Stemmer(algorithm)
    return stemmers[algorithm]


def content_words(text: str) -> list[str]:
    """The lower-cased words of `text` of two characters or more that are not stop-words or contraction pieces, in order, repeats kept."""
    return [w for w in WORD.findall(expand_negations(text.lower())) if len(w) > 1 and w not in NOT_CONTENT]


def porter_stems(words: Iterable[str]) -> list[str]:
    """The stems FTS5's porter tokenizer stores for these lower-case words (the original Porter algorithm)."""
    return list(_stemmer("porter").stemWords(list(words)))


def snowball_stems(words: Iterable[str]) -> list[str]:
    """Snowball English (Porter2) stems of these lower-case words."""
    return list(_stemmer("english").stemWords(list(words)))


def index_stems(text: str) -> list[str]:
    """The distinct stems `memory_terms` counts for a memory's text: porter stems of its content words, sorted."""
    return sorted(set(porter_stems(dict.fromkeys(content_words(text)))))
