"""`render`: a narrative as plain first-person prose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from noemad.cognition.narrative.model import Narrative

if TYPE_CHECKING:
    pass


def _and(items: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"; a verb said again is left out ("noticed that a and that b")."""
    items = _fold(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _lead(item: str) -> str:
    """The verb an item opens with: the words before its "that"/"whether" (within four words), else its first word."""
    words = item.split(" ")
    for i, word in enumerate(words[:5]):
        if word in ("that", "whether") and i > 0:
            return " ".join(words[:i])
    return words[0]


def _fold(items: Sequence[str]) -> list[str]:
    """Items in a row that open with the same verb as one: "noticed that a", "noticed that b" -> "noticed that a and that b"."""
    runs: list[tuple[str, list[str]]] = []
    for item in items:
        lead = _lead(item)
        if runs and runs[-1][0] == lead:
            runs[-1][1].append(item[len(lead):].lstrip())
        else:
            runs.append((lead, [item[len(lead):].lstrip()]))
    out = []
    for lead, rests in runs:
        # A serial comma when a folded clause has an "and" of its own, so the last one reads apart.
        last = ", and " if any(" and " in rest for rest in rests[:-1]) else " and "
        joined = rests[0] if len(rests) == 1 else ", ".join(rests[:-1]) + last + rests[-1]
        out.append(f"{lead} {joined}".rstrip())
    return out


def _sentence(text: str) -> str:
    """A sentence: a full stop unless it ends with one (or a closing quote after one), its first word capitalised.

    Unless that word is a name: "alice said …" keeps alice's name as she
    spells it (a source "ci" is not "Ci"); only the template's own words
    ("an operator") are capitalised.
    """
    if text.startswith("an "):
        text = "A" + text[1:]
    return text if text.endswith((".", "!", "?", ".”", "!”", "?”", "…”", "…")) else text + "."


def render(n: Narrative) -> str:
    """Short first-person prose; empty parts are left out. Deterministic.

    What happened (why), what I made of it (doing), what I did lately
    (recently), what is still open (resolving) and what I expect (next),
    one sentence each.
    """
    sentences = []
    if n.why:
        sentences.append(_sentence("; then ".join(n.why)))
    if n.doing:
        sentences.append(_sentence(("So I " if n.why else "I ") + _and(n.doing)))
    if n.recently:
        sentences.append(_sentence("Lately I " + _and(n.recently)))
    if n.resolving:
        sentences.append(_sentence("I " + _and(n.resolving)))
    if n.next:
        sentences.append(_sentence("I " + _and(n.next)))
    return " ".join(sentences) if sentences else "I have nothing on my mind yet."
