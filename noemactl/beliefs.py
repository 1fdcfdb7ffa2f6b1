"""`noemactl beliefs MIND [--at TIME]`, `noemactl belief ID [--history]` and `noemactl changes MIND --since T1`.

A mind's beliefs now or as they stood at a time, one belief with its
evidence or every change of it, and what the mind changed its mind about in
a window. Added at the top level by `noemactl.app` when that module loads. A
TIME is an event id, a span back from now (30m, 24h, 3d) or an ISO date or
time; noemad reads each answer from the events up to then.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import RenderableType
from rich.text import Text

from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, mind_views, render_views, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

TIME_HELP = "an event id, a span back from now (30m, 24h, 3d) or an ISO date or time"
AtOption = Annotated[str | None, typer.Option("--at", metavar="TIME", help=f"As the mind stood then: {TIME_HELP}.")]


@commands.command("beliefs", cls=PlainCommand)
def beliefs(
    ctx: typer.Context,
    mind: MindArg,
    subject: Annotated[str | None, typer.Option("--subject", metavar="SUBJECT", help="Only beliefs about this subject.")] = None,
    status: Annotated[str | None, typer.Option("--status", metavar="STATUS", help="active, contested, rejected or pinned.")] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N beliefs.")] = 100,
    at: AtOption = None,
    json: JsonFlag = False,
) -> None:
    """List a mind's beliefs, most confident first; with --at, each as it stood then (created later: absent; rejected since: as they were)."""
    if status is not None and status not in ("active", "contested", "rejected", "pinned"):
        raise BadInput(f"--status {status!r} is not one of active, contested, rejected, pinned")
    s = session(ctx)
    data = s.client.beliefs(mind, subject, status, limit, at)
    if at is None:
        s.present(data, json, lambda: mind_views().beliefs(data["beliefs"], mind))
        return
    s.present(data, json, lambda: [cutoff_line(mind, data["at"]), *mind_views().beliefs(data["beliefs"], mind)])


@commands.command("belief", cls=PlainCommand)
def belief(
    ctx: typer.Context,
    belief_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The belief's id.", show_default=False)],
    history: Annotated[bool, typer.Option("--history", help="Every change of its confidence and status: the event, what was behind it, and who.")] = False,
    json: JsonFlag = False,
) -> None:
    """Show a belief with its evidence, and how to walk its timeline; or, with --history, every change of it."""
    s = session(ctx)
    if history:
        data = s.client.belief_history(belief_id)
        s.present(data, json, lambda: history_view(data))
        return
    data = s.client.belief(belief_id)
    s.present(data, json, lambda: mind_views().belief(data))


@commands.command("changes", cls=PlainCommand)
def changes(
    ctx: typer.Context,
    mind: MindArg,
    since: Annotated[str, typer.Option("--since", metavar="TIME", help=f"The window's start: {TIME_HELP}.", show_default=False)],
    until: Annotated[str | None, typer.Option("--until", metavar="TIME", help="The window's end (default: now).")] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", metavar="STEP", min=0.0, max=1.0, help="How far a belief's confidence must move to be named (default 0.2).")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """What a mind changed its mind about in a window: beliefs created, moved, contested or rejected; memories retracted; lessons learnt; each with its cause."""
    s = session(ctx)
    data = s.client.changes(mind, since, until, threshold)
    s.present(data, json, lambda: changes_view(data))


def _at(cut: dict[str, Any]) -> str:
    if not cut["event_id"]:
        return "before its first event"
    return f"event #{cut['event_id']} ({render_views().when(cut['at'])})"


def cutoff_line(mind: str, cut: dict[str, Any]) -> Text:
    """Where an "as of" answer stands."""
    return Text(f"{mind} as of {_at(cut)}", style="bold")


def _cause(row: dict[str, Any]) -> str:
    if row.get("cause") is None:
        return ""
    return f"#{row['cause']} {row.get('cause_kind') or '(archived)'}"


def _evidence(step: dict[str, Any]) -> str:
    item = step.get("evidence")
    if not item:
        return step.get("reason") or ""
    if "withdrawn" in item:
        return f"withdrew {len(item['withdrawn'])} item(s)" + (f" of warning {step['warning']}" if step.get("warning") else "")
    if "count" in item:
        return f"{item['count']} items (+{item['support']} -{item['contradict']})"
    return f"{item['stance']} from {item['source']} (weight {item['weight']:.2f}, credibility {item['credibility']:.2f})"


def history_view(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl belief ID --history`: one line per change, oldest first."""
    r = render_views()
    head = Text.assemble((f"belief #{data['id']} ", "bold"), (data["proposition"], "bold cyan"), f"  ({data['mind']})")
    rows = [
        [
            f"#{st['event_id']}", r.when(st["at"]), f"{st['confidence_from']:.2f} → {st['confidence_to']:.2f}",
            st["status_to"] if st["status_from"] == st["status_to"] else f"{st['status_from']} → {st['status_to']}",
            f"+{st['support']} -{st['contradict']}", st["by"], st["actor"], _cause(st), _evidence(st),
        ]
        for st in data["steps"]
    ]
    return [head, *r.columns(["EVENT", "AT", "CONFIDENCE", "STATUS", "EVIDENCE", "BY", "ACTOR", "CAUSE", "BEHIND IT"], rows)]


def changes_view(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl changes MIND --since T`: what changed, beliefs then memories, in the order it happened."""
    r = render_views()
    out: list[RenderableType] = [Text(f"{data['mind']} from {_at(data['since'])} to {_at(data['until'])}", style="bold")]
    if not data["beliefs"] and not data["memories"]:
        out.append(Text(f"no belief created, moved by more than {data['threshold']:g}, contested or rejected; no memory retracted, no lesson learnt", style="dim"))
        return out
    if data["beliefs"]:
        out.append(Text("beliefs", style="bold"))
        out.extend(
            r.columns(
                ["WHAT", "BELIEF", "CONFIDENCE", "STATUS", "EVENT", "CAUSE", "PROPOSITION"],
                [
                    [
                        m["what"], f"#{m['belief_id']}", f"{m['confidence_from']:.2f} → {m['confidence_to']:.2f}",
                        m["status_to"] if m["status_from"] == m["status_to"] else f"{m['status_from']} → {m['status_to']}",
                        f"#{m['event_id']}", _cause(m), m["proposition"],
                    ]
                    for m in data["beliefs"]
                ],
            )
        )
    if data["memories"]:
        out.append(Text("memories", style="bold"))
        out.extend(
            r.columns(
                ["WHAT", "MEMORY", "EVENT", "ACTOR", "CAUSE", "TEXT"],
                [
                    [m["what"], f"#{m['memory_id']}", f"#{m['event_id']}", m["actor"], _cause(m),
                     m["text"][:80] + (f" (why: {m['reason'][:80]})" if m.get("reason") else "")]
                    for m in data["memories"]
                ],
            )
        )
    return out
