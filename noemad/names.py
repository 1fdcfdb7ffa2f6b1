"""Names that arrive from outside: one rule and one check for all of them.

An author, a source, a channel, a mention and a message tag are names: 1 to
200 letters (any script), digits and `_ . : # @ / ! + = -`, so `user:alice`,
`discord:guild:chan`, `#ops`, `sensor/3` and a Matrix room or user
(`matrix:!abc:example.org`, `matrix:@a+b:example.org`) are names and `Bad Name?`, an
empty string or one holding a control character are not. A mind's name is
the same rule made narrower, because it is also part of every URL of the mind
and of the words an operator types: 1 to 63 lowercase letters, digits, `-` or
`_`, starting with a letter or digit.

Every edge that takes a name (the API's bodies and paths, `noemad.minds`)
asks `name_problem`, so each says the same sentence: what was given, what is
wrong with it, what is allowed. A leaf of the layers: it imports nothing of noemad.
"""

from __future__ import annotations

import re

MAX_NAME = 200
NAME_RULE = f"1-{MAX_NAME} letters, digits and _ . : # @ / ! + = - (no spaces)"
_NAME_CHAR = re.compile(r"[\w.:#@/!+=-]")  # \w: letters and digits of any script, and _
_NAME = re.compile(rf"[\w.:#@/!+=-]{{1,{MAX_NAME}}}")  # a whole valid name at once: the common case, checked per stimulus

MAX_MIND_NAME = 63
MIND_NAME_RULE = f"1-{MAX_MIND_NAME} lowercase letters, digits, '-' or '_', starting with a letter or digit"
_MIND_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")


def _shown(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:59] + "…")


def _spelt(char: str) -> str:
    if char == " ":
        return "a space"
    if not char.isprintable():
        return f"the control character U+{ord(char):04X}"
    return repr(char)


def name_problem(value: str, what: str = "name") -> str | None:
    """Why `value` is not a valid name for `what` (e.g. "author"), as a sentence; None when it is one."""
    if _NAME.fullmatch(value):
        return None
    if not value:
        return f"{what} is empty; give a name of {NAME_RULE}"
    if len(value) > MAX_NAME:
        return f"{what} is {len(value)} characters long; a name has {NAME_RULE}"
    bad = [_spelt(c) for c in dict.fromkeys(c for c in value if not _NAME_CHAR.fullmatch(c))]
    if bad:
        listed = ", ".join(bad[:-1]) + " and " + bad[-1] if 1 < len(bad) <= 3 else bad[0] + (" and more" if len(bad) > 3 else "")
        return f"{what} {_shown(value)} is not a name: it holds {listed}; a name has {NAME_RULE}"
    return None


def mind_name_problem(value: str) -> str | None:
    """Why `value` is not a valid mind name, as a sentence; None when it is one."""
    if _MIND_NAME.fullmatch(value):
        return None
    return f"{_shown(value)} is not a valid mind name: use {MIND_NAME_RULE}"
