"""Benchmark of the causal walk (noemad.timeline.walk) on a large store.

    .venv/bin/python bench/timeline.py [--events N] [--walks K] [--full] [--db PATH] [--socket PATH]

1. Builds, or reuses if it already holds N events, a database of N events
   across 10 minds, created through noemad's own schema (`Store` applies the
   migrations) and then filled in bulk on a direct connection. The links are
   shaped like a mind's: each event is caused by an earlier event of its mind,
   mostly a recent one; it has 0-3 parents and 0-3 evidence refs, mostly to
   events, some to beliefs (written and revised by belief events) and a few to
   model calls; events come in cognitive cycles of a few events each.
   Without --db the file is cached as bench/.data/timeline-N.db (git-ignored).
2. Walks 6 hops each way / 200 events from K random events (fixed seed) with
   `walk` in process, on a read-only connection opened as the daemon opens
   its readers, and prints p50/p95/max.
3. Two baselines, for the same events. The ids-only one: one recursive-CTE
   query that returns the same reachable set (backward and forward through
   causation, parents and refs to events, memories and beliefs; depth <= 6;
   LIMIT bound on each side), ids only. The same-rows one: that CTE joined
   to the tables, so that one query returns what the walk returns: every
   reachable event's whole row with its parents, its refs (a memory or
   belief ref with the events that wrote it before, the links the walk
   draws) and the model calls it cites. Each has its p50/p95/max and the
   walk's ratio to it; the goal is against the same-rows one. For walks that
   neither side cut short, the walk's events are compared with the
   same-rows baseline's.
4. With --socket, times GET /api/v1/events/{id}/chain over the daemon's Unix
   socket. Build the database first, then start the daemon on it:

       .venv/bin/python bench/timeline.py --db DIR/noema.db --walks 10
       noemad --home DIR --socket DIR/noemad.sock &
       .venv/bin/python bench/timeline.py --db DIR/noema.db --socket DIR/noemad.sock

By default 300 walks on 1,000,000 events; --full times 1,000.

Goal (issue 27): the walk within 1.5x the same-rows baseline, and p50 <= 5 ms
at 1,000,000 events on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from noemad.events import EVENT_COLUMNS, get_events  # noqa: E402
from noemad.store import Store, open_db  # noqa: E402
from noemad.timeline import MAX_EVENTS, MAX_HOPS, WalkLimits, walk  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _report import data_dir, figure  # noqa: E402  (bench/_report.py)

GOAL_RATIO = 1.5  # the walk against the same-rows baseline, p50
GOAL_MS = 5.0  # the walk's p50 at 1,000,000 events on a quiet machine
MINDS = tuple(f"bench-{i}" for i in range(10))
BATCH = 50_000  # rows of events per transaction while loading
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
LINK_TABLES = ("events", "event_parents", "event_refs")
T = TypeVar("T")


# --- building the database ----------------------------------------------------


@dataclass
class MindState:
    """What the generator remembers of one mind while it writes its events."""

    name: str
    events: list[int] = field(default_factory=list)
    beliefs: list[int] = field(default_factory=list)  # beliefs that have a writer event already
    model_calls: list[int] = field(default_factory=list)
    cycle: int = 0
    cycle_left: int = 0


@dataclass
class Rows:
    """One batch of rows, ready for executemany."""

    events: list[tuple[object, ...]] = field(default_factory=list)
    parents: list[tuple[int, int, str]] = field(default_factory=list)
    refs: list[tuple[int, str, int, str]] = field(default_factory=list)
    beliefs: list[tuple[int, str, str, str]] = field(default_factory=list)
    model_calls: list[tuple[int, str, str, str, int, int, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.events)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _recent(rng: random.Random, items: list[int], mean_back: float) -> int:
    """An item near the end of `items` (exponentially distributed distance); 2% anywhere."""
    if rng.random() < 0.02:
        return items[rng.randrange(len(items))]
    back = min(int(rng.expovariate(1.0 / mean_back)), len(items) - 1)
    return items[-1 - back]


def _count(rng: random.Random, weights: Sequence[float]) -> int:
    return rng.choices(range(len(weights)), weights)[0]


def generate(n_events: int, seed: int) -> Iterator[Rows]:
    """Yield the rows of `n_events` events (ids 1..n) in batches of about BATCH events."""
    rng = random.Random(seed)
    minds = [MindState(name) for name in MINDS]
    rows = Rows()
    next_belief = next_call = 1
    for event_id in range(1, n_events + 1):
        at = _iso(START + event_id * 0.5)
        if event_id <= len(minds):  # each mind starts with mind_created
            mind = minds[event_id - 1]
            rows.events.append((event_id, mind.name, "mind_created", None, None, "operator", None, None, None, None, at))
            mind.events.append(event_id)
            if len(rows) >= BATCH:
                yield rows
                rows = Rows()
            continue
        mind = minds[rng.randrange(len(minds))]
        if mind.cycle_left == 0:
            mind.cycle += 1
            mind.cycle_left = rng.randint(3, 9)
        mind.cycle_left -= 1
        cycle_id = f"{mind.name}-c{mind.cycle}"

        cause = _recent(rng, mind.events, 2.0)
        parents: set[int] = set()
        for _ in range(_count(rng, (0.55, 0.25, 0.13, 0.07))):
            parents.add(_recent(rng, mind.events, 12.0))
        parents.discard(cause)

        refs: set[tuple[str, int]] = set()
        if rng.random() < 0.15:  # a thought: it cites the model call that produced it
            rows.model_calls.append((next_call, mind.name, "planner", "claude-bench", 900, 120, at))
            mind.model_calls.append(next_call)
            refs.add(("model_call", next_call))
            next_call += 1
        for _ in range(_count(rng, (0.45, 0.30, 0.17, 0.08))):
            if mind.beliefs and rng.random() < 0.08:
                refs.add(("belief", _recent(rng, mind.beliefs, 8.0)))
            else:
                refs.add(("event", _recent(rng, mind.events, 25.0)))

        kind, subject_type, subject_id = "thought", None, None
        roll = rng.random()
        if roll < 0.01 or (roll < 0.015 and mind.beliefs):
            subject_type = "belief"
            if roll < 0.01:  # a new belief
                kind, subject_id = "belief_formed", next_belief
                rows.beliefs.append((next_belief, mind.name, f"proposition {next_belief}", at))
                next_belief += 1
            else:  # a revision of a recent one
                kind, subject_id = "belief_revised", _recent(rng, mind.beliefs, 5.0)
        elif roll < 0.2:
            kind = "perceived"
        elif roll < 0.3:
            kind = "acted"

        rows.events.append(
            (event_id, mind.name, kind, cycle_id, cause, "mind", None, f"event {event_id}", subject_type, subject_id, at)
        )
        rows.parents.extend((event_id, p, mind.name) for p in sorted(parents))
        rows.refs.extend((event_id, t, i, mind.name) for t, i in sorted(refs))
        mind.events.append(event_id)
        if kind == "belief_formed":
            mind.beliefs.append(subject_id)  # type: ignore[arg-type]
        if len(rows) >= BATCH:
            yield rows
            rows = Rows()
    if len(rows):
        yield rows


def _tag(n_events: int, seed: int) -> str:
    """The settings every bench mind carries: how the database was generated."""
    return json.dumps({"bench": {"events": n_events, "seed": seed}}, sort_keys=True)


def stored_tag(path: Path) -> str | None:
    """The generation tag of the bench database at `path`, or None if it is not a (complete) one.

    The tag is written last, so a build cut short is never taken for a whole one;
    events a daemon adds afterwards do not change it.
    """
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            marks = ",".join("?" * len(MINDS))
            tags = {r[0] for r in conn.execute(f"SELECT settings FROM minds WHERE name IN ({marks})", MINDS)}
            (count,) = conn.execute(f"SELECT count(*) FROM minds WHERE name IN ({marks})", MINDS).fetchone()
            return tags.pop() if count == len(MINDS) and len(tags) == 1 else None
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def build(path: Path, n_events: int, seed: int, say: Callable[[str], None]) -> None:
    """Create `path` with noemad's schema and fill it with `n_events` generated events."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    Store(path).close()  # the migrations, exactly as noemad applies them

    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-262144")
    # Secondary indexes are dropped for the load and rebuilt from their own SQL.
    indexes = conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        f" AND tbl_name IN ({','.join('?' * len(LINK_TABLES))})",
        LINK_TABLES,
    ).fetchall()
    for name, _ in indexes:
        conn.execute(f"DROP INDEX {name}")

    started = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO minds (name, created_at, settings, mode) VALUES (?, ?, '{}', 'idle')",
        [(name, _iso(START)) for name in MINDS],
    )
    conn.execute("COMMIT")
    written = 0
    for rows in generate(n_events, seed):
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO model_calls (id, mind, role, model, input_tokens, output_tokens, outcome, at)"
            " VALUES (?, ?, ?, ?, ?, ?, 'ok', ?)",
            rows.model_calls,
        )
        conn.executemany("INSERT INTO beliefs (id, mind, proposition, created_at) VALUES (?, ?, ?, ?)", rows.beliefs)
        conn.executemany(
            "INSERT INTO events (id, mind, kind, cycle_id, causation_id, actor, channel, text, subject_type, subject_id, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows.events,
        )
        conn.executemany("INSERT INTO event_parents (event_id, parent_id, mind) VALUES (?, ?, ?)", rows.parents)
        conn.executemany("INSERT INTO event_refs (event_id, ref_type, ref_id, mind) VALUES (?, ?, ?, ?)", rows.refs)
        conn.execute("COMMIT")
        written += len(rows)
        say(f"  {written:>10,} events  {time.perf_counter() - started:6.1f} s")
    say("  rebuilding indexes")
    for _, sql in indexes:
        conn.execute(sql)
    conn.execute("UPDATE minds SET settings = ? WHERE name IN (" + ",".join("?" * len(MINDS)) + ")", [_tag(n_events, seed), *MINDS])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def ensure_database(path: Path, n_events: int, seed: int, rebuild: bool) -> str:
    """Reuse `path` if it holds exactly the bench data of this size; else build it. Returns what was done."""
    have = stored_tag(path)
    if have == _tag(n_events, seed) and not rebuild:
        return "reused"
    if path.exists() and not rebuild and not path.resolve().is_relative_to(data_dir().resolve()):
        raise SystemExit(
            f"{path} exists and is not a bench database of {n_events:,} events with seed {seed}"
            f" ({'not a bench database' if have is None else 'it holds ' + have}); pass --rebuild to replace it"
        )
    started = time.perf_counter()
    build(path, n_events, seed, lambda line: print(line, file=sys.stderr, flush=True))
    return f"built in {time.perf_counter() - started:.1f} s"


