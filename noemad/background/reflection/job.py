"""The reflection job (`run`): review off the loop, render, maybe reword, record."""

from __future__ import annotations

from typing import Any

from noemad.background.jobs import JobContext
from noemad.background.reflection.findings import Findings
from noemad.background.reflection.prose import render, reword, summary
from noemad.background.reflection.reading import review
from noemad.background.reflection.recording import record
from noemad.wire import dump


def _review_on_reader(ctx: JobContext, now: float) -> Findings:
    return review(ctx.store.reader(), ctx.mind, now)


async def run(ctx: JobContext) -> dict[str, Any]:
    """One reflection of `ctx.mind`: review, render (maybe reword), record. Returns the job's outputs.

    Outputs: `summary` (one sentence), `event` (the reflection event's id),
    `lessons` (memory ids), `patterns` (key, status, failures, memory),
    `counts` (per finding kind, and lessons), `rendered_by`, `reason`, `period`.
    """
    now = ctx.now()
    ctx.progress(0.05, "reviewing")
    # Off the loop: the reads of a busy month take a good part of a second.
    findings = await ctx.store.off_loop(lambda: _review_on_reader(ctx, now))
    ctx.progress(0.6, "rendering")
    plain = render(findings)
    rendering = await reword(ctx, findings, plain)
    ctx.progress(0.85, "recording")
    job_id = ctx.job.id
    written = await ctx.store.writer.run(
        lambda db: record(db, job_id=job_id, findings=findings, rendering=rendering, plain=plain, now=ctx.now())
    )
    lessons = [m.id for m in written.lessons]
    patterns = written.event.data["patterns"]
    return {
        "summary": summary(findings, len(lessons)),
        "event": written.event.id,
        "lessons": lessons,
        "patterns": [{k: p[k] for k in ("key", "status", "failures", "memory")} for p in patterns],
        "counts": {**findings.counts(), "lessons": len(lessons)},
        "rendered_by": rendering.rendered_by,
        "reason": rendering.reason,
        "period": dump(findings.period),
    }
