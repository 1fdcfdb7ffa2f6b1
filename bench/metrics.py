"""`GET /api/v1/metrics` at 10 minds x 10,000 events: the cost of one scrape.

What is measured
  A store of 10 minds, 10,000 events each (a mix of stimuli and the kinds a
  turn writes), 2,000 model calls over three roles, 200 jobs and some
  governance events, built through noemad's own schema and filled in bulk.
  The supervisor then starts on it, in process (it counts the events once,
  at start), and the endpoint is asked N times through the real FastAPI app
  (httpx's ASGI transport): p50/p95/max in ms. The collection alone (no HTTP)
  is timed as well.

Goal: a scrape p50 under 10 ms (a scraper asks every 15 s or so).

Run: .venv/bin/python bench/metrics.py [-n 200]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from noemad.api import create_app
from noemad.api.metrics import exposition
from noemad.clock import ManualClock, iso, parse_iso
from noemad.config.files import parse_config
from noemad.paths import resolve_paths
from noemad.runtime.metrics import collect
from noemad.runtime.supervisor import Supervisor
from noemad.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import figure  # noqa: E402  (bench/_report.py)

MINDS = 10
EVENTS_PER_MIND = 10_000
START = parse_iso("2026-01-01T00:00:00Z")
KINDS = ("message", "observation", "cycle_started", "perceived", "belief_updated", "cycle_completed", "reply", "governance")
GOAL_MS = 10.0


def build(path: Path, per_mind: int) -> None:
    Store(path).close()  # the migrations, as noemad applies them
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    names = [f"mind{i:02d}" for i in range(MINDS)]
    conn.executemany("INSERT INTO minds (name, created_at) VALUES (?, ?)", [(n, iso(START)) for n in names])
    rows = []
    for mind in names:
        for i in range(per_mind):
            kind = KINDS[i % len(KINDS)]
            rows.append((mind, kind, "user:alice" if kind == "message" else "process:cycle", "x", iso(START + i)))
    conn.executemany("INSERT INTO events (mind, kind, actor, text, at) VALUES (?, ?, ?, ?, ?)", rows)
    conn.executemany(
        "INSERT INTO model_calls (mind, role, model, input_tokens, cache_read_tokens, output_tokens, outcome, cost_usd, at)"
        " VALUES (?, ?, 'claude-bench', 900, 400, 120, 'ok', 0.001, ?)",
        [(names[i % MINDS], ("respond", "judge", "critic")[i % 3], iso(START + i)) for i in range(2_000)],
    )
    conn.executemany(
        "INSERT INTO jobs (mind, kind, trigger, actor, status, progress, stage, started_at, finished_at, inputs, outputs, model_calls)"
        " VALUES (?, ?, 'schedule', 'process:scheduler', 'succeeded', 1, 'done', ?, ?, '{}', '{}', '[]')",
        [(names[i % MINDS], ("reflection", "consolidation")[i % 2], iso(START + i), iso(START + i + 1)) for i in range(200)],
    )
    conn.execute("COMMIT")
    conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(home: Path, n: int, per_mind: int) -> int:
    paths = resolve_paths(home=home)
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    build(paths.db_file, per_mind)
    clock = ManualClock(START + per_mind)
    store = Store(paths.db_file)
    sup = Supervisor(paths, parse_config("", "embedded defaults"), clock, store)
    t0 = time.perf_counter()
    await sup.start()
    print(f"supervisor start (counts {MINDS * per_mind:,} events once): {(time.perf_counter() - t0) * 1000:.0f} ms")
    try:
        collect_ms = []
        for _ in range(n):
            t = time.perf_counter()
            exposition(collect(sup))
            collect_ms.append((time.perf_counter() - t) * 1000)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(sup)), base_url="http://noemad")
        http_ms = []
        size = 0
        for _ in range(n):
            t = time.perf_counter()
            resp = await client.get("/api/v1/metrics")
            http_ms.append((time.perf_counter() - t) * 1000)
            resp.raise_for_status()
            size = len(resp.content)
        await client.aclose()
    finally:
        await sup.stop()
    print(f"{MINDS} minds x {per_mind:,} events, {n} scrapes, {size:,} bytes each")
    for label, ms in (("collect + format", collect_ms), ("GET /api/v1/metrics", http_ms)):
        print(f"  {label:<22} p50 {statistics.median(ms):6.2f} ms   p95 {pct(ms, 0.95):6.2f} ms   max {max(ms):6.2f} ms")
    met = statistics.median(http_ms) <= GOAL_MS
    print(f"goal: p50 <= {GOAL_MS:g} ms: {'met' if met else 'NOT met'}")
    figure("metrics", "GET /api/v1/metrics, p50", f"{statistics.median(http_ms):.2f} ms", f"<= {GOAL_MS:g} ms", met,
           size=f"{MINDS} minds x {per_mind:,} events")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="scrapes to time")
    parser.add_argument("--events-per-mind", type=int, default=EVENTS_PER_MIND, help=f"events of each of the {MINDS} minds (default {EVENTS_PER_MIND:,})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nmbench") as home:
        return asyncio.run(run(Path(home), args.n, args.events_per_mind))


if __name__ == "__main__":
    sys.exit(main())
