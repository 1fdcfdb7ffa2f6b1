"""Stimuli: what reaches a mind from outside, and the events that store them.

A stimulus is stored as an event the moment it arrives; the cognitive cycle
then takes it (perception writes its episode, and evidence for a belief when
it states a proposition). These are data, below cognition: what a stimulus
must satisfy against the mind's state before it is stored (the belief a
correction names exists, the goal a change names is open…) is checked by
`noemad.cognition.intake`, beside the state it reads.

Each stimulus class is also the typed payload of its event kind: `to_data()`
is the one definition of what its event stores, and `of(event)` reads a
stored event back (readers never index `event.data` by hand). A stored
event missing its author or source reads as its actor, as readers always
treated it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.events import Event, EventDraft, data_of
from noemad.operator import is_operator

STIMULUS_KINDS = ("message", "observation", "assertion", "correction", "goal", "prediction", "outcome")
Stance = Literal["supports", "contradicts"]


@dataclass(frozen=True)
class Claim:
    """A proposition about a subject that a stimulus supports or contradicts."""

    proposition: str
    subject: str
    stance: Stance = "supports"

    def to_data(self) -> dict[str, str]:
        return {"proposition": self.proposition, "subject": self.subject, "stance": self.stance}

    @classmethod
    def from_data(cls, data: Any) -> Claim | None:
        """The claim stored under a stimulus' `claim` key; None if there is none."""
        if not isinstance(data, dict) or not data:
            return None
        stance: Stance = "contradicts" if data.get("stance") == "contradicts" else "supports"
        return cls(str(data.get("proposition") or ""), str(data.get("subject") or ""), stance)


@dataclass(frozen=True)
class Message:
    """Someone says something to the mind on a channel."""

    author: str
    text: str
    channel: str = "cli"
    mentions: tuple[str, ...] = ()
    # What wake rules match on (noemad.rules); stored only when set, so a
    # message without them stores what it always did.
    dm: bool = False  # said in a direct channel
    reply_to: int | None = None  # the event it answers (a mind's reply, for the `reply` flag)
    bot: bool = False  # the author is a bot
    tags: tuple[str, ...] = ()
    operator: str | None = None  # the operator whose connection stored it (`operator:root`); None when not known

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"author": self.author, "mentions": list(self.mentions)}
        if self.dm:
            data["dm"] = True
        if self.reply_to is not None:
            data["reply_to"] = self.reply_to
        if self.bot:
            data["bot"] = True
        if self.tags:
            data["tags"] = list(self.tags)
        if self.operator is not None:
            data["operator"] = self.operator
        return data

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="message", actor=f"user:{self.author}", channel=self.channel, text=self.text, data=self.to_data())

    @classmethod
    def of(cls, event: Event) -> Message:
        data = data_of(event, "message")
        return cls(
            author=str(data.get("author", event.actor)),
            text=event.text or "",
            channel=event.channel or "cli",
            mentions=tuple(str(m) for m in data.get("mentions") or ()),
            dm=data.get("dm") is True,
            reply_to=_event_id(data.get("reply_to")),
            bot=data.get("bot") is True,
            tags=_tags(data.get("tags")),
            operator=_operator(data.get("operator")),
        )


def _event_id(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _tags(value: Any) -> tuple[str, ...]:
    return tuple(str(t) for t in value) if isinstance(value, list) else ()


def _operator(value: Any) -> str | None:
    return value if isinstance(value, str) and is_operator(value) else None


@dataclass(frozen=True)
class Observation:
    """A sensed fact from a named source; it may state a proposition it supports or contradicts."""

    source: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    claim: Claim | None = None
    tags: tuple[str, ...] = ()  # for wake rules; stored only when set
    operator: str | None = None  # the operator whose connection stored it; None when not known

    def to_data(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"source": self.source}
        if self.data:
            extra["data"] = self.data
        if self.claim:
            extra["claim"] = self.claim.to_data()
        if self.tags:
            extra["tags"] = list(self.tags)
        if self.operator is not None:
            extra["operator"] = self.operator
        return extra

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="observation", actor=f"source:{self.source}", text=self.text, data=self.to_data())

    @property
    def stated_salience(self) -> float | None:
        """The salience the source stated in its data (`salience`, clamped to [0, 1]); None if it stated none usable."""
        value = self.data.get("salience")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return min(1.0, max(0.0, float(value)))

    @classmethod
    def of(cls, event: Event) -> Observation:
        data = data_of(event, "observation")
        given = data.get("data")
        return cls(
            source=str(data.get("source", event.actor)),
            text=event.text or "",
            data=dict(given) if isinstance(given, dict) else {},
            claim=Claim.from_data(data.get("claim")),
            tags=_tags(data.get("tags")),
            operator=_operator(data.get("operator")),
        )


@dataclass(frozen=True)
class Assertion:
    """Someone states a proposition; how much it counts depends on how far the mind trusts them."""

    source: str
    claim: Claim
    channel: str = "cli"
    operator: str | None = None  # the operator whose connection stored it; None when not known

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"source": self.source, "claim": self.claim.to_data()}
        if self.operator is not None:
            data["operator"] = self.operator
        return data

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(
            mind=mind, kind="assertion", actor=f"user:{self.source}", channel=self.channel, text=self.claim.proposition, data=self.to_data()
        )

    @classmethod
    def of(cls, event: Event) -> Assertion:
        data = data_of(event, "assertion")
        claim = Claim.from_data(data.get("claim")) or Claim(event.text or "", "")
        return cls(source=str(data.get("source", event.actor)), claim=claim, channel=event.channel or "cli", operator=_operator(data.get("operator")))


