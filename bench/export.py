"""Moving a mind: events per second each way, and peak memory against the mind's size.

    .venv/bin/python bench/export.py            # 20k and 200k events
    .venv/bin/python bench/export.py --full     # 100k and 1M events (the issue's size)

1. Builds a store for each size with rows written straight in (no engine: a
   million events through the API would take an hour): one mind `ada` whose
   turns look like the real ones (a message, the cycle it wakes, the memory and
   the belief change it writes, with causes, parents, refs, memories, beliefs
   and evidence whose ids are cited in events' data), and a mind `other` with
   a tenth as many events interleaved, so the mind's ids have gaps and an
   import must move them.
2. Exports `ada` (noemad.store.transfer.export_mind, as `noemactl export` has
   noemad do it) and imports the file into a second store that already holds
   `other`'s copy (as a writer job, as `noemactl import` has noemad do it),
   each in a child process of its own so its peak RSS is its own.
3. Prints per size: events, the file's size, and for each way the wall and
   CPU seconds, events per CPU second and per wall second, and the child's
   peak RSS. Goal (issue 25): >= 50,000 events/s each way, and peak memory
   flat in the mind's size (the larger size's peak close to the smaller's).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from noemad.store import Store
from noemad.store.transfer import export_mind, import_mind

from _report import figure  # noqa: E402  (bench/_report.py, beside this file)

AT = "2026-01-01T00:00:00.000Z"
GROUP = 4  # events per turn: message, cycle_started, memory_created, belief_updated


def build(path: Path, events: int) -> None:
    """A store with mind `ada` of about `events` events, and `other` with a tenth as many between them."""
    Store(path).close()  # migrated
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    for mind in ("ada", "other"):
        conn.execute("INSERT INTO minds (name, created_at) VALUES (?, ?)", [mind, AT])
    next_id = {"events": 1, "memories": 1, "beliefs": 1, "evidence": 1}

    def take(space: str) -> int:
        value = next_id[space]
        next_id[space] += 1
        return value

    rows: dict[str, list[tuple[object, ...]]] = {t: [] for t in ("events", "event_parents", "event_refs", "memories", "beliefs", "evidence")}
    beliefs: dict[str, int] = {}
    for turn in range(events // GROUP):
        mind = "other" if turn % 11 == 10 else "ada"
        cycle = f"{mind}/{turn}"
        message = take("events")
        rows["events"].append((message, mind, "message", None, None, "user:alice", "irc:#ops", f"we deploy service {turn % 17} at {9 + turn % 8}:00", '{"author":"alice"}', None, None, AT))
        started = take("events")
        rows["events"].append((started, mind, "cycle_started", cycle, message, "process:runtime", None, "woke", '{"batch":1,"more":0,"stimuli":1}', None, None, AT))
        memory = take("memories")
        rows["memories"].append((memory, mind, "episodic", f"alice said we deploy service {turn % 17}", AT, message))
        remembered = take("events")
        rows["events"].append((remembered, mind, "memory_created", cycle, started, "process:memory", None, None, '{"importance":0.5,"kind":"episodic"}', "memory", memory, AT))
        rows["event_refs"].append((remembered, "event", message, mind))
        if turn % 50 == 0 or mind not in beliefs:
            belief = beliefs[mind] = take("beliefs")
            rows["beliefs"].append((belief, mind, f"service {turn % 17} deploys at noon", AT, f"service {turn}", f"key {belief}", "observation", 0.5, "active", AT))
        belief = beliefs[mind]
        evidence = take("evidence")
        changed = take("events")
        rows["evidence"].append((evidence, mind, belief, "support", 1.0, 0.9, "alice", "observation", message, AT))
        data = json.dumps({"evidence_id": evidence, "from": 0.5, "to": 0.6}, separators=(",", ":"), sort_keys=True)
        rows["events"].append((changed, mind, "belief_updated", cycle, started, "process:evidence", None, None, data, "belief", belief, AT))
        rows["event_parents"].append((changed, remembered, mind))
        rows["event_refs"].append((changed, "belief", belief, mind))
        if len(rows["events"]) >= 40_000:
            _flush(conn, rows)
    _flush(conn, rows)
    conn.execute("COMMIT")
    conn.close()


def _flush(conn: sqlite3.Connection, rows: dict[str, list[tuple[object, ...]]]) -> None:
    insert = {
        "events": "INSERT INTO events (id, mind, kind, cycle_id, causation_id, actor, channel, text, data, subject_type, subject_id, at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        "memories": "INSERT INTO memories (id, mind, kind, text, created_at, event_id) VALUES (?,?,?,?,?,?)",
        "beliefs": "INSERT INTO beliefs (id, mind, proposition, created_at, subject, proposition_key, kind, confidence, status, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        "evidence": "INSERT INTO evidence (id, mind, belief_id, stance, weight, credibility, source, kind, event_id, at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        "event_parents": "INSERT INTO event_parents (event_id, parent_id, mind) VALUES (?,?,?)",
        "event_refs": "INSERT INTO event_refs (event_id, ref_type, ref_id, mind) VALUES (?,?,?,?)",
    }
    # Parents first: a memory cites its event, evidence its belief and event.
    for table in ("events", "memories", "beliefs", "evidence", "event_parents", "event_refs"):
        conn.executemany(insert[table], rows[table])
        rows[table].clear()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def step(way: str, store: Path, file: Path) -> None:
    """One way, in this (child) process: print events moved, wall and CPU seconds, and peak RSS as JSON."""
    if way == "export":
        wall, cpu = time.perf_counter(), time.process_time()
        events = export_mind(store, "ada", file, AT).events
    else:
        target = Store(store)
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            # The writer's thread runs the job; process_time counts every thread of the process.
            events = target.writer.run_sync(lambda db: import_mind(db, file, "ada")).events
        finally:
            target.close()
    print(json.dumps([events, time.perf_counter() - wall, time.process_time() - cpu, _peak_mb()]))


def _child(way: str, store: Path, file: Path) -> tuple[int, float, float, float]:
    """Run one way in a child process of its own, so its peak RSS is its own."""
    done = subprocess.run([sys.executable, __file__, "--step", way, str(store), str(file)], capture_output=True, text=True, check=True)
    events, wall, cpu, peak = json.loads(done.stdout)
    return int(events), float(wall), float(cpu), float(peak)


def run(events: int, place: Path) -> None:
    store, file, target = place / f"a-{events}.db", place / f"ada-{events}.noema", place / f"b-{events}.db"
    began = time.perf_counter()
    build(store, events)
    Store(target).close()
    conn = sqlite3.connect(target)  # the target holds minds of its own: every id of ada moves
    conn.execute("ATTACH ? AS a", [str(store)])
    conn.execute("INSERT INTO minds SELECT * FROM a.minds WHERE name = 'other'")
    conn.execute("INSERT INTO events SELECT * FROM a.events WHERE mind = 'other'")
    conn.commit()
    conn.close()
    print(f"built {events:,} events in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    moved, wall, cpu, peak = _child("export", store, file)
    size = os.path.getsize(file) / 2**20
    print(f"{events:>9,} events in the store, {moved:,} of ada's; file {size:.1f} MiB")
    print(f"  export: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {moved / cpu:9,.0f} events/CPU s, {moved / wall:9,.0f} events/s wall, peak RSS {peak:.0f} MiB")
    figure("export", "export, events per CPU second", f"{moved / cpu:,.0f}/s", ">= 50,000/s", moved / cpu >= 50_000, size=f"{moved:,} events")
    figure("export", "export, peak RSS", f"{peak:.0f} MiB", "flat in the mind's size", None, size=f"{moved:,} events")
    moved, wall, cpu, peak = _child("import", target, file)
    print(f"  import: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {moved / cpu:9,.0f} events/CPU s, {moved / wall:9,.0f} events/s wall, peak RSS {peak:.0f} MiB")
    figure("export", "import, events per CPU second", f"{moved / cpu:,.0f}/s", ">= 50,000/s", moved / cpu >= 50_000, size=f"{moved:,} events")
    figure("export", "import, peak RSS", f"{peak:.0f} MiB", "flat in the mind's size", None, size=f"{moved:,} events")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="100k and 1M events (default: 20k and 200k)")
    parser.add_argument("--sizes", type=lambda v: tuple(int(n) for n in v.split(",")), help="events in each store, comma-separated")
    parser.add_argument("--step", nargs=3, metavar=("WAY", "STORE", "FILE"), help=argparse.SUPPRESS)  # a child's one way
    args = parser.parse_args()
    if args.step:
        step(args.step[0], Path(args.step[1]), Path(args.step[2]))
        return
    sizes = args.sizes or ((100_000, 1_000_000) if args.full else (20_000, 200_000))
    with tempfile.TemporaryDirectory(prefix="noema-export-bench-") as place:
        for events in sizes:
            run(events, Path(place))


if __name__ == "__main__":
    main()
