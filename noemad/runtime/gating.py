"""The supervisor's gate control (`sup.gating`): a mind's wake rules, its gate's state, sleep and wake.

Every change is written on the writer by the module that owns its table
(`noemad.rules.table` for the rules, `noemad.gate.sleep` for sleep), each
with its event, and only then handed to the mind's actor, so the running
gate never holds a rule or a sleep the store does not. A rule body is read
by `noemad.rules.shape.read_rule`, the one validator every way in uses: its
refusal (`RuleRefused`, 422) carries the sentence the API and noemactl show.

Positions are 1-based everywhere an operator sees them (the API, noemactl,
the answers): rule 1 is the first one asked.

A running gate is read and changed only on the event loop that owns it (its
actor's): the reads here that show its state are coroutines, and what they
read from the store is read in a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.errors import InvalidInput, MindNotFound, RuleNotFound
from noemad.events import Event
from noemad.gate import sleep as sleeping
from noemad.gate.status import GateStatus, RuleStatus
from noemad.minds import get_mind
from noemad.rules import probe, table
from noemad.rules.shape import behaviour_data, read_behaviour, read_rule
from noemad.runtime.running_config import RunningConfig
from noemad.store import Store
from noemad.turn.govern import governance_counts, why_off
from noemad.wire import OMIT_NONE, IsoTime, wire

if TYPE_CHECKING:
    from noemad.models import ModelGateway
    from noemad.runtime.actor import MindActor

MAX_SLEEP = 366 * 86400.0  # seconds: a sleep longer than a year is a typo, not a plan


@wire
@dataclass
class RulesView:
    """A mind's wake rules in the order they are asked, and its default behaviour."""

    mind: str
    rules: list[dict[str, Any]]
    """Each rule in its one shape: name, match, behaviour (a one-key object), passthrough, resets. The first that matches decides."""
    default: dict[str, Any]
    """What a stimulus no rule matches does, e.g. {"always": {}}."""
    errors: list[str]
    """Stored rules left out because they no longer read (say, written by an older noemad), each with why."""
    notes: list[str]
    """Bounds read at their nearest value."""
    warnings: list[str]
    """Rules that would swallow DMs or mentions ahead of the rules that handle them."""


@wire
@dataclass
class ProbeLine:
    """What one kind of stimulus would do before and after a change."""

    probe: str
    """The stimulus: a DM, a mention, a reply to the mind, ambient human talk, ambient bot talk, an observation."""
    before: str
    after: str
    changed: bool


@wire
@dataclass
class RulesChangeView:
    """A change to a mind's wake rules: what was done, the rules after it, and what it changes for each kind of stimulus."""

    mind: str
    action: str
    """add, edit, remove, move or default."""
    rule: str | None
    """The rule added, edited, removed or moved (null for a new default)."""
    position: int | None
    """Where the rule now is (1 is asked first); null when removed or for a default."""
    event: int
    """The gate_rules_changed event that records the change."""
    rules: list[dict[str, Any]]
    default: dict[str, Any]
    notes: list[str]
    """Bounds of this change read at their nearest value."""
    warnings: list[str]
    """Shadow warnings for the rules after the change."""
    probes: list[ProbeLine]


@wire
@dataclass
class RuleView:
    """One wake rule and where it stands."""

    mind: str
    position: int
    """1 is asked first."""
    of: int
    """How many rules the mind has."""
    rule: dict[str, Any]
    state: RuleStatus | None = None
    """Its counters, batch and buckets in the running gate (as gate-status shows them)."""
    notes: list[str] = field(default_factory=list)
    """Its bounds read at their nearest value when it was written (the notes its add or edit answered)."""


@wire
@dataclass
class GateOverview:
    """Every mind's gate."""

    minds: list[GateStatus]


@wire
@dataclass
class SleepState:
    """Whether a mind sleeps, until when, and the event that said so."""

    mind: str
    sleeping: bool
    until: Annotated[IsoTime | None, OMIT_NONE] = None
    note: Annotated[str | None, OMIT_NONE] = None
    event: Annotated[int | None, OMIT_NONE] = None
    """The mind_slept or mind_woke event; absent when nothing changed (waking a mind that was awake)."""
    privileged: Annotated[list[str] | None, OMIT_NONE] = None
    """Authors whose messages still wake it (the [gate] privileged setting)."""


