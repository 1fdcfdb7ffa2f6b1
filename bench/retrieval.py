"""Benchmark of memory retrieval (noemad.cognition.memory.retrieve) on a large mind.

    .venv/bin/python bench/retrieval.py [--memories N] [--other M] [--queries K] [--full] [--seed S] [--db PATH] [--rebuild]

1. Builds, or reuses if it already holds the same data, a store whose mind
   `bench` has N memories (default 100,000) and whose mind `other` has M
   (default 10,000: a host holds several minds and they share one FTS index).
   The schema is noemad's own (`Store` applies the migrations); the rows are
   then inserted in bulk on a direct connection with the FTS triggers in
   place, each memory with the `memory_created` event that wrote it, and
   `memory_terms` counted as `write_memory` counts it (so retrieval prunes
   common terms as it does in a daemon's store). The text
   comes from a seeded generator of varied sentences (episodes, facts,
   procedures) whose words are drawn with a Zipf-like skew, so some words
   match a large share of the memories and most match few. Memories span a
   year; a tenth have been retrieved before. Without --db the file is cached
   as bench/.data/retrieval-N-M.db (git-ignored).
2. Times, for K generated queries (default 300, 1,000 with --full; 2-6 content words, fixed seed), after 50
   warm-up queries:
   - baseline: one bare FTS5 query with the same terms,
     `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 50`;
   - rank: `rank` (the read-only scoring: candidates, scores, the top 5
     loaded) on a read-only connection opened as the daemon opens readers;
   - retrieve (job): `retrieve` with limit 5 as the writer runs a job
     (BEGIN IMMEDIATE, SAVEPOINT, the job, RELEASE) and then rolled back, so
     every query sees the same store: the scoring plus the access updates and
     the `memory_retrieved` event, without the commit;
   - retrieve (committed, with --full): on a scratch copy of the store, through the real
     `Writer` (`run_sync`), each job committed with synchronous=FULL, as the
     daemon does it. The commit's fsync depends on the disk, not on retrieval.
3. Prints p50/p95/max of each, and the ratios to the baseline at p50 and p95.

Goal (issue 27): retrieval within 1.3x of its baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from noemad.clock import iso, parse_iso  # noqa: E402
from noemad.cognition.memory.importance import importance  # noqa: E402
from noemad.cognition.memory.model import CANDIDATES, RECENCY_HALF_LIFE, W_IMP, W_REC, W_REL  # noqa: E402
from noemad.cognition.memory.retrieval import rank, retrieve  # noqa: E402
from noemad.cognition.memory.terms import fts_query, informative_terms, query_terms  # noqa: E402
from noemad.store import Store, open_db  # noqa: E402
from noemad.words import index_stems  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _report import data_dir, figure  # noqa: E402  (bench/_report.py)

DATA_DIR = data_dir()  # read once: the cycle bench builds on this module
MIND, OTHER = "bench", "other"
NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z: every memory is older
SPAN = 365 * 86_400.0  # memories are spread over the year before NOW
BATCH = 20_000  # memories per transaction while loading
WARMUP = 50
GOAL_RATIO = 1.3  # retrieval against the bare FTS5 query, p50
LIMIT = 5
T = TypeVar("T")


# --- the text generator -------------------------------------------------------------

PEOPLE = """Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent
Victor Walter Yusuf Zoe Amara Bjorn Chen Dmitri Esme Fatima Gustavo Hana Ines Jamal Kenji Leila Mateo Nadia Oren
Priya Quentin Rosa Sanjay Tomas Uma Vera Wen Ximena Yara Zeke Aiko Bruno Camila Dario Elena Farid Greta Hugo Ilse""".split()
PLACES = """Berlin Lisbon Oslo Nairobi Lagos Kyoto Denver Austin Montreal Porto Vienna Dublin Seoul Lima Quito Cairo
Madrid Prague Zurich Helsinki Reykjavik Tallinn Valencia Bristol Leeds Glasgow Boston Seattle Portland Chicago""".split()
NOUNS = """deploy build server release database migration pipeline dashboard invoice budget contract meeting
roadmap outage incident ticket backlog sprint review proposal report schedule kitchen garden bicycle train flight
hotel passport concert recipe pasta coffee tea breakfast dinner birthday wedding vacation holiday weekend
conference workshop lecture thesis paper draft chapter novel poem painting camera laptop phone keyboard monitor
printer router cluster node container image registry certificate password token account subscription license
backup snapshot disk memory cache queue worker scheduler cron alert pager metric log trace latency throughput
customer client vendor partner investor manager intern team office desk chair window door roof plumbing heating
rent mortgage loan salary bonus tax refund receipt grocery market bakery pharmacy doctor dentist appointment
vaccine allergy medicine gym marathon swim yoga hike trail mountain lake river beach island ferry bus taxi parking
storm snow rain heatwave forecast election policy law court museum gallery library bookshop podcast album film
series episode game match tournament score goal coach player referee stadium ticket festival parade market""".split()
ADJECTIVES = """broken slow fast late early new old urgent critical minor major noisy quiet expensive cheap
confusing clear missing duplicate flaky stable risky safe delayed cancelled rescheduled tiny huge warm cold
crowded empty lovely awful surprising boring exciting strange familiar final preliminary""".split()
VERBS_PAST = """broke fixed shipped reverted delayed approved rejected reviewed merged deployed cancelled booked
moved renamed deleted restored upgraded migrated tested measured paid ordered returned lost found cooked painted
wrote finished started missed attended hosted visited called emailed forgot remembered""".split()
VERBS_BASE = """fix ship revert approve review merge deploy book move rename restore upgrade migrate test measure
pay order return cook paint write finish start call email rotate renew archive schedule cancel""".split()
TIMES = """yesterday today tomorrow this-morning last-night on-Monday on-Tuesday on-Wednesday on-Thursday
on-Friday over-the-weekend last-week next-week in-March in-April in-June before-lunch after-dinner""".split()
ADVERBS = "quickly slowly carefully twice again finally suddenly reluctantly happily quietly".split()

EPISODES = (
    "{P} said the {n} in {L} was {a} {t}.",
    "{P} asked me to {v} the {n} before {t}.",
    "We talked about the {n} and the {n2} with {P} at the office in {L}.",
    "I noticed the {n} {vp} right after {P} {vp2} the {n2}.",
    "{P} shared a link about a {a} {n} for the {n2} project.",
    "The {n} {vp} at {h}:{m:02d} and {P} {vp2} it {adv}.",
    "{P} and {P2} {vp} the {n} {t}; the {n2} is still {a}.",
    "Ticket #{k} about the {a} {n} was {vp} by {P}.",
    "{P} complained that the {n} is {a} and the {n2} is {a2}.",
    "Reminder from {P}: {v} the {n} {t}.",
    "I {vp} the {n} for {P} and {vp2} the {n2} {adv}.",
    "{P} is flying to {L} {t} for the {n}.",
)
FACTS = (
    "{P} prefers the {n} over the {n2}.",
    "{P} works on the {n} team in {L}.",
    "The {n} usually gets {a} when the {n2} is {a2}.",
    "{P} is allergic to {n} and avoids the {n2}.",
    "The {n} in {L} closes early on weekends.",
    "{P} and {P2} share the {n} budget.",
)
PROCEDURES = (
    "To {v} the {n}, first {v2} the {n2}, then check the {n3}.",
    "When the {n} is {a}, {v} the {n2} and tell {P}.",
    "Before every {n}, {v} the {n2} and {v2} the {n3}.",
)
QUERIES = (
    "what did {P} say about the {n}",
    "{n} {n2}",
    "how do I {v} the {n}",
    "is the {n} in {L} {a}",
    "{P} {n} {t}",
    "when did the {n} {vp}",
    "who {vp} the {a} {n}",
    "{a} {n} {n2} {L}",
    "anything about {P} and the {n2}?",
    "{v} {n}",
)


class Words:
    """Draws words with a Zipf-like skew: the k-th word of a list is chosen with weight 1/(k+1)^0.9."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tables: dict[int, tuple[list[str], list[float]]] = {}

    def pick(self, words: list[str]) -> str:
        table = self.tables.get(id(words))
        if table is None:
            order = words[:]
            random.Random(len(words)).shuffle(order)  # which words are common: fixed, not alphabetical
            total, cum = 0.0, []
            for k in range(len(order)):
                total += 1.0 / (k + 1) ** 0.9
                cum.append(total)
            table = self.tables[id(words)] = (order, cum)
        return self.rng.choices(table[0], cum_weights=table[1])[0]

    def fill(self, template: str) -> str:
        rng = self.rng
        return template.format(
            P=self.pick(PEOPLE),
            P2=self.pick(PEOPLE),
            L=self.pick(PLACES),
            n=self.pick(NOUNS),
            n2=self.pick(NOUNS),
            n3=self.pick(NOUNS),
            a=self.pick(ADJECTIVES),
            a2=self.pick(ADJECTIVES),
            vp=self.pick(VERBS_PAST),
            vp2=self.pick(VERBS_PAST),
            v=self.pick(VERBS_BASE),
            v2=self.pick(VERBS_BASE),
            t=self.pick(TIMES).replace("-", " "),
            adv=self.pick(ADVERBS),
            h=rng.randint(6, 22),
            m=rng.randint(0, 59),
            k=rng.randint(1000, 99999),
        )

    def memory(self) -> tuple[str, str]:
        """(kind, text) of one memory: mostly episodes, some facts, a few procedures."""
        roll = self.rng.random()
        if roll < 0.80:
            kind, templates = "episodic", EPISODES
        elif roll < 0.95:
            kind, templates = "semantic", FACTS
        else:
            kind, templates = "procedural", PROCEDURES
        text = self.fill(self.rng.choice(templates))
        if kind == "episodic" and self.rng.random() < 0.3:  # some episodes run longer
            text += " " + self.fill(self.rng.choice(EPISODES))
        return kind, text

    def query(self) -> str:
        return self.fill(self.rng.choice(QUERIES))


