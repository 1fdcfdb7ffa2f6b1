"""Pydantic models at the API's edge: what bodies may hold and what answers look like.

Every input model forbids unknown fields, so a typo is an error, not a silently
dropped value. An answer that is a record (an event, a belief, a job…) is that
record's own dataclass, which is its one wire definition (noemad/wire.py);
here are only the envelopes around them and what the API alone adds.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Annotated, Any, Literal

from annotated_types import Ge, Le
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_serializer

from noemad.background.jobs import Job
from noemad.background.scheduler import MindNews
from noemad.cognition.beliefs import Belief, TrustLevel
from noemad.cognition.goals import Goal
from noemad.cognition.memory import Memory
from noemad.cognition.notifications import Notification
from noemad.cognition.predictions import Prediction
from noemad.config.schema import MindSettings
from noemad.events import Event
from noemad.minds import Mind
from noemad.models.holds import Hold
from noemad.names import name_problem
from noemad.wire import wire

MAX_TEXT = 100_000  # characters of one stimulus' text



def _named(what: str) -> AfterValidator:
    """The one name check (noemad.names) for a field holding a `what`; its sentence becomes the 422's."""

    def check(value: str) -> str:
        problem = name_problem(value, what)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


# Authors, sources, channels, mentions and tags are names: one rule (noemad.names), surrounding blanks dropped.
Author = Annotated[str, StringConstraints(strip_whitespace=True), _named("author")]
Source = Annotated[str, StringConstraints(strip_whitespace=True), _named("source")]
Channel = Annotated[str, StringConstraints(strip_whitespace=True), _named("channel")]
Mention = Annotated[str, StringConstraints(strip_whitespace=True), _named("mention")]
Tag = Annotated[str, StringConstraints(strip_whitespace=True), _named("tag")]
Subject = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
"""What a proposition is about: free words (normalised to a key), not a name."""
Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]

MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id names nothing, and must not reach a query (it overflows)
Id = Annotated[int, Ge(1), Le(MAX_ID)]
"""A stored row's id, wherever one arrives (path, query, body): beyond SQLite's range it is refused at the edge (422)."""
Since = Annotated[int, Ge(0), Le(MAX_ID)]
"""An event id to read after (0: from the start), bounded as `Id` is."""


def _unicode(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (\ud800) parses from JSON but cannot be written back out: stored, every read of it would fail.
        raise ValueError(f"{where or 'the value'} holds a lone surrogate ({text!r:.40}); send valid Unicode text") from None


def _finite(value: Any, where: str = "") -> None:
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or Infinity (1e999 reads as Infinity): stored, it would make every read of it fail.
        raise ValueError(f"{where or 'the value'} is {value!r}, not a finite number; send finite numbers only")
    if isinstance(value, str):
        _unicode(value, where)
    elif isinstance(value, dict):
        for key, inner in value.items():
            _unicode(str(key), where)
            _finite(inner, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            _finite(inner, f"{where}[{i}]")


def _finite_json(value: Any) -> Any:
    _finite(value)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_finite_json)]
"""Free JSON a body carries (observation data, settings, rules): any shape, but finite numbers and valid Unicode only."""
JsonValue = Annotated[Any, AfterValidator(_finite_json)]


# The keys a mind's settings may hold, documented in noemactl(1) and noemad.toml(5); checked by
# noemad.config.schema.parse_mind_settings where the supervisor takes them, so every edge says the same sentence.
_SETTING_KEYS = ", ".join(k for k in MindSettings.model_fields if k != "gate") + " (see noemad.toml(5), MIND SETTINGS)"  # gate: only the file seeds it


class BodyIn(BaseModel):
    """A request body: unknown fields, loose types and non-finite numbers are refused."""

    # Strict: a bool is not a number nor a number a bool ({"value": false} is not trust 0); finite floats only.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class MindCreate(BodyIn):
    """Create a mind."""

    name: str = Field(description="1-63 lowercase letters, digits, '-' or '_'.", examples=["ada"])
    settings: JsonObject = Field(default_factory=dict, description=f"The mind's settings: {_SETTING_KEYS}.")


class MindPatch(BodyIn):
    """Change a mind's stored settings: a JSON merge patch (a value sets its key, null unsets it)."""

    settings: JsonObject = Field(
        description=f"The keys to change: {_SETTING_KEYS}; tables (models, schedules, budgets) merge key by key.",
        examples=[{"persona": "You are Ada.", "notify_cooldown": None}],
    )


class MindDelete(BodyIn):
    """Delete a mind: repeat its name to confirm."""

    confirm: str = Field(description="The mind's name, repeated.")


