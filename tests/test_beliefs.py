"""Beliefs and evidence in process: normalisation, events, status, trust, corrections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noemad.cognition.beliefs.corrections import correct
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.beliefs.model import BeliefNotFound, normalise
from noemad.cognition.beliefs.queries import get_belief, list_beliefs
from noemad.cognition.trust import DEFAULT_TRUST, set_trust, trust
from noemad.errors import InvalidInput, InvalidLink
from noemad.events import Event, EventDraft, append
from noemad.minds import create_mind
from noemad.store import Store
from noemad.timeline import walk


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 1.0, "operator"))
    yield s
    s.close()


def stimulus(store: Store, text: str = "x") -> Event:
    return store.writer.run_sync(lambda db: append(db, EventDraft("ada", "observation", "source:ci", text=text), 10.0))


def evidence(store: Store, proposition: str, stance: str = "support", source: str = "ci", subject: str = "build", **kw):
    cause = stimulus(store)
    return store.writer.run_sync(
        lambda db: add_evidence(
            db, mind="ada", proposition=proposition, subject=subject, kind=kw.pop("kind", "observation"), stance=stance,
            weight=kw.pop("weight", 1.0), source=source, brought_by=cause.id, now=20.0, actor="process:perception", **kw
        )
    )


def test_normalise_makes_one_subject_decidable() -> None:
    assert normalise("The  Build!") == normalise("build") == "build"
    assert normalise("Café   au lait.") == "café au lait"
    assert normalise("An apple") == "apple"


def test_first_evidence_creates_the_belief_then_updates_it(store: Store) -> None:
    belief, created = evidence(store, "The build is green.")
    assert created.kind == "belief_created" and created.subject is not None and created.subject.id == belief.id
    assert belief.confidence == pytest.approx(DEFAULT_TRUST) and belief.subject == "build" and belief.kind == "observation"
    again, updated = evidence(store, "the build is GREEN", source="ops")
    assert again.id == belief.id and updated.kind == "belief_updated"
    assert updated.data["confidence"] == {"from": pytest.approx(0.6), "to": pytest.approx(1 - 0.4 * 0.4)}
    # Each event is caused by the stimulus that brought its evidence, not by the belief's first one.
    assert len(again.evidence) == 2 and updated.data["evidence_id"] == again.evidence[1].id
    assert created.causation_id == belief.evidence[0].event_id
    assert updated.causation_id == again.evidence[1].event_id != created.causation_id


def test_one_item_is_checked_as_many_are(store: Store) -> None:
    """One item takes the path of many (`add_evidence_bulk`): a weight out of range, or an event of another mind, is refused, nothing written."""
    with pytest.raises(InvalidInput, match="weight is a number between 0 and 1, not 1.5"):
        evidence(store, "build is green", weight=1.5)
    store.writer.run_sync(lambda db: create_mind(db, "bob", {}, 1.0, "operator"))
    theirs = store.writer.run_sync(lambda db: append(db, EventDraft("bob", "observation", "source:ci", text="x"), 10.0))
    with pytest.raises(InvalidLink, match="evidence is brought only by events of mind 'ada'"):
        store.writer.run_sync(
            lambda db: add_evidence(
                db, mind="ada", proposition="build is green", subject="build", kind="observation", stance="support",
                weight=1.0, source="ci", brought_by=theirs.id, now=20.0, actor="process:perception",
            )
        )
    assert list_beliefs(store.reader(), "ada") == []


def test_trust_sets_credibility_of_later_evidence(store: Store) -> None:
    assert trust(store.reader(), "ada", "ci") == DEFAULT_TRUST
    event = store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="ci", value=0.9, now=5.0, actor="operator"))
    assert event.kind == "trust_changed" and event.data == {"source": "ci", "from": DEFAULT_TRUST, "to": 0.9}
    belief, _ = evidence(store, "build is green")
    assert belief.evidence[0].credibility == 0.9 and belief.confidence == pytest.approx(0.9)
    with pytest.raises(InvalidInput):
        store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="ci", value=1.5, now=5.0, actor="operator"))


def test_strong_evidence_on_both_sides_contests_a_belief(store: Store) -> None:
    store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="ci", value=0.9, now=5.0, actor="operator"))
    store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="qa", value=0.8, now=5.0, actor="operator"))
    evidence(store, "build is green")
    belief, event = evidence(store, "build is green", stance="contradict", source="qa")
    assert belief.status == "contested" and event.data["status"] == {"from": "active", "to": "contested"}


def test_pinned_and_rejected_beliefs_are_not_moved_by_evidence(store: Store) -> None:
    belief, _ = evidence(store, "build is green")
    cause = stimulus(store, "operator says so")
    pinned, event = store.writer.run_sync(
        lambda db: correct(db, belief_id=belief.id, status=None, confidence_value=0.95, reason="I checked", brought_by=cause.id, now=30.0, actor="operator")
    )
    assert (pinned.status, pinned.confidence) == ("pinned", 0.95) and event.data["correction"] is True
    moved, held = evidence(store, "build is green", stance="contradict", source="qa")
    assert (moved.status, moved.confidence) == ("pinned", 0.95) and "held" in held.data
    assert len(moved.evidence) == 2  # recorded all the same
    active, _ = store.writer.run_sync(
        lambda db: correct(db, belief_id=belief.id, status="active", confidence_value=None, reason="let evidence decide", brought_by=cause.id, now=31.0, actor="operator")
    )
    assert active.status == "contested" and active.confidence == pytest.approx(0.6 * (1 - 0.6))  # both sides at 0.6
    rejected, _ = store.writer.run_sync(
        lambda db: correct(db, belief_id=belief.id, status="rejected", confidence_value=None, reason="wrong", brought_by=cause.id, now=32.0, actor="operator")
    )
    assert (rejected.status, rejected.confidence) == ("rejected", 0.0)


def test_bad_input_is_refused_and_nothing_stored(store: Store) -> None:
    for bad in ({"proposition": "   "}, {"proposition": "x" * 1001}, {"subject": "!!!"}, {"kind": "rumour"}):
        args = {"proposition": "build is green", "subject": "build", "kind": "observation"} | bad
        with pytest.raises(InvalidInput):
            evidence(store, args.pop("proposition"), **args)
    assert list_beliefs(store.reader(), "ada") == []
    with pytest.raises(BeliefNotFound):
        get_belief(store.reader(), 99)


def test_the_timeline_walks_from_a_belief_update_back_to_what_brought_it(store: Store) -> None:
    _, created = evidence(store, "build is green")
    _, updated = evidence(store, "build is green", source="ops")
    consumer = store.writer.run_sync(
        lambda db: append(db, EventDraft("ada", "decision", "process:x", refs=[updated.subject]), 40.0)  # type: ignore[list-item]
    )
    timeline = walk(store.reader(), consumer.id)
    ids = {n.id for n in timeline.nodes}
    assert {created.id, updated.id, created.causation_id, updated.causation_id} <= ids
    cited = {(e.source, e.target) for e in timeline.edges if e.kind == "cited"}
    assert (created.id, consumer.id) in cited and (updated.id, consumer.id) in cited
