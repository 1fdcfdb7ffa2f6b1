"""Perception: each stimulus of a turn becomes an episode, and what it claims becomes evidence.

Goals, predictions and outcomes are applied here too (`goals.py`,
`predictions.py`), in the same writer job, each change caused by its stimulus.
A change that no longer applies when perceived (a goal closed meanwhile, a
prediction resolved meanwhile) leaves only the episode: stimuli are checked
when stored, so that takes a change made outside the stimuli.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlite_utils import Database

from noemad.clock import parse_iso
from noemad.cognition.beliefs import add_evidence, correct
from noemad.cognition.goals import create_goal, get_goal, update_goal
from noemad.cognition.memory import MAX_TEXT, write_memory
from noemad.cognition.predictions import get_prediction, make_prediction, resolve_prediction
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
    goals: list[int] = field(default_factory=list)  # goals created or changed
    predictions: list[int] = field(default_factory=list)  # predictions made or resolved


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
    if stimulus.kind == "goal":
        if data.get("goal") is None:
            return f"an operator set a goal: {data.get('title', stimulus.text)}"
        change = data.get("status") or f"progress {data.get('progress', 0):.0%}"
        return f"an operator changed goal {data['goal']} ({change})" + (f": {data['note']}" if data.get("note") else "")
    if stimulus.kind == "prediction":
        return f"predicted at {data['confidence']:.2f}, due {data['due_at']}: {data['proposition']}"
    if stimulus.kind == "outcome":
        observed = f" (observed: {data['observed']})" if data.get("observed") else ""
        return f"prediction {data['prediction']} came out a {data['result']}{observed}"
    return f"{stimulus.kind}: {stimulus.text or ''}"


def perceive(db: Database, mind: str, stimuli: list[Event], cycle_id: str, now: float) -> Perception:
    """Write each stimulus' episode and apply what it claims or corrects (one writer job)."""
    out = Perception()
    for stimulus in stimuli:
        memory, memory_event = write_memory(
            db,
            mind=mind,
            kind="episodic",
            text=episode_text(stimulus)[:MAX_TEXT],  # the prefix may take a stimulus at the limit past it
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
        if stimulus.kind in ("goal", "prediction", "outcome"):
            _plan(db, mind, stimulus, Ref("memory", memory.id), cycle_id, now, out)
    return out


def _plan(db: Database, mind: str, stimulus: Event, episode: Ref, cycle_id: str, now: float, out: Perception) -> None:
    """Apply a goal, prediction or outcome stimulus."""
    data = stimulus.data
    if stimulus.kind == "goal":
        if data.get("goal") is None:
            goal, event = create_goal(
                db, mind=mind, title=data["title"], origin="operator", cause=stimulus.id, cycle_id=cycle_id, now=now,
                progress=data.get("progress") or 0.0, cites=[episode],
            )
        else:
            if get_goal(db, data["goal"]).status != "active":
                return
            goal, event = update_goal(
                db, goal_id=data["goal"], progress=data.get("progress"), status=data.get("status"), note=data.get("note"),
                cause=stimulus.id, cycle_id=cycle_id, now=now, actor="operator",
            )
        out.goals.append(goal.id)
        out.events.append(event)
        return
    if stimulus.kind == "prediction":
        prediction, events = make_prediction(
            db, mind=mind, proposition=data["proposition"], subject=data["subject"], confidence=data["confidence"],
            due_at=parse_iso(data["due_at"]), brought_by=stimulus.id, now=now, cycle_id=cycle_id, cites=(episode,),
        )
    else:
        if get_prediction(db, data["prediction"]).status != "open":
            return
        prediction, events = resolve_prediction(
            db, prediction_id=data["prediction"], result=data["result"], observed=data.get("observed"),
            brought_by=stimulus.id, now=now, cycle_id=cycle_id, cites=(episode,),
        )
    out.predictions.append(prediction.id)
    out.events.extend(events)
    out.beliefs.extend(e.subject.id for e in events if e.subject is not None and e.subject.type == "belief")
