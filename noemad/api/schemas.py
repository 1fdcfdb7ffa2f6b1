"""Pydantic models at the API's edge: what bodies may hold and what answers look like.

Every input model forbids unknown fields, so a typo is an error, not a silently
dropped value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

MAX_TEXT = 100_000  # characters of one stimulus' text

Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]
Channel = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:#@/-]+$")]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MindCreate(_In):
    """Create a mind."""

    name: str = Field(description="1-63 lowercase letters, digits, '-' or '_'.", examples=["ada"])
    settings: dict[str, Any] = Field(default_factory=dict, description="Personality and settings, free-form JSON.")


class MindDelete(_In):
    """Delete a mind: repeat its name to confirm."""

    confirm: str = Field(description="The mind's name, repeated.")


class MessageIn(_In):
    """Someone says something to the mind."""

    kind: Literal["message"]
    author: Name = Field(examples=["alice"])
    channel: Channel = Field("cli", description="Where it was said, e.g. discord:guild:chan.")
    text: Text
    mentions: list[Name] = Field(default_factory=list, max_length=100)


class ObservationIn(_In):
    """A sensed fact from a named source."""

    kind: Literal["observation"]
    source: Name = Field(examples=["thermometer"])
    text: Text
    data: dict[str, Any] = Field(default_factory=dict)


StimulusIn = Annotated[MessageIn | ObservationIn, Field(discriminator="kind")]


class RefOut(BaseModel):
    type: Literal["event", "memory", "belief", "model_call"]
    id: int


class EventOut(BaseModel):
    """A stored event with the links it was written with."""

    id: int
    mind: str
    kind: str
    actor: str
    at: str
    channel: str | None
    text: str | None
    data: dict[str, Any]
    cycle_id: str | None
    causation_id: int | None
    parents: list[int]
    refs: list[RefOut]
    subject: RefOut | None


class EventList(BaseModel):
    events: list[EventOut]
    next_since: int = Field(description="Pass as `since` to get the events after these.")


class MindOut(BaseModel):
    name: str
    created_at: str
    settings: dict[str, Any]
    mode: str


class MindOverview(MindOut):
    events: int
    last_event_id: int
    turn_running: bool
    recent: list[EventOut]


class MindList(BaseModel):
    minds: list[MindOut]


class MindDeleted(BaseModel):
    name: str
    events_removed: int


class NodeOut(EventOut):
    hop: int = Field(description="Hops from the root: negative for causes, positive for consequences.")
    reached_from: int | None
    reached_by: Literal["caused", "parent", "cited"] | None
    model_calls: list[dict[str, Any]]


class EdgeOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: int = Field(alias="from")
    to: int
    kind: Literal["caused", "parent", "cited"]
    via: RefOut | None = None


class GroupOut(BaseModel):
    cycle_id: str
    label: Literal["correlation"]
    events: list[int]


class TruncationOut(BaseModel):
    truncated: bool
    by: list[Literal["hops", "limit"]]
    omitted_back: int
    omitted_forward: int


class LimitsOut(BaseModel):
    back: int
    forward: int
    limit: int


class TimelineOut(BaseModel):
    """A causal walk around one event."""

    root: int
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    groups: list[GroupOut]
    truncation: TruncationOut
    limits: LimitsOut


class ConfigState(BaseModel):
    source: str
    path: str
    loaded_at: str
    reloads: int
    reload_error: str | None
    reload_error_at: str | None


class MindStatus(BaseModel):
    name: str
    events: int
    turn_running: bool
    paused: bool


class Counts(BaseModel):
    minds: int
    events: int
    last_event_id: int
    commits: int


class HoldOut(BaseModel):
    model: str
    until: str
    since: str
    reason: str


class ModelsState(BaseModel):
    provider: Literal["none", "anthropic", "scripted"]
    holds: list[HoldOut]


class UsageRow(BaseModel):
    """Spend of one group: calls by outcome, tokens four ways, dollars and the cache hit rate."""

    model_config = ConfigDict(extra="allow")  # the group key: role, model, day or mind

    calls: int
    ok: int
    failed: int
    refused: int
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
    stopping: bool


class ClockAdvance(_In):
    seconds: float = Field(gt=0, le=10 * 365 * 86400)


class Problem(BaseModel):
    """An error, as RFC 9457 problem+json."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
