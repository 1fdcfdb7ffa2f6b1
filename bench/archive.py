"""Archiving: how fast old events leave the store, how long the writer is held, what it frees.

    .venv/bin/python bench/archive.py [--messages 6000] [--days 120] [--older-than 60d]

1. Builds a store in process (the real Store, Supervisor and API through
   httpx's ASGI transport, on a manual clock): one mind, `--messages`
   messages spread evenly over `--days` days, each waking the mind (the
   embedded defaults: no model), every turn run before the next message.
   Scheduled reflection and consolidation run as the days pass, as they would.
2. Archives the events older than `--older-than` with a probe beside it: a
   second mind is sent a message every few milliseconds while the run goes,
   and the time each one takes to be stored (its 201) is kept. The run holds
   the one writer a chunk at a time, so this is what the archive costs
   everyone else.
3. Prints: events archived, wall time and events per second; the probe's
   ingest latency (p50, p99, max) during the run and, for comparison, the
   same probe with no archive running; the store's compacted size (a
   `VACUUM INTO` copy) before and after, and the archive file's size; the
   free pages the store now has for new events to reuse.

No goal is named by the issue; the README's "Store" paragraph quotes these.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from inprocess import InProcess, start_app  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import figure  # noqa: E402

DAY = 86400.0


def _build(app: InProcess, messages: int, days: float) -> None:
    step = days * DAY / messages
    for i in range(messages):
        body = {"kind": "message", "author": f"user{i % 7}", "channel": "ops", "text": f"we deploy service {i % 17} after the review at {9 + i % 8}:00"}
        answer = app.api("POST", "/minds/ada/events", json=body)
        answer.raise_for_status()
        app.settle("ada")
        app.clock.advance(step)
    for job in app.api("GET", "/jobs").json()["jobs"]:
        app.wait_job(job["id"])


async def _probe(app: InProcess, stop: asyncio.Event, latencies: list[float]) -> None:
    n = 0
    while not stop.is_set():
        began = time.perf_counter()
        answer = await app.client.post("/api/v1/minds/probe/events", json={"kind": "observation", "source": "probe", "text": f"tick {n}"})
        latencies.append(time.perf_counter() - began)
        assert answer.status_code == 201, answer.text
        n += 1
        await asyncio.sleep(0.002)  # the bench's pace on the real clock; tests never sleep


def _time_chunks(app: InProcess) -> list[float]:
    """Time each archive chunk's writer job (how long it holds the writer), from now on."""
    holds: list[float] = []
    writer = app.sup.store.writer
    submit, run = writer.submit, writer.run

    def timed(job):  # type: ignore[no-untyped-def]
        if "_run" not in getattr(job, "__qualname__", ""):
            return job

        def chunk(db):  # type: ignore[no-untyped-def]
            began = time.perf_counter()
            try:
                return job(db)
            finally:
                holds.append(time.perf_counter() - began)

        return chunk

    # A job is queued through submit (from a thread) or run (awaited on the loop): time it either way.
    writer.submit = lambda job: submit(timed(job))  # type: ignore[method-assign]
    writer.run = lambda job, **how: run(timed(job), **how)  # type: ignore[method-assign]
    return holds


async def _archive_with_probe(app: InProcess, older_than: str) -> tuple[dict, float, list[float]]:
    stop = asyncio.Event()
    latencies: list[float] = []
    probe = asyncio.create_task(_probe(app, stop, latencies))
    began = time.perf_counter()
    answer = await app.client.post("/api/v1/minds/ada/archive", json={"older_than": older_than}, timeout=3600)
    took = time.perf_counter() - began
    stop.set()
    await probe
    answer.raise_for_status()
    return answer.json(), took, latencies


async def _probe_alone(app: InProcess, seconds: float) -> list[float]:
    stop = asyncio.Event()
    latencies: list[float] = []
    probe = asyncio.create_task(_probe(app, stop, latencies))
    await asyncio.sleep(seconds)
    stop.set()
    await probe
    return latencies


