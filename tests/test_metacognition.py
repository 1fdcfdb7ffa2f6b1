"""Metacognition and attention: the checks, their effects, the once-a-day rule, capacity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inprocess import InProcess
from noemad.cognition import metacognition
from noemad.cognition.attention import attend, select
from noemad.cognition.beliefs.corrections import correct
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.beliefs.model import Belief, Evidence
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.thoughts import Thought
from noemad.events import EventDraft, append
from noemad.minds import create_mind
from noemad.store import Store

DAY = 86_400.0


def belief(confidence: float, *support: tuple[str, str], status: str = "active") -> Belief:
    evidence = tuple(
        Evidence(i, "support", 1.0, confidence, source, kind, 1, "2026-01-01T00:00:00.000Z") for i, (source, kind) in enumerate(support, 1)
    )
    return Belief(7, "ada", "the build is green", "build", "observation", confidence, status, "t", "t", evidence)


def checks(b: Belief) -> list[str]:
    return [t.detail["check"] for t in metacognition.belief_checks(b)]


def test_the_evidence_checks_fire_on_their_thresholds() -> None:
    assert checks(belief(0.72, ("alice", "assertion"))) == ["insufficient_evidence", "single_source"]
    assert checks(belief(0.65, ("alice", "assertion"))) == ["single_source"]
    assert checks(belief(0.55, ("alice", "assertion"))) == []
    assert checks(belief(0.9, ("alice", "assertion"), ("bob", "observation"))) == []
    assert checks(belief(0.75, ("alice", "assertion"), ("alice", "observation"))) == ["single_source"]
    assert checks(belief(0.3, ("model", "model_output"), ("ops", "note"))) == ["fluent_without_evidence"]
    assert checks(belief(0.9, ("alice", "assertion"), status="pinned")) == []


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 0.0, "operator"))
    yield s
    s.close()


def claim(store: Store, proposition: str, stance: str, source: str, credibility: float, now: float, subject: str = "build", kind: str = "observation"):
    cause = store.writer.run_sync(lambda db: append(db, EventDraft("ada", "observation", f"source:{source}", text=proposition), now))
    return store.writer.run_sync(
        lambda db: add_evidence(db, mind="ada", proposition=proposition, subject=subject, kind=kind, stance=stance, weight=1.0,
                                source=source, credibility=credibility, brought_by=cause.id, now=now, actor="test")
    )


def admit(store: Store, thought: Thought, now: float) -> list:
    def job(db):
        _, attention = attend(db, mind="ada", thoughts=[thought], size=4, cause=1, cycle_id="ada/1", now=now)
        return metacognition.apply(db, "ada", thought, attention.id, "ada/1", now)

    return store.writer.run_sync(job)


def test_an_admitted_warning_adds_counter_evidence_and_is_not_repeated_within_a_day(store: Store) -> None:
    held, _ = claim(store, "the build is green", "support", "ci", 0.9, 10.0)
    [first, second] = metacognition.propose(store.reader(), "ada", [held.id], 10.0)
    warning, updated = admit(store, first, 10.0)
    assert (warning.kind, warning.data["check"], warning.data["ref"]) == ("metacognition", "insufficient_evidence", f"belief:{held.id}")
    assert updated.causation_id == warning.id and updated.data["confidence"] == {"from": 0.9, "to": pytest.approx(0.675)}
    lowered = get_belief(store.reader(), held.id)
    assert lowered.evidence[-1].source == "metacognition" and lowered.evidence[-1].weight == 0.25
    # The same check on the same belief is not repeated within a day; the other check still stands.
    again = [t.detail["check"] for t in metacognition.propose(store.reader(), "ada", [held.id], 10.0 + DAY - 1)]
    assert again == ["single_source"]


def test_a_contested_belief_left_for_a_day_raises_an_investigation_goal(store: Store) -> None:
    held, _ = claim(store, "the build is green", "support", "ci", 0.9, 10.0)
    claim(store, "the build is green", "contradict", "qa", 0.9, 20.0)
    assert get_belief(store.reader(), held.id).status == "contested"
    assert [t.kind for t in metacognition.propose(store.reader(), "ada", [], 20.0 + DAY - 1)] == []
    [stale] = metacognition.propose(store.reader(), "ada", [], 20.0 + DAY)
    warning, goal = admit(store, stale, 20.0 + DAY)
    assert stale.kind == "stale_contradiction" and warning.data["effect"] == "goal"
    assert goal.kind == "goal_created" and goal.causation_id == warning.id
    assert "investigate: the build is green" in (goal.text or "") or goal.data.get("title") == "investigate: the build is green"


def test_three_rejected_hypotheses_on_one_subject_are_a_repeated_failure(store: Store) -> None:
    for i in range(3):
        held, event = claim(store, f"the deploy lands by {i}pm", "support", "prediction", 0.8, 10.0 + i, subject="deploy", kind="hypothesis")
        store.writer.run_sync(lambda db, b=held, e=event: correct(db, belief_id=b.id, status="rejected", confidence_value=None,
                                                                  reason="missed", brought_by=e.id, now=20.0, actor="test"))
        found = [t.kind for t in metacognition.propose(store.reader(), "ada", [], 30.0)]
        assert ("repeated_failure" in found) == (i == 2)
    [warning] = admit(store, next(t for t in metacognition.propose(store.reader(), "ada", [], 30.0) if t.kind == "repeated_failure"), 30.0)
    assert warning.data["subject"] == "deploy" and warning.data["rejected"] == 3
    # A month later the failures have aged out.
    assert metacognition.propose(store.reader(), "ada", [], 20.0 + 31 * DAY) == []


def test_attention_admits_the_most_salient_few_deterministically() -> None:
    thoughts = [
        Thought("perception", "message", 0.6, "m", "event:2"),
        Thought("metacognition", "single_source", 0.7, "w", "single_source:belief:1"),
        Thought("evidence", "belief_created", 0.6, "b", "belief:1"),
        Thought("goals", "goal_active", 0.3, "g", "goal:1"),
    ]
    assert [t.key for t in select(thoughts, 3)] == ["single_source:belief:1", "event:2", "belief:1"]
    assert select(list(reversed(thoughts)), 3) == select(thoughts, 3)


def test_a_single_source_belief_draws_both_warnings_on_the_overview(app: InProcess, mind: str) -> None:
    assert app.api("PUT", f"/minds/{mind}/trust/alice", json={"value": 0.9}).status_code == 200  # the CLI's trust has its own test
    post = app.api("POST", f"/minds/{mind}/events", json={
        "kind": "assertion", "source": "alice", "claim": {"proposition": "deploys are frozen", "subject": "deploy"}})
    done = app.wait_for(mind, "cycle_completed", since=post.json()["id"])
    assert sorted(done["data"]["warnings"]) == ["insufficient_evidence", "single_source"]
    overview = app.api("GET", f"/minds/{mind}").json()
    assert sorted(w["check"] for w in overview["warnings"]) == ["insufficient_evidence", "single_source"]
    shown = app.ctl("mind", "show", mind)
    assert "insufficient_evidence" in shown.stdout and "single_source" in shown.stdout
    [attention] = app.api("GET", f"/minds/{mind}/events", params={"kind": "attention"}).json()["events"]
    assert attention["data"]["admitted"] == 4 and attention["data"]["capacity"] == 4
    assert [c["process"] for c in attention["data"]["candidates"]] == ["evidence", "metacognition", "metacognition", "perception"]


def test_a_small_workspace_leaves_a_warning_for_later(app: InProcess) -> None:
    app.api("POST", "/minds", json={"name": "tiny", "settings": {"attention_capacity": 1}})
    assert app.api("PUT", "/minds/tiny/trust/alice", json={"value": 0.9}).status_code == 200
    post = app.api("POST", "/minds/tiny/events", json={
        "kind": "assertion", "source": "alice", "claim": {"proposition": "deploys are frozen", "subject": "deploy"}})
    done = app.wait_for("tiny", "cycle_completed", since=post.json()["id"])
    assert done["data"]["warnings"] == [] and len(done["data"]["winners"]) == 1  # the belief change won the only place
