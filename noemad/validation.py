"""Pydantic's validation errors, read once for every reader that words them.

Pydantic names what failed by a `type` ("int_parsing", "greater_than_equal",
"extra_forbidden", ...). `read_error` is the one place that knows those names:
it reads an error into a `Problem` (what kind of problem it is, what the value
should have been: a noun, a bound, a length, a choice; and what was given).
Two readers word a `Problem`, each in its own format's words:

- `noemad.config.problems`: a key of noemad.toml or of a mind's settings,
  "minds.ada.attention_capacity: write a whole number from 1 to 6, not 0";
- `noemad.api.problems`: a field of a request body,
  "confidence must be at most 1, not 2".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Category", "Noun", "Problem", "number", "read_error"]

Category = Literal[
    "missing",  # a required value is absent
    "unknown",  # a key or field that is not one
    "ours",  # a check of our own (a validator) said what is wrong, in its own sentence
    "type",  # a value of the wrong type: `noun` says which is wanted
    "bound",  # a number out of its range (ge, gt, le, lt)
    "text_length",  # a string too short or too long
    "list_length",  # a list with too few or too many items
    "choice",  # not one of the words allowed
    "pattern",  # a string not of the form allowed
    "tag",  # a union's tag (a stimulus's kind) missing or unknown
    "json",  # a body that is not JSON
    "other",  # a kind met nowhere yet: pydantic's own words
]
Noun = Literal["whole", "number", "finite", "bool", "string", "list", "table", "unicode"]

_TYPES: dict[str, Noun] = {
    "int_type": "whole", "int_parsing": "whole", "int_from_float": "whole",
    "float_type": "number", "float_parsing": "number", "finite_number": "finite",
    "bool_type": "bool", "bool_parsing": "bool",
    "string_type": "string", "string_unicode": "unicode",
    "list_type": "list", "tuple_type": "list",
    "dict_type": "table", "model_type": "table", "model_attributes_type": "table",
}
_CATEGORIES: dict[str, Category] = {
    "missing": "missing",
    "extra_forbidden": "unknown",
    "value_error": "ours", "assertion_error": "ours",
    "greater_than": "bound", "greater_than_equal": "bound", "less_than": "bound", "less_than_equal": "bound",
    "string_too_short": "text_length", "string_too_long": "text_length",
    "too_short": "list_length", "too_long": "list_length",
    "literal_error": "choice", "enum": "choice",
    "string_pattern_mismatch": "pattern",
    "union_tag_not_found": "tag", "union_tag_invalid": "tag",
    "json_invalid": "json",
}


@dataclass(frozen=True)
class Problem:
    """One of pydantic's errors, read: where it is, what kind of problem, what was wanted and what was given."""

    loc: tuple[Any, ...]  # pydantic's path to the value (keys, list indexes, union tags)
    kind: str  # pydantic's name for it ("int_parsing")
    category: Category
    given: Any  # the value as it came
    ctx: Mapping[str, Any] = field(default_factory=dict)  # pydantic's context: bounds, lengths, the expected choices
    msg: str = ""  # pydantic's own words
    noun: Noun | None = None  # `type`: what is wanted

    @property
    def sentence(self) -> str:
        """`ours`: the validator's sentence, without pydantic's "Value error, " before it."""
        return self.msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")

    @property
    def too_long(self) -> bool:
        """`text_length`, `list_length`: over the most (else under the least)."""
        return self.kind in ("string_too_long", "too_long")

    @property
    def limits(self) -> dict[str, Any]:
        """`bound`: the range pydantic names (ge, gt, le, lt)."""
        return {k: v for k, v in self.ctx.items() if k in ("ge", "gt", "le", "lt")}


def read_error(err: Mapping[str, Any]) -> Problem:
    """One of pydantic's errors (an item of `ValidationError.errors()`) as a `Problem`."""
    kind = str(err.get("type", ""))
    noun = _TYPES.get(kind)
    category: Category = "type" if noun is not None else _CATEGORIES.get(kind, "other")
    return Problem(
        loc=tuple(err.get("loc", ())), kind=kind, category=category, given=err.get("input"),
        ctx=err.get("ctx") or {}, msg=str(err.get("msg", "invalid")), noun=noun,
    )


def number(value: Any) -> str:
    """A bound as a person writes it: 1, not 1.0."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
