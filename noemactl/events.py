"""`noemactl events`: a mind's events read as people read logs, newest last, then followed.

The command is added at the top level by `noemactl.app`; `notifications
--follow` follows with the same stream.

The daemon filters (kinds checked, `--grep` searched, `--tail` counting
matches); a follower prints the backlog the daemon answered, then streams
after the id the daemon read up to, so nothing is missed or printed twice.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from noemactl.errors import BadInput, CtlError
from noemactl.params import PlainCommand
from noemactl.session import Session
from noemactl.shared import JsonFlag, MindArg, session

DEFAULT_TAIL = 20
PAGE = 1000  # the daemon's largest page
_SPAN = re.compile(r"\d+[smhd]")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def events(
    ctx: typer.Context,
    mind: MindArg,
    kinds: Annotated[
        list[str] | None, typer.Option("--kind", metavar="KIND", help="Only events of this kind (repeatable); a kind noemad does not know is an error listing the kinds.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="WHEN", help="Only events after this event id, or from this time: a span back (10m, 2h, 3d) or an ISO date or time.", show_default=False
        ),
    ] = None,
    tail: Annotated[
        int | None,
        typer.Option("--tail", "-n", metavar="N", min=0, max=1000, help="The newest N events (of those matching).", show_default="20"),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, max=1000, help="With --since: at most N events, read forward from there.", show_default="100")
    ] = None,
    grep: Annotated[
        str | None, typer.Option("--grep", metavar="TEXT", help="Only events whose text, or a value in their data (not a key), holds TEXT, ignoring case.", show_default=False)
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Print the newest --tail events, then each new one until Ctrl-C (-n 0: new ones only); JSON Lines with --json.",
        ),
    ] = False,
    json: JsonFlag = False,
) -> None:
    """List a mind's newest events, oldest of them first (like tail): id, time, kind, actor, channel, text and links.

    With --since, the events from then on, read forward; with --follow, then each new one as it happens.
    """
    s = session(ctx)
    show(s, mind, kinds or [], since, tail, limit, grep, follow, s.wants_json(json))


def split_since(since: str | None) -> tuple[int, str | None]:
    """`--since` as an event id (digits) or a time the daemon parses (ISO, or a span back: 10m, 2h, 3d)."""
    if since is None:
        return 0, None
    text = since.strip()
    if text.isdigit():
        return int(text), None
    # The daemon parses the time; the shape is checked here so a slip is a usage error and nothing is sent.
    if not (_SPAN.fullmatch(text) or _ISO.match(text)):
        raise BadInput(f"--since {text!r} is not an event id (42), a span back (10m, 2h, 3d) or an ISO date or time (2026-01-31T12:00)")
    return 0, text


def show(
    s: Session,
    mind: str,
    kinds: list[str],
    since: str | None,
    tail: int | None,
    limit: int | None,
    grep: str | None,
    follow: bool,
    as_json: bool,
) -> None:
    """Print a mind's events: the newest `tail` (default), or the oldest after `--since`/with `--limit`; then follow."""
    from noemactl import render

    if tail is not None and limit is not None:
        raise BadInput("--tail takes the newest events and --limit the oldest after --since; pick one")
    if tail == 0 and not follow:
        raise BadInput("--tail 0 shows no events; it only makes sense with --follow (new events only)")
    if follow and limit is not None:
        raise BadInput("--limit does not apply to --follow; use --tail N for the backlog it prints first")
    since_id, since_time = split_since(since)
    width = s.output.width if s.output.terminal else None
    # Like `journalctl --since`: read forward from there (and --limit keeps its old meaning, the oldest N).
    from_start = (since is not None or limit is not None) and tail is None
    last: int | None = None
    found: list[dict[str, Any]] = []
    page: dict[str, Any] = {}
    if tail != 0:
        if from_start:
            step = PAGE if follow else (limit or 100)
            page = s.client.events(mind, kinds, since_id, step, since_time=since_time, grep=grep)
            found = list(page["events"])
            # A follower reads on to the end, so it streams after the last event it read.
            while follow and len(page["events"]) == step:
                page = s.client.events(mind, kinds, page["next_since"], step, since_time=since_time, grep=grep)
                found.extend(page["events"])
        else:
            page = s.client.events(mind, kinds, since_id, tail=tail or DEFAULT_TAIL, since_time=since_time, grep=grep)
            found = list(page["events"])
        last = page["last_id"]
    if not follow:
        if as_json:
            s.output.json(page)
            return
        if not found:
            s.output.note(f"no events in {mind}" + (f" since {since}" if since else "") + (" of those kinds" if kinds else "")
                          + (f" matching {grep!r}" if grep else ""))
            return
        s.output.show(*render.event_lines(found, width))
        if from_start and len(found) == (limit or 100):
            s.output.note(f"there may be more: noemactl events {mind} --since {page['next_since']}")
        elif not from_start and len(found) == (tail or DEFAULT_TAIL) and found[0]["id"] > 1:
            s.output.note(f"the newest {len(found)} shown; older ones with -n N or --since ID")
        return
    for event in found:
        s.output.json_line(event) if as_json else s.output.show(render.event_line(event, width))
    follow_stream(s, mind, kinds, grep, last, as_json)


def follow_stream(
    s: Session, mind: str, kinds: list[str], grep: str | None, after: int | None, as_json: bool, what: str = "events"
) -> None:
    """Print a mind's events after id `after` (None: only new ones) matching `kinds` and `grep`, until the stream ends."""
    from noemactl import render

    width = s.output.width if s.output.terminal else None
    with s.client.stream(mind, after, kinds=kinds, grep=grep) as messages:
        s.output.note(f"following {mind}'s {what}; Ctrl-C to stop")
        for message in messages:
            if message.is_end:
                reason = (message.json() or {}).get("reason", "noemad ended it")
                s.output.note(f"the stream ended: {reason}")
                return
            event = message.json()
            if not isinstance(event, dict):
                continue
            if as_json:
                s.output.json_line(event)
            else:
                s.output.show(render.event_line(event, width))
    raise CtlError(f"noemad closed the event stream of {mind} without saying why; is it still running?")
