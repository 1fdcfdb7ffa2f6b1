"""Memories and retrieval (noemad.cognition.memory) on a real store.

Each test writes minds, cause events and memories through the writer, as the
daemon does, and reads back rows and events. Times are clock seconds from
NOW; scores are compared exactly where the formula fixes them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noemad.clock import iso
from noemad.cognition.memory.importance import importance
from noemad.cognition.memory.model import CANDIDATES, COMMON_MIN_DOCS, KIND_BASE, MAX_DERIVED_FROM, MAX_TERMS, Memory, SPECIFICITY_WEIGHT, ScoredMemory, W_IMP, W_REC, W_REL
from noemad.cognition.memory.reads import get_memory, list_memories, search
from noemad.cognition.memory.retrieval import rank, retrieve
from noemad.cognition.memory.terms import fts_query, informative_terms, query_terms
from noemad.cognition.memory.writing import NewMemory, retract, write_memories, write_memory
from noemad.errors import Conflict, InvalidInput, InvalidLink, MindNotFound, NotFound
from noemad.events import Event, EventDraft, Ref, append, get_event, list_events
from noemad.minds import create_mind, delete_mind
from noemad.store import Store
from noemad.timeline import walk
from noemad.wire import dump

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z
DAY = 86_400.0


class World:
    """A store plus helpers that write minds, cause events and memories through the writer."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def run(self, job: Any) -> Any:
        return self.store.writer.run_sync(job)

    @property
    def db(self) -> Any:
        return self.store.reader()

    def mind(self, name: str) -> None:
        self.run(lambda db: create_mind(db, name, {}, NOW, "test"))

    def event(self, mind: str, kind: str = "stimulus", text: str | None = None) -> int:
        return self.run(lambda db: append(db, EventDraft(mind=mind, kind=kind, actor="user:alice", text=text), NOW).id)

    def write(
        self,
        mind: str,
        text: str,
        *,
        kind: str = "episodic",
        at: float = NOW,
        cause: int | None = None,
        cycle_id: str | None = None,
        derived_from: Sequence[int] = (),
        event_id: int | None = None,
        importance: float | None = None,
    ) -> tuple[Memory, Event]:
        return self.run(
            lambda db: write_memory(
                db,
                mind=mind,
                kind=kind,
                text=text,
                now=at,
                actor="process:perception",
                cause=cause,
                cycle_id=cycle_id,
                derived_from=derived_from,
                event_id=event_id,
                importance=importance,
            )
        )

    def retrieve(
        self, mind: str, query: str, *, at: float = NOW, limit: int = 5, exclude: Sequence[int] = (), cause: int | None = None
    ) -> tuple[list[ScoredMemory], Event | None]:
        return self.run(
            lambda db: retrieve(db, mind=mind, query=query, now=at, limit=limit, exclude=exclude, cause=cause, cycle_id="c1")
        )

    def counts(self) -> tuple[int, int, int]:
        db = self.db
        return tuple(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("memories", "memory_links", "events"))  # type: ignore[return-value]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    store = Store(tmp_path / "n.db")
    w = World(store)
    w.mind("ada")
    w.mind("bob")
    try:
        yield w
    finally:
        store.close()


def ids(results: Sequence[ScoredMemory]) -> list[int]:
    return [r.memory.id for r in results]


# --- writing --------------------------------------------------------------------


def test_write_stores_the_row_and_a_memory_created_event(world: World) -> None:
    stimulus = world.event("ada", text="the deploy broke the build")
    memory, event = world.write("ada", "Alice said the deploy broke the build", cause=stimulus, cycle_id="c7", event_id=stimulus)

    assert memory == get_memory(world.db, memory.id)
    assert (memory.mind, memory.kind, memory.status, memory.access_count, memory.last_access) == ("ada", "episodic", "active", 0, None)
    assert memory.created_at == iso(NOW)
    assert memory.event_id == stimulus
    assert memory.importance == importance("Alice said the deploy broke the build", "episodic")

    stored = get_event(world.db, event.id)
    assert stored == event
    assert stored.kind == "memory_created"
    assert stored.subject == Ref("memory", memory.id)
    assert stored.causation_id == stimulus
    assert stored.cycle_id == "c7"
    assert stored.actor == "process:perception"
    assert stored.data == {"kind": "episodic", "importance": memory.importance}
    assert stored.refs == ()  # the recorded event is the cause already: no second link
    assert stored.text == "Alice said the deploy broke the build"


def test_write_cites_the_recorded_event_when_it_is_not_the_cause(world: World) -> None:
    stimulus = world.event("ada")
    cycle = world.event("ada", kind="cycle_started")
    memory, event = world.write("ada", "a note", cause=cycle, event_id=stimulus)
    assert memory.event_id == stimulus
    assert get_event(world.db, event.id).refs == (Ref("event", stimulus),)


