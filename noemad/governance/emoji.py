"""Emoji and pictographic symbols, by class: which only react (they may sit beside an ack) and which carry meaning.

A symbol (Unicode category So) is classed by the block or range it sits
in, not by a list of favourites: `REACTIONS` are the faces (the Emoticons
faces, the faces of Supplemental Symbols and Pictographs and of Symbols and
Pictographs Extended-A), the hearts, and the gestures that mean what an
acknowledgment word means (👍 "ok", 👌, 🙏 "thanks", 🤝, 👏, 👋, 🙌).
Every other symbol carries meaning and is content: `status` (✅ ✔ ❌ ❎
⭕ and the coloured circles and squares: done, failed, green, red),
`warning` (⚠ 🚨 ⛔ 🛑 🚫 ❗ ❓ ☢ 🔥), `refusal` (👎 🙅 ✋ 🤷), `progress`
(Transport and Map Symbols: 🚀 🚧; ⏳ 🔄), `time` (clock faces, ⏰ 📅),
`number` (keycaps, 🔟 💯), `money` (💰 💵 💳), `flag` (regional
indicators, 🏁 🚩) and `symbol`, everything else (objects, animals, food,
signs, ™ °): the class for what cannot be told, which fires like the rest.

The modifiers and joiners that build an emoji sequence (skin tones,
variation selectors, the zero-width joiner, tag characters, the keycap
mark) carry nothing on their own; a sequence is content when any symbol in
it is ("❤️‍🔥" holds 🔥).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# (first, last) code points of each class, inclusive. Order matters: the first class that holds a code point wins.
_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "status": (
        (0x2705, 0x2705), (0x2611, 0x2611), (0x2713, 0x2718), (0x274C, 0x274C), (0x274E, 0x274E), (0x2B55, 0x2B55),
        (0x1F7E0, 0x1F7EB), (0x1F534, 0x1F535), (0x26AA, 0x26AB), (0x1F518, 0x1F518), (0x2B1B, 0x2B1C), (0x25A0, 0x25FF),
        (0x1F100, 0x1F1E5),  # enclosed alphanumerics: 🆗 🆕 🆘 🅰, a word or letter in a box
    ),
    "warning": (
        (0x26A0, 0x26A0), (0x1F6A8, 0x1F6A8), (0x26D4, 0x26D4), (0x1F6D1, 0x1F6D1), (0x1F6AB, 0x1F6AB), (0x2753, 0x2757),
        (0x2622, 0x2623), (0x1F525, 0x1F525), (0x1F4A5, 0x1F4A5), (0x26A1, 0x26A1), (0x1F198, 0x1F198), (0x2620, 0x2620),
    ),
    "refusal": ((0x1F44E, 0x1F44E), (0x1F645, 0x1F645), (0x270B, 0x270B), (0x1F91A, 0x1F91A), (0x1F590, 0x1F590),
                (0x1F937, 0x1F937), (0x1F926, 0x1F926), (0x1F595, 0x1F595)),
    "progress": ((0x1F680, 0x1F6FF), (0x23F3, 0x23F3), (0x231B, 0x231B), (0x1F500, 0x1F504)),
    "time": ((0x1F550, 0x1F567), (0x23F0, 0x23F2), (0x231A, 0x231A), (0x1F4C5, 0x1F4C6), (0x1F5D3, 0x1F5D3)),
    "number": ((0x1F51F, 0x1F522), (0x1F4AF, 0x1F4AF), (0x2460, 0x24FF), (0x2776, 0x2793)),
    "money": ((0x1F4B0, 0x1F4B9), (0x1FA99, 0x1FA99), (0x1F3E6, 0x1F3E6)),
    "flag": ((0x1F1E6, 0x1F1FF), (0x1F3C1, 0x1F3C1), (0x1F6A9, 0x1F6A9), (0x1F3F3, 0x1F3F4), (0x1F38C, 0x1F38C)),
    # The reactions: affect and the gestures of an acknowledgment.
    "face": (
        (0x1F600, 0x1F644), (0x1F910, 0x1F917), (0x1F920, 0x1F925), (0x1F927, 0x1F92F), (0x1F970, 0x1F976),
        (0x1F978, 0x1F97A), (0x1F9D0, 0x1F9D0), (0x1FAE0, 0x1FAE8), (0x263A, 0x263A), (0x2639, 0x2639),
    ),
    "heart": ((0x2764, 0x2764), (0x2763, 0x2763), (0x2665, 0x2665), (0x1F493, 0x1F49F), (0x1F9E1, 0x1F9E1),
              (0x1F90D, 0x1F90E), (0x1F5A4, 0x1F5A4), (0x1FA75, 0x1FA77), (0x1FAF6, 0x1FAF6)),
    "ack_gesture": ((0x1F44B, 0x1F44D), (0x1F44F, 0x1F44F), (0x1F64C, 0x1F64C), (0x1F64F, 0x1F64F), (0x1F91D, 0x1F91D),
                    (0x1F646, 0x1F647), (0x1F919, 0x1F919), (0x270C, 0x270C), (0x1F4AA, 0x1F4AA)),
}
REACTIONS: frozenset[str] = frozenset({"face", "heart", "ack_gesture"})
MEANINGS: tuple[str, ...] = tuple(c for c in _RANGES if c not in REACTIONS) + ("symbol",)
CLASSES: tuple[str, ...] = MEANINGS + tuple(sorted(REACTIONS))

# Parts of a sequence that carry nothing alone: skin tones, variation selectors, ZWJ, tags, the keycap and its kin.
_JOINERS = frozenset({0x200D, 0xFE0E, 0xFE0F, 0x20E0})
_KEYCAP = 0x20E3  # the enclosing keycap makes its base (0-9, #, *) a key: 3️⃣ is a number


def _is_part(code: int) -> bool:
    return code in _JOINERS or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F


def is_symbol(char: str) -> bool:
    """Whether `char` is a pictographic symbol or a part of an emoji sequence (what an ack may hold beside its words)."""
    code = ord(char)
    return code == _KEYCAP or unicodedata.category(char) == "So" or _is_part(code)


def emoji_class(char: str) -> str | None:
    """The class of `char` (see the module), or None when it is no symbol or only a part of a sequence."""
    code = ord(char)
    if code == _KEYCAP:
        return "number"
    if _is_part(code) or unicodedata.category(char) != "So":
        return None
    for name, ranges in _RANGES.items():
        if any(first <= code <= last for first, last in ranges):
            return name
    return "symbol"


def meaningful(chars: Iterable[str]) -> list[str]:
    """The symbols among `chars` that carry meaning: every class but the reactions."""
    return [c for c in chars if (cls := emoji_class(c)) is not None and cls not in REACTIONS]


def examples(name: str) -> list[str]:
    """Every symbol of class `name` in its ranges (for tests and the bench; "symbol" gives a sample of the rest)."""
    if name == "symbol":
        return ["📎", "🐈", "🍕", "™", "°", "🎉", "✨", "📧"]
    found = [chr(c) for first, last in _RANGES[name] for c in range(first, last + 1) if emoji_class(chr(c)) == name]
    return found + (["3\ufe0f\u20e3", "#\ufe0f\u20e3"] if name == "number" else [])
