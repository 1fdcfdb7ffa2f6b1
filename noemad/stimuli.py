"""Stimuli: what reaches a mind from outside, and the events that store them.

A stimulus is stored as an event the moment it arrives; the cognitive cycle
then takes it (perception writes its episode, and evidence for a belief when
it states a proposition). These are data, below cognition: what a stimulus
must satisfy against the mind's state before it is stored (the belief a
correction names exists, the goal a change names is open…) is checked by
`noemad.cognition.intake`, beside the state it reads.

Each stimulus class is the one definition of its kind. Its fields, with
the markers of noemad/wire.py, give: the API's request body (`body` derives
`MessageIn`… with the fields' types, constraints and docstrings; a `STAMPED`
field is the daemon's to set, an `Asked` one is given in another form), the
body's conversion (`from_body`), and what its event stores (`to_data()` is
the dataclass's JSON: `HIDDEN` fields are the event's own columns, text and
channel (`IN_TEXT`, `IN_CHANNEL`), and `OMIT_*` fields are stored only when
set, so an event stores what it always did), and how a stored event reads
back: `of(event)`, each field read as its declaration says (readers never
index `event.data` by hand), leniently: a stored event missing its author or
source (`OR_ACTOR`) reads as its actor, as readers always treated it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import AfterValidator, BaseModel, Field, PlainSerializer, StringConstraints
from sqlite_utils import Database

from noemad.clock import iso, parse_iso, span_seconds
from noemad.errors import InvalidInput
from noemad.events import Event, EventDraft, data_of
from noemad.fields import BODY, Author, Channel, Id, JsonObject, Mention, Proposition, Source, Subject, Tag, Text
from noemad.operator import is_operator
from noemad.wire import HIDDEN, OMIT_EMPTY, OMIT_NONE, STAMPED, Asked, IsoTime, body, dump, wire

Stance = Literal["supports", "contradicts"]
MAX_AHEAD = 100 * 365 * 86400  # seconds: how far ahead a prediction may be due


def _distinct(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


Tags = Annotated[tuple[Tag, ...], Field(max_length=50), AfterValidator(_distinct)]
"""Names wake rules match (noemad.rules), each kept once."""
Operator = Annotated[str | None, STAMPED, OMIT_NONE]
"""The operator whose connection stored a stimulus (`operator:root`): the daemon's to set, stored only when known."""


@dataclass(frozen=True)
class Column:
    """`Annotated[Text, HIDDEN, IN_TEXT]`: the field is kept in the event's own column (`text`, `channel`), not in its data."""

    name: Literal["text", "channel"]


IN_TEXT = Column("text")
IN_CHANNEL = Column("channel")


class _Or_actor:
    def __repr__(self) -> str:
        return "OR_ACTOR"


OR_ACTOR = _Or_actor()  # `Annotated[Author, OR_ACTOR]`: a stored event without the name reads as its actor, as readers always read it


S = TypeVar("S")  # a stimulus class, for `_made`


class _Stored:
    """A stimulus' event data is its JSON (noemad/wire.py), the event's own columns left out."""

    def to_data(self) -> dict[str, Any]:
        """What the stimulus' event stores in its data."""
        data: dict[str, Any] = dump(self)
        return data


class _Stimulus(_Stored):
    """A stimulus, read back from its event by `of`, derived from its fields (`_reader`)."""

    KIND: ClassVar[str]

    @classmethod
    def of(cls, event: Event) -> Self:
        """The stimulus a stored event of its kind holds."""
        data = data_of(event, cls.KIND)
        return _made(cls, {name: read(event, data) for name, read in _reader(cls).items()})

    @classmethod
    def field_of(cls, event: Event, name: str) -> Any:
        """One field of the stimulus `of` would read from `event`, read alone (the gate asks each stimulus for its operator)."""
        return _reader(cls)[name](event, data_of(event, cls.KIND))


def _made(cls: type[S], fields: dict[str, Any]) -> S:
    """The object cls(**fields) would make, without the frozen dataclass' __init__.

    Its __init__ sets a field at a time through object.__setattr__: 40% of reading a
    message back. No stimulus class has a __post_init__ to skip;
    tests/test_stimulus_definition.py compares both ways.
    """
    made = object.__new__(cls)
    object.__setattr__(made, "__dict__", fields)
    return made