def test_an_event_that_causes_new_memories_names_the_ids_they_got(world: World) -> None:
    """Written first, cited after: the citing event sees the ids the rows got, and their events follow it, caused by it."""
    world.write("ada", "an earlier memory")
    seen: list[int] = []

    def job(db: Any) -> list[tuple[Memory, Event]]:
        def lessons_learnt(ids: list[int]) -> int:
            seen.extend(ids)
            return append(db, EventDraft(mind="ada", kind="reflection", actor="process:reflection", data={"lessons": ids}), NOW).id

        memories = [NewMemory("procedural", "check the canary", None), NewMemory("procedural", "deploy on Tuesdays", None)]
        return write_memories(db, mind="ada", memories=memories, now=NOW, actor="process:reflection", cycle_id=None, cause_citing=lessons_learnt)

    written = world.run(job)
    assert seen == [m.id for m, _ in written]
    [cause] = {e.causation_id for _, e in written}
    assert cause is not None and get_event(world.db, cause).data == {"lessons": seen}
    assert all(e.id > cause for _, e in written)


def test_operator_memories_take_their_kind_and_importance(world: World) -> None:
    memory, event = world.write("ada", "Deploys happen on Tuesdays", kind="semantic", importance=0.9)
    assert (memory.kind, memory.importance) == ("semantic", 0.9)
    assert event.data == {"kind": "semantic", "importance": 0.9}
    assert event.causation_id is None


def test_derived_from_links_and_refs(world: World) -> None:
    a, created_a = world.write("ada", "Alice deployed on Tuesday")
    b, created_b = world.write("ada", "Alice deployed on Tuesday again")
    c, event = world.write("ada", "Alice deploys on Tuesdays", kind="semantic", derived_from=[b.id, a.id, b.id])

    assert c.derived_from == (a.id, b.id)
    assert get_memory(world.db, c.id).derived_from == (a.id, b.id)
    rows = world.db.execute("SELECT memory_id, derived_from, mind FROM memory_links ORDER BY derived_from").fetchall()
    assert rows == [(c.id, a.id, "ada"), (c.id, b.id, "ada")]
    assert set(get_event(world.db, event.id).refs) == {Ref("memory", a.id), Ref("memory", b.id)}

    # The timeline reaches the episodes' memory_created events through the refs.
    tl = walk(world.db, event.id)
    cited = {(e.source, e.target, e.via) for e in tl.edges if e.kind == "cited"}
    assert cited == {(created_a.id, event.id, Ref("memory", a.id)), (created_b.id, event.id, Ref("memory", b.id))}


@pytest.mark.parametrize("foreign", [False, True])
def test_derived_from_a_missing_or_foreign_memory_is_refused_and_nothing_is_stored(world: World, foreign: bool) -> None:
    ours, _ = world.write("ada", "an episode")
    theirs, _ = world.write("bob", "bob's episode")
    before = world.counts()
    bad = theirs.id if foreign else 999
    with pytest.raises(InvalidLink, match=("belongs to mind 'bob'" if foreign else "does not exist")):
        world.write("ada", "a summary", kind="semantic", derived_from=[ours.id, bad])
    assert world.counts() == before


def test_a_refused_derivation_leaves_nothing_even_when_its_job_goes_on(world: World) -> None:
    """Sources are checked as they are linked; a caller that catches the refusal and writes on finds no memory without its links."""
    ours, _ = world.write("ada", "an episode")
    theirs, _ = world.write("bob", "bob's episode")
    before = world.counts()

    def job(db: Any) -> str:
        try:
            write_memory(db, mind="ada", kind="semantic", text="a summary", now=NOW, actor="t", cause=None, cycle_id=None, derived_from=[ours.id, theirs.id])
        except InvalidLink as exc:
            return str(exc)
        return "stored"

    assert "belongs to mind 'bob'" in world.store.writer.run_sync(job)
    assert world.counts() == before


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"text": ""}, InvalidInput, "needs text"),
        ({"text": " \n\t"}, InvalidInput, "needs text"),
        ({"text": "x" * 100_001}, InvalidInput, "at most 100,000"),
        ({"kind": "dream"}, InvalidInput, "episodic, semantic, procedural"),
        ({"importance": 1.5}, InvalidInput, "between 0 and 1"),
        ({"importance": math.nan}, InvalidInput, "between 0 and 1"),
        ({"mind": "nobody"}, MindNotFound, "nobody"),
        ({"cause": 9999}, InvalidLink, "does not exist"),
        ({"event_id": 9999}, InvalidLink, "does not exist"),
        ({"foreign_cause": True}, InvalidLink, "belongs to mind 'bob'"),
    ],
)
def test_write_refuses_bad_input_with_a_sentence(world: World, kwargs: dict[str, Any], error: type, message: str) -> None:
    args: dict[str, Any] = {"mind": "ada", "text": "fine", "kind": "episodic"}
    if kwargs.pop("foreign_cause", False):
        kwargs["cause"] = world.event("bob")
    args.update(kwargs)
    mind = args.pop("mind")
    text = args.pop("text")
    before = world.counts()
    with pytest.raises(error, match=message):
        world.write(mind, text, **args)
    assert world.counts() == before


