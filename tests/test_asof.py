"""The mind as of any time, in process: beliefs then, a belief's history, what changed in a window.

The property test replays random histories of belief changes (evidence one
item and many at once, corrections, withdrawals, rejected hypotheses) and
memory changes (written, retracted, recalled) and narratives, with
unrelated events between, and checks that the beliefs, memories and
narrative as of every event id equal what the live tables (and the newest
narrative) gave right after that event was written.
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
from evidence_rows import Row, add_one
from noemad.cognition.beliefs.corrections import correct, reject_hypothesis
from noemad.cognition.beliefs.evidence import add_evidence, withdraw_evidence
from noemad.cognition.beliefs.queries import evidence_counts, get_belief, list_beliefs
from noemad.events import EventDraft, append
from noemad.cognition.memory.reads import list_memories, memories_at
from noemad.cognition.memory.retrieval import retrieve
from noemad.cognition.memory.writing import retract, write_memory
from noemad.cognition.narrative.stored import narrative_shown
from noemad.cognition.narrative.model import Narrative
from noemad.cognition.narrative.stored import update as narrative_update
from noemad.minds import create_mind
from noemad.store.migrations import m020_belief_history, migrations
from inprocess import InProcess

PROPOSITIONS = ("the build is green", "the deploy is safe", "tests are slow")
SOURCES = ("ci", "qa", "ops", "metacognition")
WORDS = ("the build server is in oslo", "qa runs the slow suite", "deploys wait for friday")


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


def narrative_then(db: Database, through: int | None) -> Any:
    return narrative_shown(db, "ada", None, through=through)


op = st.one_of(
    st.tuples(st.just("item"), st.sampled_from(PROPOSITIONS), st.sampled_from(("support", "contradict")), st.sampled_from(SOURCES),
              st.floats(0.1, 1.0)),
    st.tuples(st.just("many"), st.sampled_from(PROPOSITIONS), st.lists(st.tuples(st.sampled_from(("support", "contradict")), st.sampled_from(SOURCES)), min_size=1, max_size=6)),
    st.tuples(st.just("correct"), st.integers(0, 2), st.sampled_from(("active", "pinned", "rejected")), st.none() | st.floats(0.0, 1.0)),
    st.tuples(st.just("withdraw"), st.integers(0, 2), st.integers(1, 3)),
    st.tuples(st.just("reject"), st.integers(0, 2)),
    st.tuples(st.just("noise"),),
    st.tuples(st.just("remember"), st.sampled_from(WORDS)),
    st.tuples(st.just("forget"), st.integers(0, 5)),
    st.tuples(st.just("recall"), st.sampled_from(WORDS)),
    st.tuples(st.just("narrate"), st.sampled_from(WORDS)),
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
        add_one(db, mind="ada", proposition=proposition, subject="build", kind="hypothesis",
                          items=[Row(stance, 0.8, source, cause) for stance, source in items], cause=cause, **common)
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
    elif kind == "remember":
        write_memory(db, mind="ada", kind="semantic", text=step[1], cause=cause, cycle_id=None, **common)
    elif kind == "forget":
        active = [m.id for m in list_memories(db, "ada", status="active", limit=1000)]
        if active:
            retract(db, memory_id=active[step[1] % len(active)], reason="wrong", **common)
    elif kind == "recall":
        retrieve(db, mind="ada", query=step[1], limit=2, cause=cause, cycle_id=None, now=now)
    elif kind == "narrate":
        narrative_update(db, mind="ada", narrative=Narrative(doing=[step[1]]), cause=cause, cycle_id=None, now=now)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=25))
def test_beliefs_as_of_every_event_equal_the_live_tables_right_after_it(steps: list[tuple[Any, ...]]) -> None:
    db = fresh()
    marks: list[int] = []  # the newest event id after each step, and what the tables held then
    snapshots: list[list[tuple[Any, ...]]] = []
    for n, step in enumerate(steps):
        apply(db, step, 100.0 + n)
        marks.append(db.execute("SELECT max(id) FROM events").fetchone()[0])
        snapshots.append((live(db), list_memories(db, "ada", limit=1000), narrative_then(db, None)))
    for (event_id,) in db.execute("SELECT id FROM events WHERE mind = 'ada' ORDER BY id").fetchall():
        k = bisect_right(marks, event_id) - 1
        beliefs, memories, told = snapshots[k] if k >= 0 else ([], [], narrative_then(db, 0))
        assert then(db, event_id) == beliefs, f"beliefs as of event {event_id}"
        assert memories_at(db, "ada", event_id, limit=1000) == memories, f"memories as of event {event_id}"
        assert narrative_then(db, event_id) == told, f"narrative as of event {event_id}"
    # Between any two of those points, `changes` names as created exactly the beliefs there at the end and not at the start.
    for start, end in zip([0, *marks], marks):
        window = asof.changes(db, "ada", asof.Cutoff(start, None), asof.Cutoff(end, None), threshold=0.0)
        was, now = {b[0] for b in then(db, start)}, {b[0] for b in then(db, end)}
        assert {m.belief_id for m in window.beliefs if m.what == "created"} == now - was
    # The migration fills the same rows from the events alone as the writers recorded.
    recorded = db.execute("SELECT * FROM belief_history ORDER BY event_id").fetchall()
    db.execute("DROP TABLE belief_history")
    m020_belief_history.migrate(db)
    assert db.execute("SELECT * FROM belief_history ORDER BY event_id").fetchall() == recorded


# --- the API and noemactl, in process -------------------------------------------------------

DAY = 86_400.0


def _write(app: InProcess, job: Any) -> Any:
    return app.sup.store.writer.run_sync(job)


def _observe(app: InProcess, text: str) -> int:
    now = app.clock.now()
    return int(_write(app, lambda db: append(db, EventDraft("ada", "observation", "source:ci", text=text), now).id))


def _evidence(app: InProcess, proposition: str, stance: str, source: str) -> int:
    cause, now = _observe(app, proposition), app.clock.now()
    belief, event = _write(app, lambda db: add_evidence(
        db, mind="ada", proposition=proposition, subject="build", kind="observation", stance=stance, weight=1.0, source=source,
        brought_by=cause, now=now, actor="process:perception"))
    return int(event.id)


@pytest.fixture
def lived(app: InProcess) -> dict[str, int]:
    """Three days of ada: day 0 the build is green; day 1 qa says not, the deploy looks safe, a memory is written, a narrative;
    day 2 an operator rejects the build belief and retracts the memory. The ids of the events that mark each day's end."""
    assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    marks: dict[str, int] = {}
    marks["day0"] = _evidence(app, "the build is green", "support", "ci")
    app.advance(DAY)
    _evidence(app, "the build is green", "contradict", "qa")
    marks["deploy"] = _evidence(app, "the deploy is safe", "support", "ops")
    now = app.clock.now()
    memory, _ = _write(app, lambda db: write_memory(db, mind="ada", kind="semantic", text="qa runs the slow suite", now=now,
                                                    actor="operator", cause=None, cycle_id=None))
    marks["memory"] = memory.id
    cause = _observe(app, "a turn")
    narrated = _write(app, lambda db: narrative_update(db, mind="ada", narrative=Narrative(doing=["watching the build"]), cause=cause,
                                                      cycle_id=None, now=now))
    marks["day1"] = narrated.id
    app.advance(DAY)
    asked = _observe(app, "operator: the build is red")
    now = app.clock.now()
    _, rejected = _write(app, lambda db: correct(db, belief_id=1, status="rejected", confidence_value=None, reason="the build is red",
                                                 brought_by=asked, now=now, actor="operator"))
    marks["rejected"] = rejected.id
    _write(app, lambda db: retract(db, memory_id=memory.id, reason="qa moved to the fast suite", now=now, actor="operator"))
    reflected = _write(app, lambda db: append(db, EventDraft("ada", "reflection", "process:reflection", text="one lesson"), now).id)
    lesson, _ = _write(app, lambda db: write_memory(db, mind="ada", kind="procedural", text="check qa before trusting ci", now=now,
                                                    actor="process:reflection", cause=reflected, cycle_id=None))
    marks["lesson"] = lesson.id
    marks["day2"] = _observe(app, "quiet")
    return marks