@wire
@dataclass(frozen=True)
class Claim(_Stored):
    """A proposition about a subject, supported or contradicted."""

    proposition: Annotated[Proposition, Field(examples=["the build is green"])]
    subject: Annotated[Subject, Field(examples=["build"])]
    """What the proposition is about; normalised to a key."""
    stance: Stance = "supports"

    @classmethod
    def from_data(cls, data: Any) -> Claim | None:
        """The claim stored under a stimulus' `claim` key; None if there is none."""
        if not isinstance(data, dict) or not data:
            return None
        stance: Stance = "contradicts" if data.get("stance") == "contradicts" else "supports"
        return cls(str(data.get("proposition") or ""), str(data.get("subject") or ""), stance)


@wire
@dataclass(frozen=True)
class Message(_Stimulus):
    """Someone says something to the mind on a channel."""

    KIND = "message"
    author: Annotated[Author, Field(examples=["alice"]), OR_ACTOR]
    """Who said it: a name (letters, digits, _ . : # @ / ! + = -)."""
    text: Annotated[Text, HIDDEN, IN_TEXT]
    channel: Annotated[Channel, HIDDEN, IN_CHANNEL] = "cli"
    """Where it was said, e.g. discord:guild:chan."""
    mentions: Annotated[tuple[Mention, ...], Field(max_length=100)] = ()
    # What wake rules match on (noemad.rules); stored only when set, so a
    # message without them stores what it always did.
    dm: Annotated[bool, OMIT_EMPTY] = False
    """Said in a direct channel (the `dm` flag of wake rules)."""
    reply_to: Annotated[Id | None, OMIT_NONE] = None
    """The event it answers; one of the mind's replies sets the `reply` flag of wake rules."""
    bot: Annotated[bool, OMIT_EMPTY] = False
    """The author is a bot (the `from_bot` flag of wake rules)."""
    tags: Annotated[Tags, OMIT_EMPTY] = ()
    """Names wake rules match with tags_any, tags_all, tags_none."""
    from_self: Annotated[bool, OMIT_EMPTY] = False
    """Said from the mind's own account (e.g. its Matrix user from another client): stored, never wakes it (the `from_self` flag)."""
    edits: Annotated[Id | None, OMIT_NONE] = None
    """The message this one corrects (an edit): its text is the corrected text."""
    operator: Operator = None

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="message", actor=f"user:{self.author}", channel=self.channel, text=self.text, data=self.to_data())





@wire
@dataclass(frozen=True)
class Observation(_Stimulus):
    """A sensed fact from a named source; `claim` states what it supports or contradicts."""

    KIND = "observation"
    source: Annotated[Source, Field(examples=["thermometer"]), OR_ACTOR]
    text: Annotated[Text, HIDDEN, IN_TEXT]
    data: Annotated[JsonObject, OMIT_EMPTY] = field(default_factory=dict)
    claim: Annotated[Claim | None, OMIT_NONE] = None
    tags: Annotated[Tags, OMIT_EMPTY] = ()
    """Names wake rules match with tags_any, tags_all, tags_none."""
    operator: Operator = None

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="observation", actor=f"source:{self.source}", text=self.text, data=self.to_data())

    @property
    def stated_salience(self) -> float | None:
        """The salience the source stated in its data (`salience`, clamped to [0, 1]); None if it stated none usable."""
        value = self.data.get("salience")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return min(1.0, max(0.0, float(value)))



@wire
@dataclass(frozen=True)
class Assertion(_Stimulus):
    """Someone states a proposition; how much it counts (its credibility) depends on how far the mind trusts them."""

    KIND = "assertion"
    source: Annotated[Source, Field(examples=["alice"]), OR_ACTOR]
    claim: Claim  # an event stored without one reads as its text, with no subject
    channel: Annotated[Channel, HIDDEN, IN_CHANNEL] = "cli"
    operator: Operator = None

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind, kind="assertion", actor=f"user:{self.source}", channel=self.channel, text=self.claim.proposition, data=self.to_data()
        )



@wire
@dataclass(frozen=True)
class Correction(_Stimulus):
    """An operator corrects a belief: a status, a confidence (which pins it), or both, and why."""

    KIND = "correction"
    belief: Id
    reason: Annotated[Text, HIDDEN, IN_TEXT]
    status: Literal["active", "pinned", "rejected"] | None = None
    confidence: Annotated[float | None, Field(ge=0, le=1)] = None

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="correction", actor="operator", text=self.reason, data=self.to_data())



