"""An operator's control of the background jobs (`sup.job_control`): run one now, the schedules and their pause, which minds have news.

The jobs themselves run in `noemad.background` (the runner and the
scheduler); a job's rows are read through `sup.reads`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from noemad.background.jobs import Job, JobKind, pause_schedule, paused_schedules
from noemad.background.runner import JobRunner
from noemad.background.scheduler import MindNews, news
from noemad.clock import Clock
from noemad.minds import get_mind
from noemad.runtime.running_config import RunningConfig
from noemad.store import Store
from noemad.wire import wire

log = logging.getLogger("noemad")
SCHEDULED: tuple[JobKind, ...] = ("reflection", "consolidation")


@wire
@dataclass(frozen=True)
class Schedule:
    """A kind's schedule: paused globally or not; `every` is the [schedules] default (minds may override it)."""

    kind: JobKind
    paused: bool
    paused_at: str | None
    actor: str | None
    every: str


class JobControl:
    """Starts jobs and pauses schedules: the store, clock, job runner, running config and open check."""

    def __init__(self, store: Store, clock: Clock, runner: JobRunner, running: RunningConfig, check_open: Callable[[], None]) -> None:
        self.store = store
        self.clock = clock
        self.runner = runner
        self.running = running
        self._check_open = check_open

    async def run_job(self, mind: str, kind: str, actor: str = "operator") -> Job:
        """Start reflection or consolidation for `mind` now; the running job."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        return await self.runner.start(mind, kind, trigger="operator", actor=actor)

    def schedules(self) -> list[Schedule]:
        """Each kind's global pause and default period."""
        paused = paused_schedules(self.store.reader())
        return [
            Schedule(
                kind=kind,
                paused=kind in paused,
                paused_at=paused.get(kind, {}).get("paused_at"),
                actor=paused.get(kind, {}).get("actor"),
                every=getattr(self.running.config.schedules, kind).every,
            )
            for kind in SCHEDULED
        ]

    def news(self, kind: str) -> list[MindNews]:
        """Which minds have had news since their last job of `kind`: a run for every mind skips the rest."""
        return news(self.store, kind)

    async def pause_schedule(self, kind: str, paused: bool, actor: str = "operator") -> Schedule:
        """Pause or resume the scheduled runs of `kind` for every mind; stored, so it survives a restart."""
        self._check_open()
        now = self.clock.now()
        if await self.store.writer.run(lambda db: pause_schedule(db, kind, paused=paused, actor=actor, now=now)):
            log.info("scheduled %s runs %s by %s", kind, "paused" if paused else "resumed", actor)
        return next(s for s in self.schedules() if s.kind == kind)
