"""Perception over a batch: every stimulus' episode, in order, written with as few writes as the rows allow."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from noemad.clock import ManualClock, parse_iso
from noemad.cognition.cycle import run_cycle
from noemad.errors import InvalidLink
from noemad.events import append, list_events
from noemad.minds import create_mind
from noemad.stimuli import Claim, Message, Observation, Stimulus
from noemad.store import Store

START = parse_iso("2026-01-01T00:00:00Z")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
    yield s
    s.close()


def test_a_run_of_plain_stimuli_has_its_episodes_written_at_once_and_in_order(store: Store) -> None:
    batch: list[Stimulus] = [
        Message(author="alice", text="the build is red"),
        Message(author="bob", text="the parser again"),
        Observation(source="ci", text="build 41 failed", claim=Claim("the build is red", "build")),
        Message(author="alice", text="on it"),
    ]
    ids = [store.writer.run_sync(lambda db, s=s: append(db, s.draft("ada"), START)).id for s in batch]
    statements: list[str] = []
    store.writer.run_sync(lambda db: db.conn.set_trace_callback(statements.append))
    result = asyncio.run(run_cycle(store, ManualClock(START), "ada", ids, "ada/1", "test"))
    store.writer.run_sync(lambda db: db.conn.set_trace_callback(None))

    # One write for the two messages, one for the observation (its evidence follows its episode), one for the last message.
    assert statements.count("SAVEPOINT write_memories") == 3
    # Each write's memories go in one statement, so FTS5 indexes them as one segment (it writes one at the next
    # statement of the transaction): a segment per memory, and its merging, were most of writing an episode.
    assert sum(s.startswith("-- INSERT INTO 'main'.'memories_fts_idx'") for s in statements) == 3
    # Each write counts its memories' terms in one statement, not one per term.
    assert sum(s.startswith("INSERT INTO memory_terms") for s in statements) == 3
    # An episode's event names what its write has just checked or written: only the evidence's event, citing one, looks a memory up.
    assert sum(s.startswith("SELECT id, mind FROM memories") for s in statements) == 1
    events = list_events(store.reader(), "ada", since=ids[-1])
    created = [e for e in events if e.kind == "memory_created"]
    assert [e.causation_id for e in created] == ids
    assert [e.subject.id for e in created if e.subject] == result.perception.episodes == sorted(result.perception.episodes)
    kinds = [e.kind for e in events if e.kind in ("memory_created", "belief_created")]
    assert kinds == ["memory_created", "memory_created", "memory_created", "belief_created", "memory_created"]


def test_a_cycle_refuses_a_stimulus_of_another_mind(store: Store) -> None:
    store.writer.run_sync(lambda db: create_mind(db, "bob", {}, START, "operator"))
    theirs = store.writer.run_sync(lambda db: append(db, Message(author="alice", text="hello bob").draft("bob"), START))
    with pytest.raises(InvalidLink, match="belongs to mind 'bob'"):
        asyncio.run(run_cycle(store, ManualClock(START), "ada", [theirs.id], "ada/1", "test"))
    assert [e.kind for e in list_events(store.reader(), "ada")] == ["mind_created"]
