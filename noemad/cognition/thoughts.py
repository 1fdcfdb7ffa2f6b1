"""Thoughts: what the cycle's processes propose, each with a salience.

A thought says which process proposed it, what kind it is, how salient it
is, what it is about (refs), and what happens if attention admits it
(`effect`, applied by the process that proposed it). Proposing has no side
effects; only admitted thoughts take effect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from noemad.clock import parse_iso
from noemad.cognition.beliefs.change import BELIEF_EVENTS, BeliefChange
from noemad.events import Event, Ref
from noemad.stimuli import Message, Stimulus
from noemad.wire import OMIT_EMPTY, rounded, wire

# Order among equally salient thoughts: what was perceived first, then what
# changed, then goals, due predictions, and the mind's own audit.
PROCESSES = ("perception", "evidence", "goals", "predictions", "metacognition")


@wire
@dataclass(frozen=True)
class Thought:
    """One candidate for the workspace (as the `attention` event's data lists them)."""

    process: str
    kind: str
    salience: Annotated[float, rounded(4)]
    summary: str
    key: str  # stable identity, for deterministic order and for effects
    refs: tuple[Ref, ...] = ()
    detail: Annotated[dict[str, Any], OMIT_EMPTY] = field(default_factory=dict)

    def order(self) -> tuple[float, int, str]:
        return (-round(self.salience, 9), PROCESSES.index(self.process), self.key)


# Salience of a stimulus by kind: an operator's correction matters most.
STIMULUS_SALIENCE = {"correction": 0.9, "message": 0.6, "outcome": 0.7, "assertion": 0.5, "observation": 0.5}
MENTIONED = 0.2  # a message that names the mind


def perception_thoughts(mind: str, stimuli: list[Event], payloads: Sequence[Stimulus | None]) -> list[Thought]:
    """One thought per stimulus taken in this cycle (`payloads`: theirs, as perception read them)."""
    out = []
    for event, payload in zip(stimuli, payloads, strict=True):
        salience = STIMULUS_SALIENCE.get(event.kind, 0.4)
        if isinstance(payload, Message) and mind in payload.mentions:
            salience += MENTIONED
        text = (event.text or "").replace("\n", " ")
        out.append(
            Thought(
                process="perception",
                kind=event.kind,
                salience=min(1.0, salience),
                summary=f"{event.actor}: {text[:80]}",
                key=f"event:{event.id:012d}",
                refs=(Ref("event", event.id),),
            )
        )
    return out


def evidence_thoughts(changes: list[Event], proposition: Callable[[int], str | None] = lambda _: None) -> list[Thought]:
    """One thought per belief event of this cycle: the bigger the change, the more salient.

    A thought is labelled by its belief's proposition (`proposition(belief id)`):
    the event's text is the proposition for evidence, but an operator's reason
    for a correction and a sentence for a rejected hypothesis. A lifted
    warning (its counter-evidence withdrawn) counts as a status change does:
    the mind no longer holds the belief under a doubt it had raised.
    """
    out = []
    for event in changes:
        if event.kind not in BELIEF_EVENTS or event.subject is None:
            continue
        change = BeliefChange.of(event)
        label = proposition(event.subject.id) or event.text
        delta = abs(change.confidence_to - change.confidence_from)
        salience = min(1.0, 0.3 + delta + (0.3 if change.status_changed or change.withdrawn else 0.0))
        out.append(
            Thought(
                process="evidence",
                kind=event.kind,
                salience=salience,
                summary=f"{label} ({change.confidence_from:.2f} -> {change.confidence_to:.2f}, {change.status_to})",
                key=f"belief:{event.subject.id:012d}:{event.id:012d}",
                refs=(event.subject, Ref("event", event.id)),
            )
        )
    return out


GOAL_SALIENCE = 0.3  # an active goal keeps a place in mind; more so the less done it is
DUE_SALIENCE = 0.6  # a due prediction asks to be checked; more so the longer it is overdue
OVERDUE_STEP = 0.1  # per day overdue, up to 1


def goal_thoughts(goals: Sequence[Any]) -> list[Thought]:
    """One thought per active goal."""
    return [
        Thought(
            process="goals",
            kind="goal_active",
            salience=min(1.0, GOAL_SALIENCE + 0.2 * (1.0 - goal.progress)),
            summary=f"goal #{goal.id}: {goal.title} ({goal.progress:.0%})",
            key=f"goal:{goal.id:012d}",
            refs=(Ref("event", goal.event_id),) if goal.event_id else (),
        )
        for goal in goals
    ]


def prediction_thoughts(predictions: Sequence[Any], now: float) -> list[Thought]:
    """One thought per prediction now due and unresolved."""
    out = []
    for prediction in predictions:
        days = max(0.0, now - parse_iso(prediction.due_at)) / 86_400
        out.append(
            Thought(
                process="predictions",
                kind="prediction_due",
                salience=min(1.0, DUE_SALIENCE + OVERDUE_STEP * days),
                summary=f"prediction #{prediction.id} is due: {prediction.proposition} (stated {prediction.stated_confidence:.2f})",
                key=f"prediction:{prediction.id:012d}",
                refs=tuple(r for r in (Ref("belief", prediction.belief_id) if prediction.belief_id else None,) if r),
            )
        )
    return out
