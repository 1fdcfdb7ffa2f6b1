"""The noemactl commands: parse the command line, ask noemad, hand the answer to a renderer.

Commands stay thin; the work lives in `client` (HTTP over the socket),
`inputs` (checks before sending), `output` (stdout/stderr), `render`,
`timeline` and `dot` (views). Those modules are imported inside the commands
so `--version` and shell completion start without httpx or rich.

`app` is importable as `noemactl.app:app` with every command registered, for
the completion scripts in `completions/` and the man pages in `man/`.
"""

import sys
from typing import Annotated, Any

import typer

from noemactl import archive, background, backup, beliefs, connectors, gate, minds, ops
from noemactl.errors import BadInput, CtlError
from noemactl.params import PlainCommand, PlainGroup
from noemactl.session import Session
from noemactl.shared import JsonFlag, MindArg, complete_mind, render_views, session
from noemactl.watch import INTERVAL, WATCH_HELP, parse_interval
from noemactl.watch import watch as watch_view

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


# the daemon --------------------------------------------------------------------


@app.command(cls=PlainCommand)
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
        watch_view(s, s.client.status, lambda data: render_views().status(data), parse_interval(interval), count, s.wants_json(json))
        return
    if count is not None:
        raise BadInput("--count goes with --watch")
    data = s.client.status()
    s.present(data, json, lambda: render_views().status(data))


@app.command(cls=PlainCommand)
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
    s.present(data, json, lambda: render_views().usage(data))


# stimuli -----------------------------------------------------------------------


def _stored(s: Session, event: dict[str, Any], json: bool) -> None:
    s.present(event, json, lambda: f"stored event {event['id']} ({event['kind']})")


TagOption = Annotated[list[str] | None, typer.Option("--tag", metavar="NAME", help="A tag wake rules can match (repeatable).")]


@app.command(cls=PlainCommand)
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
    stored = s.client.ingest(mind, body)
    if not wait:
        _stored(s, stored, json)
        return
    from noemactl import reply

    outcome = reply.wait(s, mind, stored["id"], seconds, stored.get("gate"))
    if s.wants_json(json):
        s.output.json({"event": stored, "reply": outcome.reply, "why": outcome.why})
    elif outcome.reply is not None:
        s.output.show(outcome.reply["text"])
    if outcome.failed:
        raise CtlError(f"no reply to event {stored['id']}: {outcome.why}")
    if outcome.why is not None and not s.wants_json(json):
        s.output.note(f"no reply to event {stored['id']}: {outcome.why}")


@app.command(cls=PlainCommand)
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
    _stored(s, s.client.ingest(mind, body), json)


@app.command("assert", cls=PlainCommand)
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
    _stored(s, s.client.ingest(mind, body), json)


@app.command(cls=PlainCommand)
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
    _stored(s, s.client.ingest(mind, body), json)


@app.command(cls=PlainCommand)
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
        s.present(data, json, lambda: render_views().trust(data))
        return
    assert source is not None  # typer fills arguments in order
    data = s.client.set_trust(mind, inputs.name(source, "SOURCE"), inputs.unit(value, "VALUE"))
    s.present(data, json, lambda: f"{data['mind']} trusts {data['source']} {data['value']:g}")


