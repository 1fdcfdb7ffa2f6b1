"""Perception: each stimulus of a turn becomes an episode, and what it claims becomes evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlite_utils import Database

from noemad.cognition.beliefs import add_evidence, correct
from noemad.cognition.memory import write_memory
from noemad.events import Event, Ref

# How much one item says, by what brought it: a sensed fact more than a statement.
WEIGHTS = {"observation": 1.0, "assertion": 0.8}
ACTOR = "process:perception"


@dataclass
class Perception:
    """What perceiving a turn's stimuli wrote."""

    episodes: list[int] = field(default_factory=list)  # memory ids
    beliefs: list[int] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def episode_text(stimulus: Event) -> str:
    """How a stimulus is remembered: who, where, what."""
    data = stimulus.data
    if stimulus.kind == "message":
        return f"{data.get('author', stimulus.actor)} said on {stimulus.channel}: {stimulus.text}"
    if stimulus.kind == "observation":
        return f"observed from {data.get('source', stimulus.actor)}: {stimulus.text}"
    if stimulus.kind == "assertion":
        claim = data["claim"]
        verb = "asserted" if claim["stance"] == "supports" else "denied"
        return f"{data.get('source', stimulus.actor)} {verb}: {claim['proposition']}"
    if stimulus.kind == "correction":
        return f"an operator corrected belief {data['belief']}: {stimulus.text}"
    return f"{stimulus.kind}: {stimulus.text or ''}"


def perceive(db: Database, mind: str, stimuli: list[Event], cycle_id: str, now: float) -> Perception:
    """Write each stimulus' episode and apply what it claims or corrects (one writer job)."""
    out = Perception()
    for stimulus in stimuli:
        memory, memory_event = write_memory(
            db,
            mind=mind,
            kind="episodic",
            text=episode_text(stimulus),
            now=now,
            actor=ACTOR,
            cause=stimulus.id,
            cycle_id=cycle_id,
            event_id=stimulus.id,
        )
        out.episodes.append(memory.id)
        out.events.append(memory_event)
        claim = stimulus.data.get("claim")
        if claim:
            source = stimulus.data.get("source") or stimulus.actor
            belief, event = add_evidence(
                db,
                mind=mind,
                proposition=claim["proposition"],
                subject=claim["subject"],
                kind=stimulus.kind,
                stance="support" if claim["stance"] == "supports" else "contradict",
                weight=WEIGHTS[stimulus.kind],
                source=source,
                brought_by=stimulus.id,
                now=now,
                actor=ACTOR,
                cycle_id=cycle_id,
                cites=[Ref("memory", memory.id)],
            )
            out.beliefs.append(belief.id)
            out.events.append(event)
        if stimulus.kind == "correction":
            data = stimulus.data
            belief, event = correct(
                db,
                belief_id=data["belief"],
                status=data.get("status"),
                confidence_value=data.get("confidence"),
                reason=stimulus.text or "",
                brought_by=stimulus.id,
                now=now,
                actor="operator",
                cycle_id=cycle_id,
            )
            out.beliefs.append(belief.id)
            out.events.append(event)
    return out
