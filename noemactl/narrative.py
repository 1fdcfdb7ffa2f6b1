"""`noemactl narrative MIND [--at TIME]`: what a mind would say it is doing and why.

Added at the top level by `noemactl.app`. noemad writes the narrative after a
cycle that changes it; this shows the newest, or the one that stood at a time.
"""

from __future__ import annotations

import typer

from noemactl.beliefs import AtOption
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def narrative(ctx: typer.Context, mind: MindArg, at: AtOption = None, json: JsonFlag = False) -> None:
    """Show what a mind would say it is doing and why: its newest narrative, then its five parts.

    The parts are doing, why, recently, resolving and next; the prose is the narrate model's rephrasing when the mind's settings ask for one and it added nothing, else the plain rendering. With --at, the narrative as it read then.
    """
    s = session(ctx)
    data = s.client.narrative(mind, at)
    if s.wants_json(json):
        s.output.json(data)
        return
    if data["event_id"] is None:
        s.output.note(f"{mind} had no narrative by then" if at is not None else f"{mind} has no narrative yet; one is written after a cycle that changes what it would say")
        return
    from noemactl import mind_view

    s.output.show(*mind_view.narrative(data))
