"""Fabrication findings: what a draft asserts that nothing the mind was given supports.

Noema owns the context a draft was written from (the conversation window,
the recalled memories, the mind's beliefs), so this is checked exactly: each
number, link, email, identifier and name in the draft is looked for in that
evidence, and each one not found is a `Finding`. Numbers are compared as
digits ("1,200" is "1200"); names and identifiers folded (case and accents
aside). Spelled-out numbers and day names are not compared (they are too
loose to match), but they remain claims, so they still fire review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from noemad.governance.claims import EMAIL, HEX, IDENT, _names
from noemad.governance.text import WORD, fold

NUMBER = re.compile(r"\d(?:[\d.:/\-]|[ ,_'](?=\d{3}\b))*")
HASHTAG = re.compile(r"#\w+")
URL_FULL = re.compile(r"(?i)\b(?:https?|ftp)://\S+|\bwww\.\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}\b")


@dataclass(frozen=True)
class Finding:
    """A claim of the draft that the evidence does not hold: its kind and its text (kept for the critic, never in an event)."""

    kind: str
    text: str


def _number(text: str) -> str:
    return re.sub(r"[ ,_']", "", text).rstrip(".:/-")


def fabrication_findings(draft: str, evidence: Sequence[str]) -> tuple[Finding, ...]:
    """Each number, link, email, identifier and name in `draft` that no text of `evidence` contains."""
    joined = "\n".join(evidence)
    folded = fold(joined)
    numbers = {_number(m.group(0)) for m in NUMBER.finditer(joined)}
    known_words = set(WORD.findall(folded))
    found: list[Finding] = []
    for match in NUMBER.finditer(draft):
        value = _number(match.group(0))
        if value and value not in numbers and not any(value in n for n in numbers if len(value) > 3):
            found.append(Finding("number", value))
    for kind, pattern in (("url", URL_FULL), ("email", EMAIL), ("id", HASHTAG), ("id", HEX), ("id", IDENT)):
        for match in pattern.finditer(draft):
            text = match.group(0).rstrip(".,;:!)")
            if fold(text) not in folded:
                found.append(Finding(kind, text))
    for claim in _names(draft):
        if fold(claim.text) not in known_words:
            found.append(Finding("entity", claim.text))
    return tuple(dict.fromkeys(found))

