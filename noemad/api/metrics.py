"""`GET /api/v1/metrics`: the daemon's metrics in the Prometheus text exposition format, version 0.0.4.

Each family has its `# HELP` and `# TYPE` lines, then its samples; label
values are escaped (backslash, double quote, newline) as the format says,
so a mind or role name can never break a line. The families themselves are
read by `noemad.runtime.metrics`.
"""

from __future__ import annotations

import math

from noemad.runtime.metrics import Family

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def number(value: float) -> str:
    """A sample value as the format writes it: integers without a point, +Inf, -Inf, NaN."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def exposition(families: list[Family]) -> str:
    """The text a scraper reads: every family, its help and type, its samples; ends with a newline."""
    lines: list[str] = []
    for family in families:
        lines.append(f"# HELP {family.name} {escape_help(family.help)}")
        lines.append(f"# TYPE {family.name} {family.type}")
        for sample in family.samples:
            labels = ",".join(f'{k}="{escape_label(v)}"' for k, v in sample.labels)
            lines.append(f"{family.name}{sample.suffix}{'{' + labels + '}' if labels else ''} {number(sample.value)}")
    return "\n".join(lines) + "\n"
