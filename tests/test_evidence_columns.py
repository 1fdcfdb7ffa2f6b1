"""Evidence given to add_evidence_bulk as columns: each item stored as given, in order; columns that do not line up refused."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_rows import Row, add_one, columns
from noemad.cognition.beliefs.bulk import EvidenceColumns, Evidenced, add_evidence_bulk
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.trust import set_trust
from noemad.errors import InvalidInput
from noemad.events import EventDraft, append
from noemad.minds import create_mind
from noemad.store import Store

NOW = 1_767_225_600.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW - 86_400, "operator"))
    s.writer.run_sync(lambda db: set_trust(db, mind="ada", source="bob", value=0.85, now=NOW, actor="operator"))
    yield s
    s.close()


def test_columns_store_each_item_as_given_and_one_event(store: Store) -> None:
    events = [store.writer.run_sync(lambda db, i=i: append(db, EventDraft("ada", "message", "user:alice", text=str(i)), NOW)).id for i in range(3)]
    given = EvidenceColumns(("support", "contradict", "support"), (0.3, 0.5, 0.3), ("alice", "bob", "bob"), tuple(events), (None, None, 0.9))

    def add(proposition: str, items: EvidenceColumns) -> tuple[list[tuple[object, ...]], dict[str, object]]:
        added = store.writer.run_sync(
            lambda db: add_one(db, mind="ada", proposition=proposition, subject="go", kind="inference", items=items,
                                         now=NOW, actor="test", cause=None)
        )
        belief = get_belief(store.reader(), added.belief_id)
        data = dict(added.event.data)
        data["evidence"] = {k: v for k, v in data["evidence"].items() if k not in ("first_id", "last_id")}
        return [(e.stance, e.weight, e.credibility, e.source, e.event_id) for e in belief.evidence], data

    stored, data = add("alice picks go", given)
    assert stored == [("support", 0.3, 0.6, "alice", events[0]), ("contradict", 0.5, 0.85, "bob", events[1]),
                      ("support", 0.3, 0.9, "bob", events[2])]  # credibility: trust, trust, as given
    assert data["evidence"] == {"count": 3, "support": 2, "contradict": 1}
    assert data["sources"] == {"alice": {"items": 1, "credibility": 0.6}, "bob": {"items": 2, "credibility": [0.85, 0.9]}}


def test_columns_of_different_lengths_or_none_are_refused(store: Store) -> None:
    event = store.writer.run_sync(lambda db: append(db, EventDraft("ada", "message", "user:alice", text="x"), NOW)).id
    for columns in (EvidenceColumns(("support", "support"), (0.3,), ("alice",), (event,), (None,)), EvidenceColumns((), (), (), (), ())):
        with pytest.raises(InvalidInput):
            store.writer.run_sync(
                lambda db, c=columns: add_one(db, mind="ada", proposition="p", subject="s", kind="inference", items=c,
                                                         now=NOW, actor="t", cause=None)
            )



@given(
    st.lists(st.lists(st.tuples(st.integers(0, 29), st.sampled_from(["alice", "bob", "carol"])), min_size=1, max_size=40), min_size=1, max_size=4),
    st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_many_beliefs_at_once_store_each_ones_items_in_its_order(batches: list[list[tuple[int, str]]], in_order: bool) -> None:
    """add_evidence_bulk stores all items in one statement, by event where every batch is in event order; each belief keeps its order."""
    with tempfile.TemporaryDirectory() as place:
        store = Store(Path(place) / "n.db")
        try:
            store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW - 86_400, "operator"))
            events = [store.writer.run_sync(lambda db, i=i: append(db, EventDraft("ada", "message", "user:alice", text=str(i)), NOW)).id for i in range(30)]
            given_ = [sorted(items) if in_order else items for items in batches]
            bulk = [
                Evidenced(f"proposition {k}", "s", columns([Row("support", 0.3, who, events[e]) for e, who in items])) for k, items in enumerate(given_)
            ]
            added = store.writer.run_sync(lambda db: add_evidence_bulk(db, mind="ada", kind="inference", batches=bulk, now=NOW, actor="t", cause=None))
            assert [a.event.text for a in added] == [b.proposition for b in bulk]  # a belief event each, in their order
            for a, items in zip(added, given_):
                belief = get_belief(store.reader(), a.belief_id)
                assert [(e.event_id, e.source) for e in belief.evidence] == [(events[e], who) for e, who in items]
                assert a.event.data["evidence"]["count"] == len(items) and belief.confidence == a.confidence
        finally:
            store.close()


def test_two_batches_of_one_proposition_are_refused_and_nothing_is_written(store: Store) -> None:
    event = store.writer.run_sync(lambda db: append(db, EventDraft("ada", "message", "user:alice", text="x"), NOW)).id
    items = columns([Row("support", 0.3, "alice", event)])
    with pytest.raises(InvalidInput, match="two batches of evidence state the same proposition"):
        store.writer.run_sync(
            lambda db: add_evidence_bulk(db, mind="ada", kind="inference", batches=[Evidenced("Alice picks Go", "go", items), Evidenced("alice picks go!", "go", items)],
                                         now=NOW, actor="t", cause=None)
        )
    assert store.reader().execute("SELECT count(*) FROM beliefs").fetchone() == (0,)
