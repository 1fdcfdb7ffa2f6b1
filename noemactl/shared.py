"""What every command module shares: the --json flag, the MIND argument with its completion, the invocation's session, and how a stored stimulus is reported.

Each command module (`noemactl.tell`, `gate`, `backup`, ...) owns its commands
and imports these from here; the root app (`noemactl.app`) adds every module's
commands, so no module imports the root back.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noemactl.session import Session


def complete_mind(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion for mind names: ask noemad, quietly give nothing if it does not answer."""
    try:
        from noemactl.client import Client, resolve_socket

        with Client(resolve_socket(ctx.find_root().params.get("socket")), timeout=2) as client:
            names = [m["name"] for m in client.minds()["minds"]]
    except Exception:
        return []
    return [name for name in names if name.startswith(incomplete)]


JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON (as noemad answers it) instead of the human view.")]
MindArg = Annotated[
    str, typer.Argument(metavar="MIND", help="The mind's name.", autocompletion=complete_mind, show_default=False)
]


def session(ctx: typer.Context) -> Session:
    """The invocation's shared state, made by the global callback."""
    return ctx.ensure_object(Session)


def stored(s: Session, event: dict[str, Any], json: bool) -> None:
    """Say which event noemad stored for a stimulus (its id and kind), or print it whole with --json."""
    s.present(event, json, lambda: f"stored event {event['id']} ({event['kind']})")


# The views, each imported when a human view is shown (not for --json): a command hands
# `s.present` a lambda that calls one of these.


def render_views() -> Any:
    """What every view shares (`noemactl.render`): when, columns, plural ..."""
    from noemactl import render

    return render


def daemon_views() -> Any:
    """The daemon's views (`noemactl.daemon_view`): status, replica, usage."""
    from noemactl import daemon_view

    return daemon_view


def mind_views() -> Any:
    """Views of minds and what a mind holds (`noemactl.mind_view`)."""
    from noemactl import mind_view

    return mind_view


def jobs_views() -> Any:
    """Views of background jobs (`noemactl.jobs_view`)."""
    from noemactl import jobs_view

    return jobs_view