# --- building the store -------------------------------------------------------------


def _tag(n: int, other: int, seed: int) -> str:
    return f"retrieval bench: {n} + {other} memories, seed {seed}, with memory_terms"


def stored_tag(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT settings FROM minds WHERE name = ?", [MIND]).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return json.loads(row[0]).get("bench") if row else None


def build(path: Path, n: int, other: int, seed: int, say: Callable[[str], None]) -> None:
    """Create the store with noemad's schema, then fill it in bulk with the triggers in place."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    Store(path).close()  # the migrations, exactly as the daemon applies them
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")  # a bulk load: rebuilt from scratch if interrupted
    conn.execute("PRAGMA cache_size=-256000")
    rng = random.Random(seed)
    words = Words(rng)
    created = iso(NOW - SPAN - 86_400)
    conn.execute("BEGIN")
    for name, count in ((MIND, n), (OTHER, other)):
        settings = {"bench": _tag(n, other, seed)} if name == MIND else {}
        conn.execute("INSERT INTO minds (name, created_at, settings) VALUES (?, ?, ?)", [name, created, json.dumps(settings)])
    conn.execute("COMMIT")

    # The minds' memories interleave in time as they would on a shared host.
    plan = [MIND] * n + [OTHER] * other
    rng.shuffle(plan)
    started = time.perf_counter()
    memory_id = event_id = 0
    terms: Counter[tuple[str, str]] = Counter()  # what write_memory keeps in memory_terms, counted as it counts
    for start in range(0, len(plan), BATCH):
        memories, events = [], []
        for mind in plan[start : start + BATCH]:
            memory_id += 1
            event_id += 1
            kind, text = words.memory()
            at = NOW - SPAN + SPAN * (memory_id / len(plan))
            last_access, count = None, 0
            if rng.random() < 0.1:
                last_access = iso(at + rng.random() * (NOW - at))
                count = rng.randint(1, 12)
            value = importance(text, kind)
            terms[mind, ""] += 1
            terms.update((mind, stem) for stem in index_stems(text))
            memories.append((memory_id, mind, kind, text, iso(at), value, last_access, count))
            events.append(
                (
                    event_id,
                    mind,
                    "memory_created",
                    "process:perception",
                    text[:80],
                    json.dumps({"importance": value, "kind": kind}, separators=(",", ":"), sort_keys=True),
                    "memory",
                    memory_id,
                    iso(at),
                )
            )
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO events (id, mind, kind, actor, text, data, subject_type, subject_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            events,
        )
        conn.executemany(
            "INSERT INTO memories (id, mind, kind, text, created_at, importance, last_access, access_count)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            memories,
        )
        conn.execute("COMMIT")
        say(f"  {memory_id:>9,} memories  {time.perf_counter() - started:6.1f} s")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO memory_terms (mind, term, docs) VALUES (?, ?, ?)", [(m, t, k) for (m, t), k in terms.items()])
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def ensure_database(path: Path, n: int, other: int, seed: int, rebuild: bool) -> str:
    """Reuse `path` if it holds exactly this bench's data; else build it. Returns what was done."""
    have = stored_tag(path)
    if have == _tag(n, other, seed) and not rebuild:
        return "reused"
    if path.exists() and not rebuild and not path.resolve().is_relative_to(DATA_DIR.resolve()):
        raise SystemExit(f"{path} exists and is not this bench's database ({have or 'not a bench database'}); pass --rebuild to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    build(path, n, other, seed, lambda line: print(line, file=sys.stderr, flush=True))
    return f"built in {time.perf_counter() - started:.1f} s"


# --- timing -------------------------------------------------------------------------


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


BASELINE_SQL = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 50"


# The reference for the check that `rank` returns the memories its module
# docstring describes: the max(CANDIDATES, limit) best bm25 matches among the
# mind's active memories (ties by id), scored by the documented formula, the
# best `limit` by score (ties by id). Written out plainly, untimed.
REFERENCE_SQL = """
SELECT m.id, bm25(memories_fts), m.importance, coalesce(m.last_access, m.created_at)
  FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
 WHERE memories_fts MATCH ? AND m.mind = ? AND m.status = 'active'
 ORDER BY 2, 1 LIMIT ?
"""


def reference(db: Any, mind: str, query: str, limit: int) -> list[int]:
    """The ids `rank` should return for `query`, by the documented ranking."""
    match = fts_query(informative_terms(db, mind, query_terms(query)))
    if match is None:
        return []
    rows = db.execute(REFERENCE_SQL, [match, mind, max(CANDIDATES, limit)]).fetchall()
    if not rows:
        return []
    best = max(-bm25 for _, bm25, _, _ in rows)
    scored = []
    for memory_id, bm25, imp, touched in rows:
        relevance = (-bm25) / best if best > 0 else 1.0
        recency = 0.5 ** (max(0.0, NOW - parse_iso(touched)) / RECENCY_HALF_LIFE)
        scored.append((-(W_REL * relevance + W_REC * recency + W_IMP * imp), memory_id))
    return [memory_id for _, memory_id in sorted(scored)[:limit]]


def bench_reads(path: Path, queries: Sequence[str], warmup: Sequence[str]) -> tuple[Timings, Timings, list[int], int]:
    """The baseline and `rank` over the same queries, each on a read-only connection; and how many
    queries `rank` answered with the reference's memories."""
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    raw.execute("PRAGMA cache_size=-32000")  # as every noemad connection
    db = open_db(path, readonly=True)
    base, ranked = Timings("baseline (bare FTS5 top 50)"), Timings("rank (read-only scoring)")
    matches: list[int] = []
    same = 0
    try:
        for q in warmup:
            match = fts_query(query_terms(q))
            raw.execute(BASELINE_SQL, [match]).fetchall()
            rank(db, mind=MIND, query=q, now=NOW, limit=LIMIT)
        for q in queries:
            match = fts_query(query_terms(q))
            base.time(lambda: raw.execute(BASELINE_SQL, [match]).fetchall())
            _, found = ranked.time(lambda: rank(db, mind=MIND, query=q, now=NOW, limit=LIMIT))
            same += [r.memory.id for r in found] == reference(db, MIND, q, LIMIT)
            matches.append(raw.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", [match]).fetchone()[0])
    finally:
        raw.close()
        db.close()
    return base, ranked, matches, same


def bench_job(path: Path, queries: Sequence[str], warmup: Sequence[str]) -> tuple[Timings, int]:
    """`retrieve` as a writer job (BEGIN IMMEDIATE, SAVEPOINT, job, RELEASE), rolled back after each."""
    db = open_db(path)  # a writer's connection
    conn = db.conn
    job = Timings("retrieve (writer job, rolled back)")
    events = 0

    def one(q: str) -> int:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("SAVEPOINT job")
        results, event = retrieve(db, mind=MIND, query=q, now=NOW, limit=LIMIT, cause=None, cycle_id="bench")
        conn.execute("RELEASE SAVEPOINT job")
        return event is not None

    try:
        for q in warmup:
            one(q)
            conn.execute("ROLLBACK")
        for q in queries:
            events += job.time(lambda: one(q))
            conn.execute("ROLLBACK")  # every query sees the store as built
    finally:
        db.close()
    return job, events


def bench_committed(path: Path, queries: Sequence[str], warmup: Sequence[str]) -> Timings:
    """`retrieve` through the real Writer on a scratch copy, each job committed (synchronous=FULL)."""
    scratch = path.with_name(path.stem + "-scratch.db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(scratch) + suffix).unlink(missing_ok=True)
    shutil.copyfile(path, scratch)
    store = Store(scratch)
    timings = Timings("retrieve (Writer.run_sync, committed)")
    try:
        for q in warmup:
            store.writer.run_sync(lambda db: retrieve(db, mind=MIND, query=q, now=NOW, limit=LIMIT, cause=None, cycle_id="bench"))
        for q in queries:
            timings.time(
                lambda: store.writer.run_sync(lambda db: retrieve(db, mind=MIND, query=q, now=NOW, limit=LIMIT, cause=None, cycle_id="bench"))
            )
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(scratch) + suffix).unlink(missing_ok=True)
    return timings


# --- the report ---------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000, help="memories of the bench mind (default 100,000)")
    parser.add_argument("--other", type=int, default=10_000, help="memories of a second mind on the same store (default 10,000)")
    parser.add_argument("--queries", type=int, help="queries to time (default 300; 1,000 with --full)")
    parser.add_argument("--full", action="store_true", help="1,000 queries, and the committed runs")
    parser.add_argument("--seed", type=int, default=1, help="seed of the data and the queries (default 1)")
    parser.add_argument("--db", type=Path, help="database file (default bench/.data/retrieval-N-M.db)")
    parser.add_argument("--rebuild", action="store_true", help="build the database even if one with the same data exists")
    parser.add_argument("--no-commit", action="store_true", help="skip the committed runs on a scratch copy")
    args = parser.parse_args(argv)
    args.queries = args.queries or (1_000 if args.full else 300)
    if args.memories < 1 or args.other < 0 or args.queries < 1:
        parser.error("--memories and --queries must be at least 1, --other at least 0")

    path: Path = args.db or DATA_DIR / f"retrieval-{args.memories}-{args.other}.db"
    built = ensure_database(path, args.memories, args.other, args.seed, args.rebuild)
    qrng = Words(random.Random(args.seed + 1_000))
    queries = [qrng.query() for _ in range(args.queries)]
    warmup = [qrng.query() for _ in range(WARMUP)]

    print(f"retrieval bench: {args.memories:,} memories of {MIND!r} + {args.other:,} of {OTHER!r} ({built}), {path}")
    print(f"{len(queries):,} queries, limit {LIMIT}, seed {args.seed}; {len(warmup)} warm-up queries first")
    base, ranked, matches, same = bench_reads(path, queries, warmup)
    job, events = bench_job(path, queries, warmup)
    rows = [base, ranked, job]
    if args.full and not args.no_commit:
        rows.append(bench_committed(path, queries, warmup))

    width = max(len(r.label) for r in rows) + 2
    print(f"{'':{width}}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'n':>7}{'x p50':>8}{'x p95':>8}{'CPU p50':>9}{'x CPU':>8}")
    for r in rows:
        print(
            f"{r.label:{width}}{r.p50:9.3f}{r.pct(0.95):9.3f}{max(r.ms):9.2f}{len(r.ms):7d}"
            f"{r.p50 / base.p50:7.2f}x{r.pct(0.95) / base.pct(0.95):7.2f}x"
            f"{statistics.median(r.cpu):9.3f}{statistics.median(r.cpu) / statistics.median(base.cpu):7.2f}x"
        )
    ordered = sorted(matches)
    print(
        f"rows matched per query (both minds): p50 {statistics.median(ordered):,.0f}, p95 {ordered[int(0.95 * (len(ordered) - 1))]:,},"
        f" max {ordered[-1]:,}; {events} of {len(queries)} retrievals returned memories"
    )
    print(f"same memories as the documented ranking (a plain joined query, scored in the bench): {same} of {len(queries)} queries")
    figure("retrieval", "same memories as the documented ranking", f"{same} of {len(queries)}", "all", same == len(queries))
    ratio = job.p50 / base.p50
    print(f"goal: retrieval within {GOAL_RATIO:g}x of its baseline -> writer job p50 {ratio:.2f}x: {'met' if ratio <= GOAL_RATIO else 'NOT met'}")
    cpu_ratio = statistics.median(job.cpu) / statistics.median(base.cpu)
    print(f"  in CPU time: writer job p50 {cpu_ratio:.2f}x, rank p50 {statistics.median(ranked.cpu) / statistics.median(base.cpu):.2f}x;"
          f" load average {os.getloadavg()[0]:.2f}")
    figure("retrieval", "retrieve (writer job) / bare FTS5 (p50)", f"{ratio:.2f}x (CPU {cpu_ratio:.2f}x)", f"<= {GOAL_RATIO:g}x", ratio <= GOAL_RATIO,
           baseline=f"{base.p50:.2f} ms", size=f"{args.memories:,} memories, {len(queries)} queries")
    return 0 if same == len(queries) else 1


if __name__ == "__main__":
    raise SystemExit(main())