class MessageIn(BodyIn):
    """Someone says something to the mind."""

    kind: Literal["message"]
    author: Author = Field(examples=["alice"], description="Who said it: a name (letters, digits, _ . : # @ / -).")
    channel: Channel = Field("cli", description="Where it was said, e.g. discord:guild:chan.")
    text: Text
    mentions: list[Mention] = Field(default_factory=list, max_length=100)
    dm: bool = Field(False, description="Said in a direct channel (the `dm` flag of wake rules).")
    reply_to: Id | None = Field(
        None, description="The event it answers; one of the mind's replies sets the `reply` flag of wake rules."
    )
    bot: bool = Field(False, description="The author is a bot (the `from_bot` flag of wake rules).")
    tags: list[Tag] = Field(default_factory=list, max_length=50, description="Names wake rules match with tags_any, tags_all, tags_none.")


Proposition = Annotated[str, StringConstraints(min_length=1, max_length=1000, strip_whitespace=True)]


class ClaimIn(BodyIn):
    """A proposition about a subject, supported or contradicted."""

    proposition: Proposition = Field(examples=["the build is green"])
    subject: Subject = Field(examples=["build"], description="What the proposition is about; normalised to a key.")
    stance: Literal["supports", "contradicts"] = "supports"


class ObservationIn(BodyIn):
    """A sensed fact from a named source; `claim` states what it supports or contradicts."""

    kind: Literal["observation"]
    source: Source = Field(examples=["thermometer"])
    text: Text
    data: JsonObject = Field(default_factory=dict)
    claim: ClaimIn | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=50, description="Names wake rules match with tags_any, tags_all, tags_none.")


class AssertionIn(BodyIn):
    """Someone states a proposition; credibility comes from how far the mind trusts them."""

    kind: Literal["assertion"]
    source: Source = Field(examples=["alice"])
    channel: Channel = "cli"
    claim: ClaimIn


class CorrectionIn(BodyIn):
    """An operator corrects a belief: a status, a confidence (which pins it), or both, and why."""

    kind: Literal["correction"]
    belief: Id
    reason: Text
    status: Literal["active", "pinned", "rejected"] | None = None
    confidence: float | None = Field(None, ge=0, le=1)


class GoalIn(BodyIn):
    """An operator sets a goal (`title`), or changes one (`goal` with `progress` and/or `status`).

    Progress 1 or status `completed` completes a goal; `abandoned` drops it; a closed goal takes no more changes.
    """

    kind: Literal["goal"]
    title: Proposition | None = Field(None, examples=["ship the parser rewrite"], description="A new goal's title.")
    goal: Id | None = Field(None, description="The id of the goal to change.")
    progress: float | None = Field(None, ge=0, le=1, description="How far along, from 0 to 1.")
    status: Literal["completed", "abandoned"] | None = Field(None, description="Close the goal given by `goal`.")
    note: Text | None = Field(None, description="Why; kept with the change.")


class PredictionIn(BodyIn):
    """A prediction: a proposition expected true by a due time, at a stated confidence.

    It rests on the proposition's belief (evidence of kind hypothesis at the stated confidence).
    """

    kind: Literal["prediction"]
    proposition: Proposition = Field(examples=["the deploy finishes without a rollback"])
    subject: Subject = Field(examples=["deploy"], description="What the proposition is about; normalised to a key.")
    confidence: float = Field(ge=0, le=1, description="The stated confidence, from 0 to 1.")
    due: Annotated[str, StringConstraints(min_length=1, max_length=64, strip_whitespace=True)] = Field(
        examples=["2h", "2026-02-01T12:00:00Z"],
        description="When it is due: an ISO time, or a span ahead of the daemon's clock (30m, 2h, 3d); in the future.",
    )


class OutcomeIn(BodyIn):
    """What came of a prediction: a hit or a miss (final), with the observed value as text if given."""

    kind: Literal["outcome"]
    prediction: Id = Field(description="The id of the open prediction it resolves.")
    result: Literal["hit", "miss"]
    observed: Text | None = Field(None, description="What was observed, e.g. a measured value.")


StimulusIn = Annotated[
    MessageIn | ObservationIn | AssertionIn | CorrectionIn | GoalIn | PredictionIn | OutcomeIn, Field(discriminator="kind")
]


class TrustIn(BodyIn):
    """How far a mind trusts a source, from 0 (not at all) to 1."""

    value: float = Field(ge=0, le=1)


# Wire objects are their records' dataclasses (see noemad/wire.py); this layer
# only adds what the API alone shows, as subclasses, and the lists' envelopes.


@wire
@dataclass(frozen=True)
class BeliefOut(Belief):
    """A belief with its evidence, as one belief is shown."""

    events: list[int] | None = None
    """The events that wrote and changed it, oldest first."""


