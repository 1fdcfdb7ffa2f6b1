"""Background jobs: their rows, and the context a running job works in.

A job is one run of reflection or consolidation for one mind, started by its
schedule or by an operator. Its row in `jobs` records the trigger, status
(`running`, then `succeeded` or `failed`), progress and stage, inputs,
outputs, the error if any, and the ids of the model calls it made. While it
runs the mind's mode is `reflecting` or `consolidating` (a `mode_changed`
event each way; with both running, the later one's, then the other's; a job
that ends when the mode is not its own to move back, because an operator
paused the mind or the other kind's job took it, records `job_finished`
instead); two runs of one kind on one mind never overlap (a partial
unique index holds it, and a second request hears which job is running).

The functions that write are writer jobs: run them on the writer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from sqlite_utils import Database

from noemad.clock import Clock, iso
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import EventDraft, append
from noemad.minds import get_mind, job_start_event, mind_names, set_mode
from noemad.store.guard import unrecorded
from noemad.wire import wire

if TYPE_CHECKING:
    from noemad.models.gateway import ModelGateway
    from noemad.store import Store

JobKind = Literal["reflection", "consolidation"]
KINDS: tuple[str, ...] = ("reflection", "consolidation")
TRIGGERS: tuple[str, ...] = ("schedule", "operator")
MODE_OF: dict[str, str] = {"reflection": "reflecting", "consolidation": "consolidating"}
JOBS_ACTOR = "process:jobs"
JOB_ACTORS: tuple[str, ...] = (JOBS_ACTOR, "process:reflection", "process:consolidation")  # who writes what jobs write
MAX_LIST = 1_000


class JobNotFound(NotFound):
    """No job has that id."""

    title = "Job not found"


class JobRunning(Conflict):
    """A job of that kind is already running for the mind."""

    title = "Job running"


class MindPaused(Conflict):
    """The mind is paused, and its background jobs wait with it."""

    title = "Mind paused"


@wire
@dataclass(frozen=True)
class Job:
    """One run of reflection or consolidation for one mind."""

    id: int
    mind: str
    kind: JobKind
    trigger: Literal["schedule", "operator"]
    actor: str
    status: Literal["running", "succeeded", "failed"]
    progress: float
    """0 to 1."""
    stage: str
    """What the job is doing (or `done`, `failed`)."""
    started_at: str
    finished_at: str | None
    inputs: dict[str, Any]
    """The settings the job ran with."""
    outputs: dict[str, Any]
    """What it found and created: `summary`, ids, counts."""
    error: str | None
    model_calls: list[int]
    """The model_calls rows of the calls it made."""


_COLUMNS = "id, mind, kind, trigger, actor, status, progress, stage, started_at, finished_at, inputs, outputs, error, model_calls"


def _job(row: tuple[Any, ...]) -> Job:
    """A row of `_COLUMNS` as a Job, its JSON columns decoded."""
    id_, mind, kind, trigger, actor, status, progress, stage, started_at, finished_at, inputs, outputs, error, calls = row
    return Job(
        id_, mind, kind, trigger, actor, status, progress, stage, started_at, finished_at,
        json.loads(inputs), json.loads(outputs), error, json.loads(calls),
    )


def check_kind(kind: str) -> str:
    """`kind` if it names a job kind, else `InvalidInput`."""
    if kind not in KINDS:
        raise InvalidInput(f"a job's kind is one of {', '.join(KINDS)}, not {kind!r}")
    return kind


def get_job(db: Database, job_id: int) -> Job:
    """One job, or `JobNotFound` with a hint."""
    row = db.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", [job_id]).fetchone()
    if row is None:
        raise JobNotFound(f"job {job_id} does not exist; list jobs with `noemactl jobs`")
    return _job(row)


def list_jobs(db: Database, *, mind: str | None = None, kind: str | None = None, limit: int = 50) -> list[Job]:
    """Jobs, newest first, optionally of one mind or kind."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
        raise InvalidInput(f"limit must be a whole number between 1 and {MAX_LIST}, not {limit!r}")
    sql, params = f"SELECT {_COLUMNS} FROM jobs WHERE 1", []
    if mind is not None:
        get_mind(db, mind)
        sql += " AND mind = ?"
        params.append(mind)
    if kind is not None:
        sql += " AND kind = ?"
        params.append(check_kind(kind))
    rows = db.execute(sql + " ORDER BY id DESC LIMIT ?", [*params, limit]).fetchall()
    return [_job(r) for r in rows]


def job_counts(db: Database) -> dict[tuple[str, str], int]:
    """How many jobs there are of each (kind, status), every mind's together."""
    return {(kind, status): n for kind, status, n in db.execute("SELECT kind, status, count(*) FROM jobs GROUP BY kind, status")}


def running_job(db: Database, mind: str, kind: str) -> Job | None:
    """The job of `kind` running for `mind`, if any."""
    row = db.execute(f"SELECT {_COLUMNS} FROM jobs WHERE mind = ? AND kind = ? AND status = 'running'", [mind, kind]).fetchone()
    return _job(row) if row else None