def test_a_memory_derived_from_more_than_63_keeps_every_link_and_cites_the_first_63(world: World) -> None:
    episodes = [world.write("ada", f"episode {i}")[0].id for i in range(70)]
    memory, event = world.write("ada", "a summary of seventy episodes", kind="semantic", derived_from=list(reversed(episodes)))

    assert memory.derived_from == tuple(episodes) == get_memory(world.db, memory.id).derived_from
    links = world.db.execute("SELECT derived_from FROM memory_links WHERE memory_id = ? ORDER BY derived_from", [memory.id]).fetchall()
    assert [r[0] for r in links] == episodes
    stored = get_event(world.db, event.id)
    assert stored.refs == tuple(Ref("memory", i) for i in episodes[: MAX_DERIVED_FROM])  # the first 63 by id
    assert stored.data == {"kind": "semantic", "importance": memory.importance, "derived_from": 70}


def test_text_of_exactly_the_maximum_is_stored(world: World) -> None:
    memory, _ = world.write("ada", "word " * 20_000)
    assert len(get_memory(world.db, memory.id).text) == 100_000


# --- importance -----------------------------------------------------------------


def test_importance_orders_kinds_and_rewards_specific_text_a_little() -> None:
    short = "ok then"
    rich = "Alice said the deploy on Friday at 3pm broke the API for Bob and Carol in Berlin"
    for kind in ("episodic", "semantic", "procedural"):
        assert importance(short, kind) < importance(rich, kind)
    for text in (short, rich):
        assert importance(text, "episodic") < importance(text, "semantic") < importance(text, "procedural")
    assert importance("", "episodic") == 0.3
    assert importance(rich, "episodic") <= 0.55
    assert importance("x " * 50_000, "procedural") <= 0.85
    with pytest.raises(InvalidInput):
        importance("x", "dream")


@pytest.mark.parametrize(
    ("text", "details"),
    [
        ("Alice met Bob. Then Carol came\nDave left: OK", 2),  # Bob, Carol: each sentence's first word is not a detail
        ("the deploy of v1.2 at 3pm on day ²", 4),  # a digit anywhere in a word (v1.2 is two: v1, 2)
        ("Said Alice", 1),
        ("nothing special here", 0),
        ("... Alice! Bob? carol; Dave", 0),  # every one starts its sentence
        ("", 0),
    ],
)
def test_importance_counts_as_details_words_with_digits_and_names_past_a_sentences_start(text: str, details: int) -> None:
    from noemad.cognition.memory.importance import _details
    from noemad.words import WORD

    assert _details(text, WORD.findall(text)) == details


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400), kind=st.sampled_from(["episodic", "semantic", "procedural"]))
def test_importance_is_bounded_and_deterministic(text: str, kind: str) -> None:
    value = importance(text, kind)
    assert 0.0 <= value <= 1.0
    assert KIND_BASE[kind] <= value <= KIND_BASE[kind] + SPECIFICITY_WEIGHT
    assert importance(text, kind) == value


# --- the query ------------------------------------------------------------------


def test_query_terms_drop_stop_words_short_words_and_repeats() -> None:
    assert query_terms('What did "Alice" say about (the) deploy* -- deploy, NEAR x OR 42?') == [
        "alice",
        "say",
        "deploy",
        "near",
        "42",
    ]
    assert query_terms("the and of OR AND NOT a") == []
    assert query_terms("foo_bar") == ["foo", "bar"]  # as unicode61 cuts it
    assert len(query_terms(" ".join(f"w{i}" for i in range(100)))) == MAX_TERMS
    assert fts_query(["alice", "deploy"]) == '"alice" OR "deploy"'
    assert fts_query([]) is None


INJECTIONS = [
    '"',
    '""',
    '"unclosed',
    "*",
    "deploy*",
    "NEAR(deploy build)",
    "NEAR/2",
    "deploy NEAR build",
    "-deploy",
    "deploy - build",
    "(((",
    ")",
    "OR",
    "deploy OR",
    "AND NOT",
    "text:deploy",
    "{text}: deploy",
    "^deploy",
    "'; DROP TABLE memories; --",
    "the of and",
    "?!.,;",
    "",
    "\x00deploy",
    "ﬁ ² ①",
    "+deploy +build",
]


