"""What one consolidation writes, row by row, for a small fixed month of episodes; and the fast paths that write it.

The month: habits of two users, a sensor's readings, episodes with no
stimulus, long episodes whose terms are bounded (MAX_TERMS), and chatter
that recurs in nothing. The clusters, their propositions, every evidence
item (source, credibility, the event that brought it), every memory link
and consolidated row are pinned: consolidation was made faster (numpy
counting, a TermTable, evidence inserted in one statement) and must write
exactly what it wrote before. The other tests hold the fast paths to the
plain ones they replace, on random inputs.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noemad.background import consolidation
from noemad.background.consolidation import Authors, cluster, cluster_table, episode_terms, term_table, terms
from noemad.background.consolidation.tokenise import TermSets
from noemad.background.jobs import JobContext, start_job
from noemad.clock import ManualClock, parse_iso
from evidence_rows import add_one
from noemad.cognition.beliefs.bulk import EvidenceColumns
from noemad.cognition.trust import set_trust
from noemad.cognition.memory.writing import write_memory
from noemad.cognition.perceive import perceive
from noemad.config.files import parse_config
from noemad.config.schedules import ConsolidationSchedule
from noemad.events import append
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway
from noemad.stimuli import Message, Observation
from noemad.store import Store

NOW = parse_iso("2026-03-01T00:00:00Z")
DAY = 86_400.0
LONG = "deploy kubernetes cluster staging pipeline rollout canary metrics dashboard alerts tracing logging budget review"

# (who, text): a message from a user, an observation from "sensor:NAME", or an episode with no stimulus from None.
MONTH: list[tuple[str | None, str]] = [
    ("alice", "I'll select Go for the parser"),
    ("bob", "remind me to water the ficus tomorrow"),
    ("sensor:ci", "build 4417 failed on main"),
    ("carol", "the weather is lovely in the harbour"),
    ("alice", "Selected Go again for the metrics service"),
    (None, "backup tapes rotated in the vault"),
    ("dave", LONG),
    ("bob", "remind me to water the basil tonight"),
    ("sensor:ci", "build 4420 failed on main"),
    ("erin", "who took my stapler"),
    ("alice", "we select Go for the importer too"),
    ("dave", LONG + " today"),
    (None, "backup tapes rotated in the vault"),
    ("bob", "remind me to water the orchid on Friday"),
    ("sensor:ci", "build 4431 failed on main"),
    ("carol", "lunch at noon on Friday?"),
    ("alice", "Go is what I select for the scheduler"),
    ("dave", "kubernetes staging " + LONG),
    (None, "backup tapes rotated in the vault again"),
    ("bob", "remind me to water the fern tomorrow"),
    ("sensor:ci", "build 4440 failed on release"),
    ("erin", "the printer on floor two jams"),
    ("grace", "select Go for the CLI rewrite, as usual"),
    ("dave", LONG),
    ("sensor:thermostat", "kitchen temperature is 21 degrees"),
]

# Pinned: each cluster's proposition, subject and confidence, and its episodes (indices into MONTH) in id order.
CLUSTERS = [
    (
        'alice and grace repeatedly mentioned select and go (5 episodes, 2026-01-31 to 2026-02-22), e.g. "I\'ll select Go for the parser".',
        "go select", 0.428799, [0, 4, 10, 16, 22],
    ),
    (
        "dave repeatedly mentioned deploy, cluster, canary, dashboard, alerts and budget (4 episodes, 2026-02-06 to 2026-02-23),"
        ' e.g. "deploy kubernetes cluster staging pipeline rollout canary metrics dashboard alerts tracing logging budget review".',
        "alerts budget", 0.303413, [6, 11, 17, 23],
    ),
    (
        'ci repeatedly mentioned build, failed and main (4 episodes, 2026-02-02 to 2026-02-20), e.g. "build 4417 failed on main".',
        "build failed", 0.303413, [2, 8, 14, 20],
    ),
    (
        'bob repeatedly mentioned remind, water and tomorrow (4 episodes, 2026-02-01 to 2026-02-19), e.g. "remind me to water the fern tomorrow".',
        "remind water", 0.390188, [1, 7, 13, 19],
    ),
    (
        'unknown repeatedly mentioned backup, tapes, rotated and vault (3 episodes, 2026-02-05 to 2026-02-18), e.g. "backup tapes rotated in the vault".',
        "backup rotated", 0.287379, [5, 12, 18],
    ),
]


def _speaker(who: str | None) -> str:
    return "unknown" if who is None else who.removeprefix("sensor:")


def _month(store: Store) -> tuple[list[int], list[int]]:
    """The month perceived into mind ada, an episode a day; each episode's id and the event that brought it."""
    ids: list[int] = []
    brought: list[int] = []
    for day, (who, text) in enumerate(MONTH):
        at = NOW - 29 * DAY + day * DAY

        def job(db: Any, who: str | None = who, text: str = text, at: float = at) -> tuple[int, int]:
            if who is None:  # an episode that records no stimulus: brought by the event that wrote it
                memory, event = write_memory(db, mind="ada", kind="episodic", text=f"noted: {text}", now=at, actor="operator:root", cause=None, cycle_id=None)
                return memory.id, event.id
            stimulus = Observation(who.removeprefix("sensor:"), text) if who.startswith("sensor:") else Message(who, text)
            stored = append(db, stimulus.draft("ada"), at)
            return perceive(db, "ada", [stored], f"ada/{day}", at).episodes[0], stored.id

        episode, event = store.writer.run_sync(job)
        ids.append(episode)
        brought.append(event)
    return ids, brought


