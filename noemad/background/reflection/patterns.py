"""Patterns of repeated failure, and the lesson a new one teaches.

A *failure* on a subject is a prediction miss stated at FAILED_MISS_MIN or
more (the mind expected it to come true), an operator correction that
rejected a belief or lowered its confidence, or a belief rejected by
anything else but an outcome. A hypothesis a miss rejects is the same
failure as the miss, and a correction that rejects is one correction, so
nothing is counted twice. Failures are counted over the lookback
(`reading.LOOKBACK`, reaching back to the period's start when it is longer).
A subject with PATTERN_MIN or more failures is a pattern, keyed
`failures:<subject>`. One not yet in `reflection_patterns` is *new*: its
lesson (`prose.lesson_text`) is written once as a procedural memory derived
from the episodes of the stimuli that brought the failures. One already
there is *known*, reported only when it recurred in the period; its lesson
is never rewritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from sqlite_utils import Database

from noemad.background.reflection.findings import CONFIDENT, BeliefChange, PredictionError
from noemad.background.reflection.prose import lesson_text
from noemad.cognition.memory.model import MAX_DERIVED_FROM
from noemad.cognition.memory.reads import episodes_of
from noemad.cognition.predictions import OUTCOME_SOURCE
from noemad.cognition.beliefs.queries import support_items
from noemad.clock import iso
from noemad.wire import HIDDEN, computed, shown_as, wire

PATTERN_MIN = 3  # failures on one subject that make a pattern
FAILED_MISS_MIN = 0.5  # a miss is a failure when stated at least this confidently
MAX_PATTERN_EVENTS = 20  # failure events a pattern lists
# Sources that do not count as independent support for a failed belief: an
# outcome arrives after the fact, metacognition only ever contradicts.
NOT_INDEPENDENT = frozenset({OUTCOME_SOURCE, "metacognition"})

FailureKind = Literal["miss", "rejected", "correction"]


@dataclass(frozen=True)
class Failure:
    """One failure on a subject (see the module docstring)."""

    kind: FailureKind
    subject: str
    event: int
    belief: int | None
    cause: int | None  # the stimulus whose episode records it
    confident: bool


@wire
@dataclass(frozen=True)
class Pattern:
    """Repeated failures on one subject."""

    key: str
    subject: str
    status: Literal["new", "known"]
    failures: int
    in_period: int  # of them, in the period
    misses: int
    confident_misses: int
    rejected: int
    corrections: int
    single_source: int  # failures whose belief had one supporting source or none
    days: Annotated[int, HIDDEN]  # the lookback they were counted over
    events: Annotated[tuple[int, ...], shown_as(lambda events: list(events[-MAX_PATTERN_EVENTS:]))]  # the failures' events, oldest first (the newest stored)
    episodes: tuple[int, ...] = ()  # episodic memories of the stimuli that brought them
    memory: int | None = None  # the lesson: written now (new) or earlier (known)

    @property
    def lesson(self) -> str:
        return lesson_text(self)

    @computed(alias="lesson")
    @property
    def new_lesson(self) -> str | None:
        """The lesson, stored with a new pattern only (a known one's is its memory's text)."""
        return self.lesson if self.status == "new" else None


def failures_of(resolutions: Iterable[tuple[PredictionError, int | None]], changes: Iterable[BeliefChange]) -> list[Failure]:
    """The failures among resolutions and belief changes, by event id (see the module docstring)."""
    out = [
        Failure("miss", p.subject, p.event, p.belief, cause, p.stated >= CONFIDENT)
        for p, cause in resolutions
        if p.result == "miss" and p.stated >= FAILED_MISS_MIN
    ]
    for c in changes:
        if c.correction and c.effect in ("rejected", "lowered"):
            out.append(Failure("correction", c.subject, c.event, c.belief, c.cause, False))
        elif c.rejected and c.by != "outcome":  # a rejection by an outcome is the miss itself
            out.append(Failure("rejected", c.subject, c.event, c.belief, c.cause, False))
    return sorted(out, key=lambda f: f.event)


def _single_source(db: Database, failures: Sequence[Failure]) -> int:
    """How many failures rested on one supporting source or none (before the failure)."""
    beliefs = sorted({f.belief for f in failures if f.belief is not None})
    if not beliefs:
        return 0
    support: dict[int, list[tuple[str, int]]] = {}
    for belief_id, source, event_id in support_items(db, beliefs):
        support.setdefault(belief_id, []).append((source, event_id))
    count = 0
    for f in failures:
        if f.belief is None:
            continue
        sources = {s for s, at in support.get(f.belief, []) if at < f.event and s not in NOT_INDEPENDENT}
        count += len(sources) <= 1
    return count


def _episodes(db: Database, mind: str, causes: Sequence[int]) -> tuple[int, ...]:
    """The episodic memories recording `causes` (stimuli), oldest first, at most MAX_DERIVED_FROM."""
    return tuple(episodes_of(db, mind, causes))[-MAX_DERIVED_FROM:]


def learnt(db: Database, mind: str) -> dict[str, int]:
    """The patterns `mind` has learnt a lesson from: key -> the lesson's memory id."""
    return {key: memory_id for key, memory_id in db.execute("SELECT key, memory_id FROM reflection_patterns WHERE mind = ?", [mind])}


def learn(db: Database, *, mind: str, key: str, memory_id: int, job_id: int, now: float) -> None:
    """Record that `mind` learnt the lesson `memory_id` from the pattern `key` (in the writer job that writes the lesson)."""
    db.execute(
        "INSERT INTO reflection_patterns (mind, key, memory_id, job_id, at) VALUES (?, ?, ?, ?, ?)", [mind, key, memory_id, job_id, iso(now)]
    )


def find_patterns(
    db: Database, mind: str, failures: Sequence[Failure], after: int, days: int, known: dict[str, int]
) -> list[Pattern]:
    by_subject: dict[str, list[Failure]] = {}
    for f in failures:
        by_subject.setdefault(f.subject, []).append(f)
    out = []
    for subject, items in sorted(by_subject.items()):
        if len(items) < PATTERN_MIN:
            continue
        key = f"failures:{subject}"
        in_period = sum(1 for f in items if f.event > after)
        if key in known and in_period == 0:
            continue  # learnt from before, and it did not recur: not news
        new = key not in known
        kinds = Counter(f.kind for f in items)
        out.append(
            Pattern(
                key=key,
                subject=subject,
                status="new" if new else "known",
                failures=len(items),
                in_period=in_period,
                misses=kinds["miss"],
                confident_misses=sum(1 for f in items if f.kind == "miss" and f.confident),
                rejected=kinds["rejected"],
                corrections=kinds["correction"],
                single_source=_single_source(db, items),
                days=days,
                events=tuple(f.event for f in items),
                episodes=_episodes(db, mind, [f.cause for f in items if f.cause is not None]) if new else (),
                memory=None if new else known[key],
            )
        )
    return sorted(out, key=lambda p: (p.status != "new", -p.failures, p.subject))
