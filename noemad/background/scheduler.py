"""Schedules: start each mind's reflection and consolidation when they are due.

A kind is due for a mind when its `every` (from `[schedules.KIND]`, or the
mind's `[minds.NAME.schedules.KIND]`) is not "off", and `every` has passed
since the start of the mind's last job of that kind — scheduled or run by an
operator, succeeded or failed (so a failing job is retried once a period,
not in a loop) — or, if it never ran, since the mind was created; and the
mind has had news since that job started: an event written by anyone but
the jobs themselves, other than a schedule's pause or resume (a dormant mind is not told daily that nothing
happened). A kind is skipped while its scheduled runs are paused globally (`schedule_pauses`,
which survives restarts), while a job of it runs for the mind, and while
the mind is paused. A pause never blocks a run-now.

The scheduler looks every `TICK` seconds of the daemon's clock, so tests
drive it with the manual clock and a schedule is late by at most a tick.
It starts due jobs (by kind, then mind) only while fewer than
`MAX_RUNNING` jobs run in the daemon: a host with hundreds of minds, or one
back after a long stop, works through them a few at a time instead of all at
once; the rest stay due and start at later ticks. Operators' run-nows are
not counted against it and never wait for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.background.jobs import KINDS, JobRunning, LastRun, MindPaused, last_runs, paused_schedules
from noemad.background.runner import JobRunner
from noemad.clock import Clock, parse_iso, span_seconds
from noemad.config.schema import Config, schedule
from noemad.errors import NoemaError
from noemad.minds import Mind, list_minds
from noemad.store import Store
from noemad.wire import wire

log = logging.getLogger("noemad.jobs")
TICK = 60.0  # seconds of the daemon's clock between looks
MAX_RUNNING = 2  # jobs under way at once before the scheduler starts another (one per core here)
SCHEDULE_ACTOR = "schedule"


def _last_runs(db: Database, kind: str) -> list[tuple[Mind, LastRun]]:
    """Every mind, by name, with its last run of `kind`."""
    minds = list_minds(db)
    runs = last_runs(db, kind, [m.name for m in minds])
    return [(m, runs[m.name]) for m in minds]


def due(store: Store, config: Config, now: float) -> list[tuple[str, str]]:
    """The (mind, kind) pairs whose scheduled run is due now, by kind then mind."""
    db = store.reader()
    paused = paused_schedules(db)
    out: list[tuple[str, str]] = []
    for kind in KINDS:
        if kind in paused:
            continue
        for mind, last in _last_runs(db, kind):
            every = schedule(config, mind.name, kind).every  # type: ignore[arg-type]
            seconds = None if every == "off" else span_seconds(every)
            if seconds is None or last.running or not last.news or mind.mode == "paused":
                continue
            if now >= parse_iso(last.started_at or mind.created_at) + seconds:
                out.append((mind.name, kind))
    return out


@wire
@dataclass(frozen=True)
class MindNews:
    """Whether a mind has news for a kind of job: what the scheduler asks before it runs one."""

    mind: str
    news: bool  # an event since its last job of the kind started (or since it was created), not written by a job
    last_started_at: str | None  # its last job of the kind, if any
    running: bool
    paused: bool


def news(store: Store, kind: str) -> list[MindNews]:
    """Each mind's news for `kind`, by name: an operator running it for every mind skips the ones without."""
    db = store.reader()
    return [MindNews(m.name, last.news, last.started_at, last.running, m.mode == "paused") for m, last in _last_runs(db, kind)]


class Scheduler:
    """Looks for due jobs every tick and starts them through the runner."""

    def __init__(self, runner: JobRunner, store: Store, clock: Clock, config: Callable[[], Config]) -> None:
        self._runner = runner
        self._store = store
        self._clock = clock
        self._config = config
        self.ticks = 0
        self.looked_at: float | None = None  # the clock's time of the last look, for `noemactl status`

    async def tick(self) -> list[Any]:
        """Start every job due now; the jobs started."""
        started = []
        now = self._clock.now()
        for mind, kind in due(self._store, self._config(), now):
            if len(self._runner.running) >= MAX_RUNNING:
                break  # still due: a later tick starts it
            try:
                started.append(await self._runner.start(mind, kind, trigger="schedule", actor=SCHEDULE_ACTOR))
            except (JobRunning, MindPaused):
                continue  # an operator's run or a pause got there first
            except NoemaError as exc:
                log.warning("scheduled %s for mind %s not started: %s", kind, mind, exc.detail)
        self.ticks += 1
        self.looked_at = now
        return started

    async def run(self) -> None:
        """Tick until cancelled."""
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the scheduler's look for due jobs failed; it looks again next tick")
            await self._clock.sleep(TICK)
