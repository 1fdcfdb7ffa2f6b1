"""`noemactl ui`: open noemad's dashboard through a loopback proxy.

Added at the top level by `noemactl.app`. The proxy, and why it is safe to
leave running, is `noemactl.ui_proxy`, imported when the command runs (it
needs httpx and asyncio, which the rest of noemactl's start-up does without).
"""

from __future__ import annotations

from typing import Annotated

import typer

from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.session import Session
from noemactl.shared import session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", metavar="N", min=0, max=65535, help="Listen on this port of 127.0.0.1 (0: any free one).")] = 0,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the address in the default browser too.")] = False,
) -> None:
    """Open noemad's dashboard: a proxy on 127.0.0.1 that prints an address with a token to open in a browser.

    It forwards the dashboard's pages and /api/v1 to noemad's socket as the user running it, and nothing else. The token in the address becomes a cookie; a request with neither is refused, and a change needs a request from the dashboard's own pages. Stop it with Ctrl-C.
    """
    from noemactl import ui_proxy as proxy

    s = session(ctx)
    s.client.status()  # noemad must answer before the address is handed out
    try:
        proxy.serve(s.socket, port, open_browser, lambda url: _announce(s, url))
    except OSError as exc:
        raise BadInput(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); choose another --port or leave it out for a free one") from None


def _announce(s: Session, url: str) -> None:
    typer.echo(url)  # stdout, whole on one line: the address to open
    s.output.note("open it in a browser on this machine; Ctrl-C stops the proxy")