@pytest.mark.parametrize("query", INJECTIONS)
def test_fts_syntax_in_a_query_is_only_words(world: World, query: str) -> None:
    world.write("ada", "the deploy broke the build near the office")
    search(world.db, "ada", query)
    world.run(lambda db: rank(db, mind="ada", query=query, now=NOW))
    results, _ = world.retrieve("ada", query)
    expected = bool(set(query_terms(query)) & {"deploy", "broke", "build", "near", "office"})
    assert bool(results) == expected
    assert world.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_search_ranks_by_bm25_and_filters_by_kind(world: World) -> None:
    weak, _ = world.write("ada", "the deploy went fine")
    strong, _ = world.write("ada", "deploy broke, deploy reverted, deploy again", kind="semantic")
    assert [m.id for m in search(world.db, "ada", "deploy")] == [strong.id, weak.id]
    assert [m.id for m in search(world.db, "ada", "deploy", kind="episodic")] == [weak.id]
    assert [m.id for m in search(world.db, "ada", "deploy", limit=1)] == [strong.id]
    with pytest.raises(InvalidInput, match="kind"):
        search(world.db, "ada", "deploy", kind="dream")


def test_operator_words_are_searched_as_words(world: World) -> None:
    near, _ = world.write("ada", "the shop near the station")
    world.write("ada", "the shop by the river")
    assert [m.id for m in search(world.db, "ada", "NEAR")] == [near.id]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=60))
def test_any_query_text_is_safe(world: World, query: str) -> None:
    if not any(m.text == "the deploy broke the build" for m in list_memories(world.db, "ada")):
        world.write("ada", "the deploy broke the build")
    search(world.db, "ada", query)
    world.run(lambda db: rank(db, mind="ada", query=query, now=NOW))


# --- ranking --------------------------------------------------------------------


def test_relevance_matters(world: World) -> None:
    weak, _ = world.write("ada", "the deploy went fine", importance=0.5)
    strong, _ = world.write("ada", "the deploy broke the build", importance=0.5)
    world.write("ada", "lunch was pasta", importance=0.5)
    results, _ = world.retrieve("ada", "deploy broke build")
    assert ids(results) == [strong.id, weak.id]
    assert results[0].relevance == 1.0
    assert 0.0 < results[1].relevance < 1.0
    assert results[0].recency == results[1].recency == 1.0


def test_a_more_recent_memory_wins_a_tie(world: World) -> None:
    old, _ = world.write("ada", "the deploy broke the build", at=NOW - 10 * DAY, importance=0.5)
    new, _ = world.write("ada", "the deploy broke the build", at=NOW - 1 * DAY, importance=0.5)
    results, _ = world.retrieve("ada", "deploy build")
    assert ids(results) == [new.id, old.id]
    assert results[0].relevance == results[1].relevance == 1.0
    assert results[0].recency == pytest.approx(0.5 ** (1 / 7))
    assert results[1].recency == pytest.approx(0.5 ** (10 / 7))


def test_equal_scores_are_broken_by_the_lower_id(world: World) -> None:
    first, _ = world.write("ada", "the deploy broke the build", importance=0.5)
    second, _ = world.write("ada", "the deploy broke the build", importance=0.5)
    results, _ = world.retrieve("ada", "deploy")
    assert results[0].score == results[1].score
    assert ids(results) == [first.id, second.id]


def test_importance_matters(world: World) -> None:
    dull, _ = world.write("ada", "the deploy broke the build", importance=0.1)
    vital, _ = world.write("ada", "the deploy broke the build", importance=0.9)
    results, _ = world.retrieve("ada", "deploy")
    assert ids(results) == [vital.id, dull.id]
    assert results[0].score - results[1].score == pytest.approx(W_IMP * 0.8)


def test_score_is_the_documented_formula(world: World) -> None:
    world.write("ada", "the deploy broke the build", at=NOW - 3 * DAY, importance=0.4)
    world.write("ada", "the deploy went fine", at=NOW - 2 * DAY, importance=0.7)
    results, _ = world.retrieve("ada", "deploy broke")
    for r in results:
        assert r.score == pytest.approx(W_REL * r.relevance + W_REC * r.recency + W_IMP * r.importance)
        assert r.importance == r.memory.importance
        assert 0.0 <= r.score <= 1.0


def test_recency_counts_from_the_last_access(world: World) -> None:
    a, _ = world.write("ada", "the deploy broke the build", at=NOW - 20 * DAY, importance=0.5)
    b, _ = world.write("ada", "the deploy broke the build", at=NOW - 10 * DAY, importance=0.5)
    world.retrieve("ada", "deploy", at=NOW - 5 * DAY, limit=1)  # touches b, the more recent
    world.retrieve("ada", "deploy", at=NOW - 1 * DAY, exclude=[b.id])  # touches a only
    results, _ = world.retrieve("ada", "deploy", at=NOW)
    assert ids(results) == [a.id, b.id]
    assert results[0].recency == pytest.approx(0.5 ** (1 / 7))
    assert results[1].recency == pytest.approx(0.5 ** (5 / 7))


