"""The one phrasing of a wake rule in words: its behaviour, what it matches, its passthrough and resets.

It reads the JSON shape, as the API answers it, so the dashboard words what
the API gives, and `noemad.rules.shape.describe_behaviour` words a behaviour
for gate-status and the rules' events. noemactl (which imports nothing of
noemad) mirrors it in noemactl/gate_view.py, and tests/test_rules_words.py
holds the two to the same words.
"""

from __future__ import annotations

from typing import Any


def behaviour_words(data: Any) -> str:
    """A behaviour's JSON in a few words: `always`, `debounce 2000 ms`, `rate_limit 5 per 60000 ms by channel`."""
    if isinstance(data, str):
        return data
    if not isinstance(data, dict) or len(data) != 1:
        return str(data)
    ((kind, args),) = data.items()
    args = args or {}
    by = f" by {args['key_by']}" if args.get("key_by") not in (None, "none") else ""
    if kind == "debounce":
        return f"debounce {args.get('ms')} ms"
    if kind == "rate_limit":
        return f"rate_limit {args.get('tokens')} per {args.get('refill_ms')} ms{by}"
    if kind == "passive_sample":
        return f"passive_sample 1 in {args.get('every')}{by}"
    if kind == "judge":
        wait = f", at most {args['max_wait_ms']} ms" if args.get("max_wait_ms") is not None else ""
        said = " with instructions" if args.get("instructions") else ""
        return f"judge after {args.get('debounce_ms')} ms{wait}{said}"
    return str(kind)


def match_words(data: dict[str, Any] | None) -> str:
    """What a rule matches, the fields given only: `kinds message; channel discord:*; flags mention|dm`."""
    data = data or {}
    parts = []
    if data.get("kinds"):
        parts.append("kinds " + ",".join(data["kinds"]))
    for key in ("channel", "author"):
        if data.get(key) not in (None, "*"):
            parts.append(f"{key} {data[key]}")
    if data.get("flags"):
        parts.append("flags " + "|".join(data["flags"]))
    if data.get("text") is not None:
        parts.append(("regex " if data.get("regex") else "text ") + repr(data["text"]))
    for key, label in (("tags_any", "tags any"), ("tags_all", "tags all"), ("tags_none", "tags none")):
        if data.get(key):
            parts.append(f"{label} " + ",".join(data[key]))
    return "; ".join(parts) or "any stimulus"


def extras_words(rule: dict[str, Any]) -> str:
    """A rule's passthrough and resets, when set."""
    parts = []
    if rule.get("passthrough"):
        parts.append("passthrough")
    if rule.get("resets"):
        parts.append("resets " + ",".join(rule["resets"]))
    return "; ".join(parts)
