"""The mind's own tools: its wake rules, and not replying this time.

With `[gate] mind_tools = true` the respond model is offered four tools:

- `wake_rules_list`: the mind's wake rules in the order they are asked, and its default;
- `wake_add_rule`: a rule in its one JSON shape (`noemad.rules.shape`), with an optional
  `position` (1 is asked first; omitted: last); a name the mind already has is an
  edit of that rule in one change (`noemad.rules.table.edit_rule`), in its place
  unless `position` is given, its counters kept;
- `wake_remove_rule {name}`;
- `skip_reply {wake_in?}`: no reply this turn; with `wake_in` (1..3600 s) the mind
  wakes itself that much later to look again.

The definitions are module constants, so their bytes are the same on every
call and stay inside the cached prefix. A call is validated by the same
reader every other way in uses (`read_rule`); whatever is wrong with it
(a refused rule, a taken name, an unknown rule) goes back to the model as an
error result it can read and act on, never out of the turn. Rule edits go
through `noemad.rules.table` on the writer with actor "mind" (each a
`gate_rules_changed` event), and every call is a `tool_called` event caused
by the message the turn answers and citing the model call that asked for it,
in the same writer job as the change it made.

A refused call of a tool that acts (every tool but `wake_rules_list`, and a
tool the mind does not have) is a denied action: an `action_denied` event
(`noemad.cognition.actions`) caused by the `tool_called` event, and the
notification rules run on it in the same writer job, so the operator hears
of it as of anything a cycle does (`denied_action`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.cognition.notifications import rules as notification_rules
from noemad.cognition.notifications import table as notifications
from noemad.cognition.actions import ActionDenied, record_denied
from noemad.config.mind import MindSettings
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of
from noemad.models import ModelResponse, Tool, ToolResult, ToolUse
from noemad.rules.probe import shadow_warnings
from noemad.rules.shape import behaviour_data, read_rule
from noemad.rules.table import RuleExists, add_rule, edit_rule, remove_rule, stored_rules
from noemad.store import Store
from noemad.turn.emit import ReplySkipped

WAKE_IN = (1, 3600)  # seconds a skipped reply may wait before the mind wakes itself
ACTOR = "model:respond"  # who calls the tools: the respond model, as it writes the reply
MAX_RESULT = 4000  # characters of a result kept in the tool_called event

_RULE_SCHEMA: dict[str, Any] = {
    "name": {"type": "string", "description": "Unique in the mind: 1-64 of A-Z a-z 0-9 _ . : -"},
    "match": {
        "type": "object",
        "description": "Every field given must hold; omit a field to match any.",
        "properties": {
            "kinds": {"type": "array", "items": {"type": "string"}, "description": "Stimulus kinds, such as message, observation."},
            "channel": {"type": "string", "description": "A glob on the channel, such as discord:*"},
            "author": {"type": "string", "description": "A glob on the author (a message's) or source (an observation's)."},
            "flags": {
                "type": "array",
                "items": {"type": "string", "enum": ["mention", "dm", "reply", "from_bot", "from_self"]},
                "description": "Any of these.",
            },
            "text": {"type": "string", "description": "Case-insensitive substring, or an RE2 pattern when regex is true."},
            "regex": {"type": "boolean"},
            "tags_any": {"type": "array", "items": {"type": "string"}},
            "tags_all": {"type": "array", "items": {"type": "string"}},
            "tags_none": {"type": "array", "items": {"type": "string"}},
        },
    },
    "behaviour": {
        "description": (
            'One of: "always" (wake now), "defer" (store it for your next turn, wake for nothing),'
            ' {"debounce": {"ms": 2000}} (wake once after that long with no new match),'
            ' {"rate_limit": {"tokens": 3, "refill_ms": 60000, "key_by": "channel"}},'
            ' {"passive_sample": {"every": 10, "key_by": "channel"}}.'
        ),
    },
    "passthrough": {"type": "boolean", "description": "rate_limit and passive_sample only: when it denies, later rules decide."},
    "resets": {"type": "array", "items": {"type": "string"}, "description": "Rules whose state is cleared when this one fires."},
}

WAKE_RULES_LIST = Tool(
    name="wake_rules_list",
    description=(
        "List your wake rules: what makes you take a turn. The first rule that matches a new message or observation"
        " decides; with none matching, your default behaviour decides. Positions count from 1."
    ),
    input_schema={"type": "object", "properties": {}},
)

WAKE_ADD_RULE = Tool(
    name="wake_add_rule",
    description=(
        "Add a wake rule: which new messages or observations wake you, and how. Everything is stored either way;"
        " a rule only decides when you take a turn. Giving the name of a rule you have changes that rule in one step,"
        " where it stands (or at position, if given), keeping its counters. The first matching rule decides, so keep rules for direct"
        " messages and mentions ahead of catch-all rules (a catch-all that defers placed first would keep you from"
        " waking when spoken to). Examples:\n"
        '{"name": "dms", "match": {"flags": ["dm", "mention"]}, "behaviour": "always", "position": 1}\n'
        '{"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*"}, "behaviour": {"debounce": {"ms": 5000}}}\n'
        '{"name": "bots", "match": {"flags": ["from_bot"]}, "behaviour": "defer"}\n'
        '{"name": "busy", "match": {"channel": "irc:#general"}, "behaviour": {"rate_limit": {"tokens": 3, "refill_ms": 600000}}}'
    ),
    input_schema={
        "type": "object",
        "properties": {
            **_RULE_SCHEMA,
            "position": {"type": "integer", "minimum": 1, "description": "Where it goes: 1 is asked first; omitted, last."},
        },
        "required": ["name", "behaviour"],
    },
)

# With `[gate.judge] enabled = true` only: the same tool, its description and
# behaviour text naming the judge. Without it the definitions above go out
# byte for byte as before, so no host pays for (or re-caches) judge text.
_JUDGE_BEHAVIOUR = (
    _RULE_SCHEMA["behaviour"]["description"][:-1]
    + ', {"judge": {"debounce_ms": 5000, "max_wait_ms": 60000, "instructions": "..."}} (after that long quiet, a small'
    " model reads your context and decides whether the batch wakes you; instructions, up to 4000 characters, are your"
    " word to it)."
)
JUDGE_WAKE_ADD_RULE = Tool(
    name="wake_add_rule",
    description=WAKE_ADD_RULE.description
    + '\n{"name": "room", "match": {"kinds": ["message"], "channel": "discord:*"}, "behaviour": {"judge": {"debounce_ms":'
    ' 5000, "instructions": "wake me when someone asks me something or the talk turns to the garden; let banter go by"}}}\n'
    "A judge rule costs a small model call per batch. Keep your rules for direct messages and mentions ahead of it, so"
    " those wake you without waiting for the judge.",
    input_schema={
        **WAKE_ADD_RULE.input_schema,
        "properties": {
            **WAKE_ADD_RULE.input_schema["properties"],
            "behaviour": {"description": _JUDGE_BEHAVIOUR},
        },
    },
)

WAKE_REMOVE_RULE = Tool(
    name="wake_remove_rule",
    description="Remove one of your wake rules by its name.",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)

SKIP_REPLY = Tool(
    name="skip_reply",
    description=(
        "Do not reply this time: nothing is said, and your turn ends. Give wake_in (seconds, 1 to 3600) to wake"
        " yourself that much later and look again (any turn before then cancels it)."
    ),
    input_schema={
        "type": "object",
        "properties": {"wake_in": {"type": "integer", "minimum": WAKE_IN[0], "maximum": WAKE_IN[1]}},
    },
)

MIND_TOOLS: tuple[Tool, ...] = (WAKE_RULES_LIST, WAKE_ADD_RULE, WAKE_REMOVE_RULE, SKIP_REPLY)
READS_ONLY: frozenset[str] = frozenset({WAKE_RULES_LIST.name})  # a refused call of any other tool is a denied action
JUDGE_MIND_TOOLS: tuple[Tool, ...] = (WAKE_RULES_LIST, JUDGE_WAKE_ADD_RULE, WAKE_REMOVE_RULE, SKIP_REPLY)


@dataclass(frozen=True)
class ToolCalled:
    """The data of a `tool_called` event: which tool, with what input, and what it answered."""

    name: str
    input: dict[str, Any]
    result: str
    is_error: bool

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "input": self.input, "result": self.result, "is_error": self.is_error}

    @classmethod
    def of(cls, event: Event) -> ToolCalled:
        data = data_of(event, "tool_called")
        return cls(data["name"], dict(data.get("input") or {}), data.get("result", ""), bool(data.get("is_error")))


@dataclass(frozen=True)
class SkipReply:
    """A turn that chose not to reply: when to wake again (seconds, if asked), the message skipped and the `reply_skipped` event."""

    wake_in: int | None
    cause: int  # the message the turn did not answer (a self-wake answers it then)
    event: int  # the reply_skipped event


def _clip(text: str) -> str:
    return text if len(text) <= MAX_RESULT else text[: MAX_RESULT - 1] + "…"


def _read_wake_in(value: Any) -> tuple[int | None, str]:
    """skip_reply's wake_in as whole seconds, read at the nearest bound with a note."""
    if value is None:
        return None, ""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"wake_in is a number of seconds from {WAKE_IN[0]} to {WAKE_IN[1]}, such as 600, not {value!r:.60}")
    seconds = math.ceil(value)
    low, high = WAKE_IN
    if seconds < low or seconds > high:
        near = min(max(seconds, low), high)
        return near, f" (wake_in {value:g} read as {near}: it is {low} to {high} seconds)"
    return seconds, ""


