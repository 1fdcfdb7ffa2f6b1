"""The gate's commands: `rules list|add|edit|rm|move|show|default`, `gate-status`, `sleep`, `wake`.

noemactl never reads a rule itself: it builds the rule's JSON from the flags
(or takes it whole from `--rule` / `--file`) and noemad's one validator
answers, so a refusal here is the sentence the API, the config and the
mind's own tools give. Added at the top level by `noemactl.app` when that module
loads, so the man pages and completions see them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noemactl.shared import JsonFlag, MindArg, complete_mind, session
from noemactl.errors import BadInput
from noemactl.inputs import span_ahead
from noemactl.params import PlainCommand, default_group
from noemactl.watch import INTERVAL, WATCH_HELP, parse_interval
from noemactl.watch import watch as watch_view

KINDS = ("message", "observation", "assertion", "correction", "goal", "prediction", "outcome")
FLAGS = ("mention", "dm", "reply", "from_bot", "from_self")
KEY_BY = ("channel", "author", "none")

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

rules_app = typer.Typer(
    cls=default_group("list"),
    help="A mind's wake rules: which stimuli wake it, batch, wait or are only stored.\n\n"
    "Every stimulus is stored first and is in the context of the mind's next turn; the rules decide only when a turn"
    " runs. The first rule that matches decides; a rate_limit or passive_sample rule with passthrough that denies lets"
    " later rules decide; a stimulus no rule matches gets the default behaviour (always, unless set).\n\n"
    "A rule has one shape everywhere (this command's --rule, the API, [[minds.NAME.gate.rules]] in noemad.toml,"
    ' the mind\'s own tools): {"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*",'
    ' "author": "*", "flags": ["mention"], "text": "deploy", "regex": false, "tags_any": [], "tags_all": [],'
    ' "tags_none": []}, "behaviour": {"debounce": {"ms": 2000}}, "passthrough": false, "resets": []}.'
    " Match fields all hold (omitted means any); behaviours are always, defer, debounce {ms},"
    " rate_limit {tokens, refill_ms, key_by} and passive_sample {every, key_by}, and with [gate.judge] enabled = true"
    " judge {debounce_ms, max_wait_ms, instructions} (a small model decides whether the batch wakes the mind; see"
    " noemad.toml(5)). The config seeds a mind's rules"
    " once, when the mind is created; from then on the stored rules are the mind's, changed here, through the API"
    " or by the mind, and every change is a gate_rules_changed event on its timeline.\n\n"
    "`noemactl rules MIND` is `noemactl rules list MIND`.",
)
commands.add_typer(rules_app, name="rules")

RuleNameArg = Annotated[str, typer.Argument(metavar="NAME", help="The rule's name.", show_default=False)]


def _view() -> Any:
    """The gate's renderers, imported when a human view is shown (not for --json)."""
    from noemactl import gate_view

    return gate_view


# building a rule from flags ----------------------------------------------------------


def behaviour(
    always: bool,
    defer: bool,
    debounce: int | None,
    rate_limit: str | None,
    sample: int | None,
    key_by: str | None,
    judge: int | None = None,
    max_wait: int | None = None,
    instructions: str | None = None,
) -> dict[str, Any] | None:
    """The behaviour the flags give (a one-key object), None when none is given.

    Two behaviour flags give a two-key object, which noemad refuses with its own sentence.
    """
    if judge is None and (max_wait is not None or instructions is not None):
        said = "--max-wait" if max_wait is not None else "--instructions"
        raise BadInput(f"{said} belongs to a judge rule; give --judge MS (the quiet period before the batch is judged) with it")
    if key_by is not None and key_by not in KEY_BY:
        raise BadInput(f"--key-by {key_by!r} is not a key; use channel, author or none")
    if key_by is not None and rate_limit is None and sample is None:
        raise BadInput("--key-by says what --rate-limit or --sample count per; give one of them with it")
    found: dict[str, Any] = {}
    if always:
        found["always"] = {}
    if defer:
        found["defer"] = {}
    if debounce is not None:
        found["debounce"] = {"ms": debounce}
    if rate_limit is not None:
        tokens, slash, refill = rate_limit.partition("/")
        if not slash or not tokens.strip().isdigit() or not refill.strip().isdigit():
            raise BadInput(f"--rate-limit {rate_limit!r} is not TOKENS/REFILL_MS; write it like 5/60000 (5 wakes, one more each minute)")
        found["rate_limit"] = {"tokens": int(tokens), "refill_ms": int(refill), **({"key_by": key_by} if key_by else {})}
    if sample is not None:
        found["passive_sample"] = {"every": sample, **({"key_by": key_by} if key_by else {})}
    if judge is not None:
        extra = {"max_wait_ms": max_wait} if max_wait is not None else {}
        found["judge"] = {"debounce_ms": judge, **extra, **({"instructions": instructions} if instructions is not None else {})}
    return found or None