def _rows(store: Store, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
    return store.reader().execute(sql, args).fetchall()


def test_a_month_consolidates_into_these_beliefs_memories_evidence_links_and_rows(tmp_path: Path) -> None:
    store = Store(tmp_path / "noema.db")
    try:
        store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW - 60 * DAY, "operator"))
        store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="bob", value=0.8, now=NOW - 40 * DAY, actor="operator:root"))
        ids, brought = _month(store)
        clock = ManualClock(NOW)
        job = store.writer.run_sync(
            lambda db: start_job(db, mind="ada", kind="consolidation", trigger="operator", actor="operator", inputs={}, now=NOW)
        )
        cfg = parse_config("[models]\n", "noemad.toml").config
        ctx = JobContext(
            job=job, store=store, clock=clock, gateway=ModelGateway(config=lambda: cfg, clock=clock, writer=store.writer),
            settings=ConsolidationSchedule(), on_progress=lambda f, s: None,
        )
        outputs = asyncio.run(consolidation.run(ctx))

        clustered = sum(len(episodes) for *_, episodes in CLUSTERS)
        assert outputs["summary"] == f"{len(CLUSTERS)} generalisations from {clustered} of {len(MONTH)} episodes; {len(MONTH) - clustered} left for later"
        assert [(c["proposition"], c["subject"], c["confidence"]) for c in outputs["clusters"]] == [(p, s, f) for p, s, f, _ in CLUSTERS]
        trust = {"bob": 0.8}
        for c, (*_, members) in zip(outputs["clusters"], CLUSTERS):
            speakers = [_speaker(MONTH[i][0]) for i in members]
            # One evidence item per episode, in id order: its speaker, the mind's trust in them, the event that brought it.
            evidence = _rows(store, "SELECT stance, weight, credibility, source, kind, event_id FROM evidence WHERE belief_id = ? ORDER BY id", [c["belief"]])
            assert evidence == [
                ("support", consolidation.EPISODE_WEIGHT, trust.get(s, 0.6), s, "inference", brought[i]) for s, i in zip(speakers, members)
            ]
            assert c["speakers"] == dict(sorted(Counter(speakers).items(), key=lambda kv: (-kv[1], kv[0])))
            assert _rows(store, "SELECT derived_from FROM memory_links WHERE memory_id = ? ORDER BY derived_from", [c["memory"]]) == [(ids[i],) for i in members]
            assert _rows(store, "SELECT memory_id, job_id FROM consolidated WHERE into_memory = ? ORDER BY memory_id", [c["memory"]]) == [
                (ids[i], job.id) for i in members
            ]
            assert _rows(store, "SELECT kind, text FROM memories WHERE id = ?", [c["memory"]]) == [("semantic", c["proposition"])]
            (confidence,) = _rows(store, "SELECT confidence FROM beliefs WHERE id = ?", [c["belief"]])[0]
            assert c["confidence"] == confidence > 0
        # Nothing else was consolidated, and the run's events are these, in this order.
        assert _rows(store, "SELECT count(*) FROM consolidated", [])[0][0] == clustered
        kinds = [k for (k,) in _rows(store, "SELECT kind FROM events WHERE actor = 'process:consolidation' ORDER BY id", [])]
        assert kinds == ["belief_created"] * len(CLUSTERS) + ["memory_created"] * len(CLUSTERS) + ["consolidation"]  # one writer job
    finally:
        store.close()


_terms = st.lists(st.sampled_from(["go", "select", "ficus", "water", "me", "build", "fail", "a1", "b2", "c3", "d4", "e5", "f6", "g7"]), max_size=14)