def test_recency_never_exceeds_one_when_the_clock_is_behind(world: World) -> None:
    world.write("ada", "the deploy broke the build", at=NOW + DAY)
    results, _ = world.retrieve("ada", "deploy", at=NOW)
    assert results[0].recency == 1.0


# --- what retrieval writes --------------------------------------------------------


def test_access_is_updated_only_by_retrieval(world: World) -> None:
    a, _ = world.write("ada", "the deploy broke the build", importance=0.9)
    b, _ = world.write("ada", "the deploy went fine", importance=0.1)
    c, _ = world.write("ada", "lunch was pasta")

    # Reading is not retrieving.
    search(world.db, "ada", "deploy")
    list_memories(world.db, "ada")
    get_memory(world.db, a.id)
    world.run(lambda db: rank(db, mind="ada", query="deploy", now=NOW))
    assert [(m.last_access, m.access_count) for m in list_memories(world.db, "ada")] == [(None, 0)] * 3

    results, _ = world.retrieve("ada", "deploy", at=NOW + 60, limit=1)
    assert ids(results) == [a.id]
    assert results[0].memory.access_count == 0  # as scored: the state before this retrieval
    got = {m.id: (m.last_access, m.access_count) for m in list_memories(world.db, "ada")}
    assert got == {a.id: (iso(NOW + 60), 1), b.id: (None, 0), c.id: (None, 0)}

    world.retrieve("ada", "deploy", at=NOW + 120)
    got = {m.id: (m.last_access, m.access_count) for m in list_memories(world.db, "ada")}
    assert got == {a.id: (iso(NOW + 120), 2), b.id: (iso(NOW + 120), 1), c.id: (None, 0)}


def test_one_memory_retrieved_event_cites_each_returned_memory_in_order(world: World) -> None:
    _, created_old = world.write("ada", "the deploy broke the build", at=NOW - 9 * DAY)
    _, created_new = world.write("ada", "the deploy broke the build again", at=NOW - 1 * DAY)
    world.write("ada", "lunch was pasta")
    cause = world.event("ada", text="what broke?")
    before = len(list_events(world.db, "ada", kinds=["memory_retrieved"]))

    results, event = world.retrieve("ada", "what broke the deploy", cause=cause)
    assert event is not None
    assert len(list_events(world.db, "ada", kinds=["memory_retrieved"])) == before + 1
    assert event.kind == "memory_retrieved"
    assert event.actor == "process:retrieval"
    assert event.causation_id == cause
    assert event.cycle_id == "c1"
    assert event.subject is None
    assert list(event.refs) == [Ref("memory", i) for i in ids(results)]
    assert set(get_event(world.db, event.id).refs) == set(event.refs)
    assert event.data["terms"] == ["broke", "deploy"]
    assert [s["id"] for s in event.data["scores"]] == ids(results)
    assert event.data["scores"][0]["score"] == round(results[0].score, 6)
    assert get_event(world.db, event.id).data == event.data

    # The walk goes from the retrieval back to its cause and, through each
    # cited memory, to the event that wrote it.
    tl = walk(world.db, event.id)
    back = {n.id for n in tl.nodes if n.hop < 0}
    assert {cause, created_old.id, created_new.id} <= back
    via = {(e.source, e.via) for e in tl.edges if e.target == event.id and e.kind == "cited"}
    assert via == {(created_old.id, Ref("memory", created_old.subject.id)), (created_new.id, Ref("memory", created_new.subject.id))}  # type: ignore[union-attr]


@pytest.mark.parametrize("query", ["weather forecast", "the of and", "?!"])
def test_nothing_found_writes_nothing(world: World, query: str) -> None:
    world.write("ada", "the deploy broke the build")
    before = world.counts()
    results, event = world.retrieve("ada", query, cause=world.event("ada"))
    assert (results, event) == ([], None)
    assert world.counts()[:2] == before[:2]
    assert world.counts()[2] == before[2] + 1  # only the cause this test wrote
    assert list_memories(world.db, "ada")[0].access_count == 0


def test_retrieval_checks_its_cause(world: World) -> None:
    world.write("ada", "the deploy broke the build")
    with pytest.raises(InvalidLink, match="belongs to mind 'bob'"):
        world.retrieve("ada", "deploy", cause=world.event("bob"))
    assert list_memories(world.db, "ada")[0].access_count == 0


def test_retrieval_stays_within_its_mind(world: World) -> None:
    ours, _ = world.write("ada", "the deploy broke the build")
    world.write("bob", "the deploy broke the build")
    results, _ = world.retrieve("ada", "deploy")
    assert ids(results) == [ours.id]
    assert [m.id for m in search(world.db, "ada", "deploy")] == [ours.id]
    with pytest.raises(MindNotFound):
        world.retrieve("nobody", "deploy")


