"""Benchmark of one reflection (noemad.background.reflection.run) over a month of a busy mind.

    .venv/bin/python bench/reflection.py [--runs K] [--days D] [--seed S] [--rebuild]

1. Builds, or reuses if it already holds the same data, a store whose mind
   `bench` lived two busy months (and whose mind `other` chatters beside it,
   so the two minds' event ids interleave as on a shared host). Every day:
   60 predictions on 300 subjects (stated 0.5-0.95, due within hours) and 60
   outcomes (five troubled subjects miss 60% of the time, the rest 15%),
   120 observations supporting or contradicting 600 propositions (two per
   subject) from 12 sources, 8 operator corrections (lower and pin, reject, or unpin), 5 goals
   set and 4 completed. Each stimulus is stored and perceived by noemad's own
   perception (`noemad.cognition.perceive`: episodes, evidence, belief
   updates and statuses, predictions, outcomes, rejections, goals), with the
   cycle's bookkeeping events around it (cycle_started, memory_retrieved,
   attention, cycle_completed). That is about 60,000 of the mind's events
   and 1,800 resolved predictions a month. At the end of the first month the
   mind reflects (the real `run`), so the timed reflection reviews exactly
   the second month, with a month of history behind it. Cached as
   bench/.data/reflection-D.db (git-ignored), D the days of a "month"
   (--days, default 30; the bench test uses 1).
2. Times `run` K times (default 7), each on a fresh copy of the store (so
   every run reviews the same month and writes the same lessons), in
   process, with no model configured: the review on a reader thread, the
   rendering, and the writer job that records the `reflection` event and the
   new lessons, committed with synchronous=FULL. The job's row is started
   before the clock starts. Also times `review` alone (the reads), warm.
3. Prints what the reflection found, p50 and max of each, and the goal.

Goal (the reflection issue): reflection over a month of a busy mind <= 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import data_dir, figure, stamp, stamped  # noqa: E402  (bench/_report.py)

from noemad.background.jobs import JobContext, finish_job, start_job  # noqa: E402
from noemad.background.reflection import review, run  # noqa: E402
from noemad.clock import ManualClock  # noqa: E402
from noemad.cognition.perceive import perceive  # noqa: E402
from noemad.config.files import parse_config  # noqa: E402
from noemad.config.schedules import ReflectionSchedule
from noemad.events import EventDraft, append  # noqa: E402
from noemad.minds import create_mind  # noqa: E402
from noemad.models.gateway import ModelGateway  # noqa: E402
from noemad.stimuli import Claim, Correction, GoalStimulus, Observation, OutcomeStimulus, PredictionStimulus  # noqa: E402
from noemad.store import Store, open_db  # noqa: E402

MIND, OTHER = "bench", "other"
DAY = 86_400.0
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z, the mind's creation
MONTHS = 2
PER_DAY = {"prediction": 60, "outcome": 60, "observation": 120, "correction": 8, "goal": 5, "goal_done": 4}
TROUBLED = ("deploy", "cache", "billing", "search", "login")
SUBJECTS = TROUBLED + tuple(f"service {n}" for n in range(295))
SOURCES = tuple(f"sensor {n}" for n in range(12))


def tag(days: int) -> str:
    """What a cached store holds (kept beside it, so a store of other data is rebuilt)."""
    return f"reflection bench: {MONTHS} months x {days} days of {PER_DAY} on {len(SUBJECTS)} subjects, {len(TROUBLED)} troubled"


class History:
    """The mind's day-to-day life, generated from a seed and perceived by noemad's perception."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.open: list[tuple[int, str]] = []  # predictions awaiting an outcome (id, subject), oldest first
        self.beliefs: list[int] = []  # beliefs observations wrote, in the order they were first seen
        self.seen: set[int] = set()
        self.goals: list[int] = []  # active goals
        self.cycles = 0
        self.propositions = [(f"{s} is healthy ({n})", s) for s in SUBJECTS for n in range(2)]

    def stimulus(self, kind: str, t: float) -> Any | None:
        rng = self.rng
        if kind == "prediction":
            subject = rng.choice(SUBJECTS)
            return PredictionStimulus(f"{subject} works after change {self.cycles}", subject, round(rng.uniform(0.5, 0.95), 2), t + rng.uniform(1, 6) * 3600)
        if kind == "outcome":
            if not self.open:
                return None
            prediction, subject = self.open.pop(0)
            miss = rng.random() < (0.6 if subject in TROUBLED else 0.15)
            return OutcomeStimulus(prediction, "miss" if miss else "hit")
        if kind == "observation":
            proposition, subject = rng.choice(self.propositions)
            stance = "contradicts" if rng.random() < 0.2 else "supports"
            source = rng.choice(SOURCES)
            return Observation(source, f"{source} reports on {proposition}", claim=Claim(proposition, subject, stance))  # type: ignore[arg-type]
        if kind == "correction":
            if not self.beliefs:
                return None
            belief = rng.choice(self.beliefs)
            roll = rng.random()
            if roll < 0.5:
                return Correction(belief, "the operator checked it by hand", confidence=round(rng.uniform(0.05, 0.3), 2))
            if roll < 0.75:
                return Correction(belief, "the operator says this is wrong", status="rejected")
            return Correction(belief, "let the evidence decide again", status="active")
        if kind == "goal":
            return GoalStimulus(title=f"fix {rng.choice(SUBJECTS)} ({self.cycles})")
        if kind == "goal_done":
            return GoalStimulus(goal=self.goals.pop(0), status="completed") if self.goals else None
        raise ValueError(kind)

    def day(self, db: Any, day: int) -> None:
        plan = [kind for kind, n in PER_DAY.items() for _ in range(n)]
        self.rng.shuffle(plan)
        step = DAY / (len(plan) + 1)
        for i, kind in enumerate(plan):
            t = START + day * DAY + (i + 1) * step
            stimulus = self.stimulus(kind, t)
            if stimulus is None:
                continue
            self.cycles += 1
            cycle_id = f"{MIND}/{self.cycles}"
            event = append(db, stimulus.draft(MIND), t)
            started = append(db, EventDraft(MIND, "cycle_started", "process:runtime", cycle_id=cycle_id, causation_id=event.id, parents=[event.id]), t)
            perception = perceive(db, MIND, [event], cycle_id, t)
            for name in ("memory_retrieved", "attention", "cycle_completed"):
                append(db, EventDraft(MIND, name, "process:runtime", cycle_id=cycle_id, causation_id=started.id), t)
            if kind == "prediction":
                self.open.append((perception.predictions[0], stimulus.subject))
            elif kind == "observation":
                for belief in perception.beliefs:
                    if belief not in self.seen:
                        self.seen.add(belief)
                        self.beliefs.append(belief)
            elif kind == "goal":
                self.goals.extend(perception.goals)
            if self.rng.random() < 0.3:
                append(db, EventDraft(OTHER, "message", "user:someone", channel="cli", text="hello", data={"author": "someone"}), t)


