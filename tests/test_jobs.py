"""Background jobs in process: their rows, the runner, and the scheduler, on a real store and a manual clock.

The services are replaced by small functions here so the machinery around
them (overlap, modes, failure, progress, schedules, pauses) is tested on its
own; tests/test_background.py drives the real services through the daemon.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noemad.background import runner as runner_module
from noemad.background.jobs import (
    JobContext,
    JobRunning,
    MindPaused,
    fail_interrupted,
    finish_job,
    get_job,
    list_jobs,
    pause_schedule,
    paused_schedules,
    start_job,
)
from noemad.background.runner import JobRunner
from noemad.background.scheduler import TICK, Scheduler, due
from noemad.clock import ManualClock, parse_iso
from noemad.config.files import parse_config
from noemad.config.schema import Config
from noemad.errors import InvalidInput
from noemad.events import EventDraft, append, list_events
from noemad.minds import create_mind, get_mind, set_mode
from noemad.models.gateway import ModelGateway
from noemad.store import Store

START = parse_iso("2026-01-01T00:00:00Z")
DAY = 86_400.0


class Env:
    def __init__(self, tmp_path: Path, config_text: str = "") -> None:
        self.store = Store(tmp_path / "n.db")
        self.clock = ManualClock(START)
        self.cfg: Config = parse_config(config_text, "noemad.toml").config
        self.gateway = ModelGateway(config=lambda: self.cfg, clock=self.clock, writer=self.store.writer)
        self.runner = JobRunner(self.store, self.clock, self.gateway, lambda: self.cfg)
        self.store.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))

    def modes(self, mind: str = "ada") -> list[tuple[str, str]]:
        events = list_events(self.store.reader(), mind, kinds=["mode_changed"], since=0, limit=100)
        return [(e.data["from"], e.data["to"]) for e in events]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    yield e
    e.store.close()


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def fake_services(monkeypatch: pytest.MonkeyPatch, behaviour: Any) -> list[JobContext]:
    seen: list[JobContext] = []

    async def service(ctx: JobContext) -> dict[str, Any]:
        seen.append(ctx)
        return await behaviour(ctx)

    monkeypatch.setattr(runner_module, "service", lambda kind: service)
    return seen


# rows ---------------------------------------------------------------------------


def test_a_second_run_of_a_kind_is_refused_with_the_running_job_named(env: Env) -> None:
    job = env.store.writer.run_sync(
        lambda db: start_job(db, mind="ada", kind="consolidation", trigger="operator", actor="operator", inputs={}, now=START)
    )
    with pytest.raises(JobRunning, match=f"consolidation job {job.id} is already running for mind 'ada'.*noemactl jobs show {job.id}"):
        env.store.writer.run_sync(
            lambda db: start_job(db, mind="ada", kind="consolidation", trigger="schedule", actor="schedule", inputs={}, now=START)
        )
    # Another kind is not an overlap: the mode shows the later job, then the one still running.
    other = env.store.writer.run_sync(
        lambda db: start_job(db, mind="ada", kind="reflection", trigger="operator", actor="operator", inputs={}, now=START)
    )
    assert other.status == "running"
    assert [j.id for j in list_jobs(env.store.reader(), mind="ada")] == [other.id, job.id]
    assert get_mind(env.store.reader(), "ada").mode == "reflecting"
    env.store.writer.run_sync(lambda db: finish_job(db, other.id, outputs={}, error=None, model_calls=[], now=START))
    assert get_mind(env.store.reader(), "ada").mode == "consolidating"
    env.store.writer.run_sync(lambda db: finish_job(db, job.id, outputs={}, error=None, model_calls=[], now=START))
    assert env.modes() == [("idle", "consolidating"), ("consolidating", "reflecting"), ("reflecting", "consolidating"), ("consolidating", "idle")]


def test_a_paused_mind_runs_no_job_and_bad_kinds_are_refused(env: Env) -> None:
    env.store.writer.run_sync(lambda db: set_mode(db, "ada", "paused", START, "operator", "test"))
    with pytest.raises(MindPaused, match="noemactl resume ada"):
        env.store.writer.run_sync(
            lambda db: start_job(db, mind="ada", kind="reflection", trigger="operator", actor="operator", inputs={}, now=START)
        )
    with pytest.raises(InvalidInput, match="reflection, consolidation"):
        env.store.writer.run_sync(
            lambda db: start_job(db, mind="ada", kind="dreaming", trigger="operator", actor="operator", inputs={}, now=START)
        )
    assert list_jobs(env.store.reader()) == []


def test_finishing_puts_the_mode_back_unless_an_operator_paused_meanwhile(env: Env) -> None:
    def start(db: Any) -> Any:
        return start_job(db, mind="ada", kind="consolidation", trigger="operator", actor="operator", inputs={}, now=START)

    job = env.store.writer.run_sync(start)
    env.store.writer.run_sync(lambda db: finish_job(db, job.id, outputs={"summary": "ok"}, error=None, model_calls=[3, 3], now=START + 5))
    done = get_job(env.store.reader(), job.id)
    assert (done.status, done.progress, done.stage, done.model_calls, done.finished_at) == ("succeeded", 1.0, "done", [3], "2026-01-01T00:00:05.000Z")
    assert env.modes() == [("idle", "consolidating"), ("consolidating", "idle")]

    job = env.store.writer.run_sync(start)
    env.store.writer.run_sync(lambda db: set_mode(db, "ada", "paused", START, "operator", "stop for now"))
    env.store.writer.run_sync(lambda db: finish_job(db, job.id, outputs={}, error="it broke", model_calls=[], now=START + 9))
    assert get_mind(env.store.reader(), "ada").mode == "paused"
    assert get_job(env.store.reader(), job.id).status == "failed"


def test_jobs_left_running_by_a_stopped_daemon_are_failed_and_modes_restored(env: Env) -> None:
    job = env.store.writer.run_sync(
        lambda db: start_job(db, mind="ada", kind="reflection", trigger="schedule", actor="schedule", inputs={}, now=START)
    )
    assert env.store.writer.run_sync(lambda db: fail_interrupted(db, START + 60)) == [job.id]
    failed = get_job(env.store.reader(), job.id)
    assert failed.status == "failed" and "noemad stopped while the job ran" in (failed.error or "")
    assert get_mind(env.store.reader(), "ada").mode == "idle"


# the runner ---------------------------------------------------------------------


def test_the_runner_records_outputs_progress_and_calls(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    async def work(ctx: JobContext) -> dict[str, Any]:
        ctx.progress(0.5, "halfway")
        ctx.record_call(7)
        assert ctx.calls_left == ctx.settings.model_calls - 1
        return {"summary": "found 2 things", "n": 2}

    seen = fake_services(monkeypatch, work)

    async def main() -> Any:
        job = await env.runner.start("ada", "consolidation", trigger="operator", actor="operator")
        assert job.status == "running" and job.inputs["settings"]["min_episodes"] == 3
        return await env.runner.wait(job.id)

    job = run(main())
    assert (job.status, job.outputs, job.model_calls, job.error) == ("succeeded", {"summary": "found 2 things", "n": 2}, [7], None)
    assert seen[0].actor == "process:consolidation" and seen[0].mind == "ada"
    assert env.modes() == [("idle", "consolidating"), ("consolidating", "idle")]


def test_a_failing_job_is_recorded_and_the_mode_comes_back(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    async def boom(ctx: JobContext) -> dict[str, Any]:
        ctx.progress(0.3, "clustering")
        raise ValueError("a bug")

    fake_services(monkeypatch, boom)

    async def main() -> Any:
        job = await env.runner.start("ada", "reflection", trigger="operator", actor="operator")
        return await env.runner.wait(job.id)

    job = run(main())
    assert job.status == "failed" and job.stage == "failed"
    assert job.error is not None and "ValueError: a bug" in job.error and "daemon log" in job.error
    assert get_mind(env.store.reader(), "ada").mode == "idle"
    assert env.modes() == [("idle", "reflecting"), ("reflecting", "idle")]


def test_stopping_the_runner_fails_the_running_job_with_a_reason(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    started = asyncio.Event()

    async def forever(ctx: JobContext) -> dict[str, Any]:
        started.set()
        await asyncio.Event().wait()
        return {}

    fake_services(monkeypatch, forever)

    async def main() -> Any:
        job = await env.runner.start("ada", "consolidation", trigger="operator", actor="operator")
        await started.wait()
        assert env.runner.running == [job.id]
        await env.runner.stop()
        return get_job(env.store.reader(), job.id)

    job = run(main())
    assert job.status == "failed" and "noemad stopped while the job ran" in (job.error or "")
    assert get_mind(env.store.reader(), "ada").mode == "idle"


# schedules -----------------------------------------------------------------------


def test_due_follows_every_the_last_start_the_pause_and_the_mind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = Env(
        tmp_path,
        '[schedules.reflection]\nevery = "6h"\n[schedules.consolidation]\nevery = "1d"\n'
        '[minds.bob.schedules.consolidation]\nevery = "off"\n',
    )
    env.store.writer.run_sync(lambda db: create_mind(db, "bob", {}, START, "operator"))
    assert due(env.store, env.cfg, START + 6 * 3600 - 1) == []
    assert due(env.store, env.cfg, START + 6 * 3600) == [("ada", "reflection"), ("bob", "reflection")]
    assert due(env.store, env.cfg, START + DAY) == [("ada", "reflection"), ("bob", "reflection"), ("ada", "consolidation")]

    # A run (any trigger) restarts the period; a running one is not due again.
    job = env.store.writer.run_sync(
        lambda db: start_job(db, mind="ada", kind="reflection", trigger="operator", actor="operator", inputs={}, now=START + DAY)
    )
    assert ("ada", "reflection") not in due(env.store, env.cfg, START + DAY + 7 * 3600)
    env.store.writer.run_sync(lambda db: finish_job(db, job.id, outputs={}, error=None, model_calls=[], now=START + DAY))
    # A dormant mind is not due: nothing but the job's own events came since it started.
    assert ("ada", "reflection") not in due(env.store, env.cfg, START + DAY + 30 * DAY)
    env.store.writer.run_sync(
        lambda db: append(db, EventDraft(mind="ada", kind="message", actor="user:alice", text="news"), START + DAY + 60)
    )
    assert ("ada", "reflection") not in due(env.store, env.cfg, START + DAY + 6 * 3600 - 1)
    assert ("ada", "reflection") in due(env.store, env.cfg, START + DAY + 6 * 3600)

    # A global pause survives in the store; a paused mind is skipped.
    env.store.writer.run_sync(lambda db: pause_schedule(db, "reflection", paused=True, actor="operator", now=START))
    assert set(paused_schedules(env.store.reader())) == {"reflection"}
    env.store.writer.run_sync(lambda db: set_mode(db, "ada", "paused", START, "operator", "test"))
    assert due(env.store, env.cfg, START + 30 * DAY) == []
    env.store.close()


def test_the_scheduler_starts_due_jobs_on_the_clock(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    async def quick(ctx: JobContext) -> dict[str, Any]:
        return {"summary": "ok"}

    fake_services(monkeypatch, quick)
    scheduler = Scheduler(env.runner, env.store, env.clock, lambda: env.cfg)

    async def main() -> list[Any]:
        task = asyncio.create_task(scheduler.run())
        await asyncio.sleep(0)
        assert scheduler.ticks == 1  # nothing due at start
        env.clock.advance(DAY)
        for _ in range(100):
            await asyncio.sleep(0)
            if scheduler.ticks == 2:
                break
        for job_id in list(env.runner.running):
            await env.runner.wait(job_id)
        # Paused: the next day starts nothing, but a run-now still works.
        await env.store.writer.run(lambda db: pause_schedule(db, "consolidation", paused=True, actor="operator", now=START))
        await env.store.writer.run(lambda db: pause_schedule(db, "reflection", paused=True, actor="operator", now=START))
        env.clock.advance(DAY + TICK)
        for _ in range(100):
            await asyncio.sleep(0)
            if scheduler.ticks == 3:
                break
        now_job = await env.runner.start("ada", "reflection", trigger="operator", actor="operator")
        await env.runner.wait(now_job.id)
        task.cancel()
        return list_jobs(env.store.reader())

    jobs = run(main())
    assert [(j.kind, j.trigger, j.status) for j in reversed(jobs)] == [
        ("reflection", "schedule", "succeeded"),
        ("consolidation", "schedule", "succeeded"),
        ("reflection", "operator", "succeeded"),
    ]


def test_the_scheduler_starts_a_few_at_a_time_and_the_rest_later(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from noemad.background.scheduler import MAX_RUNNING

    gate = {"open": asyncio.Event()}

    async def held(ctx: JobContext) -> dict[str, Any]:
        await gate["open"].wait()  # the gate in place when the job started
        return {"summary": "ok"}

    fake_services(monkeypatch, held)
    for name in ("bob", "cyd"):
        env.store.writer.run_sync(lambda db, name=name: create_mind(db, name, {}, START, "operator"))
    scheduler = Scheduler(env.runner, env.store, env.clock, lambda: env.cfg)

    async def drain() -> None:
        gate["open"].set()
        for job_id in list(env.runner.running):
            await env.runner.wait(job_id)
        gate["open"] = asyncio.Event()

    async def main() -> list[list[tuple[str, str, str]]]:
        env.clock.advance(DAY)
        ticks = [await scheduler.tick()]
        # An operator's run-now does not wait for the limit; with three running the next tick starts nothing.
        ticks.append([await env.runner.start("cyd", "consolidation", trigger="operator", actor="operator")])
        ticks.append(await scheduler.tick())
        await drain()
        ticks.append(await scheduler.tick())
        await drain()
        ticks.append(await scheduler.tick())
        await drain()
        ticks.append(await scheduler.tick())
        return [[(j.mind, j.kind, j.trigger) for j in tick] for tick in ticks]

    assert MAX_RUNNING == 2
    assert run(main()) == [
        [("ada", "reflection", "schedule"), ("bob", "reflection", "schedule")],
        [("cyd", "consolidation", "operator")],
        [],
        [("cyd", "reflection", "schedule"), ("ada", "consolidation", "schedule")],
        [("bob", "consolidation", "schedule")],
        [],
    ]
