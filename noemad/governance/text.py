"""Text helpers every detector shares: folding for comparison, words, and the scripts without case.

Folding is NFKC, then casefold, then the combining marks dropped (so
"jurisdicción" matches the configured term "jurisdiccion", and "ÜBER" is
"uber"). Nothing here decides anything; the detectors do.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Letters of scripts that have no upper and lower case: a name written in them
# cannot be told by its capital, so the detectors need another signal there.
CASELESS = re.compile(
    "["
    "\u0590-\u05ff"  # Hebrew
    "\u0600-\u06ff\u0750-\u077f"  # Arabic
    "\u0900-\u0dff"  # Devanagari ... Sinhala
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1100-\u11ff\uac00-\ud7af"  # Hangul
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK ideographs
    "]"
)
COMBINING = re.compile("[\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u064b-\u065f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\u3099\u309a\ufe20-\ufe2f]")
KATAKANA_RUN = re.compile("[\u30a0-\u30ff]{2,}")  # foreign words and names in Japanese are written in katakana
WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’\-](?=[^\W\d_]))*")
# Every question mark Unicode has, of any script (the punctuation and the ornaments whose name says QUESTION MARK or
# INTERROBANG; tests/test_governance_detectors.py checks the list against the Unicode database): a message holding one
# asks, and a draft holding one is never a plain acknowledgment. Greek writes its question mark as ";" (see `intent`).
QUESTION_MARKS = re.compile(
    "[?¿\u037e\u055e\u061f\u1367\u1945\u203d\u2047-\u2049\u2753\u2754\u2cfa\u2cfb\u2e18\u2e2e\u2e54"
    "\ua60f\ua6f7\ufe16\ufe56\uff1f\U00011143\U0001e95f\U0001f679-\U0001f67b\U0001fbc4]"
)


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """`text` for comparison: NFKC, casefolded, without combining marks, spaces collapsed."""
    if text.isascii():
        return " ".join(text.lower().split())
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(unicodedata.normalize("NFC", COMBINING.sub("", decomposed)).split())


def words(text: str) -> list[str]:
    """The words of `text` as written (letters, with inner apostrophes and hyphens), digits left out."""
    return WORD.findall(text)
