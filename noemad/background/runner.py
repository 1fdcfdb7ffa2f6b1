"""Running background jobs: start one, let its service work, record how it ended.

`JobRunner.start` records the job as running (refusing an overlap or a
paused mind), switches the mind's mode, and runs the kind's service as an
asyncio task; the caller gets the job row at once and follows its progress
in the `jobs` table. Whatever happens — outputs, an error, the daemon
stopping — the row is finished and the mode put back.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from noemad.background.jobs import Job, JobContext, check_kind, fail_interrupted, finish_job, get_job, start_job
from noemad.clock import Clock
from noemad.config.schema import Config, schedule
from noemad.errors import NoemaError
from noemad.models.gateway import ModelGateway
from noemad.ledger import ON_BEHALF_OF
from noemad.store import Store

log = logging.getLogger("noemad.jobs")

Service = Callable[[JobContext], Awaitable[dict[str, Any]]]


def service(kind: str) -> Service:
    """The function that does a job of `kind` (imported on first use)."""
    if kind == "reflection":
        from noemad.background import reflection

        return reflection.run
    from noemad.background import consolidation

    return consolidation.run


class JobRunner:
    """Starts jobs, tracks their tasks, and stops them with the daemon."""

    def __init__(self, store: Store, clock: Clock, gateway: ModelGateway, config: Callable[[], Config]) -> None:
        self._store = store
        self._clock = clock
        self._gateway = gateway
        self._config = config
        self._tasks: dict[int, asyncio.Task[Job]] = {}

    async def recover(self) -> list[int]:
        """Fail the jobs a stopped daemon left running (and put their minds' modes back)."""
        now = self._clock.now()
        ids = await self._store.writer.run(lambda db: fail_interrupted(db, now))
        if ids:
            log.warning("jobs %s were running when noemad stopped; marked failed", ", ".join(map(str, ids)))
        return ids

    async def start(self, mind: str, kind: str, *, trigger: str, actor: str) -> Job:
        """Record a job and start its service; returns the running job's row."""
        check_kind(kind)
        settings = schedule(self._config(), mind, kind)  # type: ignore[arg-type]
        now = self._clock.now()
        inputs = {"settings": settings.model_dump()}
        job = await self._store.writer.run(
            lambda db: start_job(db, mind=mind, kind=kind, trigger=trigger, actor=actor, inputs=inputs, now=now)
        )
        ctx = JobContext(job=job, store=self._store, clock=self._clock, gateway=self._gateway, settings=settings)
        context = contextvars.copy_context()
        if trigger == "operator":
            context.run(ON_BEHALF_OF.set, actor)  # the job's model calls are recorded as the operator's
        self._tasks[job.id] = asyncio.get_running_loop().create_task(self._run(ctx), name=f"job-{job.id}", context=context)
        log.info("%s job %d started for mind %s by %s", kind, job.id, mind, actor if trigger == "operator" else f"its {trigger}")
        return job

    async def _run(self, ctx: JobContext) -> Job:
        job = ctx.job
        outputs: dict[str, Any] = {}
        error: str | None = None
        try:
            outputs = await service(job.kind)(ctx)
        except asyncio.CancelledError:
            error = "noemad stopped while the job ran; run it again"
        except NoemaError as exc:
            error = exc.detail
        except Exception as exc:  # a bug: say so, keep the daemon up
            log.exception("%s job %d failed", job.kind, job.id)
            error = f"the job failed unexpectedly ({type(exc).__name__}: {exc}); the daemon log has the details"
        finally:
            self._tasks.pop(job.id, None)
        now = self._clock.now()
        calls = list(ctx.model_calls)
        try:
            finished = await self._store.writer.run(
                lambda db: finish_job(db, job.id, outputs=outputs, error=error, model_calls=calls, now=now)
            )
        except Exception as exc:  # e.g. the store closing under a stopping daemon: the next start fails the row
            log.warning("%s job %d could not be recorded as ended: %s", job.kind, job.id, getattr(exc, "detail", exc))
            return job
        if error:
            log.warning("%s job %d for mind %s failed: %s", job.kind, job.id, job.mind, error)
        else:
            log.info("%s job %d for mind %s finished: %s", job.kind, job.id, job.mind, outputs.get("summary", ""))
        return finished

    @property
    def running(self) -> list[int]:
        """Ids of the jobs under way in this daemon."""
        return sorted(self._tasks)

    async def wait(self, job_id: int) -> Job:
        """Wait for a job started here to finish; its row as it ended."""
        task = self._tasks.get(job_id)
        if task is not None:
            return await asyncio.shield(task)
        return get_job(self._store.reader(), job_id)

    async def stop(self) -> None:
        """Cancel the jobs under way; each records that it was stopped."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
