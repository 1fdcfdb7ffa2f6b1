"""`noemactl archive MIND --older-than SPAN` and `noemactl archives MIND`: move a mind's old events into an archive file.

Added at the top level by `noemactl.app` when that module loads. noemad does the
work (it owns the store and writes the file under its data directory); this
side asks, waits for the run to end, and says what went, what stayed and why.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from noemactl.shared import JsonFlag, MindArg, session
from noemactl.params import PlainCommand


# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

@commands.command("archive", cls=PlainCommand)
def archive(
    ctx: typer.Context,
    mind: MindArg,
    older_than: Annotated[
        str,
        typer.Option("--older-than", metavar="SPAN", help="Archive events older than this span, e.g. 180d or 26w (at least the mind's consolidation window, 30d by default).", show_default=False),
    ],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would go and what would stay; write nothing.")] = False,
    json: JsonFlag = False,
) -> None:
    """Move a mind's events older than SPAN out of the store, into an archive file under noemad's data directory.

    What the mind still stands on stays however old: a belief's evidence and history, the events of goals, predictions
    and notifications, a pending self-wake's, generalisations' history, stimuli no cycle has taken, and whole cycles
    that keep one of their events. Where a kept event linked to an archived one, `noemactl timeline` stops there and
    names the file; `noemactl timeline ID` of an archived event walks it inside the file. Try --dry-run first.
    """
    s = session(ctx)
    data = s.client.archive(mind, older_than, dry_run)
    s.present(data, json, lambda: outcome_lines(data))


@commands.command("archives", cls=PlainCommand)
def archives(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """List a mind's archives: each run's file, cut-off, events moved and links cut."""
    s = session(ctx)
    data = s.client.archives(mind)
    s.present(data, json, lambda: archives_table(mind, data))


def _n(value: int) -> str:
    return f"{value:,}"


def outcome_lines(data: dict[str, Any]) -> list[Text]:
    """What a run did (or, dry, would do), in sentences."""
    before = data["before"][:10]
    kept = data["pinned"] + data["in_kept_cycles"]
    parts = [f"{_n(data['pinned'])} held by what the mind stands on" if data["pinned"] else "",
             f"{_n(data['in_kept_cycles'])} in cycles that keep an event" if data["in_kept_cycles"] else ""]
    why = ", ".join(p for p in parts if p) or "none is held"
    if data["dry_run"]:
        return [
            Text(f"would archive {_n(data['events'])} events of {data['mind']} older than {before} and cut {_n(data['cuts'])} links;"
                 f" {_n(kept)} old events would stay ({why})"),
            Text("nothing was written; run it again without --dry-run to archive", style="dim"),
        ]
    made = data.get("archive")
    if made is None:
        return [Text(f"nothing of {data['mind']} older than {before} can go: {_n(kept)} old events stay ({why})")]
    lines = [
        Text(f"archived {_n(data['events'])} events of {data['mind']} older than {before} into {made['path']}"),
        Text(f"{_n(data['cuts'])} links cut (the timeline stops there and names the file); {_n(kept)} old events stay ({why})"),
    ]
    if data.get("by_kind"):
        kinds = ", ".join(f"{kind} {_n(n)}" for kind, n in sorted(data["by_kind"].items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(Text(f"by kind: {kinds}", style="dim"))
    return lines


def archives_table(mind: str, rows: list[dict[str, Any]]) -> Any:
    """A mind's archives as a table, oldest first."""
    if not rows:
        return Text(f"{mind} has no archives; `noemactl archive {mind} --older-than 180d --dry-run` shows what one would take")
    table = Table(box=None, pad_edge=False)
    for column, justify in (("id", "right"), ("before", "left"), ("events", "right"), ("ids", "left"), ("cuts", "right"), ("by", "left"), ("finished", "left"), ("file", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        ids = f"#{row['first_id']}–#{row['last_id']}" if row.get("first_id") is not None else "-"
        table.add_row(
            str(row["id"]), row["before"][:10], _n(row["events"]), ids, _n(row["cuts"]), row["actor"],
            (row.get("finished_at") or "unfinished")[:19].replace("T", " "), row["path"],
        )
    return table