def test_a_mind_holding_most_memories_finds_its_own_past_better_matches_of_another_mind_or_retracted(world: World) -> None:
    # ada holds most of the host's memories, so retrieval first asks the index for the best matches of
    # any mind: here those are all bob's (and one of ada's is retracted), so it must look further.
    def job(db: Any) -> list[int]:
        for k in range(CANDIDATES * 3):
            write_memory(db, mind="ada", kind="episodic", text=f"lunch plans number {k}", now=NOW, actor="t", cause=None, cycle_id=None)
        for k in range(CANDIDATES * 2 + 5):
            write_memory(db, mind="bob", kind="episodic", text=f"zebra zebra zebra {k}", now=NOW, actor="t", cause=None, cycle_id=None)
        return [
            write_memory(db, mind="ada", kind="episodic", text=f"a zebra crossed the road near the {place}", now=NOW, actor="t", cause=None, cycle_id=None)[0].id
            for place in ("office", "station", "bakery")
        ]

    office, station, bakery = world.run(job)
    world.run(lambda db: retract(db, memory_id=station, reason="wrong", now=NOW, actor="operator"))
    results, _ = world.retrieve("ada", "zebra")
    assert sorted(ids(results)) == [office, bakery]
    assert ids(world.retrieve("bob", "zebra", limit=64)[0]) == ids(world.run(lambda db: rank(db, mind="bob", query="zebra", now=NOW, limit=64))[1])


def test_exclude_is_honoured(world: World) -> None:
    a, _ = world.write("ada", "the deploy broke the build")
    b, _ = world.write("ada", "the deploy broke the build")
    c, _ = world.write("ada", "the deploy broke the build")
    results, _ = world.retrieve("ada", "deploy", exclude=[a.id, c.id, 12345])
    assert ids(results) == [b.id]
    results, event = world.retrieve("ada", "deploy", exclude={a.id, b.id, c.id})
    assert (results, event) == ([], None)


def test_exclude_reaches_past_the_bm25_candidates(world: World) -> None:
    def job(db: Any) -> list[int]:
        return [
            write_memory(db, mind="ada", kind="episodic", text=f"deploy {'deploy ' * (k % 3)}number {k}", now=NOW, actor="t", cause=None, cycle_id=None)[0].id
            for k in range(CANDIDATES + 10)
        ]

    written = world.run(job)
    _, everything = world.run(lambda db: rank(db, mind="ada", query="deploy", now=NOW, limit=64))
    best = ids(everything)
    excluded = best[: CANDIDATES + 5]
    results, _ = world.retrieve("ada", "deploy", limit=10, exclude=excluded)
    assert set(ids(results)) == set(best) - set(excluded)
    assert len(results) == 5
    assert set(best) == set(written)


def test_limit_is_checked(world: World) -> None:
    for n in (0, -1, 65):
        with pytest.raises(InvalidInput, match="limit"):
            world.retrieve("ada", "deploy", limit=n)
    with pytest.raises(InvalidInput, match="limit"):
        search(world.db, "ada", "deploy", limit=0)


def test_more_than_the_bm25_candidates_can_be_asked_for(world: World) -> None:
    def job(db: Any) -> None:
        for k in range(70):
            write_memory(db, mind="ada", kind="episodic", text=f"deploy number {k}", now=NOW, actor="t", cause=None, cycle_id=None)

    world.run(job)
    results, event = world.retrieve("ada", "deploy", limit=64)
    assert len(results) == 64
    assert event is not None and len(event.refs) == 64


# --- determinism ------------------------------------------------------------------


def _build(store: Store) -> None:
    def job(db: Any) -> None:
        create_mind(db, "ada", {}, NOW, "test")
        words = ["deploy", "build", "alice", "lunch", "tuesday", "server", "broke", "fixed", "release", "pasta"]
        for k in range(60):
            text = " ".join(words[(k * 7 + j * 3) % len(words)] for j in range(3 + k % 5))
            write_memory(
                db, mind="ada", kind=("episodic", "semantic")[k % 2], text=text, now=NOW - k * 3600, actor="t", cause=None, cycle_id=None
            )

    store.writer.run_sync(job)


