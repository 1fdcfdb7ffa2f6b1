"""What the write guard costs: the same writer jobs with NOEMA_WRITE_GUARD off and on.

    .venv/bin/python bench/guard.py [--jobs N] [--cycles K]

Two workloads, each on a fresh store in a temporary directory, guard off then
on, alternating three times (the best of each is reported):

* appends: N writer jobs of one `events.append` each (a message event), each
  awaited in turn: the smallest job, where fixed costs show most;
* cycles: K whole cognitive cycles (`run_cycle`) over one stored message each,
  on a mind that grows as it goes: the writer's real mix (a dozen statements
  per job over several tables, FTS triggers, reads inside the job).

The guard prepares every statement anew (cached_statements=0) and runs a
Python authorizer on each prepare and a trace callback on each statement.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import figure  # noqa: E402  (bench/_report.py)

from noemad.clock import ManualClock  # noqa: E402
from noemad.cognition.cycle import run_cycle  # noqa: E402
from noemad.events import EventDraft, append  # noqa: E402
from noemad.minds import create_mind  # noqa: E402
from noemad.store import Store  # noqa: E402

NOW = 1_767_225_600.0
WORDS = "deploy build green frozen alice bob outage radar window friday release rollback".split()


def fresh(guard: bool, where: Path) -> Store:
    os.environ["NOEMA_WRITE_GUARD"] = "1" if guard else "0"
    store = Store(where / f"g{int(guard)}-{time.monotonic_ns()}.db")
    store.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    return store


def appends(store: Store, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        draft = EventDraft(mind="ada", kind="message", actor="user:alice", channel="cli", text=f"message {i}", data={"author": "alice"})
        store.writer.run_sync(lambda db, d=draft: append(db, d, NOW + i))
    return (time.perf_counter() - start) / n * 1e6


def cycles(store: Store, k: int) -> float:
    clock = ManualClock(NOW)
    spent = 0.0
    for i in range(k):
        text = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(6))
        draft = EventDraft(mind="ada", kind="message", actor="user:alice", channel="cli", text=text, data={"author": "alice"})
        stored = store.writer.run_sync(lambda db, d=draft: append(db, d, clock.now()))
        clock.advance(60)
        start = time.perf_counter()
        asyncio.run(run_cycle(store, clock, "ada", [stored.id], f"ada/{i + 1}", "bench"))
        spent += time.perf_counter() - start
    return spent / k * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2000, help="append jobs per run (default 2000)")
    parser.add_argument("--cycles", type=int, default=200, help="cycles per run (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="off/on rounds; the best of each is reported (default 3)")
    args = parser.parse_args()
    results: dict[tuple[str, bool], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for guard in (False, True):
                store = fresh(guard, Path(tmp))
                try:
                    results.setdefault(("append", guard), []).append(appends(store, args.jobs))
                    results.setdefault(("cycle", guard), []).append(cycles(store, args.cycles))
                finally:
                    store.close()
    for kind, unit in (("append", "µs per job"), ("cycle", "ms per cycle")):
        off, on = min(results[(kind, False)]), min(results[(kind, True)])
        print(f"{kind:6}  off {off:8.1f}  on {on:8.1f}  {unit}  (+{(on / off - 1) * 100:.0f}%; medians {statistics.median(results[(kind, False)]):.1f} / {statistics.median(results[(kind, True)]):.1f})")
        figure("guard", f"{kind} with the write guard on", f"{on:.1f} {unit}", "(a cost to know; no goal)", None, baseline=f"{off:.1f} off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
