"""`noemactl timeline ID`: why an event happened and what followed, as a tree, JSON or Graphviz DOT.

Added at the top level by `noemactl.app`. noemad walks the links; the tree is
drawn by `noemactl.timeline_view` and the DOT by `noemactl.dot`, each imported
when it is shown.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def timeline(
    ctx: typer.Context,
    event_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The event to walk around.", show_default=False)],
    back: Annotated[
        int | None, typer.Option("--back", metavar="N", min=0, max=6, help="Hops toward causes.", show_default="noemad's max_hops, 6")
    ] = None,
    forward: Annotated[
        int | None, typer.Option("--forward", metavar="N", min=0, max=6, help="Hops toward consequences.", show_default="noemad's max_hops, 6")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, max=200, help="Most events in the walk.", show_default="noemad's max_events, 200")
    ] = None,
    json: JsonFlag = False,
    dot: Annotated[bool, typer.Option("--dot", help="Print Graphviz DOT, e.g. for `dot -Tsvg`.")] = False,
) -> None:
    """Show why an event happened and what followed: its causes and consequences as a tree."""
    s = session(ctx)
    as_json = s.wants_json(json)
    if as_json and dot:
        raise BadInput("--json and --dot are two different outputs; pick one")
    graph = s.client.chain(event_id, back, forward, limit)
    if as_json:
        s.output.json(graph)
    elif dot:
        from noemactl.dot import to_dot

        sys.stdout.write(to_dot(graph))
    else:
        from noemactl.timeline_view import tree

        s.output.show(*tree(graph))
