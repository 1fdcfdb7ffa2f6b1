"""Benchmark of one cognitive cycle on a large mind.

    .venv/bin/python bench/cycle.py [--cycles K] [--rebuild]

The mind `bench` holds 100,000 memories (built by bench/retrieval.py's
generator, each with its memory_created event), 10,000 beliefs with three
items of evidence each, and events padded to 1,000,000 in all. Then, K times
(default 200, after 20 warm-up cycles): a message stimulus is stored (not
timed) and one cycle runs over it exactly as a mind's turn runs it
(noemad.cognition.cycle.run_cycle: cycle_started, perceive, retrieve,
deliberate, cycle_completed, each step a committed writer job with
synchronous=FULL), on a manual clock moved one minute per cycle. Retrieval
alone is timed against a bare FTS5 query for the same terms (the baseline,
the lower bound) on the same store.

Goals (issue 27): a cycle within 1.4x and retrieval within 1.3x of the bare
FTS5 query measured in the same run (p50); the cognition issue's cycle <= 20 ms
p50 is printed beside them. --memories/--beliefs/--events make a smaller
store (the bench test's); the goals are stated at the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import retrieval  # noqa: E402  (the memory generator and store builder)
from _report import figure  # noqa: E402  (bench/_report.py)

from noemad.clock import ManualClock, iso  # noqa: E402
from noemad.cognition.cycle import run_cycle  # noqa: E402
from noemad.cognition.memory.retrieval import rank  # noqa: E402
from noemad.cognition.memory.terms import fts_query, query_terms  # noqa: E402
from noemad.events import EventDraft, append  # noqa: E402
from noemad.store import Store, open_db  # noqa: E402

MEMORIES, BELIEFS, EVENTS = 100_000, 10_000, 1_000_000
CYCLE_RATIO, RETRIEVAL_RATIO = 1.4, 1.3  # the goals, against the bare FTS5 query's p50


def tag(memories: int, beliefs: int, events: int) -> str:
    return f"cycle bench: {memories} memories (with memory_terms), {beliefs} beliefs, {events} events"
SUBJECTS = ("build", "deploy", "parser", "database", "network", "billing", "search", "login", "cache", "queue")


def built(path: Path, tag: str) -> bool:
    if not path.exists():
        return False
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT settings FROM minds WHERE name = ?", [retrieval.MIND]).fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return bool(row) and json.loads(row[0]).get("cycle") == tag


def build(path: Path, seed: int, memories: int, beliefs: int, total: int) -> None:
    """Memories from the retrieval bench's builder, then beliefs, evidence and padding events in bulk."""
    retrieval.build(path, memories, 0, seed, lambda line: print(line, file=sys.stderr, flush=True))
    rng = random.Random(seed)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    (next_event,) = conn.execute("SELECT max(id) + 1 FROM events").fetchone()
    at = iso(retrieval.NOW - 86_400)
    rows, evidence, events = [], [], []
    for b in range(1, beliefs + 1):
        subject = f"{rng.choice(SUBJECTS)} {b % 500}"
        proposition = f"the {subject} is {rng.choice(('healthy', 'slow', 'failing', 'fine', 'degraded'))} ({b})"
        rows.append((b, retrieval.MIND, proposition, proposition.lower(), subject, "observation", rng.random(), "active", at, at))
        for _ in range(3):
            events.append((next_event, retrieval.MIND, "observation", f"source:s{rng.randint(1, 50)}", proposition, "{}", None, None, at))
            evidence.append((retrieval.MIND, b, rng.choice(("support", "support", "contradict")), 1.0, rng.random(), f"s{rng.randint(1, 50)}", "observation", next_event, at))
            next_event += 1
    conn.executemany(
        "INSERT INTO beliefs (id, mind, proposition, proposition_key, subject, kind, confidence, status, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.executemany("INSERT INTO events (id, mind, kind, actor, text, data, subject_type, subject_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", events)
    conn.executemany(
        "INSERT INTO evidence (mind, belief_id, stance, weight, credibility, source, kind, event_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        evidence,
    )
    conn.execute("COMMIT")
    (count,) = conn.execute("SELECT count(*) FROM events").fetchone()
    while count < total:
        batch = []
        for _ in range(min(50_000, total - count)):
            kind = rng.choice(("message", "cycle_started", "attention", "cycle_completed"))
            batch.append((next_event, retrieval.MIND, kind, "process:runtime", None, "{}", None, None, at))
            next_event += 1
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO events (id, mind, kind, actor, text, data, subject_type, subject_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
        conn.execute("COMMIT")
        count += len(batch)
        print(f"  {count:>9,} events", file=sys.stderr, flush=True)
    conn.execute("UPDATE minds SET settings = ? WHERE name = ?", [json.dumps({"cycle": tag(memories, beliefs, total)}), retrieval.MIND])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def time_cycles(path: Path, cycles: int, warmup: int, seed: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each timed cycle (CPU of the whole process: the writer thread runs the cycle)."""
    store = Store(path)
    clock = ManualClock(retrieval.NOW)
    words = retrieval.Words(random.Random(seed + 1))
    (done,) = store.reader().execute("SELECT count(*) FROM events WHERE mind = ? AND kind = 'cycle_started'", [retrieval.MIND]).fetchone()
    timings: list[float] = []
    cpu: list[float] = []
    try:
        for i in range(warmup + cycles):
            text = f"{words.query()}?"
            message = await store.writer.run(
                lambda db, t=text: append(db, EventDraft(retrieval.MIND, "message", "user:alice", channel="cli", text=t, data={"author": "alice"}), clock.now())
            )
            started, used = time.perf_counter(), time.process_time()
            await run_cycle(store, clock, retrieval.MIND, [message.id], f"{retrieval.MIND}/bench-{done + i}", "bench", {})
            if i >= warmup:
                timings.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
            clock.advance(60)
    finally:
        store.close()
    return timings, cpu


def time_retrieval(path: Path, queries: list[str]) -> tuple[list[float], list[float], list[float], list[float]]:
    """Wall milliseconds of the bare FTS5 query and of `rank` for each query, then their CPU milliseconds."""
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    db = open_db(path, readonly=True)
    base, ranked, base_cpu, ranked_cpu = [], [], [], []
    try:
        for q in queries:
            match = fts_query(query_terms(q))
            if match is None:
                continue
            t, c = time.perf_counter(), time.process_time()
            raw.execute(retrieval.BASELINE_SQL, [match]).fetchall()
            base.append((time.perf_counter() - t) * 1000)
            base_cpu.append((time.process_time() - c) * 1000)
            t, c = time.perf_counter(), time.process_time()
            rank(db, mind=retrieval.MIND, query=q, now=retrieval.NOW, limit=5)
            ranked.append((time.perf_counter() - t) * 1000)
            ranked_cpu.append((time.process_time() - c) * 1000)
    finally:
        raw.close()
        db.close()
    return base, ranked, base_cpu, ranked_cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, help="cycles to time (default 100; 200 with --full)")
    parser.add_argument("--full", action="store_true", help="200 cycles and 500 retrieval queries")
    parser.add_argument("--memories", type=int, default=MEMORIES, help=f"memories of the mind (default {MEMORIES:,})")
    parser.add_argument("--beliefs", type=int, default=BELIEFS, help=f"beliefs of the mind (default {BELIEFS:,})")
    parser.add_argument("--events", type=int, default=EVENTS, help=f"events in all (default {EVENTS:,})")
    parser.add_argument("--seed", type=int, default=1, help="seed of the data and the messages")
    parser.add_argument("--rebuild", action="store_true", help="build the store even if a cached one exists")
    args = parser.parse_args(argv)
    cycles_n = args.cycles or (200 if args.full else 100)
    label = tag(args.memories, args.beliefs, args.events)
    db_path = retrieval.DATA_DIR / ("cycle.db" if (args.memories, args.beliefs, args.events) == (MEMORIES, BELIEFS, EVENTS)
                               else f"cycle-{args.memories}-{args.beliefs}-{args.events}.db")
    if args.rebuild or not built(db_path, label):
        db_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        build(db_path, args.seed, args.memories, args.beliefs, args.events)
        print(f"built {db_path} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    # Cycles write: run them on a scratch copy so the cached store stays as built.
    scratch = db_path.with_name(db_path.stem + "-scratch.db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(scratch) + suffix).unlink(missing_ok=True)
    shutil.copyfile(db_path, scratch)
    try:
        cycles, cycles_cpu = asyncio.run(time_cycles(scratch, cycles_n, 20, args.seed))
        words = retrieval.Words(random.Random(args.seed + 2))
        base, ranked, base_cpu, ranked_cpu = time_retrieval(scratch, [words.query() for _ in range(500 if args.full else 200)])
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(str(scratch) + suffix).unlink(missing_ok=True)
    print(f"{label}; {len(cycles)} cycles after 20 warm-up")
    print(f"{'':34}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'n':>7}")
    for label, values in (("cycle (message stimulus)", cycles), ("retrieval: bare FTS5 (baseline)", base), ("retrieval: rank (scoring)", ranked),
                          ("  CPU: cycle", cycles_cpu), ("  CPU: bare FTS5", base_cpu), ("  CPU: rank", ranked_cpu)):
        print(f"{label:34}{statistics.median(values):9.2f}{pct(values, 0.95):9.2f}{max(values):9.2f}{len(values):7}")
    base50 = statistics.median(base)
    ratio = statistics.median(ranked) / base50
    cycle_ratio = statistics.median(cycles) / base50
    cpu_base = statistics.median(base_cpu)
    cpu_ratios = f"CPU: cycle {statistics.median(cycles_cpu) / cpu_base:.2f}x, rank {statistics.median(ranked_cpu) / cpu_base:.2f}x"
    print(f"retrieval / baseline (p50): {ratio:.2f}x; cycle / baseline (p50): {cycle_ratio:.2f}x; {cpu_ratios}; load average {os.getloadavg()[0]:.2f}")
    print(f"goal: cycle <= {CYCLE_RATIO:g}x the bare FTS5 query -> {'met' if cycle_ratio <= CYCLE_RATIO else 'NOT met'};"
          f" retrieval <= {RETRIEVAL_RATIO:g}x -> {'met' if ratio <= RETRIEVAL_RATIO else 'NOT met'};"
          f" cycle <= 20 ms p50 (quiet machine) -> {statistics.median(cycles):.1f} ms")
    size = f"{args.memories:,} memories, {args.beliefs:,} beliefs, {args.events:,} events"
    figure("cycle", "cycle / bare FTS5 query (p50)", f"{cycle_ratio:.2f}x ({statistics.median(cycles):.1f} ms)", f"<= {CYCLE_RATIO:g}x",
           cycle_ratio <= CYCLE_RATIO, baseline=f"{base50:.2f} ms ({cpu_ratios})", size=size)
    figure("cycle", "rank / bare FTS5 query (p50)", f"{ratio:.2f}x", f"<= {RETRIEVAL_RATIO:g}x", ratio <= RETRIEVAL_RATIO,
           baseline=f"{base50:.2f} ms", size=size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