@wire
@dataclass(frozen=True)
class GoalStimulus(_Stimulus):
    """An operator sets a goal (`title`), or changes one (`goal` with `progress` and/or `status`).

    Progress 1 or status `completed` completes a goal; `abandoned` drops it; a closed goal takes no more changes.
    """

    KIND = "goal"
    goal: Annotated[Id | None, OMIT_NONE] = None
    """The id of the goal to change."""
    title: Annotated[Proposition | None, Field(examples=["ship the parser rewrite"]), OMIT_NONE] = None
    """A new goal's title."""
    progress: Annotated[float | None, Field(ge=0, le=1), OMIT_NONE] = None
    """How far along, from 0 to 1."""
    status: Annotated[Literal["completed", "abandoned"] | None, OMIT_NONE] = None
    """Close the goal given by `goal`."""
    note: Annotated[Text | None, OMIT_EMPTY] = None
    """Why; kept with the change."""

    @property
    def closes(self) -> bool:
        """Whether this change completes or abandons its goal."""
        return self.goal is not None and (self.status in ("completed", "abandoned") or (self.progress is not None and self.progress >= 1))


    def draft(self, mind: str) -> EventDraft:
        data = self.to_data()
        # Drafted before `check` runs: nothing here may assume a valid combination.
        if self.goal is None:
            text = self.title
        else:
            change = self.status or ("" if self.progress is None else f"progress {self.progress:g}")
            text = self.note or f"goal {self.goal}: {change}"
        return EventDraft(mind=mind, kind="goal", actor="operator", text=text, data=data)


def parse_due(text: str, now: float) -> float:
    """A due time from an ISO time or a span ahead of `now` (30m, 2h, 3d); it must be in the future."""
    text = text.strip()
    span = span_seconds(text)
    if span is not None:
        due = now + span
    else:
        try:
            due = parse_iso(text)
        except ValueError:
            raise InvalidInput(
                f"due={text!r} is neither an ISO time (2026-01-31T12:00:00Z) nor a span ahead of now (30m, 2h, 3d)"
            ) from None
    if due - now > MAX_AHEAD:
        raise InvalidInput(f"due={text!r} is more than 100 years ahead; predict what can be checked")
    if due <= now:
        raise InvalidInput(
            f"due={text!r} is not in the future (it is {iso(now)} now); a prediction is about what has not happened yet"
        )
    return due


Due = Annotated[str, StringConstraints(min_length=1, max_length=64, strip_whitespace=True), Field(examples=["2h", "2026-02-01T12:00:00Z"])]


@wire
@dataclass(frozen=True)
class PredictionStimulus(_Stimulus):
    """A prediction: a proposition expected true by a due time, at a stated confidence.

    It rests on the proposition's belief (evidence of kind hypothesis at the stated confidence).
    """

    KIND = "prediction"
    proposition: Annotated[Proposition, Field(examples=["the deploy finishes without a rollback"])]
    subject: Annotated[Subject, Field(examples=["deploy"])]
    """What the proposition is about; normalised to a key."""
    confidence: Annotated[float, Field(ge=0, le=1)]
    """The stated confidence, from 0 to 1."""
    due_at: Annotated[
        IsoTime,
        Asked(
            "due", Due, parse_due,
            "When it is due: an ISO time, or a span ahead of the daemon's clock (30m, 2h, 3d); in the future.",
        ),
    ]
    """When it is due (epoch seconds; stored as an ISO time)."""

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="prediction", actor="operator", text=self.proposition, data=self.to_data())



@wire
@dataclass(frozen=True)
class OutcomeStimulus(_Stimulus):
    """What came of a prediction: a hit or a miss (final), with the observed value as text if given."""

    KIND = "outcome"
    prediction: Id
    """The id of the open prediction it resolves."""
    result: Literal["hit", "miss"]
    observed: Text | None = None
    """What was observed, e.g. a measured value."""

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="outcome", actor="operator", text=self.observed or self.result, data=self.to_data())



# The request bodies, derived from the definitions above (noemad.wire.body): a new field is one edit there.
ClaimIn = body(Claim, "ClaimIn", BODY)
MessageIn = body(Message, "MessageIn", BODY, kind=Message.KIND)
ObservationIn = body(Observation, "ObservationIn", BODY, kind=Observation.KIND)
AssertionIn = body(Assertion, "AssertionIn", BODY, kind=Assertion.KIND)
CorrectionIn = body(Correction, "CorrectionIn", BODY, kind=Correction.KIND)
GoalIn = body(GoalStimulus, "GoalIn", BODY, kind=GoalStimulus.KIND)
PredictionIn = body(PredictionStimulus, "PredictionIn", BODY, kind=PredictionStimulus.KIND)
OutcomeIn = body(OutcomeStimulus, "OutcomeIn", BODY, kind=OutcomeStimulus.KIND)
if TYPE_CHECKING:
    StimulusIn = BaseModel  # what a type checker can hold of the union built at run time
else:
    StimulusIn = Annotated[
        MessageIn | ObservationIn | AssertionIn | CorrectionIn | GoalIn | PredictionIn | OutcomeIn, Field(discriminator="kind")
    ]
