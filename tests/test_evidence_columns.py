"""Evidence given to add_evidence_many as columns is stored as the same items given as rows would be."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noemad.cognition.beliefs import EvidenceColumns, NewEvidence, add_evidence_many, get_belief, set_trust
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


def test_columns_and_rows_store_the_same_evidence_and_event(store: Store) -> None:
    events = [store.writer.run_sync(lambda db, i=i: append(db, EventDraft("ada", "message", "user:alice", text=str(i)), NOW)).id for i in range(3)]
    rows = [NewEvidence("support", 0.3, "alice", events[0]), NewEvidence("contradict", 0.5, "bob", events[1]),
            NewEvidence("support", 0.3, "bob", events[2], credibility=0.9)]
    columns = EvidenceColumns(*zip(*rows))

    def add(proposition: str, items: list[NewEvidence] | EvidenceColumns) -> tuple[list[tuple[object, ...]], dict[str, object]]:
        added = store.writer.run_sync(
            lambda db: add_evidence_many(db, mind="ada", proposition=proposition, subject="go", kind="inference", items=items,
                                         now=NOW, actor="test", cause=None)
        )
        belief = get_belief(store.reader(), added.belief_id)
        data = dict(added.event.data)
        data["evidence"] = {k: v for k, v in data["evidence"].items() if k not in ("first_id", "last_id")}
        return [(e.stance, e.weight, e.credibility, e.source, e.event_id) for e in belief.evidence], data

    assert add("alice picks go", rows) == add("bob picks go", columns)
    stored, _ = add("carol picks go", columns)
    assert [credibility for _, _, credibility, _, _ in stored] == [0.6, 0.85, 0.9]  # trust, trust, as given


def test_columns_of_different_lengths_or_none_are_refused(store: Store) -> None:
    event = store.writer.run_sync(lambda db: append(db, EventDraft("ada", "message", "user:alice", text="x"), NOW)).id
    for columns in (EvidenceColumns(("support", "support"), (0.3,), ("alice",), (event,), (None,)), EvidenceColumns((), (), (), (), ())):
        with pytest.raises(InvalidInput):
            store.writer.run_sync(
                lambda db, c=columns: add_evidence_many(db, mind="ada", proposition="p", subject="s", kind="inference", items=c,
                                                         now=NOW, actor="t", cause=None)
            )
