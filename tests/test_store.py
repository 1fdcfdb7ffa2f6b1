"""The store: migrations, WAL, foreign keys, the group-commit writer and its outbox."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inprocess import hold_writer
from noemad.errors import InvalidLink, ShuttingDown
from noemad.events import Event, EventDraft, append
from noemad.minds import create_mind, delete_mind
from noemad.store import Store, migrations


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "noema.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 1000.0, "operator"))
    yield s
    s.close()


def test_settings_and_migrations(store: Store) -> None:
    db = store.reader()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert [m.name for m in migrations.applied(db)] == [m.name for m in migrations._migrations]
    assert set(db.table_names()) >= {"minds", "events", "event_parents", "event_refs", "model_calls", "memories", "beliefs"}


# Tables that hold no one mind's rows, each with why. A table named here that
# the schema no longer has fails the test, so the list cannot go stale.
NOT_A_MINDS = {
    "minds": "the minds themselves, keyed by name",
    "schedule_pauses": "a host's paused schedules (a job kind for every mind)",
    "_sqlite_migrations": "the host's applied migrations",
    "sqlite_sequence": "SQLite's own AUTOINCREMENT counters",
    "memories_fts": "the full-text index of memories, keyed by the memory's rowid (memories carry the mind)",
}


def test_every_table_is_keyed_by_mind(store: Store) -> None:
    """A mind's rows can be exported, moved and sharded alone only while every table says whose a row is."""
    db = store.reader()
    fts_shadows = {name for name in db.table_names() if name.startswith("memories_fts_")}
    unkeyed = sorted(
        name for name in db.table_names()
        if name not in NOT_A_MINDS and name not in fts_shadows and "mind" not in db[name].columns_dict
    )
    assert unkeyed == [], f"tables with no mind column: {unkeyed}; key them by mind, or say in NOT_A_MINDS why they hold no mind's rows"
    assert sorted(set(NOT_A_MINDS) - set(db.table_names())) == [], "NOT_A_MINDS names a table the schema no longer has"


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    Store(tmp_path / "n.db").close()
    again = Store(tmp_path / "n.db")
    assert len(migrations.pending(again.reader())) == 0
    again.close()