"""A stimulus' request body: the union of the bodies above, told apart by `kind`."""


# Reading a stored stimulus back: each field read as its declaration says. ----------
# Lenient, as readers always were: events were stored by older versions too, and a
# value that is not what the field holds reads as its default, never as an error.


def _event_id(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _names(value: Any) -> tuple[str, ...]:
    return tuple(str(t) for t in value) if isinstance(value, (list, tuple)) else ()


def _operator(value: Any) -> str | None:
    return value if isinstance(value, str) and is_operator(value) else None


_Read = Callable[[Event, dict[str, Any]], Any]


def _field_reader(f: dataclasses.Field[Any], hint: Any) -> _Read:
    """How the field `f` (declared as `hint`) is read from a stored event and its data."""
    name = f.name
    inner, meta = (get_args(hint)[0], get_args(hint)[1:]) if get_origin(hint) is Annotated else (hint, ())
    options = {a for a in get_args(inner) if a is not type(None)} if get_origin(inner) in (types.UnionType, Union) else set()
    base = get_args(next(iter(options)))[0] if len(options) == 1 and get_origin(next(iter(options))) is Annotated else next(iter(options), None)
    default = f.default
    column = next((m for m in meta if isinstance(m, Column)), None)
    if column is IN_TEXT:
        return lambda event, data: event.text or ""
    if column is IN_CHANNEL:
        return lambda event, data: event.channel or default
    if OR_ACTOR in meta:
        return lambda event, data: str(data.get(name, event.actor))
    if STAMPED in meta:
        return lambda event, data: _operator(data.get(name))
    if any(isinstance(m, PlainSerializer) and m.func is iso for m in meta):  # IsoTime: stored as an ISO time
        return lambda event, data: parse_iso(data[name])
    if inner is bool:
        return lambda event, data: data.get(name) is True
    if get_origin(inner) is tuple:
        return lambda event, data: _names(data.get(name))
    if get_origin(inner) is dict:
        return lambda event, data: dict(given) if isinstance(given := data.get(name), dict) else {}
    if inner is Claim:
        return lambda event, data: Claim.from_data(data.get(name)) or Claim(event.text or "", "")
    if base is Claim:
        return lambda event, data: Claim.from_data(data.get(name))
    if base is int:
        return lambda event, data: _event_id(data.get(name))
    if default is dataclasses.MISSING:
        return lambda event, data: data[name]
    return lambda event, data: data.get(name, default)


_READS: dict[type, dict[str, _Read]] = {}  # a dict, not functools.cache: mypy takes no class for a Hashable


def _reader(cls: type) -> dict[str, _Read]:
    """How each field of the stimulus class `cls` is read back, by name in declaration order, worked out once from its declaration."""
    found = _READS.get(cls)
    if found is None:
        hints = get_type_hints(cls, include_extras=True)
        found = _READS[cls] = {f.name: _field_reader(f, hints[f.name]) for f in dataclasses.fields(cls)}
    return found


Stimulus = Message | Observation | Assertion | Correction | GoalStimulus | PredictionStimulus | OutcomeStimulus
_CLASSES: tuple[type[Stimulus], ...] = (Message, Observation, Assertion, Correction, GoalStimulus, PredictionStimulus, OutcomeStimulus)
STIMULUS_KINDS = tuple(cls.KIND for cls in _CLASSES)
# Stimuli whose actor is who they claim to be from; the operator who stored one is kept beside it.
CLAIMED: tuple[type[Message], type[Observation], type[Assertion]] = (Message, Observation, Assertion)
_CLAIMED_KINDS: dict[str, type[Message] | type[Observation] | type[Assertion]] = {cls.KIND: cls for cls in CLAIMED}


def stored_by(stimulus: Stimulus, operator: str) -> Stimulus:
    """`stimulus` as the operator `operator` (`operator:root`) stored it: kept beside what it claims (an operator's own are theirs already)."""
    if not isinstance(stimulus, CLAIMED):
        return stimulus
    return _made(type(stimulus), {**stimulus.__dict__, "operator": operator})  # replace(stimulus, operator=operator)


def operator_of(event: Event) -> str | None:
    """The operator behind a stored stimulus: its actor when it is an operator's own (a goal, a correction),
    else the operator whose connection stored it (a message's, an observation's, an assertion's), else None."""
    if is_operator(event.actor):
        return event.actor
    claimed = _CLAIMED_KINDS.get(event.kind)
    return claimed.field_of(event, "operator") if claimed is not None else None


def named(event: Event) -> str | None:
    """The author (a message) or source (an observation, an assertion) a stimulus names; None if it names neither."""
    name = event.data.get("author") or event.data.get("source")
    return name if isinstance(name, str) and name else None


def of(event: Event) -> Stimulus:
    """The typed payload of a stored stimulus event."""
    return _READERS[event.kind](event)


def as_stimulus(event: Event) -> Stimulus | None:
    """The typed payload if `event` stores a stimulus, else None (any other kind)."""
    reader = _READERS.get(event.kind)
    return reader(event) if reader is not None else None


_READERS: dict[str, Callable[[Event], Stimulus]] = {cls.KIND: cls.of for cls in _CLASSES}


# Queries on stored stimuli, so that no other module reads their data in SQL. ----


def stored_outcome(db: Database, mind: str, prediction_id: int) -> int | None:
    """The id of the `outcome` stimulus stored for a prediction, perceived or still waiting.

    Stimuli are checked when stored, so at most one exists: a second outcome
    is refused even before the first one is perceived.
    """
    row = db.execute(
        "SELECT id FROM events WHERE mind = ? AND kind = 'outcome' AND json_extract(data, '$.prediction') = ? ORDER BY id LIMIT 1",
        [mind, prediction_id],
    ).fetchone()
    return None if row is None else int(row[0])


def closing_stimulus(db: Database, mind: str, goal_id: int) -> int | None:
    """The stored `goal` stimulus that completes or abandons `goal_id` (`GoalStimulus.closes`), if one is waiting or taken.

    Stimuli are checked when stored, so at most one such stimulus exists; a
    second change to the same goal is refused before the first is perceived.
    """
    row = db.execute(
        "SELECT id FROM events WHERE mind = ? AND kind = 'goal' AND json_extract(data, '$.goal') = ?"
        " AND (json_extract(data, '$.status') IN ('completed', 'abandoned') OR json_extract(data, '$.progress') >= 1)"
        " ORDER BY id LIMIT 1",
        [mind, goal_id],
    ).fetchone()
    return None if row is None else int(row[0])


def speakers(db: Database, event_ids: Iterable[int], unknown: str) -> dict[int, str]:
    """Who each stimulus is from, read in one query: a message's author, an observation's or assertion's source, else the actor.

    Blank names are passed over; an event with no actor gives `unknown`; an
    id not found is left out. For bulk readers (consolidation asks for
    thousands at once): no event is built.
    """
    # Grouped: tens of thousands of stimuli come from a few dozen (actor, author, source), each decided once. Each
    # (distinct) id is looked up from the JSON array as it is read, a tenth cheaper than `id IN` it, which first
    # copies the array into a temporary index.
    found = db.execute(
        "SELECT e.actor, json_extract(e.data, '$.author'), json_extract(e.data, '$.source'), json_group_array(e.id)"
        " FROM json_each(?) j CROSS JOIN events e ON e.id = j.value GROUP BY 1, 2, 3",
        [json.dumps(sorted(set(event_ids)))],
    )
    out: dict[int, str] = {}
    for actor, author, source, ids in found:
        if isinstance(author, str) and author.strip():
            who = author.strip()
        elif isinstance(source, str) and source.strip():
            who = source.strip()
        else:
            who = actor or unknown
        out.update(zip(json.loads(ids), repeat(who)))
    return out


ConversationRow = tuple[int, str, str, "str | None", str, str]
_CONVERSATION = (
    "SELECT id, kind, CASE kind WHEN 'message' THEN coalesce(json_extract(data, '$.author'), actor)"
    " WHEN 'observation' THEN coalesce(json_extract(data, '$.source'), actor) ELSE mind END,"
    " channel, coalesce(text, ''), at FROM events WHERE mind = ? AND kind IN ('message', 'observation', 'reply')"
)


def conversation_before(db: Database, mind: str, before: int, limit: int) -> list[ConversationRow]:
    """Up to `limit` of a mind's messages, observations and replies with ids under `before`, newest first.

    Each as (id, kind, who, channel, text, at): who is a message's author, an
    observation's source (else the actor, as `Message.of` reads it) and the
    mind for its own reply. For the token-budgeted window, which reads
    thousands at a time: no event is built.
    """
    return db.execute(_CONVERSATION + " AND id < ? ORDER BY id DESC LIMIT ?", [mind, before, limit]).fetchall()


def conversation_after(db: Database, mind: str, after: int, limit: int) -> list[ConversationRow]:
    """Like `conversation_before`, the ones with ids over `after`, oldest first."""
    return db.execute(_CONVERSATION + " AND id > ? ORDER BY id LIMIT ?", [mind, after, limit]).fetchall()