def rule_from_flags(
    name: str | None,
    kinds: list[str],
    channel: str | None,
    author: str | None,
    flags: list[str],
    text: str | None,
    regex: bool,
    behaviour_data: dict[str, Any] | None,
    passthrough: bool,
    resets: list[str],
) -> dict[str, Any]:
    """The rule's JSON from the flags given (fields not given are left out: noemad reads them as any)."""
    match: dict[str, Any] = {}
    if kinds:
        match["kinds"] = kinds
    if channel is not None:
        match["channel"] = channel
    if author is not None:
        match["author"] = author
    if flags:
        match["flags"] = flags
    if text is not None:
        match["text"] = text
    if regex:
        if text is None:
            raise BadInput("--regex says --text is a pattern; give --text with it")
        match["regex"] = True
    rule: dict[str, Any] = {}
    if name is not None:
        rule["name"] = name
    rule["match"] = match
    if behaviour_data is not None:
        rule["behaviour"] = behaviour_data
    if passthrough:
        rule["passthrough"] = True
    if resets:
        rule["resets"] = [r.strip() for item in resets for r in item.split(",") if r.strip()]
    return rule


def rule_from_text(text: str, where: str) -> Any:
    """A rule given whole as JSON (`--rule` or `--file`)."""
    import json

    from noemactl.inputs import loads

    try:
        return loads(text)
    except ValueError as exc:
        at = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise BadInput(
            f"{where} is not valid JSON ({getattr(exc, 'msg', exc)}{at}); give a rule such as"
            ' \'{"name": "dms", "match": {"flags": ["dm"]}, "behaviour": {"always": {}}}\''
        ) from None


# rules ----------------------------------------------------------------------------