def _compact_size(db_file: Path, scratch: Path) -> tuple[int, dict[str, int]]:
    """The store's size as a `VACUUM INTO` copy, and bytes per table (its indexes counted with it)."""
    scratch.unlink(missing_ok=True)
    conn = sqlite3.connect(db_file)
    conn.execute("VACUUM INTO ?", [str(scratch)])
    conn.close()
    size = scratch.stat().st_size
    copy = sqlite3.connect(scratch)
    owners = dict(copy.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").fetchall())
    tables: dict[str, int] = {}
    for name, used in copy.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        table = owners.get(name, name)
        tables[table] = tables.get(table, 0) + used
    copy.close()
    scratch.unlink()
    return size, tables


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=6000)
    parser.add_argument("--days", type=float, default=120)
    parser.add_argument("--older-than", default="60d")
    parser.add_argument("--probe-seconds", type=float, default=2.0, help="how long the probe runs alone, for its quiet latency (default 2)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="noema-bench-archive-"))
    config = "[schedules.consolidation]\nwindow = \"30d\"\n"
    app = start_app(home, config=config)
    try:
        for name in ("ada", "probe"):
            app.api("POST", "/minds", json={"name": name}).raise_for_status()
        began = time.perf_counter()
        _build(app, args.messages, args.days)
        print(f"built: {args.messages:,} messages over {args.days:g} days in {time.perf_counter() - began:.1f} s")
        db = sqlite3.connect(app.paths.db_file)
        (events_before,) = db.execute("SELECT count(*) FROM events WHERE mind = 'ada'").fetchone()
        size_before, tables_before = _compact_size(app.paths.db_file, home / "compact.sqlite")
        quiet = app.run(_probe_alone(app, args.probe_seconds))
        holds = _time_chunks(app)
        outcome, took, during = app.run(_archive_with_probe(app, args.older_than))
        (events_after,) = db.execute("SELECT count(*) FROM events WHERE mind = 'ada'").fetchone()
        (free_pages,) = db.execute("PRAGMA freelist_count").fetchone()
        (page_size,) = db.execute("PRAGMA page_size").fetchone()
        size_after, tables_after = _compact_size(app.paths.db_file, home / "compact.sqlite")
        archive_size = Path(outcome["archive"]["path"]).stat().st_size if outcome.get("archive") else 0
        moved = outcome["events"]
        print(f"events of the mind: {events_before:,} before, {events_after:,} after")
        print(f"archived {moved:,} events older than {args.older_than} in {took:.2f} s: {moved / took:,.0f} events/s;"
              f" {outcome['pinned']:,} pinned, {outcome['in_kept_cycles']:,} kept with their cycles, {outcome['cuts']:,} links cut")
        print(f"writer held per chunk, ms: median {statistics.median(holds) * 1000:.1f}, max {max(holds) * 1000:.1f} over {len(holds)} chunks")
        print(f"probe ingest latency, ms (p50 / p99 / max): during the run {_ms(during, 0.5)} / {_ms(during, 0.99)} / {max(during) * 1000:.1f}"
              f" over {len(during):,} requests; with no run {_ms(quiet, 0.5)} / {_ms(quiet, 0.99)} / {max(quiet) * 1000:.1f} over {len(quiet):,}")
        print(f"store, compacted: {size_before / 1e6:.2f} MB before, {size_after / 1e6:.2f} MB after"
              f" ({(1 - size_after / size_before) * 100:.0f}% smaller); archive file {archive_size / 1e6:.2f} MB;"
              f" {free_pages * page_size / 1e6:.2f} MB of free pages in the store for new events to reuse")
        print("largest tables (with their indexes), MB before -> after:")
        for table, used in sorted(tables_before.items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {table:<20} {used / 1e6:6.2f} -> {tables_after.get(table, 0) / 1e6:6.2f}")
        for table in ("event_cuts", "archived_tally", "archives"):
            print(f"  {table:<20} {tables_before.get(table, 0) / 1e6:6.2f} -> {tables_after.get(table, 0) / 1e6:6.2f}")
        print(f"median probe latency ratio, during / without: {statistics.median(during) / statistics.median(quiet):.2f}x")
        figure("archive", "events archived per second", f"{moved / took:,.0f}/s", "(no goal)", None,
               baseline=f"probe p50 {_ms(quiet, 0.5)} ms quiet, {_ms(during, 0.5)} ms during", size=f"{args.messages:,} messages")
    finally:
        app.stop()


if __name__ == "__main__":
    main()
