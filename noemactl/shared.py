"""What every command module shares: the --json flag, the MIND argument with its completion, and the invocation's session.

Each command module (`noemactl.app`, `gate`, `backup`, `archive`, `ops`) owns its
commands and imports these from here; the root app adds the others' commands,
so no module imports the root back.
"""

from __future__ import annotations

from typing import Annotated

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