def start_event(db: Database, mind: str, job_id: int) -> int | None:
    """The `mode_changed` event that started the job: the cause of what the job writes (None if the mode did not change)."""
    return job_start_event(db, mind, job_id)


def _set_mode(db: Database, mind: str, to: str, now: float, text: str, job_id: int, *, only_from: str | None = None) -> bool:
    """Move the mind's mode for a job, through minds.py (its one writer); whether it moved."""
    before = get_mind(db, mind).mode
    return set_mode(db, mind, to, now, JOBS_ACTOR, text, only_from=only_from, job=job_id).mode != before


def start_job(db: Database, *, mind: str, kind: str, trigger: str, actor: str, inputs: dict[str, Any], now: float) -> Job:
    """Record a job as running and switch the mind's mode (a writer job).

    Refuses with `JobRunning` (naming the job) if one of the kind runs for
    the mind, and with `MindPaused` if the mind is paused.
    """
    check_kind(kind)
    if trigger not in TRIGGERS:
        raise InvalidInput(f"a job's trigger is one of {', '.join(TRIGGERS)}, not {trigger!r}")
    state = get_mind(db, mind)
    running = running_job(db, mind, kind)
    if running is not None:
        raise JobRunning(
            f"{kind} job {running.id} is already running for mind {mind!r} (started {running.started_at} by {running.actor});"
            f" follow it with `noemactl jobs show {running.id} --follow`"
        )
    if state.mode == "paused":
        raise MindPaused(f"mind {mind!r} is paused and its background jobs wait with it; resume it with `noemactl resume {mind}`")
    (after_event,) = db.execute("SELECT coalesce(max(id), 0) FROM events WHERE mind = ?", [mind]).fetchone()
    cur = db.execute(
        "INSERT INTO jobs (mind, kind, trigger, actor, status, progress, stage, started_at, inputs, after_event)"
        " VALUES (?, ?, ?, ?, 'running', 0, 'starting', ?, ?, ?)",
        [mind, kind, trigger, actor, iso(now), json.dumps(inputs, sort_keys=True), after_event],
    )
    job_id = int(cur.lastrowid or 0)
    _set_mode(db, mind, MODE_OF[kind], now, f"{kind} job {job_id} started " + (f"by {actor}" if trigger == "operator" else f"on {trigger} ({actor})"), job_id)
    return get_job(db, job_id)


def set_progress(db: Database, job_id: int, progress: float, stage: str) -> None:
    """Record a running job's progress (a writer job); a finished job keeps its last."""
    db.execute(
        "UPDATE jobs SET progress = ?, stage = ? WHERE id = ? AND status = 'running'",
        [round(min(1.0, max(0.0, progress)), 4), stage, job_id],
    )


def finish_job(
    db: Database,
    job_id: int,
    *,
    outputs: dict[str, Any],
    error: str | None,
    model_calls: list[int],
    now: float,
) -> Job:
    """Record how a job ended and switch the mind's mode back (a writer job).

    The mode goes back to `idle` (or to the mode of the mind's other job
    still running) only if it is still this job's: a mind an operator paused
    meanwhile stays paused.
    """
    job = get_job(db, job_id)
    db.execute(
        "UPDATE jobs SET status = ?, progress = ?, stage = ?, finished_at = ?, outputs = ?, error = ?, model_calls = ? WHERE id = ?",
        [
            "failed" if error else "succeeded",
            job.progress if error else 1.0,
            "failed" if error else "done",
            iso(now),
            json.dumps(outputs, sort_keys=True),
            error,
            json.dumps(sorted(set(model_calls))),
            job_id,
        ],
    )
    ended = f"{job.kind} job {job_id} {'failed' if error else 'finished'}"
    other = db.execute("SELECT kind FROM jobs WHERE mind = ? AND status = 'running' ORDER BY id DESC LIMIT 1", [job.mind]).fetchone()
    if not _set_mode(db, job.mind, MODE_OF[other[0]] if other else "idle", now, ended, job_id, only_from=MODE_OF[job.kind]):
        # The mode is not this job's to move back (paused meanwhile, or the other kind's job took it): the end is still on the timeline.
        status = "failed" if error else "succeeded"
        append(db, EventDraft(mind=job.mind, kind="job_finished", actor=JOBS_ACTOR, text=ended, data={"job": job_id, "status": status}), now)
    return get_job(db, job_id)


def fail_interrupted(db: Database, now: float) -> list[int]:
    """Mark jobs left running by a daemon that stopped as failed, and put their minds' modes back (a writer job)."""
    ids = [r[0] for r in db.execute("SELECT id FROM jobs WHERE status = 'running' ORDER BY id")]
    for job_id in ids:
        finish_job(db, job_id, outputs={}, error="noemad stopped while the job ran; run it again", model_calls=[], now=now)
    return ids


# --- schedules' global pause ---------------------------------------------------------