def test_a_failing_migration_leaves_the_store_at_the_schema_it_had(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pending migrations apply as one: an upgrade that fails part-way leaves none of them behind."""
    import sqlite3

    from sqlite_utils import Database, Migrations

    import noemad.store.store as opening
    from noemad.errors import StoreError

    path = tmp_path / "noema.db"
    Store(path).close()
    upgrade = Migrations("noemad")
    for m in migrations._migrations:
        upgrade(name=m.name)(m.fn)

    @upgrade(name="m900_first")
    def first(db: Database) -> None:  # succeeds on its own
        db.execute("CREATE TABLE later_a (mind TEXT)")

    @upgrade(name="m901_second")
    def second(db: Database) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(opening, "migrations", upgrade)
    with pytest.raises(StoreError, match="cannot open the store"):
        Store(path)
    monkeypatch.undo()
    s = Store(path)
    try:
        db = s.reader()
        assert "later_a" not in db.table_names()
        assert [m.name for m in migrations.applied(db)] == [m.name for m in migrations._migrations]
    finally:
        s.close()


def test_readers_cannot_write(store: Store) -> None:
    import sqlite3

    with pytest.raises(sqlite3.OperationalError):
        store.reader().execute("DELETE FROM minds")


def test_a_failing_job_rolls_back_alone_in_a_group(store: Store) -> None:
    seen: list[list[object]] = []
    store.writer.on_commit(seen.append)
    gate = threading.Event()
    # Hold the writer so the next three jobs are committed as one group.
    blocker = store.writer.submit(lambda db: gate.wait(5))
    good1 = store.writer.submit(lambda db: append(db, EventDraft("ada", "note", "operator", text="one"), 1.0))

    def bad(db):  # writes, then fails: its row must vanish, and it must emit nothing
        append(db, EventDraft("ada", "note", "operator", text="doomed"), 1.0)
        raise InvalidLink("no")

    failing = store.writer.submit(bad)
    good2 = store.writer.submit(lambda db: append(db, EventDraft("ada", "note", "operator", text="two"), 1.0))
    commits_before = store.writer.commits
    gate.set()
    blocker.result()
    assert good1.result().text == "one" and good2.result().text == "two"
    with pytest.raises(InvalidLink):
        failing.result()
    texts = [r[0] for r in store.reader().execute("SELECT text FROM events WHERE kind = 'note' ORDER BY id")]
    assert texts == ["one", "two"]
    assert store.writer.commits == commits_before + 1  # one transaction for the group
    emitted = [e.text for batch in seen for e in batch if isinstance(e, Event)]
    assert emitted == ["one", "two"]


def test_refused_link_stores_nothing(store: Store) -> None:
    before = store.reader().execute("SELECT count(*) FROM events").fetchone()[0]
    with pytest.raises(InvalidLink, match="event 4242 does not exist"):
        store.writer.run_sync(lambda db: append(db, EventDraft("ada", "note", "operator", parents=[4242]), 1.0))
    assert store.reader().execute("SELECT count(*) FROM events").fetchone()[0] == before


def test_delete_mind_removes_every_row_it_owns(store: Store) -> None:
    first = store.writer.run_sync(lambda db: append(db, EventDraft("ada", "note", "operator"), 1.0))
    store.writer.run_sync(lambda db: append(db, EventDraft("ada", "note", "operator", causation_id=first.id, parents=[first.id]), 1.0))
    store.writer.run_sync(lambda db: create_mind(db, "bob", {}, 1.0, "operator"))
    assert store.writer.run_sync(lambda db: delete_mind(db, "ada", "ada")) == 3
    db = store.reader()
    for table in ("events", "event_parents", "event_refs"):
        assert db.execute(f"SELECT count(*) FROM {table} WHERE mind = 'ada'").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM events WHERE mind = 'bob'").fetchone()[0] == 1


def test_closed_writer_refuses_new_work(tmp_path: Path) -> None:
    s = Store(tmp_path / "n.db")
    s.close()
    with pytest.raises(ShuttingDown):
        s.writer.submit(lambda db: None)


def test_close_flushes_queued_work(tmp_path: Path) -> None:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 1.0, "operator"))
    futures = [s.writer.submit(lambda db, i=i: append(db, EventDraft("ada", "note", "operator", text=str(i)), 1.0)) for i in range(50)]
    s.close()
    assert all(f.done() and f.exception() is None for f in futures)
    again = Store(tmp_path / "n.db")
    assert again.reader().execute("SELECT count(*) FROM events WHERE kind = 'note'").fetchone()[0] == 50
    again.close()


def _grouped_awaits(store: Store, jobs: list[Any]) -> tuple[list[Any], int]:
    """Await `jobs` from one loop, all queued behind a job that holds the writer so they commit as one group;
    their results, and how many calls the writer made into the loop to answer them."""
    hold = hold_writer(store.writer).release

    async def main() -> tuple[list[Any], int]:
        loop = asyncio.get_running_loop()
        calls = 0
        threadsafe = loop.call_soon_threadsafe

        def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            return threadsafe(*args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        tasks = [asyncio.ensure_future(store.writer.run(job)) for job in jobs]
        await asyncio.sleep(0)  # each task queues its job behind the one holding the writer
        hold.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        return results, calls

    return asyncio.run(main())


def test_a_group_of_awaited_jobs_is_answered_with_one_call_into_the_loop(store: Store) -> None:
    """8 stimuli committed together wake their event loop once, not once each (CPU per stimulus at ingest)."""
    results, calls = _grouped_awaits(store, [lambda db, i=i: db.execute("SELECT ?", [i]).fetchone()[0] for i in range(8)])
    assert results == list(range(8))
    assert calls == 1


def test_a_failed_job_of_a_group_raises_to_its_caller_alone(store: Store) -> None:
    def bad(db: Any) -> None:
        append(db, EventDraft("ada", "note", "operator", text="x", parents=(999_999,)), 1.0)

    good = lambda db: append(db, EventDraft("ada", "note", "operator", text="kept"), 1.0).id  # noqa: E731
    results, _ = _grouped_awaits(store, [good, bad, good])
    assert isinstance(results[0], int) and isinstance(results[2], int)
    assert isinstance(results[1], InvalidLink)
    assert store.reader().execute("SELECT count(*) FROM events WHERE kind = 'note'").fetchone()[0] == 2


def test_the_jobs_a_loop_asks_for_in_one_turn_commit_together(store: Store) -> None:
    """Stimuli that arrive together are committed together: the writer is handed a turn's jobs at once, not the first alone."""
    before = store.writer.commits

    async def request(i: int) -> int:
        # What parsing a request does between two asks: work that lets the writer thread run (hashlib releases the GIL).
        hashlib.sha256(bytes(4 << 20)).digest()
        return await store.writer.run(lambda db: append(db, EventDraft("ada", "note", "operator", text=str(i)), 1.0).id)

    async def main() -> list[int]:
        return await asyncio.gather(*(request(i) for i in range(5)))

    assert len(set(asyncio.run(main()))) == 5
    assert store.writer.commits == before + 1


def test_close_runs_the_jobs_a_loop_asked_for_before_the_end_of_its_turn(tmp_path: Path) -> None:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 1.0, "operator"))

    async def main() -> int:
        asked = asyncio.ensure_future(s.writer.run(lambda db: append(db, EventDraft("ada", "note", "operator", text="late"), 1.0).id))
        await asyncio.sleep(0)  # asked, and not yet handed to the writer: that happens at the end of the turn
        assert s.writer.queued == 1
        s.close()
        return await asked

    assert asyncio.run(main()) > 0
    again = Store(tmp_path / "n.db")
    assert again.reader().execute("SELECT count(*) FROM events WHERE kind = 'note'").fetchone()[0] == 1
    again.close()


