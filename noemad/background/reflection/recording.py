"""The `reflection` event and its lessons (one writer job, atomic).

The event: actor `process:reflection`, caused by the job's start event, text
the prose, data the findings with the job, the period, `counts`, the
patterns, `lessons` (memory ids), `rendered_by`, `reason`, `detail`,
`model_call`, `plain` and `previous`. It cites what it reviewed, most
important first and at most MAX_REFS (`citations`); `cited` says how many of
how many. Then each new lesson's `memory_created`, caused by the reflection
event, so `noemactl timeline` walks from a lesson to the reflection and on
to the failures it cites. An empty period is reflected on too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlite_utils import Database

from noemad.background.jobs import start_event
from noemad.background.reflection.findings import ACTOR, KIND, Findings
from noemad.background.reflection.patterns import learn, learnt
from noemad.background.reflection.reading import previous_reflection
from noemad.cognition.memory.model import Memory
from noemad.cognition.memory.writing import NewMemory, write_memories
from noemad.cognition.wording import Worded
from noemad.errors import Conflict
from noemad.events import Event, EventDraft, Ref, append
from noemad.wire import dump

MAX_REFS = 64  # what one event may cite


def citations(f: Findings, rendering: Worded) -> tuple[list[Ref], int]:
    """What the event cites, most important first and at most MAX_REFS, and how many it could have cited."""
    refs: list[Ref] = []
    if rendering.call_id is not None:
        refs.append(Ref("model_call", rendering.call_id))
    if f.previous is not None:
        refs.append(Ref("event", f.previous))
    for p in f.patterns:
        refs.extend(Ref("event", e) for e in p.events)
    refs.extend(Ref("event", p.event) for p in f.predictions if p.confident_miss)
    for group in (f.corrections, f.rejected, f.contested):
        refs.extend(Ref("event", c.event) for c in group)
    refs.extend(Ref("event", g.event) for g in f.goals_completed)
    refs.extend(Ref("event", p.event) for p in f.predictions)  # the rest, largest error first
    refs.extend(Ref("event", c.event) for c in f.status_changes)
    unique = list(dict.fromkeys(refs))
    return unique[:MAX_REFS], len(unique)


@dataclass(frozen=True)
class Recorded:
    """What `record` wrote: the reflection event and the lesson memories it caused."""

    event: Event
    lessons: tuple[Memory, ...]


def record(db: Database, *, job_id: int, findings: Findings, rendering: Worded, plain: str, now: float) -> Recorded:
    """Write the `reflection` event and each new lesson caused by it (a writer job; atomic).

    The lessons' rows come first, so the event names the ids they got; their
    `memory_created` events follow the reflection's, caused by it.

    Refuses with `Conflict` if another reflection was recorded for the mind
    since the review, or one of its new patterns was learnt meanwhile (one
    reflection runs per mind at a time, so neither should happen).
    """
    mind = findings.mind
    previous = previous_reflection(db, mind)
    if (previous[0] if previous else None) != findings.previous:
        raise Conflict(f"another reflection of mind {mind!r} was recorded while this one ran; run it again")
    new = findings.new_patterns
    known = learnt(db, mind)
    for p in new:
        if p.key in known:
            raise Conflict(f"pattern {p.key!r} of mind {mind!r} was learnt while this reflection ran; run it again")
    # The event lists its lessons' memory ids, yet the lessons are caused by
    # it: their rows are written first, the event names the ids they got,
    # then their memory_created events follow it (all in this writer job).
    recorded: list[Event] = []

    def reflection(lesson_ids: list[int]) -> int:
        memory_of = {p.key: m for p, m in zip(new, lesson_ids)}
        patterns = [replace(p, memory=memory_of.get(p.key, p.memory)) for p in findings.patterns]
        refs, candidates = citations(findings, rendering)
        data: dict[str, Any] = {
            "job": job_id,
            **findings.to_json(),
            "patterns": [dump(p) for p in patterns],
            "lessons": lesson_ids,
            "rendered_by": rendering.rendered_by,
            "reason": rendering.reason,
            "detail": rendering.detail,
            "model_call": rendering.call_id,
            "plain": plain,
            "cited": {"refs": len(refs), "candidates": candidates},
        }
        if rendering.model:
            data["model"] = rendering.model
        if rendering.unsupported:
            data["unsupported"] = list(rendering.unsupported[:20])
        draft = EventDraft(
            mind=mind, kind=KIND, actor=ACTOR, text=rendering.text, causation_id=start_event(db, mind, job_id), refs=refs, data=data
        )
        recorded.append(append(db, draft, now))
        return recorded[0].id

    written = write_memories(
        db,
        mind=mind,
        memories=[NewMemory("procedural", p.lesson, None, p.episodes) for p in new],
        now=now,
        actor=ACTOR,
        cycle_id=None,
        cause_citing=reflection,
    )
    lessons = []
    for p, (memory, _) in zip(new, written):
        learn(db, mind=mind, key=p.key, memory_id=memory.id, job_id=job_id, now=now)
        lessons.append(memory)
    (event,) = recorded
    return Recorded(event, tuple(lessons))
