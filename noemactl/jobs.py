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
    """Run `kind` now for `mind` (or every mind with news, one after another, as the scheduler would), following each; exit 1 if any failed.

    A mind named is always run; for every mind, those with nothing new since
    their last run (or paused) are skipped and named, so a dormant mind is not
    told again that nothing happened.
    """
    skipped: list[dict[str, Any]] = []
    if mind:
        minds = [mind]
    else:
        every = s.client.news(kind)["minds"]
        if not every:
            raise CtlError(f"there are no minds to {VERB[kind]}; create one with `noemactl mind create NAME`")
        minds = [m["mind"] for m in every if m["news"] and not m["paused"]]
        skipped = [m for m in every if m["mind"] not in minds]
        if skipped and not as_json:
            s.output.note(f"skipped {', '.join(_why(m, kind) for m in skipped)}")
        if not minds:
            if as_json:
                s.output.json({"jobs": [], "skipped": [m["mind"] for m in skipped]})
            else:
                s.output.show(f"no mind has anything new to {VERB[kind]}; name one to run it anyway: noemactl {VERB[kind]} MIND")
            return
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
            from noemactl import jobs_view

            s.output.show(*jobs_view.job_summary(job))
    if as_json:
        s.output.json(finished[0] if mind else {"jobs": finished, "skipped": [m["mind"] for m in skipped]})
    failed = [j for j in finished if j["status"] == "failed"]
    if failed:
        raise CtlError("; ".join(f"{j['kind']} job {j['id']} for {j['mind']} failed: {j['error']}" for j in failed))


def _why(news: dict[str, Any], kind: str) -> str:
    """A skipped mind and why, for the note."""
    if news["paused"]:
        return f"{news['mind']} (paused)"
    since = f"its last {kind} at {news['last_started_at']}" if news["last_started_at"] else "it was created"
    return f"{news['mind']} (nothing new since {since})"


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