def _noting(ran: list[str], name: str, before: Any = None) -> Any:
    """A writer job that notes it ran (after calling `before`, on the writer thread) and appends a note."""

    def job(db: Any) -> int:
        if before is not None:
            before()
        ran.append(name)
        return append(db, EventDraft("ada", "note", "operator", text=name), 1.0).id

    return job


async def _handed_over() -> None:
    """Let the loop hand what it asked for in this turn to the writer (`Writer._hand_over` runs at the turn's end)."""
    for _ in range(3):
        await asyncio.sleep(0)


def test_a_stimulus_commits_ahead_of_the_turns_queued_before_it_and_a_turn_under_way_gives_way(store: Store) -> None:
    """A stimulus waits for the one job under way, not for every turn queued before it; the turns keep their order."""
    ran: list[str] = []
    hold = hold_writer(store.writer).release
    in_a, release_a = threading.Event(), threading.Event()

    async def main() -> list[int]:
        turns = [asyncio.ensure_future(store.writer.run(_noting(ran, "a", lambda: (in_a.set(), release_a.wait(30))))),
                 asyncio.ensure_future(store.writer.run(_noting(ran, "b")))]
        await _handed_over()
        stimuli = [asyncio.ensure_future(store.writer.run(_noting(ran, "s1"), first=True))]
        await _handed_over()
        hold.set()
        await asyncio.get_running_loop().run_in_executor(None, in_a.wait, 30)
        stimuli.append(asyncio.ensure_future(store.writer.run(_noting(ran, "s2"), first=True)))
        await _handed_over()
        release_a.set()
        return await asyncio.gather(*stimuli, *turns)

    commits = store.writer.commits
    s1, s2, a, b = asyncio.run(main())
    assert ran == ["s1", "a", "s2", "b"]  # s2 was asked while a ran, with b queued before it
    assert store.writer.commits == commits + 4  # the hold; s1; a and s2; b: a group ends where a stimulus waits
    assert s1 < a < s2 < b  # each event's id says where it stands in the timeline
    assert store.writer.queued == 0


def test_turns_go_on_while_stimuli_keep_coming(store: Store) -> None:
    """Each stimulus is asked while the one before it runs: one turn still runs between two of them, none starves."""
    ran: list[str] = []
    hold = hold_writer(store.writer).release

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stimuli: list[asyncio.Future[Any]] = []

        async def ask(n: int) -> None:
            before = None if n == 5 else (lambda: asyncio.run_coroutine_threadsafe(ask(n + 1), loop).result(30))
            stimuli.append(asyncio.ensure_future(store.writer.run(_noting(ran, f"s{n}", before), first=True)))
            await _handed_over()  # the next stimulus is queued before the one asking for it commits

        turns = [asyncio.ensure_future(store.writer.run(_noting(ran, t))) for t in ("a", "b", "c")]
        await _handed_over()
        await ask(1)
        hold.set()
        await asyncio.gather(*turns)
        while len(stimuli) < 5:
            await asyncio.sleep(0)
        await asyncio.gather(*stimuli)

    asyncio.run(main())
    # Each stimulus asks for the next while it runs; between two groups' stimuli a turn still runs.
    assert ran == ["s1", "a", "s2", "s3", "b", "s4", "s5", "c"]