def _only(data: dict[str, Any], keys: tuple[str, ...], tool: str) -> None:
    unknown = [k for k in data if k not in keys]
    if unknown:
        takes = ", ".join(keys) or "no input"
        raise InvalidInput(f"{tool} takes {takes}; not {', '.join(map(repr, unknown))}")


class MindTools:
    """The tools of one turn: runs each call on the writer and remembers what the turn must do after."""

    def __init__(
        self, store: Store, clock: Clock, mind: str, answered: Event, cycle_id: str, judge: bool = False, settings: MindSettings | None = None
    ) -> None:
        self._store = store
        self._settings = settings or MindSettings()  # the mind's personality: what a denied action notifies
        self.judge = judge  # [gate.judge] enabled: judge rules are read, and the definitions say so (set by draft_reply)
        self._clock = clock
        self._mind = mind
        self._answered = answered
        self._cycle_id = cycle_id
        self.rules_changed = False  # a rule was added, changed or removed: the gate reloads its rules after the turn
        self.skip: ReplySkipped | None = None  # once skip_reply was called: the message not answered, and wake_in
        self.calls: list[int] = []  # the tool_called events, in order

    @property
    def definitions(self) -> tuple[Tool, ...]:
        """The tools offered: without judging, the gate issue's definitions byte for byte."""
        return JUDGE_MIND_TOOLS if self.judge else MIND_TOOLS

    @property
    def skipping(self) -> bool:
        return self.skip is not None

    async def handle(self, use: ToolUse, asked: ModelResponse) -> ToolResult:
        """Run one call; a wrong call is an error result the model reads, never an exception out of the turn."""
        job = self._job(use)
        call = asked.call_id
        try:
            result, is_error = await self._store.writer.run(lambda db: self._record(db, use, call, job(db), False))
        except (InvalidInput, NotFound, Conflict) as exc:  # the mind's mistakes; a failing store still fails the turn
            # The change (if any) was rolled back with its job; the call is still recorded, and a refused action as denied.
            reason = exc.detail  # read here: the name `exc` is unbound once the except block ends
            result, is_error = await self._store.writer.run(lambda db: self._refused(db, use, call, reason))
        return ToolResult(use.id, result, is_error)

    def _refused(self, db: Database, use: ToolUse, call: int | None, reason: str) -> tuple[str, bool]:
        """Record a refused call; if it would have acted, its denied action, and notify of it."""
        result, is_error = self._record(db, use, call, reason, True)
        if use.name in READS_ONLY:
            return result, is_error
        now = self._clock.now()
        denied = record_denied(
            db, mind=self._mind, denied=ActionDenied(use.name, reason), actor=ACTOR, cause=self.calls[-1], now=now,
            cycle_id=self._cycle_id, channel=self._answered.channel, refs=(Ref("model_call", call),) if call is not None else (),
        )
        found = notification_rules.evaluate(db, mind=self._mind, settings=self._settings, events=[denied], winners=[])
        notifications.notify(db, mind=self._mind, candidates=found, cycle_id=self._cycle_id, now=now, connectors=self._settings.connectors)
        return result, is_error

    def _job(self, use: ToolUse) -> Callable[[Database], str]:
        tools: dict[str, Callable[[Database, dict[str, Any]], str]] = {
            WAKE_RULES_LIST.name: self._list,
            WAKE_ADD_RULE.name: self._add,
            WAKE_REMOVE_RULE.name: self._remove,
            SKIP_REPLY.name: self._skip,
        }
        run = tools.get(use.name)
        if run is None:
            names = ", ".join(tools)

            def unknown(db: Database) -> str:
                raise InvalidInput(f"there is no tool named {use.name!r}; the tools are {names}")

            return unknown
        return lambda db: run(db, use.input)

    def _record(self, db: Database, use: ToolUse, call: int | None, result: str, is_error: bool) -> tuple[str, bool]:
        called = ToolCalled(use.name, dict(use.input), _clip(result), is_error)
        event = append(
            db,
            EventDraft(
                mind=self._mind,
                kind="tool_called",
                actor=ACTOR,
                channel=self._answered.channel,
                cycle_id=self._cycle_id,
                causation_id=self._answered.id,
                refs=[Ref("model_call", call)] if call is not None else [],  # the model call that asked for it
                text=f"{use.name}{' failed' if is_error else ''}: {_clip(result)[:200]}",
                data=called.to_data(),
            ),
            self._clock.now(),
        )
        self.calls.append(event.id)
        return result, is_error

    def _list(self, db: Database, data: dict[str, Any]) -> str:
        _only(data, (), WAKE_RULES_LIST.name)
        stored = stored_rules(db, self._mind)
        listing: dict[str, Any] = {
            "rules": [{"position": i, **rule.to_data()} for i, rule in enumerate(stored.rules, 1)],
            "default": behaviour_data(stored.default),
        }
        if stored.errors:
            listing["unreadable"] = list(stored.errors)
        return json.dumps(listing)

    def _add(self, db: Database, data: dict[str, Any]) -> str:
        body = dict(data)
        position = body.pop("position", None)
        if position is not None and (isinstance(position, bool) or not isinstance(position, int) or position < 1):
            raise InvalidInput(f"position counts from 1 (1 is asked first), not {position!r:.60}; omit it to add the rule last")
        read = read_rule(body, judge=self.judge)
        now = self._clock.now()
        index = None if position is None else position - 1
        editing = False
        try:
            event = add_rule(db, self._mind, read.rule, position=index, actor="mind", now=now, notes=read.notes)
        except RuleExists:  # refused before it wrote: a name it has already is an edit, in one change
            editing = True
            event = edit_rule(db, self._mind, read.rule, position=index, actor="mind", now=now, notes=read.notes)
        self.rules_changed = True
        stored = stored_rules(db, self._mind)
        place = [r.name for r in stored.rules].index(read.rule.name) + 1
        done = "changed" if editing else "added"
        lines = [f"{done} rule {read.rule.name!r} at position {place} of {len(stored.rules)} ({event.text})"]
        lines += [f"note: {n}" for n in read.notes]
        lines += [f"warning: {w}" for w in shadow_warnings(stored.rules, stored.default)]
        return "\n".join(lines)

    def _remove(self, db: Database, data: dict[str, Any]) -> str:
        _only(data, ("name",), WAKE_REMOVE_RULE.name)
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInput(f"wake_remove_rule needs name, the rule's name, such as {{\"name\": \"ambient\"}}; not {name!r:.60}")
        remove_rule(db, self._mind, name, actor="mind", now=self._clock.now())
        self.rules_changed = True
        stored = stored_rules(db, self._mind)
        left = ", ".join(r.name for r in stored.rules) or "none"
        lines = [f"removed rule {name!r}; your rules now: {left}"]
        lines += [f"warning: {w}" for w in shadow_warnings(stored.rules, stored.default)]
        return "\n".join(lines)

    def _skip(self, db: Database, data: dict[str, Any]) -> str:
        _only(data, ("wake_in",), SKIP_REPLY.name)
        wake_in, note = _read_wake_in(data.get("wake_in"))
        self.skip = ReplySkipped(self._answered.id, wake_in)
        then = f"; you will wake yourself in {wake_in} s{note}" if wake_in is not None else ""
        return f"no reply will be sent this turn{then}"