class Gating:
    """The gates of a daemon's minds, read and changed.

    It works with the store and clock, the running actors (the supervisor's
    dict, shared), the gateway and running config (what judging and
    governance are set to), and the supervisor's check that it takes work.
    """

    def __init__(
        self, store: Store, clock: Clock, actors: dict[str, MindActor], gateway: ModelGateway, running: RunningConfig,
        check_open: Callable[[], None],
    ) -> None:
        self.store = store
        self.clock = clock
        self.actors = actors  # the supervisor adds and removes actors in this dict: never replaced
        self.gateway = gateway
        self.running = running
        self._check_open = check_open

    # rules -------------------------------------------------------------------

    def rules(self, mind: str) -> RulesView:
        db = self.store.reader()
        get_mind(db, mind)
        return _rules_view(mind, table.stored_rules(db, mind))

    def _stored_rules(self, mind: str) -> table.StoredRules:
        db = self.store.reader()
        get_mind(db, mind)
        return table.stored_rules(db, mind)

    async def rule(self, mind: str, name: str) -> RuleView:
        """One rule as stored, with its state in the running gate (read on the gate's loop)."""
        stored = await self.store.off_loop(lambda: self._stored_rules(mind))
        for index, rule in enumerate(stored.rules):
            if rule.name == name:
                actor = self.actors.get(mind)
                running = actor.gate.status(self.clock.now()).rules if actor is not None else []
                state = next((r for r in running if r.name == name), None)
                return RuleView(
                    mind=mind, position=index + 1, of=len(stored.rules), rule=rule.to_data(), state=state,
                    notes=list(stored.rule_notes.get(name, ())),
                )
        raise RuleNotFound(_no_rule(mind, name, stored))

    async def add_rule(self, mind: str, body: Any, position: int | None = None, actor: str = "operator") -> RulesChangeView:
        """Add a rule (at `position`, 1 first; default last), read by the one validator."""
        read = read_rule(body, judge=self.running.config.gate.judge.enabled)
        index = None if position is None else _index(position)
        return await self._change(
            mind, "add", read.rule.name, read.notes,
            lambda db, now: table.add_rule(db, mind, read.rule, position=index, actor=actor, now=now, notes=read.notes),
        )

    async def edit_rule(
        self, mind: str, name: str, body: Any, position: int | None = None, actor: str = "operator"
    ) -> RulesChangeView:
        """Replace rule `name` with `body` in one change, in its place (or at `position`, 1 first); its counters stay.

        A body without a name takes `name`; one naming another rule is refused,
        as an edit keeps the name (a new name is a new rule: add it, remove the old).
        """
        if isinstance(body, dict) and "name" not in body:
            body = {"name": name, **body}
        read = read_rule(body, judge=self.running.config.gate.judge.enabled)
        if read.rule.name != name:
            raise InvalidInput(
                f"the rule given is named {read.rule.name!r}, but the rule edited is {name!r}; an edit keeps the name:"
                f" give {name!r} (or no name), or add {read.rule.name!r} as a new rule and remove {name!r}"
            )
        index = None if position is None else _index(position)
        return await self._change(
            mind, "edit", name, read.notes,
            lambda db, now: table.edit_rule(db, mind, read.rule, position=index, actor=actor, now=now, notes=read.notes),
        )

    async def remove_rule(self, mind: str, name: str, actor: str = "operator") -> RulesChangeView:
        return await self._change(mind, "remove", name, (), lambda db, now: table.remove_rule(db, mind, name, actor=actor, now=now))

    async def move_rule(self, mind: str, name: str, to: int, actor: str = "operator") -> RulesChangeView:
        """Move a rule to position `to` (1 first; past the end means last)."""
        index = _index(to)
        return await self._change(mind, "move", name, (), lambda db, now: table.move_rule(db, mind, name, to=index, actor=actor, now=now))

    async def set_default_behaviour(self, mind: str, body: Any, actor: str = "operator") -> RulesChangeView:
        """Set what a stimulus no rule matches does ("always", {"debounce": {"ms": 2000}}, ...)."""
        behaviour, notes = read_behaviour(body)
        return await self._change(
            mind, "default", None, notes, lambda db, now: table.set_default(db, mind, behaviour, actor=actor, now=now)
        )

    async def _change(
        self, mind: str, action: str, name: str | None, notes: Any, write: Callable[[Database, float], Event]
    ) -> RulesChangeView:
        """Write one change with its event, hand the rules after it to the actor, answer with the probe table."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        now = self.clock.now()

        def job(db: Database) -> tuple[table.StoredRules, Event, table.StoredRules]:
            before = table.stored_rules(db, mind)
            event = write(db, now)
            return before, event, table.stored_rules(db, mind)

        before, event, after = await self.store.writer.run(job)
        self._rules_changed(mind, after)
        names = [r.name for r in after.rules]
        position = names.index(name) + 1 if name in names and action != "remove" else None
        return RulesChangeView(
            mind=mind,
            action=action,
            rule=name,
            position=position,
            event=event.id,
            rules=[r.to_data() for r in after.rules],
            default=behaviour_data(after.default),
            notes=list(notes),
            warnings=probe.shadow_warnings(after.rules, after.default),
            probes=[
                ProbeLine(probe=row.probe, before=row.before, after=row.after, changed=row.before != row.after)
                for row in probe.probe_table(before, after)
            ],
        )

    def _rules_changed(self, mind: str, stored: table.StoredRules) -> None:
        """Hand the stored rules to the mind's running gate: the next stimulus meets them."""
        actor = self.actors.get(mind)
        if actor is not None:
            actor.rules_changed(stored)

    # the gate's state ------------------------------------------------------------

    async def gate_status(self, mind: str) -> GateStatus:
        """A mind's gate now: its rules' counters, pending batches, buckets, sleep, self-wake, upcoming wakes."""
        actor = self.actors.get(mind)
        if actor is None:
            await self.store.off_loop(lambda: get_mind(self.store.reader(), mind))  # raises MindNotFound with its hint
            raise MindNotFound(f"mind {mind!r} is not running")
        status = actor.gate.status(self.clock.now())
        return await self.store.off_loop(lambda: self._with_governance(status))

    def _with_governance(self, status: GateStatus) -> GateStatus:
        """`status` with the mind's governance counts since its gate started."""
        counts = governance_counts(self.store.reader(), status.mind, status.since)
        off = why_off(self.gateway, status.mind, self.running.settings_of(status.mind))
        return replace(status, governance=replace(counts, off=off))

    async def gate_overview(self) -> GateOverview:
        """Every running mind's gate, by name."""
        now = self.clock.now()
        statuses = [actor.gate.status(now) for _, actor in sorted(self.actors.items())]
        return GateOverview(minds=await self.store.off_loop(lambda: [self._with_governance(s) for s in statuses]))

    # sleep -------------------------------------------------------------------

    async def sleep(self, mind: str, until: float, note: str | None, actor: str = "operator") -> SleepState:
        """Put a mind to sleep until `until`: stimuli are stored and reach no rule; privileged authors still wake it."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        now = self.clock.now()
        if until <= now:
            raise InvalidInput("the sleep would end before it begins; give a time in the future or a span such as 30m")
        if until - now > MAX_SLEEP:
            raise InvalidInput("a sleep lasts at most 366 days; give a nearer time or a shorter span")
        event = await self.store.writer.run(lambda db: sleeping.sleep(db, mind, until, note, actor=actor, now=now))
        mind_actor = self.actors.get(mind)
        if mind_actor is not None:
            mind_actor.slept(until, note)
        return SleepState(mind=mind, sleeping=True, until=until, note=note, event=event.id, privileged=self._privileged())

    async def wake(self, mind: str, actor: str = "operator") -> SleepState:
        """End a mind's sleep now (waking a mind that is awake changes nothing)."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        now = self.clock.now()
        event = await self.store.writer.run(lambda db: sleeping.wake(db, mind, actor=actor, now=now))
        mind_actor = self.actors.get(mind)
        if event is not None and mind_actor is not None:
            mind_actor.woke()
        return SleepState(mind=mind, sleeping=False, event=event.id if event is not None else None)

    def _privileged(self) -> list[str]:
        return list(self.running.config.gate.privileged)


def _rules_view(mind: str, stored: table.StoredRules) -> RulesView:
    return RulesView(
        mind=mind,
        rules=[r.to_data() for r in stored.rules],
        default=behaviour_data(stored.default),
        errors=list(stored.errors),
        notes=list(stored.notes),
        warnings=probe.shadow_warnings(stored.rules, stored.default),
    )


def _index(position: int) -> int:
    """A 1-based position as the table's 0-based index."""
    if position < 1:
        raise InvalidInput(f"position {position} is not a place in the list; rule 1 is asked first, so give 1 or more")
    return position - 1


def _no_rule(mind: str, name: str, stored: table.StoredRules) -> str:
    names = ", ".join(r.name for r in stored.rules) or "none yet"
    return f"mind {mind!r} has no wake rule named {name!r} (its rules: {names}); list them with `noemactl rules list {mind}`"