def test_a_thread_made_for_one_read_gives_its_reader_back(store: Store) -> None:
    """A consolidation reads its speakers on a thread of its own: its connection is closed as it ends, not kept till the store closes."""
    import sqlite3

    held: list[Any] = []

    def once() -> None:
        db = store.reader()
        db.execute("SELECT 1").fetchone()
        held.append(db)
        store.drop_reader()
        store.drop_reader()  # twice is once

    threads = [threading.Thread(target=once) for _ in range(3)]
    for t in threads:
        t.start()
        t.join()
    assert len({id(db) for db in held}) == 3
    for db in held:
        with pytest.raises(sqlite3.ProgrammingError):
            db.execute("SELECT 1")
    assert store.reader().execute("SELECT count(*) FROM minds").fetchone() == (1,)  # this thread's own reader is untouched


def test_memory_terms_migration_counts_memories_already_stored(tmp_path: Path) -> None:
    from noemad.words import index_stems
    from noemad.store.connection import open_db

    db = open_db(tmp_path / "old.db")
    migrations.apply(db, stop_before="m007_memory_terms")
    db.execute("INSERT INTO minds (name, created_at, settings, mode) VALUES ('ada', '2026-01-01T00:00:00Z', '{}', 'active')")
    texts = ["the deploys broke", "deploy again", "hello there"]
    for text in texts:
        db.execute(
            "INSERT INTO memories (mind, kind, text, created_at, importance, access_count, status) VALUES ('ada', 'episodic', ?, '2026-01-01T00:00:00Z', 0.3, 0, 'active')",
            [text],
        )
    db.conn.commit()
    migrations.apply(db)
    counts = dict(db.execute("SELECT term, docs FROM memory_terms WHERE mind = 'ada'").fetchall())
    # Stop-words ("the", "again", "there") are not counted; "deploys" and "deploy" share a stem.
    assert counts == {"": 3, "deploi": 2, "broke": 1, "hello": 1}
    assert index_stems("the deploys broke") == ["broke", "deploi"]


def test_consolidations_migration_keeps_every_consolidated_row(tmp_path: Path) -> None:
    """m017: per-episode `consolidated` rows become one `consolidations` row per generalisation; the view gives the same rows."""
    from noemad.store.connection import open_db

    db = open_db(tmp_path / "old.db")
    migrations.apply(db, stop_before="m017_consolidations")
    at = "2026-01-01T00:00:00Z"
    db.execute("INSERT INTO minds (name, created_at) VALUES ('ada', ?)", [at])
    job = db.execute("INSERT INTO jobs (mind, kind, trigger, actor, status, started_at) VALUES ('ada', 'consolidation', 'operator', 'o', 'succeeded', ?)", [at]).lastrowid
    memory = [
        db.execute("INSERT INTO memories (mind, kind, text, created_at, importance) VALUES ('ada', ?, ?, ?, 0.3)", [kind, f"m{i}", at]).lastrowid
        for i, kind in enumerate(["episodic"] * 5 + ["semantic"] * 2)
    ]
    episodes, into = memory[:5], memory[5:]
    rows = [(e, "ada", job, into[0] if i < 3 else into[1], at) for i, e in enumerate(episodes)]
    db.conn.executemany("INSERT INTO consolidated (memory_id, mind, job_id, into_memory, at) VALUES (?, ?, ?, ?, ?)", rows)
    # Written together, except one link that went missing: the migration adds it.
    db.conn.executemany("INSERT INTO memory_links (memory_id, derived_from, mind) VALUES (?, ?, 'ada')", [(r[3], r[0]) for r in rows[:-1]])
    db.conn.commit()
    migrations.apply(db)
    assert db.execute("SELECT memory_id, mind, job_id, into_memory, at FROM consolidated ORDER BY memory_id").fetchall() == rows
    assert db.execute("SELECT memory_id, job_id FROM consolidations ORDER BY memory_id").fetchall() == [(into[0], job), (into[1], job)]
    assert db.execute("SELECT type FROM sqlite_master WHERE name = 'consolidated'").fetchone() == ("view",)
    db.close()