def gateway_for(store: Store, clock: ManualClock) -> ModelGateway:
    config = parse_config("", "bench").config  # no [models]: reflection keeps its plain prose
    return ModelGateway(config=lambda: config, clock=clock, writer=store.writer)


async def reflect(store: Store, clock: ManualClock) -> tuple[dict[str, Any], float]:
    """One reflection job as the daemon runs it; returns its outputs and how long `run` took (ms)."""
    now = clock.now()
    job = await store.writer.run(lambda db: start_job(db, mind=MIND, kind="reflection", trigger="schedule", actor="schedule", inputs={}, now=now))
    ctx = JobContext(job=job, store=store, clock=clock, gateway=gateway_for(store, clock), settings=ReflectionSchedule())
    started = time.perf_counter()
    outputs = await run(ctx)
    elapsed = (time.perf_counter() - started) * 1000
    await store.writer.run(lambda db: finish_job(db, job.id, outputs=outputs, error=None, model_calls=ctx.model_calls, now=clock.now()))
    return outputs, elapsed


def build(path: Path, seed: int, days: int) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    store = Store(path)  # the migrations, exactly as the daemon applies them
    for name in (MIND, OTHER):
        store.writer.run_sync(lambda db, n=name: create_mind(db, n, {}, START, "operator"))
    store.close()
    history = History(seed)
    started = time.perf_counter()
    for month in range(MONTHS):
        db = open_db(path)
        db.execute("PRAGMA synchronous=OFF")  # a bulk load: rebuilt from scratch if interrupted
        for day in range(month * days, (month + 1) * days):
            history.day(db, day)
            db.conn.commit()
            print(f"  day {day + 1:>3}  {time.perf_counter() - started:6.1f} s", file=sys.stderr, flush=True)
        db.close()
        if month < MONTHS - 1:  # the mind reflects at the end of every month but the last
            store = Store(path)
            clock = ManualClock(START + (month + 1) * days * DAY)
            outputs, _ = asyncio.run(reflect(store, clock))
            print(f"  reflected: {outputs['summary']}", file=sys.stderr)
            store.close()
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def describe(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (events,) = conn.execute("SELECT count(*) FROM events WHERE mind = ?", [MIND]).fetchone()
        (all_events,) = conn.execute("SELECT count(*) FROM events").fetchone()
        (predictions,) = conn.execute("SELECT count(*) FROM predictions WHERE mind = ? AND status != 'open'", [MIND]).fetchone()
        (beliefs,) = conn.execute("SELECT count(*) FROM beliefs WHERE mind = ?", [MIND]).fetchone()
        (memories,) = conn.execute("SELECT count(*) FROM memories WHERE mind = ?", [MIND]).fetchone()
    finally:
        conn.close()
    return f"{events:,} events of the mind ({all_events:,} on the host), {predictions:,} resolved predictions, {beliefs:,} beliefs, {memories:,} memories"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="reflections to time, each on a fresh copy (default 7)")
    parser.add_argument("--days", type=int, default=30, help="days in each of the two months (default 30)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the history")
    parser.add_argument("--rebuild", action="store_true", help="build the store even if a cached one exists")
    args = parser.parse_args(argv)
    db_path = data_dir() / f"reflection-{args.days}.db"
    if args.rebuild or not stamped(db_path, tag(args.days)):
        db_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        build(db_path, args.seed, args.days)
        stamp(db_path, tag(args.days))
        print(f"built {db_path} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    end = START + MONTHS * args.days * DAY
    scratch = db_path.with_name(f"reflection-{args.days}-scratch.db")
    runs: list[float] = []
    reads: list[float] = []
    outputs: dict[str, Any] = {}
    try:
        for _ in range(args.runs):
            for suffix in ("", "-wal", "-shm"):
                Path(str(scratch) + suffix).unlink(missing_ok=True)
            shutil.copyfile(db_path, scratch)
            store = Store(scratch)
            try:
                if not reads:  # the reads alone, warm, before anything is written
                    review(store.reader(), MIND, end)
                    for _ in range(5):
                        t = time.perf_counter()
                        review(store.reader(), MIND, end)
                        reads.append((time.perf_counter() - t) * 1000)
                outputs, elapsed = asyncio.run(reflect(store, ManualClock(end)))
                runs.append(elapsed)
            finally:
                store.close()
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(str(scratch) + suffix).unlink(missing_ok=True)
    counts = outputs["counts"]
    print(f"reflection bench: {describe(db_path)}")
    print(
        f"the timed reflection reviews the last {args.days} days: {counts['events']:,} events, {counts['predictions_resolved']:,} resolved"
        f" predictions ({counts['misses']:,} misses, {counts['confident_misses']:,} confident), {counts['status_changes']:,} status changes,"
        f" {counts['corrections']:,} corrections, {counts['contested']:,} contested, {counts['goals_completed']:,} goals completed,"
        f" {counts['patterns']} patterns ({counts['new_patterns']} new, {counts['lessons']} lessons written)"
    )
    print(f"summary: {outputs['summary']}")
    print(f"{'':34}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'n':>5}")
    for label, values in (("run (review, render, record)", runs), ("review alone (reads, warm)", reads)):
        print(f"{label:34}{statistics.median(values):9.1f}{pct(values, 0.95):9.1f}{max(values):9.1f}{len(values):5}")
    met = max(runs) <= 1000.0
    print(f"goal: reflection over a month of a busy mind <= 1 s -> {'met' if met else 'NOT met'} (max {max(runs):.0f} ms)")
    figure("reflection", "one reflection, max of runs", f"{max(runs):.0f} ms", "<= 1 s", met, size=f"{counts['events']:,} events over {args.days} days")
    return 0


if __name__ == "__main__":
    sys.exit(main())
