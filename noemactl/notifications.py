"""A mind's notifications: `notifications` (list or follow them) and `ack` (acknowledge one).

Added at the top level by `noemactl.app`. A notification's repeats within the
mind's notify_cooldown raise its count instead of notifying again; once
acknowledged, a later repeat notifies anew.
"""

from __future__ import annotations

from typing import Annotated

import typer

from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, mind_views, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


NOTIFICATION_STATUSES = ("open", "acked")
NOTIFICATION_KINDS = ["notification", "notification_suppressed"]


@commands.command(cls=PlainCommand)
def notifications(
    ctx: typer.Context,
    mind: MindArg,
    open_: Annotated[bool, typer.Option("--open", help="Only open notifications (same as --status open).")] = False,
    status: Annotated[str | None, typer.Option("--status", metavar="STATUS", help="open or acked.")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N notifications.", show_default="100")
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Keep printing new notifications and counted repeats as they happen, until Ctrl-C; JSON Lines of their events with --json.",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """List a mind's notifications, newest first: what fired, how often, and whether it was acknowledged.

    Repeats within the mind's notify_cooldown raise a notification's count instead of notifying again.
    """
    if status is not None and status not in NOTIFICATION_STATUSES:
        raise BadInput(f"--status {status!r} is not one of {', '.join(NOTIFICATION_STATUSES)}")
    if open_ and status not in (None, "open"):
        raise BadInput(f"--open and --status {status} contradict each other; pick one")
    s = session(ctx)
    if follow:
        if open_ or status is not None or limit is not None:
            raise BadInput("--follow prints every new notification as it happens; drop --open, --status and --limit")
        from noemactl.events import follow_stream

        follow_stream(s, mind, NOTIFICATION_KINDS, None, None, s.wants_json(json), "notifications")
        return
    wanted = "open" if open_ else status
    data = s.client.notifications(mind, wanted, limit or 100)
    s.present(data, json, lambda: mind_views().notifications(data["notifications"], mind, wanted))


@commands.command(cls=PlainCommand)
def ack(
    ctx: typer.Context,
    notification_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The notification's id.", show_default=False)],
    json: JsonFlag = False,
) -> None:
    """Acknowledge a notification; a later repeat of it notifies anew."""
    s = session(ctx)
    data = s.client.ack(notification_id)
    s.present(data, json, lambda: f"acknowledged notification #{data['id']} ({data['rule']}): {data['title']}")
