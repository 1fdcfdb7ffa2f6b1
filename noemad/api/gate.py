"""The gate's routes: a mind's wake rules, its gate's state, sleep and wake.

A rule body is taken as any JSON and read by the one validator
(`noemad.rules.shape.read_rule`, through the supervisor), so the API, the
config, noemactl and the mind's own tools refuse a bad rule with the same
sentence; pydantic only checks the envelope around it.

The routes that read a running gate are coroutines: a gate is read and
changed only on the loop that owns it, never from the thread pool a sync
route runs in.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from fastapi.routing import APIRouter
from pydantic import ConfigDict, Field

from noemad.api.operator import Op
from noemad.connectors.manager import Connectors
from noemad.connectors.view import connectors_view, with_connectors
from noemad.api.schemas import BodyIn
from noemad.fields import MAX_ID, JsonValue
from noemad.clock import parse_iso, span_seconds
from noemad.errors import InvalidInput
from noemad.gate.status import GateStatus
from noemad.runtime.gating import GateOverview, RulesChangeView, RulesView, RuleView, SleepState
from noemad.runtime.supervisor import Supervisor

MindName = Annotated[str, Path(description="The mind's name.")]
RuleName = Annotated[str, Path(description="The rule's name.", min_length=1, max_length=64)]
V1 = "/api/v1"
RULE_EXAMPLE = {
    "name": "ambient",
    "match": {"kinds": ["message"], "channel": "discord:*"},
    "behaviour": {"debounce": {"ms": 2000}},
}


class RuleIn(BodyIn):
    """A wake rule to add (or an edited one), and where."""

    rule: JsonValue = Field(
        description="The rule in its one shape: name, match (kinds, channel, author, flags, text, regex, tags_any, tags_all,"
        " tags_none), behaviour (one of always, defer, debounce {ms}, rate_limit {tokens, refill_ms, key_by},"
        " passive_sample {every, key_by}), passthrough, resets.",
        examples=[RULE_EXAMPLE],
    )
    position: int | None = Field(default=None, ge=1, le=MAX_ID, description="Where it goes: 1 is asked first; default last (an edit: where it stands).")


class MoveIn(BodyIn):
    """Where a rule moves to."""

    to: int = Field(ge=1, le=MAX_ID, description="Its new position: 1 is asked first; past the end means last.")


class DefaultIn(BodyIn):
    """What a stimulus no rule matches does."""

    behaviour: JsonValue = Field(description='A behaviour: "always", "defer", or an object such as {"debounce": {"ms": 2000}}.', examples=["always"])


class SleepIn(BodyIn):
    """How long a mind sleeps: until a time, or for a span."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=True)

    until: str | None = Field(default=None, description="An ISO time, e.g. 2026-01-01T08:00:00Z.")
    for_: str | None = Field(default=None, alias="for", description="A span from now: 90s, 30m, 8h, 1.5d.")
    note: str | None = Field(default=None, max_length=500, description="Why, shown in gate-status and on the timeline.")


def sleep_until(body: SleepIn, now: float) -> float:
    """The time a sleep ends, from `until` or `for` (exactly one of them)."""
    if (body.until is None) == (body.for_ is None):
        raise InvalidInput('say how long the mind sleeps: give "until" (an ISO time) or "for" (a span such as 30m), not both')
    if body.for_ is not None:
        span = span_seconds(body.for_, fractional=True)
        if span is None:
            raise InvalidInput(f"for={body.for_!r} is not a span; write a number and a unit such as 90s, 30m, 8h or 1.5d")
        return now + span
    try:
        return parse_iso(body.until or "")
    except ValueError:
        raise InvalidInput(f"until={body.until!r} is not an ISO time; write it like 2026-01-31T08:00:00Z") from None