# --- the baseline -------------------------------------------------------------

BASELINE_SQL = """
WITH RECURSIVE
back(id, depth) AS (
    SELECT :root, 0
    UNION
    SELECT e.causation_id, b.depth + 1 FROM back b JOIN events e ON e.id = b.id
     WHERE b.depth < :back AND e.causation_id IS NOT NULL
    UNION
    SELECT p.parent_id, b.depth + 1 FROM back b JOIN event_parents p ON p.event_id = b.id
     WHERE b.depth < :back
    UNION
    SELECT r.ref_id, b.depth + 1 FROM back b JOIN event_refs r ON r.event_id = b.id AND r.ref_type = 'event'
     WHERE b.depth < :back
    UNION
    SELECT w.id, b.depth + 1 FROM back b
      JOIN event_refs r ON r.event_id = b.id AND r.ref_type IN ('memory', 'belief')
      JOIN events w ON w.subject_type = r.ref_type AND w.subject_id = r.ref_id AND w.id < b.id
     WHERE b.depth < :back
    LIMIT :limit
),
fwd(id, depth) AS (
    SELECT :root, 0
    UNION
    SELECT e.id, f.depth + 1 FROM fwd f JOIN events e ON e.causation_id = f.id
     WHERE f.depth < :forward
    UNION
    SELECT p.event_id, f.depth + 1 FROM fwd f JOIN event_parents p ON p.parent_id = f.id
     WHERE f.depth < :forward
    UNION
    SELECT r.event_id, f.depth + 1 FROM fwd f JOIN event_refs r ON r.ref_type = 'event' AND r.ref_id = f.id
     WHERE f.depth < :forward
    UNION
    SELECT r.event_id, f.depth + 1 FROM fwd f
      JOIN events w ON w.id = f.id AND w.subject_type IS NOT NULL
      JOIN event_refs r ON r.ref_type = w.subject_type AND r.ref_id = w.subject_id AND r.event_id > w.id
     WHERE f.depth < :forward
    LIMIT :limit
)
"""