@dataclass(frozen=True)
class Correction:
    """An operator corrects a belief: a status, a confidence, or both, and why."""

    belief: int
    reason: str
    status: Literal["active", "pinned", "rejected"] | None = None
    confidence: float | None = None

    def to_data(self) -> dict[str, Any]:
        return {"belief": self.belief, "status": self.status, "confidence": self.confidence}

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="correction", actor="operator", text=self.reason, data=self.to_data())

    @classmethod
    def of(cls, event: Event) -> Correction:
        data = data_of(event, "correction")
        return cls(belief=data["belief"], reason=event.text or "", status=data.get("status"), confidence=data.get("confidence"))


@dataclass(frozen=True)
class GoalStimulus:
    """An operator sets a goal (`title`), or changes one (`goal`: progress, completed or abandoned)."""

    title: str | None = None
    goal: int | None = None
    progress: float | None = None
    status: Literal["completed", "abandoned"] | None = None
    note: str | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            k: v for k, v in (("goal", self.goal), ("title", self.title), ("progress", self.progress), ("status", self.status)) if v is not None
        }
        if self.note:
            data["note"] = self.note
        return data

    @property
    def closes(self) -> bool:
        """Whether this change completes or abandons its goal."""
        return self.goal is not None and (self.status in ("completed", "abandoned") or (self.progress is not None and self.progress >= 1))

    @classmethod
    def of(cls, event: Event) -> GoalStimulus:
        data = data_of(event, "goal")
        return cls(title=data.get("title"), goal=data.get("goal"), progress=data.get("progress"), status=data.get("status"), note=data.get("note"))

    def draft(self, mind: str) -> EventDraft:
        data = self.to_data()
        # Drafted before `check` runs: nothing here may assume a valid combination.
        if self.goal is None:
            text = self.title
        else:
            change = self.status or ("" if self.progress is None else f"progress {self.progress:g}")
            text = self.note or f"goal {self.goal}: {change}"
        return EventDraft(mind=mind, kind="goal", actor="operator", text=text, data=data)


@dataclass(frozen=True)
class PredictionStimulus:
    """A prediction: a proposition expected true by `due_at` (epoch seconds), at a stated confidence."""

    proposition: str
    subject: str
    confidence: float
    due_at: float

    def to_data(self) -> dict[str, Any]:
        return {"proposition": self.proposition, "subject": self.subject, "confidence": self.confidence, "due_at": iso(self.due_at)}

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="prediction", actor="operator", text=self.proposition, data=self.to_data())

    @classmethod
    def of(cls, event: Event) -> PredictionStimulus:
        data = data_of(event, "prediction")
        return cls(data["proposition"], data["subject"], data["confidence"], parse_iso(data["due_at"]))


@dataclass(frozen=True)
class OutcomeStimulus:
    """What came of a prediction: a hit or a miss, with the observed value as text if given."""

    prediction: int
    result: Literal["hit", "miss"]
    observed: str | None = None

    def to_data(self) -> dict[str, Any]:
        return {"prediction": self.prediction, "result": self.result, "observed": self.observed}

    def draft(self, mind: str) -> EventDraft:
        return EventDraft(mind=mind, kind="outcome", actor="operator", text=self.observed or self.result, data=self.to_data())

    @classmethod
    def of(cls, event: Event) -> OutcomeStimulus:
        data = data_of(event, "outcome")
        return cls(prediction=data["prediction"], result=data["result"], observed=data.get("observed"))


Stimulus = Message | Observation | Assertion | Correction | GoalStimulus | PredictionStimulus | OutcomeStimulus
# Stimuli whose actor is who they claim to be from; the operator who stored one is kept beside it.
CLAIMED: tuple[type[Message], type[Observation], type[Assertion]] = (Message, Observation, Assertion)
_CLAIMED_KINDS: dict[str, type[Message] | type[Observation] | type[Assertion]] = {
    "message": Message, "observation": Observation, "assertion": Assertion,
}


def stored_by(stimulus: Stimulus, operator: str) -> Stimulus:
    """`stimulus` as the operator `operator` (`operator:root`) stored it: kept beside what it claims (an operator's own are theirs already)."""
    return replace(stimulus, operator=operator) if isinstance(stimulus, CLAIMED) else stimulus


def operator_of(event: Event) -> str | None:
    """The operator behind a stored stimulus: its actor when it is an operator's own (a goal, a correction),
    else the operator whose connection stored it (a message's, an observation's, an assertion's), else None."""
    if is_operator(event.actor):
        return event.actor
    claimed = _CLAIMED_KINDS.get(event.kind)
    return claimed.of(event).operator if claimed is not None else None


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


_READERS: dict[str, Callable[[Event], Stimulus]] = {
    "message": Message.of,
    "observation": Observation.of,
    "assertion": Assertion.of,
    "correction": Correction.of,
    "goal": GoalStimulus.of,
    "prediction": PredictionStimulus.of,
    "outcome": OutcomeStimulus.of,
}


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
    # Grouped: tens of thousands of stimuli come from a few dozen (actor, author, source), each decided once.
    found = db.execute(
        "SELECT actor, json_extract(data, '$.author'), json_extract(data, '$.source'), json_group_array(id)"
        " FROM events WHERE id IN (SELECT value FROM json_each(?)) GROUP BY 1, 2, 3",
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
