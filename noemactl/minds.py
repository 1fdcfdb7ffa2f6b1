"""A mind's life from the command line: `mind` (create, list, show, set, rm), `pause` and `resume`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from noemactl.beliefs import AtOption, cutoff_line
from noemactl.errors import BadInput, Refused
from noemactl.params import PlainCommand, PlainGroup
from noemactl.shared import JsonFlag, MindArg, mind_views, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()
mind_app = typer.Typer(cls=PlainGroup, help="Create, list, show, change and remove minds.", no_args_is_help=True)
commands.add_typer(mind_app, name="mind")


@mind_app.command("create", cls=PlainCommand)
def mind_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="1-63 lowercase letters, digits, '-' or '_'.", show_default=False)],
    settings: Annotated[
        str | None,
        typer.Option(
            "--settings", metavar="JSON", help='Settings as a JSON object, e.g. \'{"persona": "You are Ada."}\' (keys: see noemad.toml(5)).'
        ),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Create a mind."""
    from noemactl import inputs

    s = session(ctx)
    data = s.client.create_mind(name, inputs.json_object(settings, "--settings", '{"persona": "You are Ada."}'))
    s.present(data, json, lambda: f"created mind {data['name']}")


@mind_app.command("list", cls=PlainCommand)
def mind_list(ctx: typer.Context, json: JsonFlag = False) -> None:
    """List minds."""
    s = session(ctx)
    data = s.client.minds()
    if s.wants_json(json):
        s.output.json(data)
        return
    from noemactl import mind_view

    if data["minds"]:
        s.output.show(*mind_view.minds(data["minds"]))
    else:
        s.output.note("no minds yet; create one with `noemactl mind create NAME`")


@mind_app.command("show", cls=PlainCommand)
def mind_show(ctx: typer.Context, name: MindArg, at: AtOption = None, json: JsonFlag = False) -> None:
    """Show a mind: its fields and its recent events; with --at, as it stood then (its beliefs, memories and narrative then)."""
    s = session(ctx)
    data = s.client.mind(name, at)
    if at is not None:
        s.present(data, json, lambda: [cutoff_line(name, data["at"]), *mind_views().mind_then(data)])
        return
    s.present(data, json, lambda: mind_views().mind(data, s.output.width if s.output.terminal else None))


@mind_app.command("set", cls=PlainCommand)
def mind_set(
    ctx: typer.Context,
    name: MindArg,
    key: Annotated[
        str | None,
        typer.Argument(metavar="KEY", help="The setting, dotted for a table's key (models.respond.model).", show_default=False),
    ] = None,
    value: Annotated[
        str | None, typer.Argument(metavar="VALUE", help="Its value: JSON if it parses as JSON (2, true, 0.5), else the text.", show_default=False)
    ] = None,
    unset: Annotated[
        list[str] | None,
        typer.Option("--unset", metavar="KEY", help="Remove KEY from the mind's settings: the file's or the default applies again (repeatable)."),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Change a live mind's settings; its history stays and its next turn uses them.

    Recorded as a settings_changed event with each key's old and new value.
    """
    from noemactl import inputs

    s = session(ctx)
    patch = inputs.settings_patch(key, value, unset or [])
    data = s.client.change_mind(name, patch)
    s.present(data, json, lambda: f"settings of {data['name']}: {mind_views().settings(data['settings'])}")


@mind_app.command("rm", cls=PlainCommand)
def mind_rm(
    ctx: typer.Context,
    name: MindArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Remove without asking (needed when stdin is not a terminal).")] = False,
    json: JsonFlag = False,
) -> None:
    """Remove a mind and everything it holds, for good.

    Asks you to type the mind's name unless --yes is given.
    """
    s = session(ctx)
    if not yes:
        if not sys.stdin.isatty():
            raise BadInput(
                f"refusing to remove mind {name!r} without confirmation, and stdin is not a terminal to ask on;"
                " pass --yes to remove it and all its events"
            )
        from noemactl.render import plural

        count = s.client.mind(name)["events"]
        answer = s.output.ask(f"This removes mind {name!r} and its {plural(count, 'event')} for good. Type its name to confirm: ")
        if answer.strip() != name:
            raise Refused(f"you typed {answer.strip()!r}, not {name!r}; nothing was removed")
    data = s.client.delete_mind(name)
    if s.wants_json(json):
        s.output.json(data)
    else:
        from noemactl.render import plural

        s.output.show(f"removed mind {data['name']} and its {plural(data['events_removed'], 'event')}")


@commands.command(cls=PlainCommand)
def pause(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """Pause a mind: it stores what arrives but takes no turns and makes no auxiliary model calls."""
    _set_paused(ctx, mind, True, json)


@commands.command(cls=PlainCommand)
def resume(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """Resume a paused mind: it takes one turn over everything that arrived meanwhile."""
    _set_paused(ctx, mind, False, json)


def _set_paused(ctx: typer.Context, mind: str, paused: bool, json: bool) -> None:
    s = session(ctx)
    data = s.client.set_paused(mind, paused)
    s.present(data, json, lambda: f"mind {data['name']} is {'paused' if paused else 'running again'} (mode {data['mode']})")