IDS_SQL = BASELINE_SQL + """
SELECT (SELECT count(*) FROM back), (SELECT count(*) FROM fwd),
       (SELECT json_group_array(id) FROM (SELECT id FROM back UNION SELECT id FROM fwd))
"""

# What the walk returns, by one query: each reachable event's row, its parents,
# its refs with the writers of a cited memory or belief, and the model calls it
# cites. The first row carries the two sides' counts (to tell a LIMIT cut).
ROWS_SQL = BASELINE_SQL + f""",
reach(id) AS (SELECT id FROM back UNION SELECT id FROM fwd)
SELECT (SELECT count(*) FROM back), (SELECT count(*) FROM fwd),
       {", ".join("e." + c.strip() for c in EVENT_COLUMNS.split(","))},
       (SELECT json_group_array(parent_id) FROM event_parents WHERE event_id = e.id),
       (SELECT json_group_array(json_array(r.ref_type, r.ref_id, w.id, m.id, m.role, m.model, m.input_tokens, m.output_tokens, m.at))
          FROM event_refs r
          LEFT JOIN events w ON r.ref_type IN ('memory', 'belief')
           AND w.subject_type = r.ref_type AND w.subject_id = r.ref_id AND w.id < r.event_id
          LEFT JOIN model_calls m ON r.ref_type = 'model_call' AND m.id = r.ref_id
         WHERE r.event_id = e.id)
  FROM reach JOIN events e ON e.id = reach.id
 ORDER BY e.id
"""


