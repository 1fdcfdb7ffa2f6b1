"""Running a background job from the command line: start it, follow its progress, say what it did.

noemad answers a run-now at once with the running job; this module polls
`GET /jobs/{id}` until the job ends, drawing a progress bar on stderr when
stderr is a terminal (nothing otherwise, so pipes and scripts stay clean).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from noemactl.errors import CtlError

if TYPE_CHECKING:
    from noemactl.session import Session

POLL = 0.1  # seconds between looks at a running job
VERB = {"reflection": "reflect", "consolidation": "consolidate"}


def follow(s: Session, job: dict[str, Any]) -> dict[str, Any]:
    """Poll `job` until it is no longer running; its final row."""
    err = s.output.err
    if not err.is_terminal:
        while job["status"] == "running":
            time.sleep(POLL)
            job = s.client.job(job["id"])
        return job
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    label = f"{job['kind']} of {job['mind']} (job {job['id']})"
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TextColumn("{task.fields[stage]}"),
        TimeElapsedColumn(), console=err, transient=True,
    ) as bar:
        task = bar.add_task(label, total=1.0, stage=job["stage"])
        while job["status"] == "running":
            bar.update(task, completed=job["progress"], stage=job["stage"])
            time.sleep(POLL)
            job = s.client.job(job["id"])
        bar.update(task, completed=job["progress"], stage=job["stage"])
    return job


def run_now(s: Session, kind: str, mind: str | None, wait: bool, as_json: bool) -> None:
    """Run `kind` now for `mind` (or every mind, one after another), following each; exit 1 if any failed."""
    minds = [mind] if mind else [m["name"] for m in s.client.minds()["minds"]]
    if not minds:
        raise CtlError(f"there are no minds to {VERB[kind]}; create one with `noemactl mind create NAME`")
    finished: list[dict[str, Any]] = []
    for name in minds:
        job = s.client.run_job(name, kind)
        if not wait:
            finished.append(job)
            if not as_json:
                s.output.note(f"{kind} job {job['id']} started for {name}; follow it with `noemactl jobs show {job['id']} --follow`")
            continue
        job = follow(s, job)
        finished.append(job)
        if not as_json:
            from noemactl import render

            s.output.show(*render.job_summary(job))
    if as_json:
        s.output.json(finished[0] if mind else {"jobs": finished})
    failed = [j for j in finished if j["status"] == "failed"]
    if failed:
        raise CtlError("; ".join(f"{j['kind']} job {j['id']} for {j['mind']} failed: {j['error']}" for j in failed))


def set_paused(s: Session, kind: str, paused: bool, as_json: bool) -> None:
    """Pause or resume `kind`'s scheduled runs for every mind."""
    data = s.client.set_schedule(kind, paused)
    if as_json:
        s.output.json(data)
        return
    if paused:
        s.output.show(f"scheduled {kind} paused for every mind (since {data['paused_at']}); it stays paused across restarts")
        s.output.note(f"running it now still works: noemactl {VERB[kind]} MIND; resume with noemactl {VERB[kind]} --resume")
    else:
        s.output.show(f"scheduled {kind} resumed for every mind (every {data['every']} unless a mind sets its own)")
