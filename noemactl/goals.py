"""A mind's goals: `goal` (set one, or change one) and `goals` (list them).

Added at the top level by `noemactl.app`. A goal is a stimulus: the mind
applies it, or a change of it, in its next turn.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, mind_views, session, stored

GOAL_STATUSES = ("active", "completed", "abandoned")

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def goal(
    ctx: typer.Context,
    mind: MindArg,
    title: Annotated[
        str | None, typer.Argument(metavar="TITLE", help="A new goal: what the mind should work toward.", show_default=False)
    ] = None,
    goal_id: Annotated[
        int | None, typer.Option("--id", metavar="N", min=1, help="Change goal N instead of setting a new one.", show_default=False)
    ] = None,
    progress: Annotated[
        str | None, typer.Option("--progress", metavar="0..1", help="How far along (1 completes the goal).", show_default=False)
    ] = None,
    complete: Annotated[bool, typer.Option("--complete", help="Complete goal N (with --id).")] = False,
    abandon: Annotated[bool, typer.Option("--abandon", help="Abandon goal N (with --id).")] = False,
    note: Annotated[str | None, typer.Option("--note", metavar="TEXT", help="Why; kept with a change.", show_default=False)] = None,
    json: JsonFlag = False,
) -> None:
    """Set a goal for a mind (TITLE), or change one (--id N with --progress, --complete or --abandon).

    The mind applies it in its next turn; list goals and their ids with `noemactl goals MIND`.
    """
    from noemactl import inputs

    body: dict[str, Any] = {"kind": "goal"}
    if complete and abandon:
        raise BadInput("--complete and --abandon contradict each other; pick one")
    if progress is not None:
        body["progress"] = inputs.unit(progress, "--progress")
    if goal_id is None:
        if title is None:
            raise BadInput("give a TITLE to set a new goal, or --id N to change goal N")
        if complete or abandon:
            raise BadInput(f"{'--complete' if complete else '--abandon'} closes an existing goal; give its --id")
        if note is not None:
            raise BadInput("--note goes with a change (--id); a new goal's TITLE says what it is")
        body["title"] = inputs.text(title, "goal")
    else:
        if title is not None:
            raise BadInput(f"TITLE sets a new goal; to change goal {goal_id} give only --progress, --complete or --abandon")
        if progress is None and not complete and not abandon:
            raise BadInput(f"say how goal {goal_id} changes: --progress, --complete or --abandon")
        body["goal"] = goal_id
        if complete or abandon:
            body["status"] = "completed" if complete else "abandoned"
        if note is not None:
            body["note"] = inputs.text(note, "--note")
    s = session(ctx)
    stored(s, s.client.ingest(mind, body), json)


@commands.command(cls=PlainCommand)
def goals(
    ctx: typer.Context,
    mind: MindArg,
    status: Annotated[str | None, typer.Option("--status", metavar="STATUS", help="active, completed or abandoned.")] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N goals.")] = 100,
    json: JsonFlag = False,
) -> None:
    """List a mind's goals, oldest first: progress, status and who set them."""
    if status is not None and status not in GOAL_STATUSES:
        raise BadInput(f"--status {status!r} is not one of {', '.join(GOAL_STATUSES)}")
    s = session(ctx)
    data = s.client.goals(mind, status, limit)
    s.present(data, json, lambda: mind_views().goals(data["goals"], mind))
