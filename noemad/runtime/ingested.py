"""What ingest answers: the stored event, and what the mind's gate said of it as it was offered.

The gate decides on the loop that owns it, right after the commit, so the
answer carries that decision: a caller waiting for the reply (`noemactl say
--wait`) need not ask `GET /events/{id}/turn` again. The event's own fields
are unchanged; `gate` is added beside them. `StimulusTurn` is what that
later question answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from noemad.events import Event
from noemad.wake import GateVerdict, HeldVerdict
from noemad.wire import OMIT_NONE, IsoTime, wire


@wire
@dataclass(frozen=True)
class GateDecision:
    """What the gate did with a stimulus when it was stored, and what else a caller waiting for its turn needs."""

    verdict: GateVerdict
    """wake (a turn now), batch (a turn when the rule's batch is due, or its judge says REPLY), defer and deny (stored, in context, no turn), asleep (stored; taken by the turn after the mind wakes)."""
    rule: str | None
    """The rule that decided (null: the mind's default, its sleep, or a gate that failed and woke the mind)."""
    reason: str
    """The gate's sentence, as the timeline shows it."""
    due: Annotated[IsoTime | None, OMIT_NONE] = None
    """batch: when the batch wakes the mind (or goes to its judge) unless pushed back."""
    paused: bool = False
    """The mind is paused: no turn runs until it is resumed."""
    respond_model: bool = False
    """The mind has a respond model: its turns draft replies to messages."""


@wire
@dataclass(frozen=True)
class Ingested(Event):
    """A stored stimulus, with what the gate said of it."""

    gate: GateDecision | None = None
    """The gate's decision as the stimulus was offered."""


@wire
@dataclass(frozen=True)
class StimulusTurn:
    """Where a stimulus is on its way to a turn, for a caller waiting for the reply."""

    event: int
    mind: str
    waiting: bool
    """No turn has taken it yet."""
    verdict: HeldVerdict | None
    """While waiting: what the gate said, when it did not wake the mind at once (null: it did, or it is taken)."""
    rule: str | None
    """The rule that decided (null: the mind's default, or its sleep)."""
    paused: bool
    """The mind is paused: no turn runs until it is resumed."""
    respond_model: bool
    """The mind has a respond model: its turns draft replies to messages."""
