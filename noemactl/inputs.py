"""Checking what the command line holds before anything is sent.

Each check raises `BadInput` (exit 2) with a sentence naming the option and
what to pass instead.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

from noemactl.errors import BadInput


def _not_finite(text: str) -> float:
    # Python's json reads NaN and Infinity; JSON has neither, and noemad refuses them.
    raise ValueError(f"{text} is not a JSON number; numbers are finite")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is too large for a number")
    return number


def loads(text: str) -> Any:
    """JSON as noemad takes it: ValueError for NaN, Infinity or a number too large to be finite."""
    return json.loads(text, parse_constant=_not_finite, parse_float=_finite_float)


def json_object(value: str | None, option: str, example: str) -> dict[str, Any]:
    """Decode `value` (given to `option`) as a JSON object; None gives `{}`."""
    if value is None:
        return {}
    try:
        decoded = loads(value)
    except ValueError as exc:
        reason = getattr(exc, "msg", str(exc))
        where = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise BadInput(f"{option} is not valid JSON ({reason}{where}); pass a JSON object such as '{example}'") from None
    if not isinstance(decoded, dict):
        raise BadInput(f"{option} must be a JSON object such as '{example}', not {_json_type(decoded)}")
    return decoded


def settings_patch(key: str | None, value: str | None, unset: list[str]) -> dict[str, Any]:
    """A settings merge patch from `KEY VALUE` (VALUE as JSON if it parses, else text) and `--unset KEY`s (null)."""
    if key is not None and value is None:
        raise BadInput(f"give {key} a value (mind set MIND {key} VALUE), or remove it with --unset {key}")
    pairs: list[tuple[str, Any]] = []
    if key is not None:
        try:
            decoded: Any = loads(value)  # type: ignore[arg-type]
        except ValueError:
            decoded = value
        pairs.append((key, decoded))
    pairs.extend((k, None) for k in unset)
    if not pairs:
        raise BadInput("say what to change: mind set MIND KEY VALUE, or mind set MIND --unset KEY")
    patch: dict[str, Any] = {}
    for dotted, item in pairs:
        parts = dotted.split(".")
        if not all(p.strip() for p in parts):
            raise BadInput(f"{dotted!r} is not a setting's name; write it like persona or models.respond.model")
        table = patch
        for part in parts[:-1]:
            nested = table.setdefault(part, {})
            if not isinstance(nested, dict):
                raise BadInput(f"{dotted!r} sets a key inside {part!r}, which this command also sets to a value; pick one")
            table = nested
        table[parts[-1]] = item
    return patch


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def text(value: str, what: str) -> str:
    """The text of a stimulus: `-` reads it from stdin; empty or blank text is refused."""
    if value == "-":
        value = sys.stdin.read().rstrip("\n")
    if not value.strip():
        raise BadInput(f"the {what} text is empty; give the text to send (or `-` to read it from stdin)")
    return value


def name(value: str, option: str) -> str:
    """A non-blank name given to `option`, stripped."""
    if not value.strip():
        raise BadInput(f"{option} is empty; give a name")
    return value.strip()


def default_author() -> str:
    """Who `say` speaks as by default: the login name, else `operator`."""
    return os.environ.get("USER") or os.environ.get("LOGNAME") or "operator"


def unit(value: str, option: str) -> float:
    """A number from 0 to 1 given to `option`."""
    try:
        number = float(value)
    except ValueError:
        raise BadInput(f"{option} must be a number from 0 to 1, not {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise BadInput(f"{option} must be from 0 to 1, not {value}")
    return number


def claim(supports: str | None, contradicts: str | None, subject: str | None) -> dict[str, str]:
    """A claim body from --supports / --contradicts and --subject."""
    if supports is not None and contradicts is not None:
        raise BadInput("give --supports or --contradicts, not both")
    proposition = supports if supports is not None else contradicts
    if proposition is None or not proposition.strip():
        raise BadInput("the proposition is empty; say what is supported or contradicted")
    if subject is None or not subject.strip():
        raise BadInput("--subject is needed with a proposition: name what it is about")
    return {"proposition": proposition.strip(), "subject": subject.strip(), "stance": "supports" if supports is not None else "contradicts"}


_SPAN_UNITS = "smhd"


def span_ahead(value: str, option: str) -> str:
    """A span of time from now given to `option` (90s, 30m, 8h, 1.5d), more than none; noemad reads it and bounds it."""
    value = value.strip()
    number, unit = value[:-1], value[-1:]
    if unit not in _SPAN_UNITS or not number.replace(".", "", 1).isdigit() or number.startswith(".") or number.endswith("."):
        raise BadInput(f"{option} {value!r} is not a span; write a number and a unit such as 90s, 30m, 8h or 1.5d")
    if float(number) == 0:
        raise BadInput(f"{option} {value} is no time at all; give a span such as 30m or 8h")
    return value


def seconds(value: str, option: str, low: float, high: float) -> float:
    """A number of seconds from `low` to `high` given to `option`."""
    try:
        number = float(value)
    except ValueError:
        raise BadInput(f"{option} {value!r} is not a number of seconds; give one from {low:g} to {high:g}") from None
    if not low <= number <= high:  # NaN fails this too
        raise BadInput(f"{option} {value} is out of range; give a number of seconds from {low:g} to {high:g}")
    return number