def test_beliefs_at_an_event_a_span_and_a_time_show_them_as_they_stood(app: InProcess, lived: dict[str, int]) -> None:
    first = app.api("GET", "/minds/ada/beliefs", params={"at": str(lived["day0"])}).json()
    assert first["at"]["event_id"] == lived["day0"]
    assert [(b["id"], b["status"], b["confidence"], b["support"], b["contradict"]) for b in first["beliefs"]] == [(1, "active", 0.6, 1, 0)]
    # A day back from now (day 2) is the end of day 1: the deploy belief exists, the build one contested, not yet rejected.
    for at in ("1d", iso(app.clock.now() - DAY)):
        then = app.api("GET", "/minds/ada/beliefs", params={"at": at}).json()
        assert lived["day1"] <= then["at"]["event_id"] < lived["rejected"] and then["at"]["at"] == "2026-01-02T00:00:00.000Z", at
        assert {b["proposition"]: (b["status"], b["support"], b["contradict"]) for b in then["beliefs"]} == {
            "the build is green": ("contested", 1, 1), "the deploy is safe": ("active", 1, 0)}
        assert [(b["contested"], b["pinned"]) for b in then["beliefs"]] == [(False, False), (True, False)]
    now = {b["proposition"]: b["status"] for b in app.api("GET", "/minds/ada/beliefs").json()["beliefs"]}
    assert now["the build is green"] == "rejected"
    before = app.api("GET", "/minds/ada/beliefs", params={"at": "2025-12-31"}).json()
    assert before["beliefs"] == [] and before["at"] == {"event_id": 0, "at": None}
    wrong = app.api("GET", "/minds/ada/beliefs", params={"at": "yesterday"})
    assert wrong.status_code == 422 and "neither an event id" in wrong.json()["detail"]


