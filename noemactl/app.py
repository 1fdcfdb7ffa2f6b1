"""noemactl's root: the app, its global options, the command modules it adds, and `main()`.

Every command lives in a module named for what it is about (`tell`: say,
observe, assert, correct, trust; `memories`; `goals`; `predictions`; `events`;
`timeline`; `daemon`: status, usage, reload ...), which owns its own Typer;
this module adds each at the top level, so none imports the root back.
Commands stay thin: the work lives in `client` (HTTP over the socket),
`inputs` (checks before sending), `output` (stdout/stderr) and the views,
imported inside the commands so `--version` and shell completion start
without httpx.

`app` is importable as `noemactl.app:app` with every command registered, for
the completion scripts in `completions/` and the man pages in `man/`.
"""

import sys
from typing import Annotated

import typer

from noemactl import (
    archive,
    background,
    backup,
    beliefs,
    connectors,
    daemon,
    demo,
    events,
    gate,
    goals,
    memories,
    minds,
    narrative,
    notifications,
    predictions,
    tell,
    timeline,
    transfer,
    ui,
)
from noemactl.errors import CtlError
from noemactl.params import PlainGroup
from noemactl.session import Session

HELP = """Control noemad, the daemon that runs Noema's minds.

noemactl talks to noemad over its Unix socket: --socket, else NOEMA_SOCKET, else NOEMA_HOME/run/noemad.sock, else RUNTIME_DIRECTORY/noemad.sock, else the user's runtime directory (or /run/noema/noemad.sock, the system service's, when only that exists). Data goes to stdout, notes and errors to stderr; --json prints stable JSON for scripts. Text from minds is shown, never obeyed: its control characters (ESC, C1) are printed as visible symbols; --json keeps them, as JSON escapes.

Exit status: 0 done; 1 failed (noemad failed, a job failed, the connection broke); 2 bad input (the command line, or what noemad refused as invalid); 3 noemad is not reachable; 4 not found (no such mind, event, belief ...); 5 refused (a conflict with what exists). With --json an error is a JSON problem document on stderr (type, title, status, detail).

NO_COLOR (any non-empty value) turns off colour and bold on a terminal.
"""

app = typer.Typer(
    name="noemactl",
    cls=PlainGroup,
    help=HELP,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    # Plain help and errors, as git and systemctl print them: typer's rich mode
    # draws boxed panels, with bold kept under NO_COLOR. main() prints errors.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


# shared parameters ---------------------------------------------------------------


def _show_version(value: bool) -> None:
    if value:
        from noemactl.version import cli_version

        typer.echo(f"noemactl {cli_version()}")
        raise typer.Exit()


@app.callback()
def global_options(
    ctx: typer.Context,
    socket: Annotated[
        str | None,
        typer.Option(
            "--socket",
            envvar="NOEMA_SOCKET",
            metavar="PATH",
            help="noemad's Unix socket (default: found as noemad finds it).",
            show_default=False,
        ),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of the human view.")] = False,
    version: Annotated[
        bool, typer.Option("--version", help="Print noemactl's version and exit.", callback=_show_version, is_eager=True)
    ] = False,
) -> None:
    """Global options, given before the command."""
    state = Session(socket_flag=socket or None, json=json)
    ctx.obj = state
    ctx.call_on_close(state.close)


# The commands, each module's at the top level (its Typer has no name of its own), in the order
# `noemactl --help` lists them: the daemon, minds, what you tell a mind and what it holds, its
# history, its background work and gate, moving its data, then the dashboard and the demo.
for _commands in (
    daemon.commands,
    minds.commands,
    tell.commands,
    memories.commands,
    beliefs.commands,
    goals.commands,
    predictions.commands,
    narrative.commands,
    notifications.commands,
    events.commands,
    timeline.commands,
    background.commands,
    gate.commands,
    backup.commands,
    archive.commands,
    transfer.commands,
    connectors.commands,
    ui.commands,
    demo.commands,
):
    app.add_typer(_commands)


# entry point -------------------------------------------------------------------


def main() -> None:
    """Run noemactl: an error prints one sentence (or, with --json, a problem document) on stderr and exits 1-5."""
    from noemactl.errors import UsageError
    from noemactl.output import report_error

    as_json = "--json" in sys.argv[1 : sys.argv.index("--") if "--" in sys.argv else None]
    try:
        code = app(prog_name="noemactl", standalone_mode=False)
    except CtlError as exc:
        report_error(exc, as_json)
        sys.exit(exc.exit_code)
    except typer.Abort:
        report_error(CtlError("aborted; nothing more was done"), as_json)
        sys.exit(1)
    except typer.TyperException as exc:  # click's usage errors: a missing argument, an unknown option, a bad value
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            sys.stderr.write(ctx.get_help() + "\n")
            sys.exit(2)
        command = ctx.command_path if ctx is not None else "noemactl"
        report_error(UsageError(exc.format_message() if hasattr(exc, "format_message") else str(exc), command), as_json)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