@app.command(cls=PlainCommand)
def remember(
    ctx: typer.Context,
    mind: MindArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What to remember; '-' reads it from stdin.", show_default=False)],
    kind: Annotated[str, typer.Option("--kind", metavar="KIND", help="semantic (a fact) or procedural (a way of doing things).")] = "semantic",
    derived_from: Annotated[
        list[int] | None, typer.Option("--from-memory", metavar="ID", min=1, help="A memory this one generalises (repeatable).")
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", metavar="NAME", help="A name for it, such as legal (repeatable); governance reads the tags of what a turn recalled.")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Give a mind a memory as an operator; episodes come only from what it perceives."""
    from noemactl import inputs

    if kind not in ("semantic", "procedural"):
        raise BadInput(f"--kind {kind!r} is not semantic or procedural; episodes come only from stimuli")
    body = {"kind": kind, "text": inputs.text(text, "memory"), "derived_from": derived_from or [], "tags": tag or []}
    s = session(ctx)
    data = s.client.remember(mind, body)
    s.present(data, json, lambda: f"remembered #{data['id']} ({data['kind']}, importance {data['importance']:.2f})")


@app.command(cls=PlainCommand)
def memories(
    ctx: typer.Context,
    mind: MindArg,
    search: Annotated[str | None, typer.Option("--search", metavar="TEXT", help="Full-text search, best matches first (active memories only).")] = None,
    kind: Annotated[str | None, typer.Option("--kind", metavar="KIND", help="episodic, semantic or procedural.")] = None,
    retracted: Annotated[bool, typer.Option("--retracted", help="Only retracted memories (no longer recalled).")] = False,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N memories.")] = 100,
    at: beliefs.AtOption = None,
    json: JsonFlag = False,
) -> None:
    """List a mind's memories, or search them; retracted ones are listed, marked, and never recalled. With --at, as they stood then."""
    if kind is not None and kind not in ("episodic", "semantic", "procedural"):
        raise BadInput(f"--kind {kind!r} is not one of episodic, semantic, procedural")
    if retracted and search is not None:
        raise BadInput("--search finds active memories only; drop --retracted or --search")
    if at is not None and search is not None:
        raise BadInput("--search looks at today's memories; drop --at or --search")
    s = session(ctx)
    data = s.client.memories(mind, search, kind, limit, "retracted" if retracted else None, at)
    s.present(data, json, lambda: render_views().memories(data["memories"], mind, search))


@app.command(cls=PlainCommand)
def retract(
    ctx: typer.Context,
    mind: MindArg,
    memory_id: Annotated[int, typer.Argument(metavar="MEMORY_ID", min=1, help="The memory to retract.", show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is wrong; kept with the retraction.", show_default=False)],
    json: JsonFlag = False,
) -> None:
    """Retract a memory: it is no longer recalled or searched, stays listed as retracted, and the retraction is an event."""
    if not reason.strip():
        raise BadInput("--reason is empty; say why the memory is wrong")
    s = session(ctx)
    found = s.client.memory(memory_id)
    if found["mind"] != mind:
        raise BadInput(f"memory #{memory_id} belongs to {found['mind']}, not {mind}; nothing was retracted")
    data = s.client.retract(memory_id, reason)
    s.present(
        data,
        json,
        lambda: f"retracted memory #{data['memory']['id']}: {data['memory']['text']}\nwalk it: noemactl timeline {data['event']['id']}",
    )


# goals and predictions -----------------------------------------------------------

GOAL_STATUSES = ("active", "completed", "abandoned")
PREDICTION_STATUSES = ("open", "hit", "miss")


@app.command(cls=PlainCommand)
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
    _stored(s, s.client.ingest(mind, body), json)


@app.command(cls=PlainCommand)
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
    s.present(data, json, lambda: render_views().goals(data["goals"], mind))


@app.command(cls=PlainCommand)
def predict(
    ctx: typer.Context,
    mind: MindArg,
    proposition: Annotated[str, typer.Argument(metavar="PROPOSITION", help="What is expected to come true.", show_default=False)],
    subject: Annotated[str, typer.Option("--subject", metavar="SUBJECT", help="What the proposition is about.", show_default=False)],
    confidence: Annotated[
        str, typer.Option("--confidence", metavar="0..1", help="The stated confidence that it comes true.", show_default=False)
    ],
    due: Annotated[
        str,
        typer.Option(
            "--due", metavar="WHEN", help="When it is due: a span ahead of noemad's clock (30m, 2h, 3d) or an ISO time.", show_default=False
        ),
    ],
    json: JsonFlag = False,
) -> None:
    """Record a prediction for a mind: it rests on the proposition's belief, held as a hypothesis.

    Resolve it later with `noemactl outcome ID --hit|--miss`; its id is listed by `noemactl predictions MIND`.
    """
    from noemactl import inputs

    body = {
        "kind": "prediction",
        "proposition": inputs.text(proposition, "proposition"),
        "subject": inputs.name(subject, "--subject"),
        "confidence": inputs.unit(confidence, "--confidence"),
        "due": due,  # noemad reads it (a span ahead of its clock, or an ISO time) and says why when it cannot
    }
    s = session(ctx)
    _stored(s, s.client.ingest(mind, body), json)


@app.command(cls=PlainCommand)
def outcome(
    ctx: typer.Context,
    prediction: Annotated[int, typer.Argument(metavar="PREDICTION", min=1, help="The prediction's id.", show_default=False)],
    hit: Annotated[bool, typer.Option("--hit", help="It came true.")] = False,
    miss: Annotated[bool, typer.Option("--miss", help="It did not.")] = False,
    observed: Annotated[
        str | None, typer.Option("--observed", metavar="TEXT", help="What was observed, e.g. a measured value.", show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Resolve a prediction as a hit or a miss, once and for all; the belief it rested on follows."""
    from noemactl import inputs

    if hit == miss:
        raise BadInput("say what came of it: --hit or --miss (one of them)")
    body: dict[str, Any] = {"kind": "outcome", "prediction": prediction, "result": "hit" if hit else "miss"}
    if observed is not None:
        body["observed"] = inputs.text(observed, "--observed")
    s = session(ctx)
    mind = s.client.prediction(prediction)["mind"]
    _stored(s, s.client.ingest(mind, body), json)


@app.command(cls=PlainCommand)
def predictions(
    ctx: typer.Context,
    mind: MindArg,
    open_: Annotated[bool, typer.Option("--open", help="Only open predictions (same as --status open).")] = False,
    status: Annotated[str | None, typer.Option("--status", metavar="STATUS", help="open, hit or miss.")] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N predictions.")] = 100,
    json: JsonFlag = False,
) -> None:
    """List a mind's predictions, soonest due first: stated confidence, due time, outcome."""
    if status is not None and status not in PREDICTION_STATUSES:
        raise BadInput(f"--status {status!r} is not one of {', '.join(PREDICTION_STATUSES)}")
    if open_ and status not in (None, "open"):
        raise BadInput(f"--open and --status {status} contradict each other; pick one")
    s = session(ctx)
    data = s.client.predictions(mind, "open" if open_ else status, limit)
    s.present(data, json, lambda: render_views().predictions(data["predictions"], mind))


@app.command(cls=PlainCommand)
def calibration(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """Show how a mind's stated confidence matched outcomes: bins, hit rates, Brier score, overconfidence."""
    s = session(ctx)
    data = s.client.calibration(mind)
    s.present(data, json, lambda: render_views().calibration(data))


@app.command(cls=PlainCommand)
def narrative(ctx: typer.Context, mind: MindArg, at: beliefs.AtOption = None, json: JsonFlag = False) -> None:
    """Show what a mind would say it is doing and why: its newest narrative, then its five parts.

    The parts are doing, why, recently, resolving and next; the prose is the narrate model's rephrasing when the mind's settings ask for one and it added nothing, else the plain rendering. With --at, the narrative as it read then.
    """
    s = session(ctx)
    data = s.client.narrative(mind, at)
    if s.wants_json(json):
        s.output.json(data)
        return
    if data["event_id"] is None:
        s.output.note(f"{mind} had no narrative by then" if at is not None else f"{mind} has no narrative yet; one is written after a cycle that changes what it would say")
        return
    from noemactl import render

    s.output.show(*render.narrative(data))


# notifications -----------------------------------------------------------------

NOTIFICATION_STATUSES = ("open", "acked")
NOTIFICATION_KINDS = ["notification", "notification_suppressed"]


@app.command(cls=PlainCommand)
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
        _follow(s, mind, NOTIFICATION_KINDS, None, s.wants_json(json), what="notifications")
        return
    wanted = "open" if open_ else status
    data = s.client.notifications(mind, wanted, limit or 100)
    s.present(data, json, lambda: render_views().notifications(data["notifications"], mind, wanted))


@app.command(cls=PlainCommand)
def ack(
    ctx: typer.Context,
    notification_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The notification's id.", show_default=False)],
    json: JsonFlag = False,
) -> None:
    """Acknowledge a notification; a later repeat of it notifies anew."""
    s = session(ctx)
    data = s.client.ack(notification_id)
    s.present(data, json, lambda: f"acknowledged notification #{data['id']} ({data['rule']}): {data['title']}")


# events ------------------------------------------------------------------------


@app.command(cls=PlainCommand)
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
    from noemactl import events as reading

    s = session(ctx)
    reading.show(s, mind, kinds or [], since, tail, limit, grep, follow, s.wants_json(json))


def _follow(s: Session, mind: str, kinds: list[str], since: int | None, as_json: bool, what: str = "events") -> None:
    from noemactl.events import follow_stream

    follow_stream(s, mind, kinds, None, since, as_json, what)


@app.command(cls=PlainCommand)
def timeline(
    ctx: typer.Context,
    event_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The event to walk around.", show_default=False)],
    back: Annotated[
        int | None, typer.Option("--back", metavar="N", min=0, max=6, help="Hops toward causes.", show_default="noemad's max_hops, 6")
    ] = None,
    forward: Annotated[
        int | None, typer.Option("--forward", metavar="N", min=0, max=6, help="Hops toward consequences.", show_default="noemad's max_hops, 6")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, max=200, help="Most events in the walk.", show_default="noemad's max_events, 200")
    ] = None,
    json: JsonFlag = False,
    dot: Annotated[bool, typer.Option("--dot", help="Print Graphviz DOT, e.g. for `dot -Tsvg`.")] = False,
) -> None:
    """Show why an event happened and what followed: its causes and consequences as a tree."""
    s = session(ctx)
    as_json = s.wants_json(json)
    if as_json and dot:
        raise BadInput("--json and --dot are two different outputs; pick one")
    graph = s.client.chain(event_id, back, forward, limit)
    if as_json:
        s.output.json(graph)
    elif dot:
        from noemactl.dot import to_dot

        sys.stdout.write(to_dot(graph))
    else:
        from noemactl.timeline import tree

        s.output.show(*tree(graph))


# the dashboard -------------------------------------------------------------------


@app.command(cls=PlainCommand)
def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", metavar="N", min=0, max=65535, help="Listen on this port of 127.0.0.1 (0: any free one).")] = 0,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the address in the default browser too.")] = False,
) -> None:
    """Open noemad's dashboard: a proxy on 127.0.0.1 that prints an address with a token to open in a browser.

    It forwards the dashboard's pages and /api/v1 to noemad's socket as the user running it, and nothing else. The token in the address becomes a cookie; a request with neither is refused, and a change needs a request from the dashboard's own pages. Stop it with Ctrl-C.
    """
    from noemactl import ui as proxy

    s = session(ctx)
    s.client.status()  # noemad must answer before the address is handed out
    try:
        proxy.serve(s.socket, port, open_browser, lambda url: _announce(s, url))
    except OSError as exc:
        raise BadInput(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); choose another --port or leave it out for a free one") from None


def _announce(s: Session, url: str) -> None:
    typer.echo(url)  # stdout, whole on one line: the address to open
    s.output.note("open it in a browser on this machine; Ctrl-C stops the proxy")


# the demo ------------------------------------------------------------------------


def _scenarios(incomplete: str) -> list[str]:
    """The demo's scenario names starting with `incomplete` (shell completion)."""
    from noemactl.demo import NAMES

    return [n for n in (*NAMES, "all") if n.startswith(incomplete)]


@app.command(cls=PlainCommand)
def demo(
    ctx: typer.Context,
    scenario: Annotated[
        str | None,
        typer.Argument(
            metavar="SCENARIO",
            help="single-source, prediction-miss, go, gate, judge or critic (or 1-6); default: all.",
            autocompletion=lambda incomplete: _scenarios(incomplete),
            show_default=False,
        ),
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Remove a demo mind left by an earlier run and play it again.")] = False,
    json: JsonFlag = False,
) -> None:
    """Play scripted scenarios into fresh demo minds (demo-SCENARIO) and narrate what the minds made of them.

    \b
    1 single-source: a belief from one source draws single_source and insufficient_evidence warnings.
    2 prediction-miss: confident predictions miss, the beliefs behind them drop, a notification fires, reflection writes a lesson.
    3 go: "user repeatedly selects Go"; consolidation makes a generalisation belief and a semantic memory, and the timeline walks back to the episodes.
    4 gate: a DM wakes the mind at once, room talk is batched by a debounce, a mention cuts through the batch.
    5 judge: a judge rule's small model says WAIT to small talk and REPLY to a question, with its reasons in gate-status.
    6 critic: a draft with a claim nothing supports is reviewed, revised and sent; an acknowledgment skips the critic.

    1-4 need no model; with one configured, it words the reflection and the generalisation. 5 and 6 make model calls and play only offline, on the scripted provider with the demo's script (noemactl/demo_script.toml) and [gate.judge] enabled = true, as `make demo` runs noemad; with all, a scenario this noemad cannot play is skipped with the config it needs.
    """
    from noemactl import demo as scenarios

    s = session(ctx)
    scenarios.play(s, scenario, replace, s.wants_json(json))


# the gate: rules, gate-status, sleep, wake (noemactl/gate.py registers them on `app`) -----------

# The commands other modules own, at the top level beside these (each module's Typer has no name of its own).
for _commands in (minds.commands, beliefs.commands, background.commands, gate.commands, backup.commands, archive.commands, ops.commands, connectors.commands):
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