def test_the_same_store_and_query_give_the_same_results(tmp_path: Path) -> None:
    stores = [Store(tmp_path / f"{n}.db") for n in range(2)]
    try:
        for store in stores:
            _build(store)
        answers = []
        for store in stores:
            for _ in range(2):  # rank writes nothing, so asking twice is asking the same store
                _, ranked = store.writer.run_sync(lambda db: rank(db, mind="ada", query="deploy broke the build", now=NOW, limit=10))
                answers.append([(r.memory.id, r.score, r.relevance, r.recency, r.importance) for r in ranked])
            results, event = store.writer.run_sync(
                lambda db: retrieve(db, mind="ada", query="deploy broke the build", now=NOW, limit=10, cause=None, cycle_id=None)
            )
            answers.append([(r.memory.id, r.score, r.relevance, r.recency, r.importance) for r in results])
            assert event is not None
        assert len(answers[0]) == 10
        assert all(a == answers[0] for a in answers)
        searches = [[m.id for m in search(s.reader(), "ada", "deploy broke")] for s in stores]
        assert searches[0] == searches[1]
    finally:
        for store in stores:
            store.close()


# --- retraction -------------------------------------------------------------------


def test_retraction_is_an_event_and_a_status(world: World) -> None:
    memory, _ = world.write("ada", "the deploy broke the build")
    kept, _ = world.write("ada", "the deploy went fine")
    cause = world.event("ada", kind="correction")
    event = world.run(lambda db: retract(db, memory_id=memory.id, reason="it was the tests", now=NOW + 5, actor="operator", cause=cause))

    assert event.kind == "memory_retracted"
    assert event.subject == Ref("memory", memory.id)
    assert event.causation_id == cause
    assert event.text == "it was the tests"
    assert event.actor == "operator"
    after = get_memory(world.db, memory.id)
    assert after.status == "retracted"
    assert after.text == memory.text  # never edited

    # Neither retrieved nor searched, but still listed.
    results, _ = world.retrieve("ada", "deploy broke")
    assert ids(results) == [kept.id]
    assert [m.id for m in search(world.db, "ada", "broke")] == []
    assert [m.id for m in list_memories(world.db, "ada", status="retracted")] == [memory.id]
    assert [m.id for m in list_memories(world.db, "ada", status="active")] == [kept.id]
    assert get_event(world.db, event.id) == event


def test_retracting_twice_is_a_conflict_and_changes_nothing(world: World) -> None:
    memory, _ = world.write("ada", "the deploy broke the build")
    world.run(lambda db: retract(db, memory_id=memory.id, reason="wrong", now=NOW, actor="operator"))
    before = world.counts()
    with pytest.raises(Conflict, match="already retracted"):
        world.run(lambda db: retract(db, memory_id=memory.id, reason="wrong again", now=NOW, actor="operator"))
    assert world.counts() == before


def test_retraction_needs_a_memory_and_a_reason(world: World) -> None:
    memory, _ = world.write("ada", "the deploy broke the build")
    with pytest.raises(NotFound, match="memory 999 does not exist"):
        world.run(lambda db: retract(db, memory_id=999, reason="x", now=NOW, actor="operator"))
    with pytest.raises(InvalidInput, match="say why"):
        world.run(lambda db: retract(db, memory_id=memory.id, reason="  ", now=NOW, actor="operator"))
    assert get_memory(world.db, memory.id).status == "active"


def test_a_memory_may_be_derived_from_a_retracted_one(world: World) -> None:
    source, _ = world.write("ada", "an episode")
    world.run(lambda db: retract(db, memory_id=source.id, reason="wrong", now=NOW, actor="operator"))
    derived, _ = world.write("ada", "a lesson", kind="procedural", derived_from=[source.id])
    assert derived.derived_from == (source.id,)


# --- reading ----------------------------------------------------------------------


def test_list_memories_filters_and_pages(world: World) -> None:
    a, _ = world.write("ada", "one")
    b, _ = world.write("ada", "two", kind="semantic")
    c, _ = world.write("ada", "three", kind="procedural")
    world.write("bob", "four")
    assert [m.id for m in list_memories(world.db, "ada")] == [a.id, b.id, c.id]
    assert [m.id for m in list_memories(world.db, "ada", kind="semantic")] == [b.id]
    assert [m.id for m in list_memories(world.db, "ada", since=a.id, limit=1)] == [b.id]
    with pytest.raises(InvalidInput, match="kind"):
        list_memories(world.db, "ada", kind="dream")
    with pytest.raises(InvalidInput, match="status"):
        list_memories(world.db, "ada", status="gone")
    with pytest.raises(MindNotFound):
        list_memories(world.db, "nobody")


def test_get_memory_of_a_missing_id_says_so(world: World) -> None:
    with pytest.raises(NotFound, match="memory 42 does not exist"):
        get_memory(world.db, 42)


def test_a_memory_on_the_wire(world: World) -> None:
    a, _ = world.write("ada", "the deploy broke the build")
    b, _ = world.write("ada", "deploys break builds", kind="semantic", derived_from=[a.id])
    assert dump(b) == {
        "id": b.id,
        "mind": "ada",
        "kind": "semantic",
        "text": "deploys break builds",
        "importance": b.importance,
        "created_at": iso(NOW),
        "last_access": None,
        "access_count": 0,
        "status": "active",
        "event_id": None,
        "derived_from": [a.id],
        "tags": [],
    }
    results, _ = world.retrieve("ada", "deploy")
    out = dump(results[0])
    assert set(out) == {"memory", "score", "relevance", "recency", "importance"}
    assert out["memory"]["id"] == results[0].memory.id


