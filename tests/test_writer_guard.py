"""The write guard: a writer job that changes rows must append an event, unless its table is allowlisted.

The whole suite runs with the guard on (tests/conftest.py sets NOEMA_WRITE_GUARD),
so every write path the suite exercises records an event or is allowlisted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Noemad
from noemad.background.jobs import finish_job, pause_schedule, set_progress, start_job
from noemad.background.scheduler import due
from noemad.config.schema import Config
from noemad.events import EventDraft, append, list_events
from noemad.minds import create_mind, delete_mind, get_mind, set_mode
from noemad.store import Store
from noemad.store.guard import ALLOWLIST, UnrecordedWrite, guard_enabled, unrecorded
from noemad.store.writer import Writer

NOW = 1_767_225_600.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "noema.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    yield s
    s.close()


def test_the_suite_runs_with_the_guard_on(store: Store) -> None:
    assert guard_enabled() and store.writer.guard is not None
    assert not guard_enabled({}) and not guard_enabled({"NOEMA_WRITE_GUARD": "0"}) and guard_enabled({"NOEMA_WRITE_GUARD": "1"})


def test_a_job_that_changes_a_guarded_table_without_an_event_fails_and_is_rolled_back(store: Store) -> None:
    def sneaky(db):  # noqa: ANN001, ANN202
        db.execute("UPDATE minds SET mode = 'paused' WHERE name = 'ada'")

    with pytest.raises(UnrecordedWrite, match=r"test_writer_guard\.test_a_job.*\.sneaky changed rows of minds\.mode and appended no event"):
        store.writer.run_sync(sneaky)
    assert get_mind(store.reader(), "ada").mode == "idle"
    # executemany runs one prepared statement many times: its rows are seen too.
    with pytest.raises(UnrecordedWrite, match="changed rows of trust and appended no event"):
        store.writer.run_sync(
            lambda db: db.conn.executemany(
                "INSERT INTO trust (mind, source, value, updated_at) VALUES ('ada', ?, 0.5, 'x')", [("alice",), ("bob",)]
            )
        )


def test_the_same_change_through_its_owner_records_an_event_and_passes(store: Store) -> None:
    mind = store.writer.run_sync(lambda db: set_mode(db, "ada", "paused", NOW, "operator", "paused by an operator"))
    assert mind.mode == "paused"
    assert [e.kind for e in list_events(store.reader(), "ada")] == ["mind_created", "mode_changed"]


def test_a_write_that_changes_no_rows_and_an_allowlisted_table_pass(store: Store) -> None:
    assert store.writer.run_sync(lambda db: db.execute("UPDATE minds SET mode = 'paused' WHERE name = 'nobody'").rowcount) == 0
    job = store.writer.run_sync(
        lambda db: start_job(db, mind="ada", kind="reflection", trigger="operator", actor="operator", inputs={}, now=NOW)
    )
    store.writer.run_sync(lambda db: set_progress(db, job.id, 0.5, "reading"))  # a job's progress: no event
    assert set(ALLOWLIST) == {"model_calls", "jobs.progress", "jobs.stage", "connector_cursors"}
    with pytest.raises(UnrecordedWrite, match=r"changed rows of jobs\.error, jobs\.status and appended no event"):
        store.writer.run_sync(lambda db: db.execute("UPDATE jobs SET status = 'failed', error = 'x' WHERE id = ?", [job.id]))
    # A job that ends when the mode is not its own to move back still records its end.
    store.writer.run_sync(lambda db: set_mode(db, "ada", "paused", NOW, "operator", "paused by an operator"))
    store.writer.run_sync(lambda db: finish_job(db, job.id, outputs={}, error=None, model_calls=[], now=NOW))
    [finished] = list_events(store.reader(), "ada", kinds=("job_finished",))
    assert (finished.actor, finished.text, finished.data) == ("process:jobs", f"reflection job {job.id} finished", {"job": job.id, "status": "succeeded"})
    assert get_mind(store.reader(), "ada").mode == "paused"
    # One job in a group fails; the others commit.
    futures = [
        store.writer.submit(lambda db: append(db, EventDraft(mind="ada", kind="observation", actor="operator", text="a"), NOW)),
        store.writer.submit(lambda db: db.execute("DELETE FROM trust")),  # nothing to delete: no rows changed
        store.writer.submit(lambda db: db.execute("INSERT INTO trust (mind, source, value, updated_at) VALUES ('ada', 'eve', 1, 'x')")),
    ]
    assert futures[0].result().kind == "observation" and futures[1].result() is not None
    with pytest.raises(UnrecordedWrite, match="trust"):
        futures[2].result()


def test_a_job_that_says_why_it_records_nothing_passes(store: Store) -> None:
    def fixture_row(db):  # noqa: ANN001, ANN202
        unrecorded("a test's hand-made row")
        db.execute("INSERT INTO trust (mind, source, value, updated_at) VALUES ('ada', 'alice', 0.5, 'x')")

    store.writer.run_sync(fixture_row)
    with pytest.raises(UnrecordedWrite):  # the reason holds for its own job only
        store.writer.run_sync(lambda db: db.execute("DELETE FROM trust"))
    assert store.writer.run_sync(lambda db: delete_mind(db, "ada", "ada")) == 1  # the timeline goes with the mind


def test_a_schedule_pause_is_on_every_minds_timeline_and_needs_no_mind(store: Store) -> None:
    store.writer.run_sync(lambda db: create_mind(db, "bob", {}, NOW, "operator"))
    for mind in ("ada", "bob"):  # each has reflected on everything it holds: dormant
        job = store.writer.run_sync(
            lambda db, m=mind: start_job(db, mind=m, kind="reflection", trigger="schedule", actor="schedule", inputs={}, now=NOW)
        )
        store.writer.run_sync(lambda db, j=job.id: finish_job(db, j, outputs={}, error=None, model_calls=[], now=NOW))
    assert store.writer.run_sync(lambda db: pause_schedule(db, "reflection", paused=True, actor="user:alice", now=NOW))
    assert not store.writer.run_sync(lambda db: pause_schedule(db, "reflection", paused=True, actor="user:alice", now=NOW))
    assert store.writer.run_sync(lambda db: pause_schedule(db, "reflection", paused=False, actor="operator", now=NOW))
    for mind in ("ada", "bob"):
        paused, resumed = list_events(store.reader(), mind, kinds=("schedule_paused", "schedule_resumed"))
        assert (paused.kind, paused.actor, paused.data) == ("schedule_paused", "user:alice", {"kind": "reflection", "paused": True})
        assert (resumed.kind, resumed.actor, resumed.text) == ("schedule_resumed", "operator", "scheduled reflection runs resumed for every mind by operator")
    # The pause and the resume are not news about the minds: dormant minds stay unscheduled.
    assert [d for d in due(store, Config(), NOW + 3 * 86400) if d[1] == "reflection"] == []
    for mind in ("ada", "bob"):
        store.writer.run_sync(lambda db, m=mind: delete_mind(db, m, m))
    assert store.writer.run_sync(lambda db: pause_schedule(db, "consolidation", paused=True, actor="operator", now=NOW))


def test_with_the_guard_off_nothing_is_checked(tmp_path: Path) -> None:
    Store(tmp_path / "noema.db").close()  # migrated
    writer = Writer(tmp_path / "noema.db", guard=False)
    try:
        assert writer.guard is None
        writer.run_sync(lambda db: db.execute("INSERT INTO schedule_pauses (kind, paused_at, actor) VALUES ('reflection', 'x', 'y')"))
    finally:
        writer.close()


def test_daemons_the_tests_start_run_with_the_guard_on(noemad: Noemad) -> None:
    assert noemad.env["NOEMA_WRITE_GUARD"] == "1"
    assert "write guard on (NOEMA_WRITE_GUARD)" in (noemad.home / "noemad.log").read_text()
