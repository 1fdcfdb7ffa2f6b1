"""A value and a key as TOML writes them: for `--check-config`'s rendering and for naming a key in a sentence."""

from __future__ import annotations

import json
from typing import Any


def toml_value(value: Any) -> str:
    """`value` as TOML writes it (a dict as an inline table; TOML has no null, so an unset key is left out)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table; TOML has no null, so an unset key is left out
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items() if v is not None) + "}"
    return json.dumps(str(value))  # a TOML basic string is a JSON string


def toml_key(key: str) -> str:
    """`key` as TOML writes it: bare when it can be, else quoted."""
    return key if key.replace("-", "").replace("_", "").isalnum() else json.dumps(key)