def add_gate_routes(api: APIRouter, sup: Supervisor, connectors: Connectors) -> None:
    """Register the gate's routes on the app's router (see `create_app` for why not an included router)."""

    @api.get(V1 + "/minds/{mind}/rules", response_model=RulesView, summary="A mind's wake rules, in the order they are asked")
    def rules(mind: MindName) -> RulesView:
        """With the default behaviour, stored rules left out (and why), clamp notes and shadow warnings."""
        return sup.gating.rules(mind)

    @api.post(V1 + "/minds/{mind}/rules", response_model=RulesChangeView, status_code=201, summary="Add a wake rule")
    async def add_rule(mind: MindName, body: RuleIn, op: Op) -> RulesChangeView:
        """Read by the one validator: a rule of bad shape is refused (422) with a sentence saying what to write; a bound out of range is read at its nearest value, with a note. A name the mind already has is a conflict (409). The answer shows what a DM, a mention, a reply, ambient talk and an observation do before and after."""
        return await sup.gating.add_rule(mind, body.rule, body.position, actor=op.actor)

    # Before /rules/{name}: "default" is not a rule's name here.
    @api.put(V1 + "/minds/{mind}/rules/default", response_model=RulesChangeView, summary="Set what a stimulus no rule matches does")
    async def set_default(mind: MindName, body: DefaultIn, op: Op) -> RulesChangeView:
        return await sup.gating.set_default_behaviour(mind, body.behaviour, actor=op.actor)

    @api.get(V1 + "/minds/{mind}/rules/{name}", response_model=RuleView, summary="One wake rule and its position")
    async def rule(mind: MindName, name: RuleName) -> RuleView:
        return await sup.gating.rule(mind, name)

    @api.put(V1 + "/minds/{mind}/rules/{name}", response_model=RulesChangeView, summary="Edit a wake rule in place")
    async def edit_rule(mind: MindName, name: RuleName, body: RuleIn, op: Op) -> RulesChangeView:
        """Replace the rule in one change: it keeps its position (or moves to `position`) and its counters in the running gate, so no stimulus meets the rules without it, as one between a remove and an add would. The body's rule takes the name in the path when it gives none; another name is refused (422). Read by the one validator, as an added rule is; an unknown rule is 404. One gate_rules_changed event (action edit) records it with the rule before and after."""
        return await sup.gating.edit_rule(mind, name, body.rule, body.position, actor=op.actor)

    @api.delete(V1 + "/minds/{mind}/rules/{name}", response_model=RulesChangeView, summary="Remove a wake rule")
    async def remove_rule(mind: MindName, name: RuleName, op: Op) -> RulesChangeView:
        return await sup.gating.remove_rule(mind, name, actor=op.actor)

    @api.post(V1 + "/minds/{mind}/rules/{name}/move", response_model=RulesChangeView, summary="Move a wake rule to another position")
    async def move_rule(mind: MindName, name: RuleName, body: MoveIn, op: Op) -> RulesChangeView:
        return await sup.gating.move_rule(mind, name, body.to, actor=op.actor)

    @api.get(V1 + "/minds/{mind}/gate", response_model=GateStatus, summary="A mind's gate now")
    async def gate(mind: MindName) -> GateStatus:
        """Per rule its behaviour, match, matches and last match, pending batch and next delivery, buckets and denials, sampling counters; sleep; the self-wake; upcoming wakes, soonest first; held and dropped counts; reading errors, clamp notes and shadow warnings. Counters are since the daemon started."""
        status = await sup.gating.gate_status(mind)
        return with_connectors(status, await connectors_view(connectors, mind))

    @api.get(V1 + "/gate", response_model=GateOverview, summary="Every mind's gate now")
    async def gates() -> GateOverview:
        overview = await sup.gating.gate_overview()
        view = await connectors_view(connectors)
        return GateOverview(minds=[with_connectors(status, view) for status in overview.minds])

    @api.post(V1 + "/minds/{mind}/sleep", response_model=SleepState, summary="Put a mind to sleep until a time or for a span")
    async def sleep(mind: MindName, body: SleepIn, op: Op) -> SleepState:
        """Stimuli that arrive are stored and reach no wake rule; a message from a privileged author ([gate] privileged) wakes it. The sleep survives a restart."""
        return await sup.gating.sleep(mind, sleep_until(body, sup.clock.now()), body.note, actor=op.actor)

    @api.post(V1 + "/minds/{mind}/wake", response_model=SleepState, summary="End a mind's sleep now")
    async def wake(mind: MindName, op: Op) -> SleepState:
        return await sup.gating.wake(mind, actor=op.actor)
