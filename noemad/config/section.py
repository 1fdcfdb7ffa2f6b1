"""The base of every table of noemad.toml, and the checks of one value that several tables share.

Each check raises a sentence that says what to write; `describe_validation_error`
puts the key in front of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A table of noemad.toml (or of a mind's stored settings): unknown keys refused, values frozen and strictly typed."""

    # Strict: TOML and JSON have types, so "4" is not a number and 1 is not true.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def whole(low: int, high: int) -> Callable[[Any], int]:
    """A check of a whole number from `low` to `high` (a bool is not one)."""

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"write a whole number from {low} to {high}, not {value!r}")
        return value

    return check


def unit(value: Any) -> float:
    """A number from 0 to 1, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"write a number from 0 to 1, not {value!r}")
    return float(value)


def flag(value: Any) -> bool:
    """true or false, and nothing that merely reads as one."""
    if not isinstance(value, bool):
        raise ValueError(f"write true or false, not {value!r}")
    return value
