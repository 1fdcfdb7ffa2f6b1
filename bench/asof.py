"""Benchmark of the mind as of a time: `beliefs --at` and `belief --history` on a large store.

    .venv/bin/python bench/asof.py [--full] [--runs K] [--db PATH]

1. Builds, or reuses if it is already there, a store through noemad's own
   schema (`Store` applies the migrations), then fills it in bulk on a direct
   connection: one mind with B beliefs and E events, half of them stimuli and
   half belief events (each with its `belief_history` row, as the writers
   write them), one event a second. Two beliefs get H items of evidence
   each, one belief event an item: #1 from seven sources as perception
   brings them, its confidence computed as noemad computes it (once a
   source has given enough, more items of it no longer move it); #2 the
   worst case, every item moving it (every step is a change). Default
   B=1,000, E=100,000, H=10,000; --full: B=10,000, E=1,000,000, H=10,000.
   Without --db the file is cached as bench/.data/asof-B-E.db (git-ignored).
2. Times, on a read-only connection opened as the daemon opens its readers,
   K runs (fixed seed) of what `GET /minds/M/beliefs?at=&limit=1000` does
   (resolve a time, a span or an event id to an event, then each belief's
   state then, the 1,000 most confident: the most one answer holds), of
   the same for every belief (what `mind show --at` counts), and of what
   `GET /beliefs/ID/history` does for each belief with H items, and prints
   p50/p95/max of each. The times are CPU time of this process (the machine
   may be shared), with wall time beside them.

Goals (--full): beliefs --at p50 <= 50 ms; belief --history p50 <= 20 ms
(every belief then: 100 ms, our own bound).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from noemad.clock import iso  # noqa: E402
from noemad.cognition.asof import beliefs_at, history, resolve  # noqa: E402
from noemad.cognition.beliefs.bulk import RANKS_THAT_COUNT  # noqa: E402
from noemad.cognition.confidence import Item, assessed  # noqa: E402
from noemad.minds import create_mind  # noqa: E402
from noemad.store import Store, open_db  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _report import data_dir, figure  # noqa: E402  (bench/_report.py)
MIND = "bench"
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
BATCH = 50_000
REAL, WORST = 1, 2  # the beliefs with many items: as perception brings them (real confidences), and each item moving it


def build(path: Path, beliefs: int, events: int, items: int) -> None:
    """Fill a new store at `path`: belief 1 gets `items` items as perception brings them, belief 2 `items` that each move it."""
    store = Store(path)
    store.writer.run_sync(lambda db: create_mind(db, MIND, {}, START, "operator"))
    store.close()
    db = open_db(path)
    conn = db.conn
    rng = random.Random(7)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO beliefs (id, mind, proposition, proposition_key, subject, kind, confidence, status, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, 'observation', 0, 'active', ?, ?)",
        [(b, MIND, f"proposition {b}", f"proposition {b}", f"subject {b % 50}", iso(START), iso(START)) for b in range(1, beliefs + 1)],
    )
    (first,) = conn.execute("SELECT max(id) + 1 FROM events").fetchone()
    state: dict[int, tuple[float, str, int, int]] = {}  # belief -> (confidence, status, support, contradict)
    spots = rng.sample(range(beliefs, events // 2), 2 * items)
    big = dict.fromkeys(spots[:items], REAL) | dict.fromkeys(spots[items:], WORST)
    counted: Counter[tuple[str, str]] = Counter()  # belief REAL's items by (stance, source): its confidence as noemad computes it
    ev: list[tuple[object, ...]] = []
    hist: list[tuple[object, ...]] = []
    evidence: list[tuple[object, ...]] = []
    for n in range(events // 2):
        cause, event_id = first + 2 * n, first + 2 * n + 1
        at = iso(START + 2 * n)
        belief = big.get(n) or (n + 1 if n < beliefs else rng.randrange(3, beliefs + 1))
        conf, status, support, contradict = state.get(belief, (0.0, "active", 0, 0))
        stance = "support" if rng.random() < 0.7 else "contradict"
        source = f"s{n % 7}"
        if belief == REAL:
            counted[stance, source] += 1
            kept = [Item(st, 1.0, 0.6, src) for (st, src), k in counted.items() for _ in range(min(k, RANKS_THAT_COUNT))]  # type: ignore[arg-type]
            after, split = assessed(kept)
            new_status = "contested" if split else "active"
        else:  # a random walk: every item moves it
            after = rng.random()
            new_status = "contested" if after < 0.3 else "active"
        support, contradict = support + (stance == "support"), contradict + (stance == "contradict")
        moved = belief not in state or (conf, status) != (after, new_status)
        state[belief] = (after, new_status, support, contradict)
        evidence_id = n + 1
        data = {
            "evidence_id": evidence_id, "stance": stance, "weight": 1.0, "credibility": 0.6, "source": source,
            "confidence": {"from": conf, "to": after}, "status": {"from": status, "to": new_status},
        }
        ev.append((cause, MIND, "observation", "source:bench", f"stimulus {n}", "{}", None, None, None, at))
        ev.append((event_id, MIND, "belief_created" if support + contradict == 1 else "belief_updated", "process:perception", f"proposition {belief}",
                   json.dumps(data, sort_keys=True), cause, "belief", belief, at))
        hist.append((event_id, MIND, belief, after, new_status, support, contradict, int(moved), at))
        if belief in (REAL, WORST):
            evidence.append((evidence_id, MIND, belief, stance, 1.0, 0.6, source, "observation", cause, at))
        if len(ev) >= BATCH:
            _flush(conn, ev, hist, evidence)
    _flush(conn, ev, hist, evidence)
    conn.executemany("UPDATE beliefs SET confidence = ?, status = ? WHERE id = ?", [(c, st, b) for b, (c, st, _, _) in state.items()])
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    db.close()


def _flush(conn: object, ev: list[tuple[object, ...]], hist: list[tuple[object, ...]], evidence: list[tuple[object, ...]]) -> None:
    run = conn.executemany  # type: ignore[attr-defined]
    run("INSERT INTO events (id, mind, kind, actor, text, data, causation_id, subject_type, subject_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ev)
    run("INSERT INTO belief_history (event_id, mind, belief_id, confidence, status, support, contradict, moved, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", hist)
    run("INSERT INTO evidence (id, mind, belief_id, stance, weight, credibility, source, kind, event_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", evidence)
    ev.clear()
    hist.clear()
    evidence.clear()


def timed(runs: int, one: Callable[[int], object]) -> tuple[list[float], list[float]]:
    """CPU and wall milliseconds of `one(k)` for k in range(runs)."""
    cpu: list[float] = []
    wall: list[float] = []
    for k in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        one(k)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return cpu, wall


def report(name: str, cpu: list[float], wall: list[float], goal: float, full: bool, size: str) -> None:
    """Print one line of the timings; hand its p50 to the summary table (judged at the --full size, where the goals are)."""
    cpu.sort()
    wall.sort()
    p50, p95 = statistics.median(cpu), cpu[max(0, int(len(cpu) * 0.95) - 1)]
    verdict = "ok" if p50 <= goal else "OVER"
    print(f"{name:<28} cpu p50 {p50:7.1f} ms  p95 {p95:7.1f}  max {cpu[-1]:7.1f}   wall p50 {statistics.median(wall):7.1f}   goal p50 <= {goal:g} ms: {verdict}")
    figure("asof", f"{name}, CPU p50", f"{p50:.1f} ms", f"<= {goal:g} ms (--full)", p50 <= goal if full else None, size=size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="10k beliefs and 1M events (default 1k and 100k)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--size", help="BELIEFS,EVENTS,ITEMS in place of the defaults (the bench test's smallest run)")
    args = parser.parse_args()
    beliefs, events, items = (10_000, 1_000_000, 10_000) if args.full else (1_000, 100_000, 10_000)
    if args.size:
        beliefs, events, items = (int(n) for n in args.size.split(","))
    path = args.db or data_dir() / f"asof-{beliefs}-{events}-{items}.db"
    if path.exists():
        print(f"reusing {path}")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        build(path, beliefs, events, items)
        print(f"built {path} ({beliefs:,} beliefs, {events:,} events, beliefs #{REAL} and #{WORST} with {items:,} items each) in {time.perf_counter() - t0:.1f} s")
    db = open_db(path, readonly=True)
    (last,) = db.execute("SELECT max(id) FROM events").fetchone()
    rng = random.Random(11)
    spans = [f"{rng.randrange(1, max(2, events // 86_400 + 1))}d" if k % 2 else str(rng.randrange(1, last)) for k in range(args.runs)]
    now = START + events  # the log's end: one event a second
    sizes: list[int] = []

    def at(k: int, limit: int | None = 1000) -> None:
        cut = resolve(db, MIND, spans[k], now)
        sizes.append(len(beliefs_at(db, MIND, cut.event_id, limit=limit)))

    size = f"{beliefs:,} beliefs, {events:,} events"
    report("beliefs --at --limit 1000", *timed(args.runs, at), goal=50, full=args.full, size=size)
    report("every belief then", *timed(args.runs, lambda k: at(k, None)), goal=100, full=args.full, size=size)
    real = len(history(db, REAL))
    report(f"belief --history #{REAL}", *timed(args.runs, lambda k: history(db, REAL)), goal=20, full=args.full, size=f"{items:,} items")
    worst = len(history(db, WORST))
    report(f"belief --history #{WORST} (worst)", *timed(args.runs, lambda k: history(db, WORST)), goal=20, full=args.full, size=f"{items:,} items")
    print(f"beliefs as of each cutoff: {min(sizes):,} to {max(sizes):,}")
    print(f"#{REAL}: {items:,} items as perception brings them, {real:,} of them changed its confidence or status (the rest left it as it was);"
          f" #{WORST}: {items:,} items each moving it, {worst:,} changes")


if __name__ == "__main__":
    main()
