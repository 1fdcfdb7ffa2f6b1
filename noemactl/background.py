"""The background jobs from the command line: `reflect`, `consolidate` (run, reject) and `jobs` (list, show).

Starting a job and following it to its end is `noemactl.jobs`; these are the
commands, added at the top level by `noemactl.app`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from noemactl.errors import BadInput
from noemactl.params import PlainCommand, default_group
from noemactl.shared import JsonFlag, complete_mind, jobs_views, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

consolidate_app = typer.Typer(
    cls=default_group("run"),
    help="Turn recurring episodes into generalisations (a belief and a semantic memory each), or reject one.\n\n"
    "`noemactl consolidate [MIND]` is `noemactl consolidate run [MIND]`.",
)
commands.add_typer(consolidate_app, name="consolidate")
jobs_app = typer.Typer(
    cls=default_group("list"),
    help="List background jobs (reflection, consolidation) or show one.\n\n`noemactl jobs [MIND]` is `noemactl jobs list [MIND]`.",
)
commands.add_typer(jobs_app, name="jobs")

EveryMindArg = Annotated[
    str | None,
    typer.Argument(metavar="MIND", help="The mind (default: every mind, one after another).", autocompletion=complete_mind, show_default=False),
]
PauseFlag = Annotated[
    bool, typer.Option("--pause", help="Pause the scheduled runs for every mind (kept across restarts); run-now still works.")
]
ResumeFlag = Annotated[bool, typer.Option("--resume", help="Resume the scheduled runs for every mind.")]
NoWaitFlag = Annotated[bool, typer.Option("--no-wait", help="Start the job and return; follow it with `noemactl jobs show ID --follow`.")]


def _background(ctx: typer.Context, kind: str, mind: str | None, pause: bool, resume: bool, no_wait: bool, json: bool) -> None:
    from noemactl import jobs as running

    s = session(ctx)
    if pause or resume:
        if pause and resume:
            raise BadInput("--pause and --resume contradict each other; pick one")
        if mind is not None or no_wait:
            raise BadInput("--pause and --resume act on the schedule of every mind; drop MIND and --no-wait")
        running.set_paused(s, kind, pause, s.wants_json(json))
        return
    running.run_now(s, kind, mind, not no_wait, s.wants_json(json))


@commands.command(cls=PlainCommand)
def reflect(
    ctx: typer.Context,
    mind: EveryMindArg = None,
    pause: PauseFlag = False,
    resume: ResumeFlag = False,
    no_wait: NoWaitFlag = False,
    json: JsonFlag = False,
) -> None:
    """Review a mind's period since its last reflection now: prediction errors, rejections, corrections, patterns and the lessons they teach.

    Shows a progress bar on a terminal and ends with what was found and created, with the event to walk with `noemactl timeline`.
    """
    _background(ctx, "reflection", mind, pause, resume, no_wait, json)


@consolidate_app.command("run", cls=PlainCommand)
def consolidate_run(
    ctx: typer.Context,
    mind: EveryMindArg = None,
    pause: PauseFlag = False,
    resume: ResumeFlag = False,
    no_wait: NoWaitFlag = False,
    json: JsonFlag = False,
) -> None:
    """Consolidate a mind's recent episodes now: clusters of recurring episodes become an inference belief and a semantic memory.

    Shows a progress bar on a terminal and ends with each generalisation made (belief and memory ids) and the event to walk with `noemactl timeline`.
    """
    _background(ctx, "consolidation", mind, pause, resume, no_wait, json)


@consolidate_app.command("reject", cls=PlainCommand)
def consolidate_reject(
    ctx: typer.Context,
    memory_id: Annotated[int, typer.Argument(metavar="MEMORY_ID", min=1, help="The semantic memory consolidation made.", show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is wrong; kept with the retraction.")] = "rejected by an operator",
    json: JsonFlag = False,
) -> None:
    """Reject a generalisation: its memory is retracted and its belief set rejected; the episodes stay as they were."""
    s = session(ctx)
    data = s.client.reject(memory_id, reason)
    s.present(
        data,
        json,
        lambda: f"rejected memory #{data['memory']['id']}" + (f" and belief #{data['belief']}" if data["belief"] else "")
        + f": {data['memory']['text']}\nwalk it: noemactl timeline {data['event']['id']}",
    )


@jobs_app.command("list", cls=PlainCommand)
def jobs_list(
    ctx: typer.Context,
    mind: Annotated[
        str | None, typer.Argument(metavar="MIND", help="Only this mind's jobs.", autocompletion=complete_mind, show_default=False)
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", metavar="KIND", help="Only reflection or consolidation jobs.", show_default=False)
    ] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N jobs.")] = 50,
    json: JsonFlag = False,
) -> None:
    """List background jobs, newest first, with the schedules' state."""
    if kind is not None and kind not in ("reflection", "consolidation"):
        raise BadInput(f"--kind {kind!r} is not a job kind; use reflection or consolidation")
    s = session(ctx)
    data = s.client.jobs(mind, kind, limit)
    if s.wants_json(json):
        s.output.json(data)
        return
    s.output.show(*jobs_views().jobs(data["jobs"], mind))
    paused = [x["kind"] for x in s.client.schedules()["schedules"] if x["paused"]]
    if paused:
        s.output.note(f"scheduled runs paused: {', '.join(paused)} (resume with noemactl reflect --resume / noemactl consolidate --resume)")


@jobs_app.command("show", cls=PlainCommand)
def jobs_show(
    ctx: typer.Context,
    job_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The job's id.", show_default=False)],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="If it is running, follow it (a progress bar on a terminal) until it ends.")
    ] = False,
    json: JsonFlag = False,
) -> None:
    """Show one job: its trigger, settings, progress or outcome, and what it found and created."""
    s = session(ctx)
    data = s.client.job(job_id)
    if follow and data["status"] == "running":
        from noemactl.jobs import follow as follow_job

        data = follow_job(s, data)
    s.present(data, json, lambda: jobs_views().job(data))