@wire
@dataclass(frozen=True)
class ListedBelief(BeliefOut):
    """A belief in a list: its evidence counted (`support`, `contradict`), not shown."""

    @field_serializer("evidence")
    def _not_listed(self, evidence: object) -> None:
        return None


class BeliefList(BaseModel):
    beliefs: list[ListedBelief]


class GoalList(BaseModel):
    goals: list[Goal]


@wire
@dataclass(frozen=True)
class PredictionOut(Prediction):
    """A prediction and, once resolved, its outcome."""

    overdue: bool
    """Open and past its due time, by the daemon's clock."""


class PredictionList(BaseModel):
    predictions: list[PredictionOut]


class NotificationList(BaseModel):
    notifications: list[Notification]


class MemoryIn(BodyIn):
    """An operator's memory: a fact (semantic) or a way of doing things (procedural)."""

    kind: Literal["semantic", "procedural"] = "semantic"
    text: Text
    derived_from: list[Id] = Field(default_factory=list, max_length=63, description="Memories it generalises.")
    importance: float | None = Field(None, ge=0, le=1, description="Default: computed from the text and kind.")
    tags: list[str] = Field(default_factory=list, max_length=20, description="Names for it (e.g. legal); recalled, they are governance evidence.")


class MemoryList(BaseModel):
    memories: list[Memory]


class TrustOut(BaseModel):
    mind: str
    source: str
    value: float


class StimulusTurn(BaseModel):
    """Where a stimulus is on its way to a turn, for a caller waiting for the reply."""

    event: int
    mind: str
    waiting: bool = Field(description="No turn has taken it yet.")
    verdict: Literal["batch", "defer", "deny", "asleep"] | None = Field(
        description="While waiting: what the gate said, when it did not wake the mind at once (null: it did, or it is taken)."
    )
    rule: str | None = Field(description="The rule that decided (null: the mind's default, or its sleep).")
    paused: bool = Field(description="The mind is paused: no turn runs until it is resumed.")
    respond_model: bool = Field(description="The mind has a respond model: its turns draft replies to messages.")


class TrustList(BaseModel):
    """The trust levels a mind was told; any other source counts at `default`."""

    mind: str
    default: float
    trust: list[TrustLevel]


class EventList(BaseModel):
    events: list[Event]
    next_since: int = Field(description="Pass as `since` to get the events after these.")
    last_id: int = Field(
        0, description="The mind's newest event id when these were read: follow the stream after it to miss and repeat nothing."
    )


class WarningOut(BaseModel):
    """A metacognition warning: which check fired on what."""

    event: int
    at: str
    check: str
    ref: str
    text: str | None


class ArchivedCount(BaseModel):
    """How much of a mind's log has been archived (`noemactl archive`)."""

    events: int
    archives: int


@wire
@dataclass(frozen=True, kw_only=True)  # after the mind's own fields, some of which have defaults
class MindOverview(Mind):
    """A mind with its counts, its newest events and warnings."""

    events: int
    """Events ever written, archived ones included."""
    last_event_id: int
    archived: ArchivedCount
    turn_running: bool
    settings_problems: list[str]
    """A sentence per stored setting no longer valid (left out, its default applies) until it is set or unset."""
    settings_in_force: dict[str, Any]
    """The keys the mind runs with that are not defaults: its stored settings over its [minds.NAME] table (spans as seconds)."""
    recent: list[Event]
    warnings: list[WarningOut]
    """The newest metacognition warnings, oldest first."""


class MindList(BaseModel):
    minds: list[Mind]


class MindDeleted(BaseModel):
    name: str
    events_removed: int


class ConfigState(BaseModel):
    source: str
    path: str
    loaded_at: str
    reloads: int
    reload_error: str | None
    reload_error_at: str | None


class TurnRetry(BaseModel):
    """A mind's last turn failed: its stimuli are taken again at `at` (backoff from 5 s, doubling, at most 5 min)."""

    attempt: int = Field(description="Failures in a row.")
    at: str
    stimuli: int = Field(description="Stored stimuli the failed turn did not perceive.")
    error: str


class MindStatus(BaseModel):
    name: str
    events: int
    turn_running: bool
    paused: bool
    retry: TurnRetry | None = Field(None, description="Set while a failed turn's stimuli wait for their retry.")


class Counts(BaseModel):
    minds: int
    events: int
    last_event_id: int
    commits: int


class ModelsState(BaseModel):
    provider: Literal["none", "anthropic", "scripted"]
    holds: list[Hold]