def test_cli_beliefs_at_prints_the_cutoff_and_the_beliefs_then(app: InProcess, lived: dict[str, int]) -> None:
    out = app.ctl("beliefs", "ada", "--at", str(lived["day1"]))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"ada as of event #{lived['day1']} (2026-01-02 00:00:00)"
    assert "contested" in out.stdout and "rejected" not in out.stdout and "+1 -1" in out.stdout


def test_belief_history_gives_each_change_with_its_event_cause_and_evidence(app: InProcess, lived: dict[str, int]) -> None:
    data = app.ctl_json("belief", "1", "--history")
    steps = data["steps"]
    assert [(s["by"], s["status_from"], s["status_to"]) for s in steps] == [
        ("evidence", "active", "active"), ("evidence", "active", "contested"), ("operator", "contested", "rejected")]
    assert steps[0]["evidence"]["source"] == "ci" and steps[0]["cause_kind"] == "observation" and steps[0]["actor"] == "process:perception"
    assert steps[1]["evidence"]["stance"] == "contradict" and (steps[1]["support"], steps[1]["contradict"]) == (1, 1)
    assert steps[2]["event_id"] == lived["rejected"] and steps[2]["actor"] == "operator" and steps[2]["reason"] == "the build is red"
    shown = app.ctl("belief", "1", "--history")
    assert shown.returncode == 0 and "contested → rejected" in shown.stdout and "support from ci" in shown.stdout
    assert app.api("GET", "/beliefs/99/history").status_code == 404


def test_changes_in_a_window_name_each_change_and_its_cause(app: InProcess, lived: dict[str, int]) -> None:
    day2 = app.ctl_json("changes", "ada", "--since", "1d")
    assert [(m["what"], m["belief_id"]) for m in day2["beliefs"]] == [("moved", 1), ("rejected", 1)]
    assert day2["beliefs"][1]["event_id"] == lived["rejected"] and day2["beliefs"][1]["cause_kind"] == "observation"
    assert [(m["what"], m["memory_id"], m["actor"], m["text"], m.get("reason")) for m in day2["memories"]] == [
        ("retracted", lived["memory"], "operator", "qa runs the slow suite", "qa moved to the fast suite"),
        ("learnt", lived["lesson"], "process:reflection", "check qa before trusting ci", None)]
    assert day2["memories"][1]["cause_kind"] == "reflection"
    day1 = app.ctl_json("changes", "ada", "--since", str(lived["day0"]), "--until", str(lived["day1"]))
    assert {(m["what"], m["belief_id"]) for m in day1["beliefs"]} == {("created", 2), ("moved", 1), ("contested", 1)}
    backwards = app.ctl("changes", "ada", "--since", "1d", "--until", "2d")
    assert backwards.returncode != 0 and "before it starts" in backwards.stderr
    shown = app.ctl("changes", "ada", "--since", "2d")
    assert shown.returncode == 0 and "rejected" in shown.stdout and "retracted" in shown.stdout


def test_memories_narrative_and_mind_as_they_stood(app: InProcess, lived: dict[str, int]) -> None:
    at = str(lived["day1"])
    then = app.api("GET", "/minds/ada/memories", params={"at": at}).json()["memories"]
    assert [(m["id"], m["status"]) for m in then] == [(lived["memory"], "active")]
    assert app.api("GET", "/minds/ada/memories").json()["memories"][0]["status"] == "retracted"
    assert app.api("GET", "/minds/ada/memories", params={"at": str(lived["day0"])}).json()["memories"] == []
    assert app.api("GET", "/minds/ada/narrative", params={"at": at}).json()["parts"]["doing"] == ["watching the build"]
    assert app.api("GET", "/minds/ada/narrative", params={"at": str(lived["day0"])}).json()["event_id"] is None
    mind = app.ctl_json("mind", "show", "ada", "--at", at)
    assert mind["beliefs"] == {"active": 1, "contested": 1} and mind["memories"] == {"active": 1, "retracted": 0}
    assert mind["recent"][-1]["id"] == lived["day1"]
    shown = app.ctl("mind", "show", "ada", "--at", at)
    assert shown.returncode == 0 and "1 active, 1 contested" in shown.stdout
