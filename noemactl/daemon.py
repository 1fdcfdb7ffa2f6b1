"""The daemon: `status` (its state, or watched), `usage` (model spend), `reload`, `log-level`, `config show`.

Added at the top level by `noemactl.app` when that module loads, so the man pages
and completions see them. Each speaks to noemad through its socket: a reload
asked here takes the path SIGHUP takes, and answers whether it was taken.
"""

from __future__ import annotations

import json as jsonlib
from typing import Annotated, Any

import typer
from rich.text import Text

from noemactl.errors import BadInput, CtlError
from noemactl.params import PlainCommand, PlainGroup
from noemactl.shared import JsonFlag, complete_mind, daemon_views, session
from noemactl.watch import INTERVAL, WATCH_HELP, parse_interval
from noemactl.watch import watch as watch_view

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("toml", "json")

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

config_app = typer.Typer(cls=PlainGroup, help="The daemon's effective config.", no_args_is_help=True)
commands.add_typer(config_app, name="config")


@commands.command(cls=PlainCommand)
def status(
    ctx: typer.Context,
    json: JsonFlag = False,
    watch: Annotated[bool, typer.Option("--watch", "-w", help=WATCH_HELP)] = False,
    interval: Annotated[str, typer.Option("--interval", metavar="SECONDS", help="Seconds between looks with --watch.")] = str(INTERVAL),
    count: Annotated[
        int | None, typer.Option("--count", metavar="N", min=1, help="With --watch, stop after N looks.", show_default=False)
    ] = None,
) -> None:
    """Show noemad's state: version, pid, uptime, socket, database, config, minds, totals."""
    s = session(ctx)
    if watch:
        watch_view(s, s.client.status, lambda data: daemon_views().status(data), parse_interval(interval), count, s.wants_json(json))
        return
    if count is not None:
        raise BadInput("--count goes with --watch")
    data = s.client.status()
    s.present(data, json, lambda: daemon_views().status(data))


@commands.command(cls=PlainCommand)
def usage(
    ctx: typer.Context,
    mind: Annotated[
        str | None,
        typer.Argument(metavar="MIND", help="Only this mind's calls (default: every mind).", autocompletion=complete_mind, show_default=False),
    ] = None,
    by: Annotated[
        str, typer.Option("--by", metavar="GROUP", help="Group by role, model, day or mind.", case_sensitive=False)
    ] = "role",
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="WHEN", help="Only calls from then on: an ISO date or time, or a span back (30m, 24h, 7d).", show_default=False
        ),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Show model spend: calls, tokens four ways, cache hit rate and estimated cost."""
    group = by.lower()
    if group not in ("role", "model", "day", "mind"):
        raise BadInput(f"--by {by!r} is not a grouping; use role, model, day or mind")
    s = session(ctx)
    data = s.client.usage(mind, group, since)
    s.present(data, json, lambda: daemon_views().usage(data))


class ReloadRefused(CtlError):
    """noemad read the file and refused it: the running config is kept (exit 1)."""


@commands.command("reload", cls=PlainCommand)
def reload(ctx: typer.Context, json: JsonFlag = False) -> None:
    """Reload noemad.toml now, as SIGHUP does, and say whether the new config was taken.

    A config that fails validation is refused whole: the running one stays, and the sentence says what to fix (exit 1).
    """
    s = session(ctx)
    data = s.client.reload()
    if s.wants_json(json):
        s.output.json(data)
    elif data["taken"]:
        s.output.show(Text(f"config reloaded from {data['source']} ({data['reloads']} since noemad started)"))
    if not data["taken"]:
        raise ReloadRefused(f"config reload refused: {data['error']}")


def _toml_value(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return jsonlib.dumps(value)
    return jsonlib.dumps(value, separators=(", ", " = ")) if isinstance(value, (dict, list)) else str(value)


def _section_lines(values: list[dict[str, Any]], head: str | None = None) -> list[str]:
    """`key = value  # source` lines grouped under [section] heads, as the file is written."""
    lines: list[str] = []
    section: str | None = head
    if head is not None:
        lines.append(f"[{head}]")
    for item in values:
        where, _, key = item["key"].rpartition(".")
        table = f"{head}.{where}" if head and where else (where or head)
        if table != section:
            if lines:
                lines.append("")
            lines.append(f"[{table}]")
            section = table
        value = item["value"]
        shown = f"# {key} is unset" if value is None else f"{key} = {_toml_value(value)}"
        lines.append(f"{shown}  # {item['source']}")
    return lines


def config_toml(data: dict[str, Any]) -> str:
    """The effective config as TOML, each value followed by its source as a comment."""
    out = [f"# config file: {data['file']}", f"# running config read from: {data['loaded_from']}"]
    if data.get("reload_error"):
        out.append(f"# the newest file was refused (these values still run): {data['reload_error']}")
    for secret in data["secrets"]:
        state = "set" if secret["set"] else "not set"
        why = f": {secret['problem']}" if secret.get("problem") else ""
        out.append(f"# secret {secret['key']}: {state}, from {secret['source']}{why}")
    out.append("")
    out.extend(_section_lines(data["values"]))
    for mind in data["minds"]:
        if mind["values"]:
            out.append("")
            out.extend(_section_lines(mind["values"], f"minds.{mind['mind']}"))
    return "\n".join(out) + "\n"


@config_app.command("show", cls=PlainCommand)
def config_show(
    ctx: typer.Context,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="toml (each value's source as a comment) or json.")] = "toml",
    json: JsonFlag = False,
) -> None:
    """Show the effective config with each value's source: default, noemad.toml, stored (a mind's own), command line.

    Secrets (the Anthropic API key) are never shown: only whether they are set, and from which variable or file.
    """
    chosen = fmt.lower()
    if chosen not in FORMATS:
        raise BadInput(f"--format {fmt!r} is not a format; use toml or json")
    s = session(ctx)
    data = s.client.config()
    if chosen == "json" or s.wants_json(json):
        s.output.json(data)
        return
    s.output.show(Text(config_toml(data).rstrip("\n"), no_wrap=True))  # Text: a [section] is not markup


@commands.command("log-level", cls=PlainCommand)
def log_level(
    ctx: typer.Context,
    level: Annotated[
        str | None,
        typer.Argument(metavar="LEVEL", help="debug, info, warning or error (default: show the level).", show_default=False),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Show or change the level noemad logs at, at once, without a restart.

    The change lasts until the next one, or a reload of a config that sets [daemon] log_level; a restart starts at the config's level.
    """
    if level is not None and level.lower() not in LEVELS:
        raise BadInput(f"{level!r} is not a log level; use debug, info, warning or error")
    s = session(ctx)
    data = s.client.log_level(level.lower() if level else None)
    if s.wants_json(json):
        s.output.json(data)
        return
    previous = data.get("previous")
    if level is None or previous is None:
        s.output.show(Text(f"log level {data['level']} ({data['source']})"))
    elif previous == data["level"]:
        s.output.show(Text(f"log level already {data['level']}"))
    else:
        s.output.show(Text(f"log level {data['level']} (was {previous})"))