@given(st.lists(_terms, max_size=60), st.integers(2, 5), st.booleans())
@settings(max_examples=150, deadline=None)
def test_the_table_of_episodes_clusters_as_their_sets_of_terms_do(episodes: list[list[str]], min_episodes: int, with_authors: bool) -> None:
    texts = [f"u{i % 3}: " + " ".join(words) for i, words in enumerate(episodes)]
    sets = episode_terms(texts)
    authors = Authors.of([i % 3 for i in range(len(texts))], [i % 2 for i in range(len(texts))]) if with_authors else None
    table = term_table(texts)
    assert cluster_table(table, min_episodes, authors) == cluster(sets, min_episodes, authors)
    members = list(range(0, len(texts), 2))
    keys = ["go", "select", "a1", "nothing"]
    of_table, of_sets = table.of(members), TermSets([sets[i] for i in members])
    assert (of_table.counts(), of_table.hits(keys), of_table.union()) == (of_sets.counts(), of_sets.hits(keys), of_sets.union())


@given(st.lists(st.text(alphabet="aZé Σς_-1:\x00\n日", max_size=25), max_size=15))
@settings(max_examples=200, deadline=None)
def test_the_table_holds_each_episodes_terms_whatever_the_text(texts: list[str]) -> None:
    table = term_table(texts)
    per_body: list[set[str]] = [set() for _ in range(table.bodies)]
    for body, term in zip(table.entry_body.tolist(), table.entry_term.tolist()):
        per_body[body].add(table.names[term])
    assert [per_body[b] for b in table.body_of.tolist()] == [set(t) for t in episode_terms(texts)]
    assert table.names == sorted(table.names)


@given(st.lists(st.text(alphabet="ab s 0123456789²٣:", max_size=30), max_size=15))
@settings(max_examples=200, deadline=None)
def test_numbers_are_cut_as_one_text_at_a_time_cuts_them(texts: list[str]) -> None:
    """Cut in bulk, a number is its own stem (unstemmed); one text at a time, Snowball stems it: the terms are the same."""
    assert [set(t) for t in episode_terms(texts)] == [set(terms(text)) for text in texts]


@pytest.mark.parametrize("sources", [3, 70])  # a few kinds of item go in one statement; many, row by row
def test_many_items_are_written_alike_in_one_statement_or_row_by_row(tmp_path: Path, sources: int) -> None:
    store = Store(tmp_path / "noema.db")
    try:
        store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW - DAY, "operator"))
        events = [store.writer.run_sync(lambda db, i=i: append(db, Message(f"user{i % sources}", f"hello {i}").draft("ada"), NOW).id) for i in range(140)]
        names = [f"user{i % sources}" for i in range(140)]
        credibility = [None if i % 3 else 0.25 for i in range(140)]
        columns = EvidenceColumns(("support", "contradict") * 70, (0.3, 0.7) * 70, names, events, credibility)
        added = store.writer.run_sync(
            lambda db: add_one(db, mind="ada", proposition="p holds", subject="p", kind="inference", items=columns, now=NOW, actor="operator:root", cause=None)
        )
        rows = _rows(store, "SELECT stance, weight, credibility, source, kind, event_id, at FROM evidence WHERE belief_id = ? ORDER BY id", [added.belief_id])
        at = _rows(store, "SELECT created_at FROM beliefs WHERE id = ?", [added.belief_id])[0][0]
        assert rows == [
            (stance, weight, 0.6 if c is None else c, name, "inference", event, at)
            for stance, weight, name, event, c in zip(columns.stances, columns.weights, names, events, credibility)
        ]
    finally:
        store.close()


def test_the_window_is_in_id_order_when_the_clock_stepped_back(tmp_path: Path) -> None:
    """Episodes come from SQLite in creation order; where that is not id order (a clock stepped back) the window is sorted, rows whole."""
    from noemad.background.consolidation.select import load_window

    store = Store(tmp_path / "noema.db")
    try:
        store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW - 60 * DAY, "operator"))
        days = [5, 3, 9, 1, 7]  # created out of order: the third episode is the newest

        def job(db: Any) -> list[int]:
            return [
                write_memory(db, mind="ada", kind="episodic", text=f"episode {d}", now=NOW - 20 * DAY + d * DAY, actor="operator", cause=None, cycle_id=None)[0].id
                for d in days
            ]

        ids = store.writer.run_sync(job)
        window = load_window(store.reader(), "ada", NOW - 30 * DAY, NOW)
        assert window.ids == sorted(ids) == ids
        assert window.texts == [f"episode {d}" for d in days]
        assert [c[:10] for c in window.created] == [time.strftime("%Y-%m-%d", time.gmtime(NOW - 20 * DAY + d * DAY)) for d in days]
        # Read in two steps, the stimuli handed on first (as a run reads them): the same window, in one read transaction.
        handed: list[list[int | None]] = []
        assert load_window(store.reader(), "ada", NOW - 30 * DAY, NOW, handed.append) == window
        assert handed == [[None] * 5] and not store.reader().conn.in_transaction
    finally:
        store.close()
