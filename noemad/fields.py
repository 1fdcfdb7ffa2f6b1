"""The constrained values a body may carry: names, texts, ids, free JSON.

Each is an `Annotated` type pydantic checks where a value arrives from
outside (a request body, a path, a query), with the sentence a 422 says.
They sit at the base so the records that declare what a body holds (the
stimuli, noemad/stimuli.py) and the API's own bodies use the same ones.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from annotated_types import Ge, Le
from pydantic import AfterValidator, ConfigDict, StringConstraints

from noemad.names import name_problem

# Strict: a bool is not a number nor a number a bool ({"value": false} is not trust 0); finite floats only.
BODY = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
"""A request body's rules: unknown fields, loose types and non-finite numbers are refused."""

MAX_TEXT = 100_000  # characters of one stimulus' text


def _named(what: str) -> AfterValidator:
    """The one name check (noemad.names) for a field holding a `what`; its sentence becomes the 422's."""

    def check(value: str) -> str:
        problem = name_problem(value, what)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


# Authors, sources, channels, mentions and tags are names: one rule (noemad.names), surrounding blanks dropped.
Author = Annotated[str, StringConstraints(strip_whitespace=True), _named("author")]
Source = Annotated[str, StringConstraints(strip_whitespace=True), _named("source")]
Channel = Annotated[str, StringConstraints(strip_whitespace=True), _named("channel")]
Mention = Annotated[str, StringConstraints(strip_whitespace=True), _named("mention")]
Tag = Annotated[str, StringConstraints(strip_whitespace=True), _named("tag")]
Subject = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
"""What a proposition is about: free words (normalised to a key), not a name."""
Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]

MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id names nothing, and must not reach a query (it overflows)
Id = Annotated[int, Ge(1), Le(MAX_ID)]
"""A stored row's id, wherever one arrives (path, query, body): beyond SQLite's range it is refused at the edge (422)."""
Since = Annotated[int, Ge(0), Le(MAX_ID)]
"""An event id to read after (0: from the start), bounded as `Id` is."""


def _unicode(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (\ud800) parses from JSON but cannot be written back out: stored, every read of it would fail.
        raise ValueError(f"{where or 'the value'} holds a lone surrogate ({text!r:.40}); send valid Unicode text") from None


def _finite(value: Any, where: str = "") -> None:
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or Infinity (1e999 reads as Infinity): stored, it would make every read of it fail.
        raise ValueError(f"{where or 'the value'} is {value!r}, not a finite number; send finite numbers only")
    if isinstance(value, str):
        _unicode(value, where)
    elif isinstance(value, dict):
        for key, inner in value.items():
            _unicode(str(key), where)
            _finite(inner, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            _finite(inner, f"{where}[{i}]")


def _finite_json(value: Any) -> Any:
    _finite(value)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_finite_json)]
"""Free JSON a body carries (observation data, settings, rules): any shape, but finite numbers and valid Unicode only."""
JsonValue = Annotated[Any, AfterValidator(_finite_json)]


Proposition = Annotated[str, StringConstraints(min_length=1, max_length=1000, strip_whitespace=True)]
"""A statement a belief, a goal or a prediction is about."""
