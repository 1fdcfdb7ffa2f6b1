"""What you tell a mind: `say`, `observe`, `assert`, `correct` and `trust`.

Each builds a stimulus from the flags, checked here (`noemactl.inputs`) before
it is sent, and prints the id of the event noemad stored; `say --wait` then
waits for the turn that takes the message (`noemactl.reply`). Added at the top
level by `noemactl.app`.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noemactl.errors import BadInput, CtlError
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, mind_views, session, stored

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

TagOption = Annotated[list[str] | None, typer.Option("--tag", metavar="NAME", help="A tag wake rules can match (repeatable).")]


@commands.command(cls=PlainCommand)
def say(
    ctx: typer.Context,
    mind: MindArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What to say; '-' reads it from stdin.", show_default=False)],
    author: Annotated[
        str | None,
        typer.Option("--from", metavar="AUTHOR", help="Who says it.", show_default="$USER, else operator"),
    ] = None,
    channel: Annotated[str, typer.Option("--channel", metavar="CH", help="Where it is said, e.g. discord:guild:chan.")] = "cli",
    mentions: Annotated[
        list[str] | None, typer.Option("--mention", metavar="NAME", help="A name the message mentions (repeatable).")
    ] = None,
    dm: Annotated[bool, typer.Option("--dm", help="Said in a direct channel (wake rules' dm flag).")] = False,
    reply_to: Annotated[
        int | None,
        typer.Option("--reply-to", metavar="ID", min=1, help="The id of the event it answers (one of the mind's replies: wake rules' reply flag)."),
    ] = None,
    bot: Annotated[bool, typer.Option("--bot", help="The author is a bot (wake rules' from_bot flag).")] = False,
    tags: TagOption = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for the turn that takes the message and print the mind's reply, or say why there is none.")
    ] = False,
    timeout: Annotated[
        # text, parsed here: a float option would load pydantic for typer's coercion on every `say`
        str | None,
        typer.Option("--timeout", metavar="SECONDS", help="With --wait: give up after this long (0.1 to 86400).", show_default="60"),
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Send a message to a mind; print the id of the stored event, or with --wait the reply.

    With --wait, no reply is said on stderr with why (deferred or batched by a rule, the judge said WAIT, no respond model, the mind chose not to reply; exit 0) or is an error (the turn failed, or --timeout passed; exit 1).
    """
    from noemactl import inputs

    body: dict[str, Any] = {
        "kind": "message",
        "author": inputs.name(author if author is not None else inputs.default_author(), "--from"),
        "channel": inputs.name(channel, "--channel"),
        "text": inputs.text(text, "message"),
        "mentions": [inputs.name(m, "--mention") for m in mentions or []],
    }
    # Only what is given: a plain `say` sends the body it always sent.
    body.update({k: v for k, v in (("dm", dm), ("reply_to", reply_to), ("bot", bot)) if v})
    if tags:
        body["tags"] = [inputs.name(t, "--tag") for t in tags]
    if timeout is not None and not wait:
        raise BadInput("--timeout is how long --wait waits; add --wait or drop --timeout")
    seconds = 60.0 if timeout is None else inputs.seconds(timeout, "--timeout", 0.1, 86400)
    s = session(ctx)
    event = s.client.ingest(mind, body)
    if not wait:
        stored(s, event, json)
        return
    from noemactl import reply

    outcome = reply.wait(s, mind, event["id"], seconds, event.get("gate"))
    if s.wants_json(json):
        s.output.json({"event": event, "reply": outcome.reply, "why": outcome.why})
    elif outcome.reply is not None:
        s.output.show(outcome.reply["text"])
    if outcome.failed:
        raise CtlError(f"no reply to event {event['id']}: {outcome.why}")
    if outcome.why is not None and not s.wants_json(json):
        s.output.note(f"no reply to event {event['id']}: {outcome.why}")