def test_event_cuts_migration_keys_each_cut_by_its_runs_mind(tmp_path: Path) -> None:
    """m018: `event_cuts` gains the mind of the archive run that cut it; no cut is lost or moved."""
    from noemad.store.connection import open_db

    db = open_db(tmp_path / "old.db")
    migrations.apply(db, stop_before="m018_event_cuts_mind")
    at = "2026-01-01T00:00:00Z"
    cuts = []
    for mind in ("ada", "bo"):
        db.execute("INSERT INTO minds (name, created_at) VALUES (?, ?)", [mind, at])
        event = db.execute("INSERT INTO events (mind, kind, actor, at) VALUES (?, 'note', 'o', ?)", [mind, at]).lastrowid
        run = db.execute("INSERT INTO archives (mind, path, before, actor, started_at) VALUES (?, 'f', ?, 'o', ?)", [mind, at, at]).lastrowid
        cuts += [(event, 1, "caused", "cause", run), (event, 2, "cited", "consequence", run)]
    db.conn.executemany("INSERT INTO event_cuts (event_id, archived_id, link, side, archive_id) VALUES (?, ?, ?, ?, ?)", cuts)
    db.conn.commit()
    migrations.apply(db)
    got = db.execute("SELECT mind, event_id, archived_id, link, side, archive_id FROM event_cuts ORDER BY archive_id, archived_id").fetchall()
    assert got == [("ada", *cuts[0]), ("ada", *cuts[1]), ("bo", *cuts[2]), ("bo", *cuts[3])]
    db.execute("DELETE FROM minds WHERE name = 'ada'")  # a mind's cuts go with it
    assert [r[0] for r in db.execute("SELECT DISTINCT mind FROM event_cuts")] == ["bo"]
    db.close()


def test_withdrawn_evidence_migration_keeps_every_item_counted(tmp_path: Path) -> None:
    """m019: evidence stored before it has nothing withdrawn; the belief reads and is recomputed as it was."""
    from noemad.cognition.beliefs.corrections import correct
    from noemad.cognition.beliefs.queries import get_belief
    from noemad.store.connection import open_db

    db = open_db(tmp_path / "old.db")
    migrations.apply(db, stop_before="m019_withdrawn_evidence")
    at = "2026-01-01T00:00:00Z"
    db.execute("INSERT INTO minds (name, created_at) VALUES ('ada', ?)", [at])
    cause = db.execute("INSERT INTO events (mind, kind, actor, at, data) VALUES ('ada', 'observation', 'source:ci', ?, '{}')", [at]).lastrowid
    belief = db.execute(
        "INSERT INTO beliefs (mind, proposition, proposition_key, subject, kind, confidence, status, created_at) VALUES ('ada', 'the build is green', 'build is green', 'build', 'observation', 0.675, 'active', ?)",
        [at],
    ).lastrowid
    db.conn.executemany(
        "INSERT INTO evidence (mind, belief_id, stance, weight, credibility, source, kind, event_id, at) VALUES ('ada', ?, ?, ?, ?, ?, ?, ?, ?)",
        [(belief, "support", 1.0, 0.9, "ci", "observation", cause, at), (belief, "contradict", 0.25, 1.0, "metacognition", "inference", cause, at)],
    )
    db.conn.commit()
    migrations.apply(db)
    held = get_belief(db, belief)
    assert [e.withdrawn_by for e in held.evidence] == [None, None] and (held.support, held.contradict) == (1, 1)
    _, event = correct(db, belief_id=belief, status="active", confidence_value=None, reason="recompute", brought_by=cause, now=0.0, actor="operator")
    assert event.data["confidence"]["to"] == 0.675  # both items still count
    db.close()


def test_event_data_is_stored_as_compact_sorted_json_and_never_holds_nan(store: Store) -> None:
    from noemad.errors import InvalidInput

    event = store.writer.run_sync(lambda db: append(db, EventDraft("ada", "note", "operator", data={"b": [1, 2.5], "a": {"z": None, "y": "é"}}), 1.0))
    stored = store.reader().execute("SELECT data FROM events WHERE id = ?", [event.id]).fetchone()[0]
    assert stored == '{"a":{"y":"\\u00e9","z":null},"b":[1,2.5]}'
    with pytest.raises(InvalidInput, match="not finite"):
        store.writer.run_sync(lambda db: append(db, EventDraft("ada", "note", "operator", data={"x": float("nan")}), 1.0))


def test_a_read_off_the_loop_cancelled_midway_ends_before_its_caller_does(store: Store) -> None:
    """A task stopped during a read waits for the read, so the store is never closed under one (that crashed the process)."""
    import asyncio

    started, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def read() -> int:
        started.set()
        release.wait(10)
        n = store.reader().execute("SELECT count(*) FROM minds").fetchone()[0]
        finished.append("read")
        return int(n)

    async def scenario() -> list[str]:
        task = asyncio.ensure_future(store.off_loop(read))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        await asyncio.sleep(0)
        assert not task.done()  # cancelled, but still waiting for its read
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        finished.append("task")
        return finished

    assert asyncio.run(scenario()) == ["read", "task"]
    assert asyncio.run(store.off_loop(lambda: store.reader().execute("SELECT count(*) FROM minds").fetchone()[0])) == 1