class UsageRow(BaseModel):
    """Spend of one group: calls by outcome, tokens four ways, dollars and the cache hit rate."""

    model_config = ConfigDict(extra="allow")  # the group key: role, model, day or mind

    calls: int
    ok: int
    failed: int
    refused: int
    cancelled: int = Field(0, description="Calls cancelled before they answered (e.g. a judge call a turn or its timeout cancelled).")
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float
    cache_hit_rate: float | None = Field(description="Cache reads over all input tokens; null with no input.")


class UsageOut(BaseModel):
    by: Literal["role", "model", "day", "mind"]
    mind: str | None
    since: str | None
    rows: list[UsageRow]


class JobsState(BaseModel):
    """Background jobs under way and schedules paused."""

    running: list[int] = Field(description="Ids of the jobs running now.")
    paused_schedules: list[Literal["reflection", "consolidation"]]
    scheduler_looked_at: str | None = Field(description="When the scheduler last looked for due jobs (it looks every minute).")


class StatusOut(BaseModel):
    """The daemon's state."""

    version: str
    pid: int
    started_at: str
    uptime_s: float
    now: str
    clock: Literal["system", "manual"]
    socket: str
    database: str
    config: ConfigState
    minds: list[MindStatus]
    counts: Counts
    models: ModelsState
    jobs: JobsState
    stopping: bool


class ClockAdvance(BodyIn):
    seconds: float = Field(gt=0, le=10 * 365 * 86400)


class Problem(BaseModel):
    """An error, as RFC 9457 problem+json."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str


class NarrativeParts(BaseModel):
    """The five parts of a narrative, at most three short items each."""

    doing: list[str] = Field(description="The cycle's admitted thoughts, in order.")
    why: list[str] = Field(description="The newest stimuli, e.g. 'alice said …'.")
    recently: list[str] = Field(description="Notable recent events: replies, belief status changes, warnings, goals, outcomes.")
    resolving: list[str] = Field(description="Contested beliefs, then active goals.")
    next: list[str] = Field(description="Open predictions with their due times.")


class NarrativeOut(BaseModel):
    """A mind's newest narrative; every field but `mind` is null before its first."""

    mind: str
    event_id: int | None = Field(description="The narrative_updated event.")
    at: str | None
    cycle_id: str | None
    text: str | None = Field(description="The narrative as shown: the narrate model's rephrasing if it was accepted, else the plain prose.")
    plain: str | None = Field(description="The plain prose rendered from the parts.")
    rendered_by: Literal["plain", "model"] | None
    reason: str | None = Field(
        description="Why it is plain: narrative_llm_off, not_rephrased, no_model, budget, held, refused, model_error, truncated,"
        " empty_answer or unsupported_content."
    )
    detail: str | None = Field(description="The reason as a sentence.")
    model_call: int | None = Field(description="The narrate model call, when one was made.")
    rephrased_event_id: int | None = Field(description="The narrative_rephrased event, when the mind asked for a rephrasing.")
    parts: NarrativeParts | None


# background jobs -----------------------------------------------------------------

JobKind = Literal["reflection", "consolidation"]


class JobIn(BodyIn):
    """Run a background job for a mind now."""

    kind: JobKind = Field(description="reflection or consolidation.", examples=["consolidation"])


class JobList(BaseModel):
    jobs: list[Job]


class ScheduleIn(BodyIn):
    """Pause or resume a kind's scheduled runs for every mind."""

    paused: bool


class ScheduleOut(BaseModel):
    """A kind's schedule: paused globally or not; `every` is the [schedules] default (minds may override it)."""

    kind: JobKind
    paused: bool
    paused_at: str | None
    actor: str | None
    every: str


class ScheduleList(BaseModel):
    schedules: list[ScheduleOut]


class NewsList(BaseModel):
    """For each mind, whether it has had news since its last job of `kind` (what the scheduler checks)."""

    kind: JobKind
    minds: list[MindNews]


class RejectIn(BodyIn):
    """Reject a generalisation consolidation made."""

    reason: Annotated[str, StringConstraints(min_length=1, max_length=2000)] = Field(
        "rejected by an operator", description="Why: kept with the retraction."
    )


class RetractIn(BodyIn):
    """Retract a memory: it is no longer recalled; its text and links stay, marked retracted."""

    reason: Annotated[str, StringConstraints(min_length=1, max_length=2000)] = Field(description="Why: kept with the retraction.")


class RetractOut(BaseModel):
    """The retracted memory and the `memory_retracted` event recording it."""

    memory: Memory
    event: Event


class RejectOut(BaseModel):
    """The rejected generalisation: its memory (retracted) and its belief (rejected)."""

    memory: Memory
    belief: int | None
    event: Event
