"""A memory's importance, estimated from its text and kind when it is written (see `importance`)."""

from __future__ import annotations

import math
import re

from noemad.cognition.memory.model import (
    DETAIL_SATURATION,
    KIND_BASE,
    LENGTH_SATURATION,
    SPECIFICITY_WEIGHT,
    check_kind,
)
from noemad.words import STOP_WORDS, WORD

_SENTENCE = re.compile(r"[.!?:;]\s+|\n")
_LOG_LENGTH_SATURATION = math.log1p(LENGTH_SATURATION)


def importance(text: str, kind: str) -> float:
    """How much a memory matters, in [0, 1], from its kind and its text alone.

        importance = KIND_BASE[kind] + SPECIFICITY_WEIGHT x specificity
        specificity = 0.6 x min(1, ln(1 + content words) / ln(1 + LENGTH_SATURATION))
                    + 0.4 x min(1, details / DETAIL_SATURATION)

    Content words are the words of two characters or more that are not
    stop-words; details are words with a digit (dates, times, versions) and
    capitalised words that do not start a sentence (names, places). The
    base is 0.3 for episodic, 0.55 for semantic and 0.6 for procedural
    memories: a fact or a skill distilled from many episodes is worth more
    than one episode. So an episode scores 0.3-0.55, a semantic memory
    0.55-0.8 and a procedural one 0.6-0.85: longer, more specific text scores
    a little higher, with diminishing returns, and never crosses into the next
    kind's range by much. Deterministic; no model involved.
    """
    check_kind(kind)
    words = WORD.findall(text)
    content = len([w for w in words if len(w) > 1 and w.lower() not in STOP_WORDS])
    length_term = min(1.0, math.log1p(content) / _LOG_LENGTH_SATURATION)
    detail_term = min(1.0, _details(text, words) / DETAIL_SATURATION)
    value = KIND_BASE[kind] + SPECIFICITY_WEIGHT * (0.6 * length_term + 0.4 * detail_term)
    return round(min(1.0, max(0.0, value)), 6)


def _details(text: str, words: list[str]) -> int:
    """Words with a digit, and capitalised words that do not start a sentence (names, places, acronyms); `words`: the text's.

    No word spans a sentence's end (punctuation or a line break), so the
    capitalised words that do not start one are all the capitalised words
    but each sentence's first; most texts have none, and no sentence is looked for.
    """
    # No character is both a letter and a digit: a word of letters only (most) is not looked through.
    count = len([w for w in words if not w.isalpha() and any(map(str.isdigit, w))])
    capitalised = len([w for w in words if w[0].isupper()])
    if capitalised:
        count += capitalised - len([s for s in _SENTENCE.split(text) if (first := WORD.search(s)) is not None and first[0][0].isupper()])
    return count
