"""Perception: each stimulus of a turn becomes an episode, and what it claims becomes evidence.

Goals, predictions and outcomes are applied here too (`goals.py`,
`predictions.py`), in the same writer job, each change caused by its stimulus.
A change that no longer applies when perceived (a goal closed meanwhile, a
prediction resolved meanwhile) leaves only the episode: stimuli are checked
when stored, so that takes a change made outside the stimuli.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.beliefs.corrections import correct
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.goals import create_goal, get_goal, update_goal
from noemad.cognition.memory.model import MAX_TEXT
from noemad.cognition.memory.writing import NewMemory, write_memories
from noemad.cognition.predictions import get_prediction, make_prediction, resolve_prediction
from noemad.events import Event, Ref
from noemad.stimuli import (
    Assertion,
    Correction,
    GoalStimulus,
    Message,
    Observation,
    OutcomeStimulus,
    PredictionStimulus,
    Stimulus,
    as_stimulus,
)

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
    payloads: list[Stimulus | None] = field(default_factory=list)  # each stimulus' typed payload, in the order taken (read once)


def episode_text(stimulus: Event, payload: Stimulus | None) -> str:
    """How a stimulus is remembered: who, where, what (`payload`: its `as_stimulus`)."""
    match payload:
        case Message(author=author):
            return f"{author} said on {stimulus.channel}: {stimulus.text}"
        case Observation(source=source):
            return f"observed from {source}: {stimulus.text}"
        case Assertion(source=source, claim=claim):
            verb = "asserted" if claim.stance == "supports" else "denied"
            return f"{source} {verb}: {claim.proposition}"
        case Correction(belief=belief):
            return f"an operator corrected belief {belief}: {stimulus.text}"
        case GoalStimulus(goal=None, title=title):
            return f"an operator set a goal: {stimulus.text if title is None else title}"
        case GoalStimulus(goal=goal, status=status, progress=progress, note=note):
            change = status or f"progress {progress or 0:.0%}"
            return f"an operator changed goal {goal} ({change})" + (f": {note}" if note else "")
        case PredictionStimulus() as prediction:
            return f"predicted at {prediction.confidence:.2f}, due {iso(prediction.due_at)}: {prediction.proposition}"
        case OutcomeStimulus(prediction=prediction_id, result=result, observed=observed):
            return f"prediction {prediction_id} came out a {result}" + (f" (observed: {observed})" if observed else "")
    return f"{stimulus.kind}: {stimulus.text or ''}"


def _episode_only(payload: Stimulus | None) -> bool:
    """Whether perceiving the stimulus writes its episode and nothing else (a message, a claim-less observation...)."""
    if isinstance(payload, (Observation, Assertion)):
        return payload.claim is None
    return not isinstance(payload, (Correction, GoalStimulus, PredictionStimulus, OutcomeStimulus))


def _runs(read: list[tuple[Event, Stimulus | None]]) -> Iterator[list[tuple[Event, Stimulus | None]]]:
    """The stimuli in order, a run of episode-only ones together (their episodes written at once), every other alone."""
    run: list[tuple[Event, Stimulus | None]] = []
    for item in read:
        if not _episode_only(item[1]):
            if run:
                yield run
                run = []
            yield [item]
        else:
            run.append(item)
    if run:
        yield run


def perceive(db: Database, mind: str, stimuli: list[Event], cycle_id: str, now: float) -> Perception:
    """Write each stimulus' episode and apply what it claims or corrects (one writer job).

    Each stimulus' episode and what it applies are written before the next
    stimulus' are. A run of stimuli that leave only an episode has its
    episodes written by one `write_memories`: the same rows in the same order
    (memories, then their events, none other between), one savepoint, and one
    FTS5 segment rather than one per episode.
    """
    read = [(stimulus, as_stimulus(stimulus)) for stimulus in stimuli]
    out = Perception(payloads=[payload for _, payload in read])
    for run in _runs(read):
        written = write_memories(
            db,
            mind=mind,
            # The prefix may take a stimulus at the limit past it.
            memories=[NewMemory("episodic", episode_text(stimulus, payload)[:MAX_TEXT], stimulus.id, event_id=stimulus.id) for stimulus, payload in run],
            now=now,
            actor=ACTOR,
            cycle_id=cycle_id,
        )
        for (stimulus, payload), (memory, memory_event) in zip(run, written):
            out.episodes.append(memory.id)
            out.events.append(memory_event)
            _apply(db, mind, stimulus, payload, Ref("memory", memory.id), cycle_id, now, out)
    return out


def _apply(db: Database, mind: str, stimulus: Event, payload: Stimulus | None, episode: Ref, cycle_id: str, now: float, out: Perception) -> None:
    """What a stimulus claims, corrects or plans, applied after its episode (`episode`)."""
    if isinstance(payload, (Observation, Assertion)) and payload.claim is not None:
        claim, source = payload.claim, payload.source or stimulus.actor
        belief, event = add_evidence(
            db,
            mind=mind,
            proposition=claim.proposition,
            subject=claim.subject,
            kind=stimulus.kind,
            stance="support" if claim.stance == "supports" else "contradict",
            weight=WEIGHTS[stimulus.kind],
            source=source,
            brought_by=stimulus.id,
            now=now,
            actor=ACTOR,
            cycle_id=cycle_id,
            cites=[episode],
        )
        out.beliefs.append(belief.id)
        out.events.append(event)
    if isinstance(payload, Correction):
        belief, event = correct(
            db,
            belief_id=payload.belief,
            status=payload.status,
            confidence_value=payload.confidence,
            reason=stimulus.text or "",
            brought_by=stimulus.id,
            now=now,
            actor=stimulus.actor,  # the operator who sent the correction
            cycle_id=cycle_id,
        )
        out.beliefs.append(belief.id)
        out.events.append(event)
    if isinstance(payload, (GoalStimulus, PredictionStimulus, OutcomeStimulus)):
        _plan(db, mind, stimulus, payload, episode, cycle_id, now, out)


def _plan(
    db: Database,
    mind: str,
    stimulus: Event,
    payload: GoalStimulus | PredictionStimulus | OutcomeStimulus,
    episode: Ref,
    cycle_id: str,
    now: float,
    out: Perception,
) -> None:
    """Apply a goal, prediction or outcome stimulus."""
    if isinstance(payload, GoalStimulus):
        if payload.goal is None:
            goal, event = create_goal(
                db, mind=mind, title=payload.title or "", origin="operator", cause=stimulus.id, cycle_id=cycle_id, now=now, actor=stimulus.actor,
                progress=payload.progress or 0.0, cites=[episode],
            )
        else:
            if get_goal(db, payload.goal).status != "active":
                return
            goal, event = update_goal(
                db, goal_id=payload.goal, progress=payload.progress, status=payload.status, note=payload.note,
                cause=stimulus.id, cycle_id=cycle_id, now=now, actor=stimulus.actor,
            )
        out.goals.append(goal.id)
        out.events.append(event)
        return
    if isinstance(payload, PredictionStimulus):
        prediction, events = make_prediction(
            db, mind=mind, proposition=payload.proposition, subject=payload.subject, confidence=payload.confidence,
            due_at=payload.due_at, brought_by=stimulus.id, now=now, cycle_id=cycle_id, cites=(episode,),
        )
    else:
        if get_prediction(db, payload.prediction).status != "open":
            return
        prediction, events = resolve_prediction(
            db, prediction_id=payload.prediction, result=payload.result, observed=payload.observed,
            brought_by=stimulus.id, now=now, cycle_id=cycle_id, cites=(episode,),
        )
    out.predictions.append(prediction.id)
    out.events.extend(events)
    out.beliefs.extend(e.subject.id for e in events if e.subject is not None and e.subject.type == "belief")