@rules_app.command("list", cls=PlainCommand)
def rules_list(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """List a mind's wake rules in the order they are asked, its default, and any warnings."""
    s = session(ctx)
    data = s.client.rules(mind)
    s.present(data, json, lambda: _view().rules(data))


@rules_app.command("show", cls=PlainCommand)
def rules_show(ctx: typer.Context, mind: MindArg, name: RuleNameArg, json: JsonFlag = False) -> None:
    """Show one wake rule: its position, match, behaviour, passthrough and resets."""
    s = session(ctx)
    data = s.client.rule(mind, name)
    s.present(data, json, lambda: _view().rule(data))


RuleJsonOpt = Annotated[
    str | None,
    typer.Option("--rule", metavar="JSON", help='The whole rule as JSON, e.g. \'{"name": "dms", "match": {"flags": ["dm"]}, "behaviour": {"always": {}}}\'.', show_default=False),
]
FileOpt = Annotated[
    str | None, typer.Option("--file", metavar="PATH", help="Read the whole rule as JSON from PATH ('-' for stdin).", show_default=False)
]
KindOpt = Annotated[
    list[str] | None, typer.Option("--kind", metavar="KIND", help=f"Match only this stimulus kind (repeatable): {', '.join(KINDS)}.")
]
ChannelOpt = Annotated[str | None, typer.Option("--channel", metavar="GLOB", help="Match channels like this glob, e.g. 'discord:*'.", show_default=False)]
AuthorOpt = Annotated[
    str | None, typer.Option("--author", metavar="GLOB", help="Match authors (a message's) or sources like this glob.", show_default=False)
]
FlagOpt = Annotated[list[str] | None, typer.Option("--flag", metavar="FLAG", help=f"Match any of these (repeatable): {', '.join(FLAGS)}.")]
TextOpt = Annotated[str | None, typer.Option("--text", metavar="TEXT", help="Match text containing this (case-insensitive).", show_default=False)]
RegexOpt = Annotated[bool, typer.Option("--regex", help="--text is a regular expression (RE2: linear time, no backreferences or lookaround).")]
AlwaysOpt = Annotated[bool, typer.Option("--always", help="Wake for every matching stimulus.")]
DeferOpt = Annotated[bool, typer.Option("--defer", help="Store it, in context for the next turn; wake for nothing.")]
DebounceOpt = Annotated[
    int | None,
    typer.Option("--debounce", metavar="MS", help="Gather a batch; wake once MS milliseconds pass with no new match (100-300000).", show_default=False),
]
RateLimitOpt = Annotated[
    str | None,
    typer.Option("--rate-limit", metavar="TOKENS/REFILL_MS", help="Wake while a token is left; one comes back every REFILL_MS ms.", show_default=False),
]
SampleOpt = Annotated[
    int | None, typer.Option("--sample", metavar="EVERY", help="Wake for one matching stimulus in EVERY (the first of each run).", show_default=False)
]
KeyByOpt = Annotated[
    str | None, typer.Option("--key-by", metavar="KEY", help="Count --rate-limit or --sample per channel, author or none.", show_default=False)
]
JudgeOpt = Annotated[
    int | None,
    typer.Option(
        "--judge",
        metavar="MS",
        help="Gather a batch as --debounce does, then let the judge model decide: REPLY wakes the mind, WAIT does not"
        " (needs [gate.judge] enabled = true on the daemon).",
        show_default=False,
    ),
]
MaxWaitOpt = Annotated[
    int | None,
    typer.Option("--max-wait", metavar="MS", help="With --judge: judge the batch by MS ms even while messages keep coming.", show_default=False),
]
InstructionsOpt = Annotated[
    str | None,
    typer.Option("--instructions", metavar="TEXT", help="With --judge: what the judge should wake the mind for (at most 4,000 characters).", show_default=False),
]
PassthroughOpt = Annotated[bool, typer.Option("--passthrough", help="When --rate-limit or --sample denies, let later rules decide.")]
ResetsOpt = Annotated[
    list[str] | None, typer.Option("--resets", metavar="NAME", help="A rule whose state is cleared when this one fires (repeatable).")
]


def _rule_body(
    name: str | None,
    rule_json: str | None,
    file: str | None,
    kinds: list[str] | None,
    channel: str | None,
    author: str | None,
    flags: list[str] | None,
    text: str | None,
    regex: bool,
    chosen: tuple[bool, bool, int | None, str | None, int | None, str | None, int | None, int | None, str | None],
    passthrough: bool,
    resets: list[str] | None,
    *,
    edit: str | None = None,
) -> Any:
    """The rule add or edit sends: whole from --rule/--file, or built from the flags (`edit`: the name edited)."""
    always, defer, debounce, rate_limit, sample, key_by, judge, max_wait, instructions = chosen
    valued = (name, channel, author, text, debounce, rate_limit, sample, key_by, judge, max_wait, instructions)
    flags_given = any(v is not None for v in valued) or any((kinds, flags, resets, regex, always, defer, passthrough))
    if rule_json is not None or file is not None:
        if rule_json is not None and file is not None:
            raise BadInput("--rule and --file both give the whole rule; pick one")
        if flags_given:
            raise BadInput("--rule and --file give the whole rule; drop the other rule flags (only --position goes with them)")
        return rule_from_text(rule_json, "--rule") if rule_json is not None else rule_from_text(_read_file(file or "-"), f"--file {file}")
    if not flags_given:
        if edit is not None:
            raise BadInput(
                f"say what rule {edit} becomes: its behaviour (--always, --defer, --debounce MS, ...) and match flags, or --rule JSON;"
                " the flags give the whole rule, as `rules add` takes them"
            )
        raise BadInput("say what the rule is: --name and a behaviour (--always, --defer, --debounce MS, ...), or --rule JSON")
    found = behaviour(always, defer, debounce, rate_limit, sample, key_by, judge, max_wait, instructions)
    return rule_from_flags(name if edit is None else edit, kinds or [], channel, author, flags or [], text, regex, found, passthrough, resets or [])


@rules_app.command("add", cls=PlainCommand)
def rules_add(
    ctx: typer.Context,
    mind: MindArg,
    rule_json: RuleJsonOpt = None,
    file: FileOpt = None,
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="The rule's name: 1-64 letters, digits, _ . : -", show_default=False)] = None,
    kinds: KindOpt = None,
    channel: ChannelOpt = None,
    author: AuthorOpt = None,
    flags: FlagOpt = None,
    text: TextOpt = None,
    regex: RegexOpt = False,
    always: AlwaysOpt = False,
    defer: DeferOpt = False,
    debounce: DebounceOpt = None,
    rate_limit: RateLimitOpt = None,
    sample: SampleOpt = None,
    key_by: KeyByOpt = None,
    judge: JudgeOpt = None,
    max_wait: MaxWaitOpt = None,
    instructions: InstructionsOpt = None,
    passthrough: PassthroughOpt = False,
    resets: ResetsOpt = None,
    position: Annotated[
        int | None, typer.Option("--position", metavar="N", min=1, help="Put it at position N (1 is asked first).", show_default="last")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Add a wake rule, from flags or whole as JSON; show what it changes and any shadow warning.

    The answer is a probe table: what a DM, a mention, a reply to the mind, ambient human talk, ambient bot talk and an observation would do before and after.
    """
    chosen = (always, defer, debounce, rate_limit, sample, key_by, judge, max_wait, instructions)
    body = _rule_body(name, rule_json, file, kinds, channel, author, flags, text, regex, chosen, passthrough, resets)
    s = session(ctx)
    data = s.client.add_rule(mind, body, position)
    s.present(data, json, lambda: _view().change(data))


@rules_app.command("edit", cls=PlainCommand)
def rules_edit(
    ctx: typer.Context,
    mind: MindArg,
    name: RuleNameArg,
    rule_json: RuleJsonOpt = None,
    file: FileOpt = None,
    kinds: KindOpt = None,
    channel: ChannelOpt = None,
    author: AuthorOpt = None,
    flags: FlagOpt = None,
    text: TextOpt = None,
    regex: RegexOpt = False,
    always: AlwaysOpt = False,
    defer: DeferOpt = False,
    debounce: DebounceOpt = None,
    rate_limit: RateLimitOpt = None,
    sample: SampleOpt = None,
    key_by: KeyByOpt = None,
    judge: JudgeOpt = None,
    max_wait: MaxWaitOpt = None,
    instructions: InstructionsOpt = None,
    passthrough: PassthroughOpt = False,
    resets: ResetsOpt = None,
    position: Annotated[
        int | None, typer.Option("--position", metavar="N", min=1, help="Move it to position N too (1 is asked first).", show_default="where it is")
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Replace a wake rule in one change, from the flags `rules add` takes or whole as JSON; show what it changes.

    The flags give the whole new rule (a match flag left out matches any). It keeps its position (unless --position) and its counters in the running gate, and no stimulus meets the rules without it, as one between `rules rm` and `rules add` would. One gate_rules_changed event records the rule before and after.
    """
    chosen = (always, defer, debounce, rate_limit, sample, key_by, judge, max_wait, instructions)
    body = _rule_body(None, rule_json, file, kinds, channel, author, flags, text, regex, chosen, passthrough, resets, edit=name)
    s = session(ctx)
    data = s.client.edit_rule(mind, name, body, position)
    s.present(data, json, lambda: _view().change(data))


def _read_file(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"--file {path}: cannot read it ({exc.strerror or exc})") from None


@rules_app.command("rm", cls=PlainCommand)
def rules_rm(ctx: typer.Context, mind: MindArg, name: RuleNameArg, json: JsonFlag = False) -> None:
    """Remove a wake rule; show what it changes."""
    s = session(ctx)
    data = s.client.remove_rule(mind, name)
    s.present(data, json, lambda: _view().change(data))


@rules_app.command("move", cls=PlainCommand)
def rules_move(
    ctx: typer.Context,
    mind: MindArg,
    name: RuleNameArg,
    to: Annotated[int, typer.Option("--to", metavar="N", min=1, help="The new position: 1 is asked first; past the end means last.", show_default=False)],
    json: JsonFlag = False,
) -> None:
    """Move a wake rule to another position; show what it changes."""
    s = session(ctx)
    data = s.client.move_rule(mind, name, to)
    s.present(data, json, lambda: _view().change(data))


@rules_app.command("default", cls=PlainCommand)
def rules_default(
    ctx: typer.Context,
    mind: MindArg,
    always: Annotated[bool, typer.Option("--always", help="Wake for every stimulus no rule matches.")] = False,
    defer: Annotated[bool, typer.Option("--defer", help="Store them, in context for the next turn; wake for none.")] = False,
    debounce: Annotated[
        int | None, typer.Option("--debounce", metavar="MS", help="Batch them; wake once MS milliseconds pass quietly.", show_default=False)
    ] = None,
    rate_limit: Annotated[
        str | None, typer.Option("--rate-limit", metavar="TOKENS/REFILL_MS", help="Wake while a token is left.", show_default=False)
    ] = None,
    sample: Annotated[int | None, typer.Option("--sample", metavar="EVERY", help="Wake for one in EVERY.", show_default=False)] = None,
    key_by: Annotated[
        str | None, typer.Option("--key-by", metavar="KEY", help="Count --rate-limit or --sample per channel, author or none.", show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Show or set what a stimulus no rule matches does (always, unless set); setting it shows what it changes."""
    s = session(ctx)
    chosen = behaviour(always, defer, debounce, rate_limit, sample, key_by)
    if chosen is None:
        data = s.client.rules(mind)
        s.present({"mind": data["mind"], "default": data["default"]}, json, lambda: _view().default_line(data))
        return
    data = s.client.set_default(mind, chosen)
    s.present(data, json, lambda: _view().change(data))


# gate-status ---------------------------------------------------------------------


@commands.command("gate-status", cls=PlainCommand)
def gate_status(
    ctx: typer.Context,
    mind: Annotated[
        str | None,
        typer.Argument(metavar="MIND", help="The mind (default: every mind).", autocompletion=complete_mind, show_default=False),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", "-w", help=WATCH_HELP),
    ] = False,
    interval: Annotated[
        str, typer.Option("--interval", metavar="SECONDS", help="Seconds between looks with --watch.")
    ] = str(INTERVAL),
    count: Annotated[
        int | None, typer.Option("--count", metavar="N", min=1, help="With --watch, stop after N looks.", show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Show a mind's gate now: per rule its matches, batches, buckets and samples; sleep, self-wake and upcoming wakes.

    Also what is held while a turn runs or the mind is paused (and dropped past 100), stored rules that no longer read, clamp notes and shadow warnings. Counters are since noemad started.
    """
    s = session(ctx)
    as_json = s.wants_json(json)
    if not watch:
        if count is not None:
            raise BadInput("--count goes with --watch")
        data = s.client.gate(mind)
        s.present(data, as_json, lambda: _view().gate(data))
        return
    watch_view(s, lambda: s.client.gate(mind), lambda data: _view().gate(data), parse_interval(interval), count, as_json)




# sleep and wake --------------------------------------------------------------------


@commands.command("sleep", cls=PlainCommand)
def sleep(
    ctx: typer.Context,
    mind: MindArg,
    span: Annotated[
        str | None, typer.Option("--for", metavar="DURATION", help="How long: 90s, 30m, 8h, 1.5d.", show_default=False)
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="TIME", help="Until this ISO time, e.g. 2026-01-01T08:00:00Z.", show_default=False)
    ] = None,
    note: Annotated[str | None, typer.Option("--note", metavar="TEXT", help="Why; shown in gate-status and on the timeline.", show_default=False)] = None,
    json: JsonFlag = False,
) -> None:
    """Put a mind to sleep: what arrives is stored and wakes nothing, except a message from a privileged author.

    The sleep survives a restart of noemad; `noemactl wake MIND` ends it early.
    """
    if (span is None) == (until is None):
        raise BadInput("say how long the mind sleeps: --for DURATION (30m, 8h) or --until TIME, one of them")
    if span is not None:
        span = span_ahead(span, "--for")
    s = session(ctx)
    data = s.client.sleep(mind, until, span, note)
    s.present(data, json, lambda: _view().slept(data))


@commands.command("wake", cls=PlainCommand)
def wake(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """End a mind's sleep now; the next stimulus meets its wake rules again."""
    s = session(ctx)
    data = s.client.wake(mind)
    s.present(data, json, lambda: _view().woke(data))

