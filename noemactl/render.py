"""What every human view shares: counts, times, durations, clipping, kind colours, columns and fields; and the one-line view of an event.

The views are beside it, each named for what it shows: `daemon_view` (status,
replica, usage), `mind_view` (minds and what a mind holds), `jobs_view`,
`gate_view`, `timeline_view`. Each function takes the daemon's JSON and
returns rich renderables. User text is always wrapped in `Text` (never parsed
as markup). Styles vanish when stdout is not a terminal or `NO_COLOR` is set,
so the same views serve pipes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text

ELLIPSIS = "…"
KIND_STYLES = {
    "message": "green",
    "observation": "yellow",
    "reply": "bright_green",
    "mind_created": "bright_blue",
}


def plural(count: int, noun: str) -> str:
    """`1 event`, `2 events`."""
    return f"{count} {noun if count == 1 else noun + 's'}"


def when(at: str | None) -> str:
    """An event time as `YYYY-MM-DD HH:MM:SS` (UTC, as stored); unknown shapes as given."""
    if not at:
        return "-"
    if len(at) >= 19 and at[10] == "T":
        return f"{at[:10]} {at[11:19]}"
    return at


def duration(seconds: float) -> str:
    """`3d 4h`, `2h 5m`, `4m 12s`, `9s`."""
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def clip(text: str, width: int | None) -> str:
    """One line of `text`; cut to `width` characters with an ellipsis when a width is given."""
    line = " ".join(text.split())
    if width is not None and len(line) > width:
        return line[: max(width - 1, 0)] + ELLIPSIS
    return line


def kind_style(kind: str) -> str:
    """The colour of an event kind."""
    if kind in KIND_STYLES:
        return KIND_STYLES[kind]
    if kind.startswith("cycle_"):
        return "blue"
    return "cyan"


def columns(headers: Sequence[str], rows: Sequence[Sequence[str | Text]], right: Sequence[int] = ()) -> list[Text]:
    """Aligned columns with a bold header line; columns in `right` are right-aligned.

    Built by hand rather than with rich's Table so piped lines carry no
    trailing padding.
    """
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
    widths = [max([len(h), *(row[i].cell_len for row in cells)]) for i, h in enumerate(headers)]

    def line(items: Sequence[Text], style: str = "") -> Text:
        out = Text(style=style, no_wrap=True)
        for i, item in enumerate(items):
            pad = " " * (widths[i] - item.cell_len)
            if i:
                out.append("  ")
            if i in right:
                out.append(pad)
            out.append_text(item)
            if i not in right and i < len(items) - 1:
                out.append(pad)
        return out

    return [line([Text(h) for h in headers], "bold"), *(line(row) for row in cells)]


def fields(rows: Iterable[tuple[str, str | Text]]) -> list[Text]:
    """Key-value lines, the keys bold and padded to one width."""
    rows = list(rows)
    width = max(len(key) for key, _ in rows) + 2
    return [Text.assemble((key.ljust(width), "bold"), value) for key, value in rows]


# events ---------------------------------------------------------------------


def stored_by(event: dict[str, Any]) -> str | None:
    """`stored by operator:root` for a message (observation, assertion) an operator's connection stored; None otherwise."""
    data = event.get("data")
    operator = data.get("operator") if isinstance(data, dict) else None
    return f"stored by {operator}" if isinstance(operator, str) and operator != event.get("actor") else None


def links(event: dict[str, Any]) -> str:
    """Who stored it and the links it was written with: `stored by operator:root; caused by #2; parents #2, #5; cites #7, memory 3`."""
    parts = [by] if (by := stored_by(event)) else []
    if event.get("causation_id") is not None:
        parts.append(f"caused by #{event['causation_id']}")
    if event.get("parents"):
        parts.append("parents " + ", ".join(f"#{p}" for p in event["parents"]))
    refs = [f"#{r['id']}" if r["type"] == "event" else f"{r['type'].replace('_', ' ')} {r['id']}" for r in event.get("refs") or []]
    if refs:
        parts.append("cites " + ", ".join(refs))
    return "; ".join(parts)


ID_WIDTH, KIND_WIDTH, ACTOR_WIDTH, CHANNEL_WIDTH = 5, 15, 16, 6
MIN_TEXT = 20


def event_line(event: dict[str, Any], width: int | None = None) -> Text:
    """One event on one line: id, time, kind, actor, channel, text and links.

    With a `width` (a terminal), the text is cut so the line fits.
    """
    line = Text(no_wrap=True)
    line.append(f"#{event['id']}".ljust(ID_WIDTH + 1), style="bold")
    line.append(" " + when(event.get("at")) + "  ", style="dim")
    line.append(event["kind"].ljust(KIND_WIDTH), style=kind_style(event["kind"]))
    line.append("  " + event["actor"].ljust(ACTOR_WIDTH), style="magenta")
    line.append("  " + (event.get("channel") or "-").ljust(CHANNEL_WIDTH))
    linked = links(event)
    tail = f"  ({linked})" if linked else ""
    if event.get("text"):
        room = None if width is None else max(width - len(line) - len(tail) - 4, MIN_TEXT)
        line.append('  "' + clip(event["text"], room) + '"')
    if tail:
        line.append(tail, style="dim")
    line.rstrip()
    return line


def event_lines(events: Sequence[dict[str, Any]], width: int | None) -> list[Text]:
    """One `event_line` per event."""
    return [event_line(e, width) for e in events]
