"""A mind's memories: `remember` (give it one), `memories` (list or search them) and `retract` (take one back).

Added at the top level by `noemactl.app`. Episodes come only from what the mind
perceives; an operator gives semantic and procedural memories, and retracts
any: a retracted memory stays listed, marked, and is never recalled again.
"""

from __future__ import annotations

from typing import Annotated

import typer

from noemactl.beliefs import AtOption
from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, mind_views, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def remember(
    ctx: typer.Context,
    mind: MindArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What to remember; '-' reads it from stdin.", show_default=False)],
    kind: Annotated[str, typer.Option("--kind", metavar="KIND", help="semantic (a fact) or procedural (a way of doing things).")] = "semantic",
    derived_from: Annotated[
        list[int] | None, typer.Option("--from-memory", metavar="ID", min=1, help="A memory this one generalises (repeatable).")
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", metavar="NAME", help="A name for it, such as legal (repeatable); governance reads the tags of what a turn recalled.")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Give a mind a memory as an operator; episodes come only from what it perceives."""
    from noemactl import inputs

    if kind not in ("semantic", "procedural"):
        raise BadInput(f"--kind {kind!r} is not semantic or procedural; episodes come only from stimuli")
    body = {"kind": kind, "text": inputs.text(text, "memory"), "derived_from": derived_from or [], "tags": tag or []}
    s = session(ctx)
    data = s.client.remember(mind, body)
    s.present(data, json, lambda: f"remembered #{data['id']} ({data['kind']}, importance {data['importance']:.2f})")


@commands.command(cls=PlainCommand)
def memories(
    ctx: typer.Context,
    mind: MindArg,
    search: Annotated[str | None, typer.Option("--search", metavar="TEXT", help="Full-text search, best matches first (active memories only).")] = None,
    kind: Annotated[str | None, typer.Option("--kind", metavar="KIND", help="episodic, semantic or procedural.")] = None,
    retracted: Annotated[bool, typer.Option("--retracted", help="Only retracted memories (no longer recalled).")] = False,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N memories.")] = 100,
    at: AtOption = None,
    json: JsonFlag = False,
) -> None:
    """List a mind's memories, or search them; retracted ones are listed, marked, and never recalled. With --at, as they stood then."""
    if kind is not None and kind not in ("episodic", "semantic", "procedural"):
        raise BadInput(f"--kind {kind!r} is not one of episodic, semantic, procedural")
    if retracted and search is not None:
        raise BadInput("--search finds active memories only; drop --retracted or --search")
    if at is not None and search is not None:
        raise BadInput("--search looks at today's memories; drop --at or --search")
    s = session(ctx)
    data = s.client.memories(mind, search, kind, limit, "retracted" if retracted else None, at)
    s.present(data, json, lambda: mind_views().memories(data["memories"], mind, search))


@commands.command(cls=PlainCommand)
def retract(
    ctx: typer.Context,
    mind: MindArg,
    memory_id: Annotated[int, typer.Argument(metavar="MEMORY_ID", min=1, help="The memory to retract.", show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is wrong; kept with the retraction.", show_default=False)],
    json: JsonFlag = False,
) -> None:
    """Retract a memory: it is no longer recalled or searched, stays listed as retracted, and the retraction is an event."""
    if not reason.strip():
        raise BadInput("--reason is empty; say why the memory is wrong")
    s = session(ctx)
    found = s.client.memory(memory_id)
    if found["mind"] != mind:
        raise BadInput(f"memory #{memory_id} belongs to {found['mind']}, not {mind}; nothing was retracted")
    data = s.client.retract(memory_id, reason)
    s.present(
        data,
        json,
        lambda: f"retracted memory #{data['memory']['id']}: {data['memory']['text']}\nwalk it: noemactl timeline {data['event']['id']}",
    )