def _params(root: int, limits: WalkLimits) -> dict[str, int]:
    return {"root": root, "back": limits.back, "forward": limits.forward, "limit": limits.limit}


def baseline(conn: sqlite3.Connection, root: int, limits: WalkLimits) -> tuple[set[int], bool]:
    """The reachable set by one recursive query, and whether its LIMIT cut it."""
    n_back, n_fwd, ids = conn.execute(IDS_SQL, _params(root, limits)).fetchone()
    return set(json.loads(ids)), n_back >= limits.limit or n_fwd >= limits.limit


def baseline_rows(conn: sqlite3.Connection, root: int, limits: WalkLimits) -> tuple[set[int], bool]:
    """The reachable events with their links by one query (all rows fetched); their ids, and whether a LIMIT cut it."""
    rows = conn.execute(ROWS_SQL, _params(root, limits)).fetchall()
    cut = bool(rows) and (rows[0][0] >= limits.limit or rows[0][1] >= limits.limit)
    return {row[2] for row in rows}, cut


# --- timing -------------------------------------------------------------------


@dataclass
class Timings:
    """Durations of one kind of request, in milliseconds."""

    label: str
    ms: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # the process's CPU milliseconds of each (a busy machine moves them less)

    def time(self, fn: Callable[[], T]) -> T:
        started, used = time.perf_counter(), time.process_time()
        result = fn()
        self.ms.append((time.perf_counter() - started) * 1000.0)
        self.cpu.append((time.process_time() - used) * 1000.0)
        return result

    def pct(self, q: float) -> float:
        ordered = sorted(self.ms)
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    @property
    def p50(self) -> float:
        return statistics.median(self.ms)


