"""The mind as of any time, in process: beliefs then, a belief's history, what changed in a window.

The property test replays random histories of belief changes (evidence one
item and many at once, corrections, withdrawals, rejected hypotheses, with
unrelated events between) and checks that the beliefs as of every event id
equal what the live tables held right after that event was written.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition import asof
from noemad.cognition.beliefs import (
    NewEvidence, add_evidence, add_evidence_many, correct, evidence_counts, get_belief, list_beliefs, reject_hypothesis, withdraw_evidence,
)
from noemad.errors import InvalidInput
from noemad.events import EventDraft, append
from noemad.minds import create_mind
from noemad.store.schema import m020_belief_history, migrations

PROPOSITIONS = ("the build is green", "the deploy is safe", "tests are slow")
SOURCES = ("ci", "qa", "ops", "metacognition")


def fresh() -> Database:
    db = Database(memory=True)
    migrations.apply(db)
    create_mind(db, "ada", {}, 1.0, "operator")
    return db


def stimulus(db: Database, now: float, text: str = "x") -> int:
    return append(db, EventDraft("ada", "observation", "source:ci", text=text), now).id


def live(db: Database) -> list[tuple[Any, ...]]:
    """What the live tables say of every belief, most confident first, as `beliefs_at` orders them."""
    return [
        (b.id, b.proposition, b.subject, b.kind, b.confidence, b.status, *evidence_counts(db, b.id))
        for b in list_beliefs(db, "ada", limit=10_000)
    ]


def then(db: Database, through: int) -> list[tuple[Any, ...]]:
    return [(b.id, b.proposition, b.subject, b.kind, b.confidence, b.status, b.support, b.contradict) for b in asof.beliefs_at(db, "ada", through)]


op = st.one_of(
    st.tuples(st.just("item"), st.sampled_from(PROPOSITIONS), st.sampled_from(("support", "contradict")), st.sampled_from(SOURCES),
              st.floats(0.1, 1.0)),
    st.tuples(st.just("many"), st.sampled_from(PROPOSITIONS), st.lists(st.tuples(st.sampled_from(("support", "contradict")), st.sampled_from(SOURCES)), min_size=1, max_size=6)),
    st.tuples(st.just("correct"), st.integers(0, 2), st.sampled_from(("active", "pinned", "rejected")), st.none() | st.floats(0.0, 1.0)),
    st.tuples(st.just("withdraw"), st.integers(0, 2), st.integers(1, 3)),
    st.tuples(st.just("reject"), st.integers(0, 2)),
    st.tuples(st.just("noise"),),
)


def apply(db: Database, step: tuple[Any, ...], now: float) -> None:
    cause = stimulus(db, now)
    kind = step[0]
    beliefs = sorted(b.id for b in list_beliefs(db, "ada", limit=100))
    common = dict(now=now, actor="process:test")
    if kind == "item":
        _, proposition, stance, source, weight = step
        add_evidence(db, mind="ada", proposition=proposition, subject="build", kind="hypothesis", stance=stance, weight=weight, source=source,
                     brought_by=cause, **common)
    elif kind == "many":
        _, proposition, items = step
        add_evidence_many(db, mind="ada", proposition=proposition, subject="build", kind="hypothesis",
                          items=[NewEvidence(stance, 0.8, source, cause) for stance, source in items], cause=cause, **common)
    elif kind == "correct" and beliefs:
        _, pick, status, value = step
        correct(db, belief_id=beliefs[pick % len(beliefs)], status=status, confidence_value=None if status == "active" else value,
                reason="operator says so", brought_by=cause, **common)
    elif kind == "withdraw" and beliefs:
        _, pick, how_many = step
        belief = get_belief(db, beliefs[pick % len(beliefs)])
        standing = [e.id for e in belief.evidence if e.standing][:how_many]
        if standing:
            withdraw_evidence(db, belief_id=belief.id, evidence_ids=standing, reason="warning lifted", cause=cause, check="fluent", **common)
    elif kind == "reject" and beliefs:
        reject_hypothesis(db, belief_id=beliefs[step[1] % len(beliefs)], prediction_id=1, cause=cause, cycle_id=None, **common)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=25))
def test_beliefs_as_of_every_event_equal_the_live_tables_right_after_it(steps: list[tuple[Any, ...]]) -> None:
    db = fresh()
    marks: list[int] = []  # the newest event id after each step, and what the tables held then
    snapshots: list[list[tuple[Any, ...]]] = []
    for n, step in enumerate(steps):
        apply(db, step, 100.0 + n)
        marks.append(db.execute("SELECT max(id) FROM events").fetchone()[0])
        snapshots.append(live(db))
    for (event_id,) in db.execute("SELECT id FROM events WHERE mind = 'ada' ORDER BY id").fetchall():
        k = bisect_right(marks, event_id) - 1
        assert then(db, event_id) == (snapshots[k] if k >= 0 else []), f"as of event {event_id}"
    # The migration fills the same rows from the events alone as the writers recorded.
    recorded = db.execute("SELECT * FROM belief_history ORDER BY event_id").fetchall()
    db.execute("DROP TABLE belief_history")
    m020_belief_history(db)
    assert db.execute("SELECT * FROM belief_history ORDER BY event_id").fetchall() == recorded