# --- properties -------------------------------------------------------------------

VOCAB = ["deploy", "build", "alice", "lunch", "server", "broke", "the", "of", "release", "pasta", "near", "OR"]
_minds = itertools.count()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    ours=st.lists(
        st.tuples(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8), st.integers(0, 30), st.floats(0, 1)),
        max_size=25,
    ),
    theirs=st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8), max_size=10),
    query=st.lists(st.sampled_from(VOCAB + ["zebra", "*", '"']), max_size=5),
    limit=st.integers(1, 10),
    retracted=st.sets(st.integers(0, 24), max_size=5),
)
def test_retrieval_properties(
    world: World,
    ours: list[tuple[list[str], int, float]],
    theirs: list[list[str]],
    query: list[str],
    limit: int,
    retracted: set[int],
) -> None:
    mind, other = f"p{next(_minds)}", f"p{next(_minds)}"

    def job(db: Any) -> tuple[list[ScoredMemory], Event | None, list[int]]:
        create_mind(db, mind, {}, NOW, "test")
        create_mind(db, other, {}, NOW, "test")
        written = []
        for words, days, imp in ours:
            m, _ = write_memory(
                db, mind=mind, kind="episodic", text=" ".join(words), now=NOW - days * DAY, actor="t", cause=None, cycle_id=None, importance=imp
            )
            written.append(m.id)
        for words in theirs:
            write_memory(db, mind=other, kind="episodic", text=" ".join(words), now=NOW, actor="t", cause=None, cycle_id=None)
        for k in sorted(retracted):
            if k < len(written):
                retract(db, memory_id=written[k], reason="test", now=NOW, actor="t")
        results, event = retrieve(db, mind=mind, query=" ".join(query), now=NOW, limit=limit, cause=None, cycle_id=None)
        return results, event, written

    results, event, written = world.run(job)
    assert len(results) <= limit
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(r.memory.mind == mind and r.memory.status == "active" for r in results)
    assert len(set(ids(results))) == len(results)
    assert all(0.0 <= x <= 1.0 for r in results for x in (r.score, r.relevance, r.recency, r.importance))
    terms = set(query_terms(" ".join(query)))
    eligible = [
        i for k, (words, _, _) in enumerate(ours) if k not in retracted and terms & {w.lower() for w in words} for i in [written[k]]
    ]
    assert len(results) == min(limit, len(eligible))
    if results:
        assert event is not None and list(event.refs) == [Ref("memory", i) for i in ids(results)]
    else:
        assert event is None


def test_terms_in_half_of_all_memories_are_pruned_past_the_floor(world: World) -> None:
    """A word in every memory has no bm25 weight: past COMMON_MIN_DOCS it no longer makes every memory a candidate."""
    n = COMMON_MIN_DOCS + 50

    def job(db: Any) -> list[int]:
        written = []
        for i in range(n):
            m, _ = write_memory(
                db, mind="ada", kind="episodic", text=f"bench messages {i} from clients: hello", now=NOW, actor="t", cause=None, cycle_id=None
            )
            written.append(m.id)
        return written

    written = world.run(job)
    # "messages" and "clients" are counted by their stems; the lookup stems the same way.
    assert informative_terms(world.db, "ada", ["bench", "message", "clients", "hello", "17", "rare"]) == ["17", "rare"]
    assert informative_terms(world.db, "bob", ["bench", "hello"]) == ["bench", "hello"]  # counted per mind
    results, event = world.retrieve("ada", "bench message 17 from client: hello")
    assert ids(results) == [written[17]]
    assert event is not None and event.data["terms"] == ["bench", "message", "17", "client", "hello"]
    # Only common words: nothing tells the memories apart, so nothing is recalled.
    assert world.retrieve("ada", "hello bench")[0] == []
    # The operator's search is not pruned.
    assert len(search(world.db, "ada", "hello", limit=1000)) == n
    # Deleting the mind takes its counts with it.
    world.run(lambda db: delete_mind(db, "ada", "ada"))
    assert world.db.execute("SELECT count(*) FROM memory_terms WHERE mind = 'ada'").fetchone()[0] == 0


def test_common_terms_are_kept_below_the_floor(world: World) -> None:
    first, _ = world.write("ada", "deploy went fine")
    second, _ = world.write("ada", "deploy broke")
    assert informative_terms(world.db, "ada", ["deploy"]) == ["deploy"]
    assert sorted(ids(world.retrieve("ada", "deploy")[0])) == [first.id, second.id]
