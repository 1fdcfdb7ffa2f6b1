"""Pydantic models at the API's edge: what bodies may hold and what answers look like.

Every input model forbids unknown fields, so a typo is an error, not a silently
dropped value. An answer that is a record (an event, a belief, a job…) is that
record's own dataclass, which is its one wire definition (noemad/wire.py);
here are only the envelopes around them and what the API alone adds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, field_serializer

from noemad.background.jobs import Job
from noemad.background.scheduler import MindNews
from noemad.cognition.beliefs.model import Belief
from noemad.cognition.trust import TrustLevel
from noemad.cognition.goals import Goal
from noemad.cognition.memory.model import Memory
from noemad.cognition.notifications.table import Notification
from noemad.cognition.predictions import Prediction
from noemad.config.mind import MindSettings
from noemad.events import Event
from noemad.minds import Mind
from noemad.runtime.job_control import Schedule
from noemad.fields import BODY, Id, JsonObject, Text
from noemad.wire import wire

# The keys a mind's settings may hold, documented in noemactl(1) and noemad.toml(5); checked by
# noemad.config.mind.parse_mind_settings where the supervisor takes them, so every edge says the same sentence.
_SETTING_KEYS = ", ".join(k for k in MindSettings.model_fields if k != "gate") + " (see noemad.toml(5), MIND SETTINGS)"  # gate: only the file seeds it


class BodyIn(BaseModel):
    """A request body: unknown fields, loose types and non-finite numbers are refused."""

    model_config = BODY


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


class MindList(BaseModel):
    minds: list[Mind]


class MindDeleted(BaseModel):
    name: str
    events_removed: int


class ClockAdvance(BodyIn):
    seconds: float = Field(gt=0, le=10 * 365 * 86400)


class Problem(BaseModel):
    """An error, as RFC 9457 problem+json."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str


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


class ScheduleList(BaseModel):
    schedules: list[Schedule]


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