@dataclass
class WalkStats:
    """What the walks found, to tell what was measured."""

    nodes: list[int] = field(default_factory=list)
    by_limit: int = 0
    by_hops: int = 0
    compared: int = 0
    agreed: int = 0
    disagreements: list[int] = field(default_factory=list)


def bench_in_process(
    path: Path, roots: Sequence[int], warmup: Sequence[int], limits: WalkLimits
) -> tuple[Timings, Timings, Timings, Timings, WalkStats]:
    """Time `walk` and both baselines over the same roots, on read-only connections.

    Also times `get_events` on each walk's events alone (what loading the
    walk's events costs by the ordinary reader).
    """
    db = open_db(path, readonly=True)  # as the daemon's readers are opened
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    raw.execute("PRAGMA cache_size=-32000")
    walks, stats = Timings("walk (in process)"), WalkStats()
    rows = Timings("baseline: same rows (CTE + tables)")
    ids_only = Timings("baseline: ids only (CTE)")
    loading = Timings("  of a walk: get_events alone")
    try:
        for root in warmup:
            walk(db, root, limits)
            baseline(raw, root, limits)
            baseline_rows(raw, root, limits)
        for root in roots:
            tl = walks.time(lambda: walk(db, root, limits))
            found, cut = rows.time(lambda: baseline_rows(raw, root, limits))
            ids, _ = ids_only.time(lambda: baseline(raw, root, limits))
            loading.time(lambda: get_events(db, [n.id for n in tl.nodes]))
            stats.nodes.append(len(tl.nodes))
            stats.by_limit += tl.truncation.by_limit
            stats.by_hops += tl.truncation.by_hops
            if not tl.truncation.by_limit and not cut:
                stats.compared += 1
                if found == ids == {n.id for n in tl.nodes}:
                    stats.agreed += 1
                elif len(stats.disagreements) < 5:
                    stats.disagreements.append(root)
    finally:
        db.close()
        raw.close()
    return walks, rows, ids_only, loading, stats


def bench_socket(socket: str, roots: Sequence[int], warmup: Sequence[int]) -> Timings | str:
    """Time GET /api/v1/events/{id}/chain over the daemon's socket, or say why it could not."""
    import httpx

    timings = Timings("GET /chain (socket)")
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=socket), base_url="http://noemad", timeout=30.0) as client:
            for root in warmup:
                client.get(f"/api/v1/events/{root}/chain")
            for root in roots:
                response = timings.time(lambda: client.get(f"/api/v1/events/{root}/chain"))
                if response.status_code != 200:
                    return f"GET /api/v1/events/{root}/chain answered {response.status_code}: {response.text[:200]}"
    except httpx.HTTPError as exc:
        return f"cannot reach noemad on {socket}: {exc}"
    return timings


# --- the report ---------------------------------------------------------------