@commands.command(cls=PlainCommand)
def observe(
    ctx: typer.Context,
    mind: MindArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What was observed; '-' reads it from stdin.", show_default=False)],
    source: Annotated[str, typer.Option("--source", metavar="SRC", help="The sensor or system that observed it.", show_default=False)],
    data: Annotated[
        str | None, typer.Option("--data", metavar="JSON", help='Structured data as a JSON object, e.g. \'{"celsius": 21.5}\'.')
    ] = None,
    supports: Annotated[
        str | None, typer.Option("--supports", metavar="PROPOSITION", help="A proposition the observation supports (needs --subject).")
    ] = None,
    contradicts: Annotated[
        str | None, typer.Option("--contradicts", metavar="PROPOSITION", help="A proposition the observation contradicts (needs --subject).")
    ] = None,
    subject: Annotated[str | None, typer.Option("--subject", metavar="SUBJECT", help="What the proposition is about.")] = None,
    tags: TagOption = None,
    json: JsonFlag = False,
) -> None:
    """Record an observation from a named source; print the id of the stored event.

    With --supports or --contradicts (and --subject) it is evidence for or against a belief.
    """
    from noemactl import inputs

    body: dict[str, Any] = {
        "kind": "observation",
        "source": inputs.name(source, "--source"),
        "text": inputs.text(text, "observation"),
        "data": inputs.json_object(data, "--data", '{"celsius": 21.5}'),
    }
    if supports is not None or contradicts is not None:
        body["claim"] = inputs.claim(supports, contradicts, subject)
    elif subject is not None:
        raise BadInput("--subject goes with --supports or --contradicts; say which proposition the observation bears on")
    if tags:
        body["tags"] = [inputs.name(t, "--tag") for t in tags]
    s = session(ctx)
    stored(s, s.client.ingest(mind, body), json)


@commands.command("assert", cls=PlainCommand)
def assert_(
    ctx: typer.Context,
    mind: MindArg,
    proposition: Annotated[str, typer.Argument(metavar="PROPOSITION", help="What is stated.", show_default=False)],
    subject: Annotated[str, typer.Option("--subject", metavar="SUBJECT", help="What the proposition is about.", show_default=False)],
    source: Annotated[
        str | None, typer.Option("--from", metavar="SOURCE", help="Who states it (default: $USER).", show_default=False)
    ] = None,
    denies: Annotated[bool, typer.Option("--denies", help="The source denies the proposition instead.")] = False,
    channel: Annotated[str, typer.Option("--channel", metavar="CH", help="Where it was stated.")] = "cli",
    json: JsonFlag = False,
) -> None:
    """Record that someone states a proposition; it counts as far as the mind trusts them."""
    from noemactl import inputs

    claim = inputs.claim(None, proposition, subject) if denies else inputs.claim(proposition, None, subject)
    body = {"kind": "assertion", "source": inputs.name(source or inputs.default_author(), "--from"), "channel": channel, "claim": claim}
    s = session(ctx)
    stored(s, s.client.ingest(mind, body), json)


@commands.command(cls=PlainCommand)
def correct(
    ctx: typer.Context,
    belief: Annotated[int, typer.Argument(metavar="BELIEF", min=1, help="The belief's id.", show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why; kept with the correction.", show_default=False)],
    status: Annotated[
        str | None, typer.Option("--status", metavar="STATUS", help="active (let evidence decide), pinned or rejected.")
    ] = None,
    confidence: Annotated[
        str | None, typer.Option("--confidence", metavar="0..1", help="Pin the belief at this confidence.", show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Correct a belief as an operator; the mind applies it in its next turn."""
    from noemactl import inputs

    body: dict[str, Any] = {"kind": "correction", "belief": belief, "reason": inputs.text(reason, "--reason")}
    if status is not None:
        body["status"] = status  # noemad names the statuses a correction takes when it is none of them
    if confidence is not None:
        body["confidence"] = inputs.unit(confidence, "--confidence")
    if status is None and confidence is None:
        raise BadInput("say what to correct: --status, --confidence, or both")
    s = session(ctx)
    mind = s.client.belief(belief)["mind"]
    stored(s, s.client.ingest(mind, body), json)


@commands.command(cls=PlainCommand)
def trust(
    ctx: typer.Context,
    mind: MindArg,
    source: Annotated[
        str | None, typer.Argument(metavar="SOURCE", help="Who or what is trusted (without it: list the levels).", show_default=False)
    ] = None,
    value: Annotated[
        str | None, typer.Argument(metavar="VALUE", help="From 0 (not at all) to 1 (without it: show SOURCE's level).", show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Set how far a mind trusts a source (the credibility of its later evidence), or list the levels it was told."""
    from noemactl import inputs

    s = session(ctx)
    if value is None:
        data = s.client.trust(mind)
        if source is not None:
            name = inputs.name(source, "SOURCE")
            level = next((t for t in data["trust"] if t["source"] == name), None)
            data = {"mind": mind, "source": name, "value": level["value"] if level else data["default"], "told": level is not None}
            s.present(data, json, lambda: f"{mind} trusts {name} {data['value']:g}" + ("" if data["told"] else " (the default; never set)"))
            return
        s.present(data, json, lambda: mind_views().trust(data))
        return
    assert source is not None  # typer fills arguments in order
    data = s.client.set_trust(mind, inputs.name(source, "SOURCE"), inputs.unit(value, "VALUE"))
    s.present(data, json, lambda: f"{data['mind']} trusts {data['source']} {data['value']:g}")