@dataclass(frozen=True)
class LastRun:
    """A mind's last job of a kind, as its schedule weighs it."""

    started_at: str | None  # when that job started; None if none ever ran
    running: bool  # a job of the kind runs for the mind now
    news: bool  # an event since that job started (or ever), written by none of the jobs, not a schedule's pause or resume


_LAST_RUNS = """
WITH m(name) AS (SELECT value FROM json_each(:minds))
SELECT m.name, last.started_at,
       EXISTS (SELECT 1 FROM jobs j WHERE j.mind = m.name AND j.kind = :kind AND j.status = 'running'),
       EXISTS (SELECT 1 FROM events e WHERE e.mind = m.name AND e.id > coalesce(last.after_event, 0)
                  AND e.actor NOT IN (SELECT value FROM json_each(:job_actors))
                  AND e.kind NOT IN ('schedule_paused', 'schedule_resumed'))
  FROM m
  LEFT JOIN jobs last ON last.id = (SELECT max(id) FROM jobs j WHERE j.mind = m.name AND j.kind = :kind)
"""


def last_runs(db: Database, kind: str, minds: Sequence[str]) -> dict[str, LastRun]:
    """Each of `minds`' last job of `kind`, whether one runs, and whether the mind has had news since."""
    params = {"kind": kind, "minds": json.dumps(list(minds)), "job_actors": json.dumps(JOB_ACTORS)}
    return {mind: LastRun(started, bool(running), bool(news)) for mind, started, running, news in db.execute(_LAST_RUNS, params)}


def paused_schedules(db: Database) -> dict[str, dict[str, str]]:
    """The job kinds whose scheduled runs are paused, with when and by whom."""
    return {kind: {"paused_at": at, "actor": actor} for kind, at, actor in db.execute("SELECT kind, paused_at, actor FROM schedule_pauses")}


def pause_schedule(db: Database, kind: str, *, paused: bool, actor: str, now: float) -> bool:
    """Pause or resume the scheduled runs of `kind` for every mind (a writer job); True if that changed anything.

    The pause is global and events are keyed by mind, so a change is recorded
    as `schedule_paused` / `schedule_resumed` (actor: who) on the timeline of
    every mind it holds back, which is where an operator asking why a mind
    did not reflect will look; the `schedule_pauses` row itself says who
    paused and when (and is all there is on a host with no minds yet).
    """
    check_kind(kind)
    if paused:
        cur = db.execute("INSERT OR IGNORE INTO schedule_pauses (kind, paused_at, actor) VALUES (?, ?, ?)", [kind, iso(now), actor])
    else:
        cur = db.execute("DELETE FROM schedule_pauses WHERE kind = ?", [kind])
    if cur.rowcount <= 0:
        return False
    what = "paused" if paused else "resumed"
    minds = mind_names(db)
    if not minds:
        unrecorded("a host with no minds has no timeline to record it on; the schedule_pauses row names who and when")
    for mind in minds:
        append(
            db,
            EventDraft(
                mind=mind, kind=f"schedule_{what}", actor=actor, text=f"scheduled {kind} runs {what} for every mind by {actor}",
                data={"kind": kind, "paused": paused},
            ),
            now,
        )
    return True


# --- the context a job runs in ----------------------------------------------------


@dataclass
class JobContext:
    """What a running job's service gets: its row, the store, the clock, the models, its settings.

    `progress` and `record_call` may be called from any thread. Progress is
    written to the job's row when the fraction moves by a percent or the
    stage changes, without waiting for the commit.
    """

    job: Job
    store: Store
    clock: Clock
    gateway: ModelGateway
    settings: Any  # the kind's schedule settings for this mind (noemad.config.schema.schedule)
    model_calls: list[int] = field(default_factory=list)
    _last: tuple[float, str] = (-1.0, "")
    _lock: threading.Lock = field(default_factory=threading.Lock)
    on_progress: Callable[[float, str], None] | None = None  # also told each report written (a watcher, e.g. a test)

    @property
    def mind(self) -> str:
        return self.job.mind

    @property
    def actor(self) -> str:
        """The actor of what the job writes: `process:reflection` or `process:consolidation`."""
        return f"process:{self.job.kind}"

    def now(self) -> float:
        return self.clock.now()

    def progress(self, fraction: float, stage: str) -> None:
        """Report how far the job is (0..1) and what it is doing."""
        with self._lock:
            last_fraction, last_stage = self._last
            if stage == last_stage and abs(fraction - last_fraction) < 0.01 and fraction < 1.0:
                return
            self._last = (fraction, stage)
        job_id = self.job.id
        self.store.writer.submit(lambda db: set_progress(db, job_id, fraction, stage))
        if self.on_progress is not None:
            self.on_progress(fraction, stage)

    def record_call(self, call_id: int | None) -> None:
        """Count a model call the job made (or that was refused) toward its record and its budget."""
        if call_id is not None:
            with self._lock:
                self.model_calls.append(call_id)

    @property
    def calls_left(self) -> int:
        """Model calls this run may still make (the kind's `model_calls` setting)."""
        return max(0, int(getattr(self.settings, "model_calls", 0)) - len(self.model_calls))