def print_report(rows: Sequence[Timings], ratios: Sequence[tuple[str, float]], notes: Sequence[str]) -> None:
    width = max(len(r.label) for r in rows) + 2
    print(f"{'':{width}}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'n':>7}{'CPU p50':>9}")
    for r in rows:
        print(f"{r.label:{width}}{r.p50:9.2f}{r.pct(0.95):9.2f}{max(r.ms):9.2f}{len(r.ms):7d}{statistics.median(r.cpu):9.2f}")
    for label, ratio in ratios:
        print(f"{label:{width}}{ratio:8.2f}x")
    for note in notes:
        print(note)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the database (default 1,000,000)")
    parser.add_argument("--walks", type=int, help="walks to time (default 300; 1,000 with --full)")
    parser.add_argument("--full", action="store_true", help="1,000 walks")
    parser.add_argument("--db", type=Path, help="database file (default bench/.data/timeline-N.db); may be a daemon's DIR/noema.db")
    parser.add_argument("--socket", help="also time GET /api/v1/events/{id}/chain on this noemad socket")
    parser.add_argument("--seed", type=int, default=1, help="seed of the data and of the roots (default 1)")
    parser.add_argument("--rebuild", action="store_true", help="build the database even if one of the right size exists")
    args = parser.parse_args(argv)
    args.walks = args.walks or (1_000 if args.full else 300)
    if args.events < len(MINDS) or args.walks < 1:
        parser.error(f"--events must be at least {len(MINDS)} and --walks at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    path: Path = args.db or data_dir() / f"timeline-{args.events}.db"
    built = ensure_database(path, args.events, args.seed, args.rebuild)

    rng = random.Random(args.seed)
    roots = [rng.randint(1, args.events) for _ in range(args.walks)]
    warmup = [rng.randint(1, args.events) for _ in range(min(50, args.walks))]
    limits = WalkLimits(MAX_HOPS, MAX_HOPS, MAX_EVENTS)

    print(f"timeline bench: {args.events:,} events in {len(MINDS)} minds ({built}), {path}")
    print(f"{args.walks:,} walks of {limits.back}/{limits.forward} hops, {limits.limit} events; seed {args.seed}; {len(warmup)} warm-up walks first")
    cpu = time.process_time()
    walks, same_rows, ids_only, loading, stats = bench_in_process(path, roots, warmup, limits)
    cpu = time.process_time() - cpu
    rows: list[Timings] = [walks, same_rows, ids_only, loading]
    notes = [
        f"walks: {statistics.mean(stats.nodes):.0f} events on average, {stats.by_limit} cut by the event limit, {stats.by_hops} by hops",
        f"sets: the walk and both baselines reach the same events on {stats.agreed} of {stats.compared} walks neither cut short"
        + (f" (differ at {stats.disagreements})" if stats.disagreements else ""),
    ]
    if args.socket:
        result = bench_socket(args.socket, roots, warmup)
        if isinstance(result, Timings):
            rows.append(result)
        else:
            notes.append(f"socket: {result}")
    ratio = walks.p50 / same_rows.p50
    cpu_ratio = statistics.median(walks.cpu) / statistics.median(same_rows.cpu)
    ratios = [("ratio walk / same-rows baseline (p50)", ratio), ("  in CPU time", cpu_ratio),
              ("ratio walk / ids-only baseline (p50)", walks.p50 / ids_only.p50)]
    notes.append(f"CPU time of the timed loop: {cpu:.1f} s; load average {os.getloadavg()[0]:.2f}")
    print_report(rows, ratios, notes)
    same = stats.agreed == stats.compared
    size = f"{args.events:,} events, {args.walks} walks"
    print(f"goal: walk p50 within {GOAL_RATIO:g}x the same-rows baseline -> {ratio:.2f}x: {'met' if ratio <= GOAL_RATIO else 'NOT met'};"
          f" p50 <= {GOAL_MS:g} ms at 1,000,000 events (quiet machine) -> {walks.p50:.2f} ms; same events reached: {'yes' if same else 'NO'}")
    figure("timeline", "walk / same-rows baseline (p50)", f"{ratio:.2f}x (CPU {cpu_ratio:.2f}x)", f"<= {GOAL_RATIO:g}x", ratio <= GOAL_RATIO,
           baseline=f"{same_rows.p50:.2f} ms (ids only {ids_only.p50:.2f} ms)", size=size)
    figure("timeline", "walk p50", f"{walks.p50:.2f} ms", f"<= {GOAL_MS:g} ms at 1M events, quiet machine",
           walks.p50 <= GOAL_MS if args.events >= 1_000_000 else None, size=size)
    figure("timeline", "same events reached as the baselines", f"{stats.agreed} of {stats.compared}", "all", same, size=size)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
