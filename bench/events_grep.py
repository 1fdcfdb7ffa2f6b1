"""What `noemactl events --grep` costs on a large store: the event's text only, or its data's values too.

    .venv/bin/python bench/events_grep.py [--events 100000] [--runs 5]

1. A real noemad (system clock, scripted respond model) takes 40 messages
   for one mind, each answered; its store is copied out with the backup API
   (`VACUUM INTO`), so the events are the daemon's own: their kinds, text
   and data as a real run writes them.
2. Those events are copied over and over (new ids) until the mind has
   --events of them.
3. `noemad.events.query_events` answers the default page (`tail` 100, as
   `noemactl events MIND --grep TEXT` asks) for a search that matches no
   event (every row is read: the worst case), one that names only a key,
   and two that match often; each --runs times,
   the median printed. It searches the text and the data's values, the raw
   JSON first filtering in C which rows are parsed. Beside it, the same page
   with other filters: the text only (as before the data was searched), the
   raw JSON text (it also matches key names), every row's JSON parsed, and
   SQLite's json_tree.

No goal: the figures decided that --grep searches the data's values too,
at a fifth to a third more than the text alone on a search that matches nothing
(100,000 events: 440 ms against 375 ms; every row's JSON parsed took 2,100 ms).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from _daemon import exit_on_sigterm, running_daemon  # noqa: E402
from _report import figure  # noqa: E402

from noemad.events import EventQuery, query_events  # noqa: E402
from noemad.store import open_db  # noqa: E402

SCRIPT = '[respond]\ndefault = "Noted; I will keep the rollout of the billing service in mind."\n'
MIND = "ops"
COPY_COLUMNS = "mind, kind, cycle_id, causation_id, actor, channel, text, data, subject_type, subject_id, at"


def seed(place: Path, messages: int) -> Path:
    script = place / "script.toml"
    script.write_text(SCRIPT)
    config = f'[models]\nprovider = "scripted"\n[models.scripted]\nfile = "{script}"\n[models.respond]\nmodel = "claude-haiku-4-5"\n'
    target = place / "seed.db"
    with running_daemon(config=config) as d:
        d.create_minds([MIND])
        with d.client() as c:
            for i in range(messages):
                text = f"we deploy service {i % 17} with kubernetes today, after the review at {9 + i % 8}:00"
                r = c.post(f"/api/v1/minds/{MIND}/events", json={"kind": "message", "author": f"user{i % 5}", "text": text})
                r.raise_for_status()
                _settle(c, r.json()["id"])
            with c.stream("GET", "/api/v1/backup") as resp, open(target, "wb") as out:
                for chunk in resp.iter_bytes():
                    out.write(chunk)
    return target


def _settle(c: Any, message: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        page = c.get(f"/api/v1/minds/{MIND}/events", params={"since": message, "kind": "cycle_completed"}).json()
        if page["events"]:
            row = next(m for m in c.get("/api/v1/status").json()["minds"] if m["name"] == MIND)
            if not row["turn_running"]:
                return
        time.sleep(0.01)  # a bench on the real clock may wait; tests never do
    raise RuntimeError("the turn did not finish within 30 s")


def grow(path: Path, events: int) -> int:
    raw = sqlite3.connect(path)
    (have,) = raw.execute("SELECT count(*) FROM events WHERE mind = ?", [MIND]).fetchone()
    original = have
    while have < events:
        take = min(original, events - have)
        raw.execute(
            f"INSERT INTO events ({COPY_COLUMNS}) SELECT {COPY_COLUMNS} FROM events WHERE mind = ? ORDER BY id LIMIT ?", [MIND, take]
        )
        have += take
    raw.commit()
    raw.close()
    return have


def _values(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


def _in_values(data: str | None, needle: str) -> bool:
    return data is not None and any(needle in v.casefold() for v in _values(json.loads(data)))


def _in_raw(data: str | None, needle: str) -> bool:
    return data is not None and needle in data.casefold()


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    took, out = [], None
    for _ in range(runs):
        began = time.perf_counter()
        out = fn()
        took.append(time.perf_counter() - began)
    return statistics.median(took) * 1000, out


DATA_FILTERS = {
    # the text alone: what --grep searched before it searched the data too
    "text only": "0",
    # the raw JSON text: fast, but matches key names and misses escaped non-ASCII
    "raw JSON": "noema_in_raw(data, ?)",
    # each row parsed in Python and its values searched
    "values, every row parsed": "noema_in_values(data, ?)",
    # SQLite's json_tree walks the values in C (lower() folds ASCII only)
    "json_tree": "EXISTS (SELECT 1 FROM json_tree(events.data) j WHERE j.type IN ('text', 'integer', 'real') AND instr(lower(j.atom), ?))",
}


def candidate(db: Any, needle: str, how: str) -> list[Any]:
    """The default page (`tail` 100) with text OR data searched, the data as `how` says."""
    db.conn.create_function("noema_contains", 2, lambda h, n: h is not None and n in h.casefold(), deterministic=True)
    db.conn.create_function("noema_in_values", 2, _in_values, deterministic=True)
    db.conn.create_function("noema_in_raw", 2, _in_raw, deterministic=True)
    where = DATA_FILTERS[how]
    sql = f"SELECT id FROM events WHERE mind = ? AND id > 0 AND (noema_contains(text, ?) OR {where}) ORDER BY id DESC LIMIT 100"
    folded = needle.casefold()
    return db.execute(sql, [MIND, folded] + [folded] * where.count("?")).fetchall()


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = seed(Path(tmp), 40)
        total = grow(path, args.events)
        db = open_db(path)
        print(f"{total:,} events of one mind ({path.stat().st_size / 2**20:.0f} MiB)")
        searches = (
            ("matches none", "zebra crossing"),
            ("a key name only", "in_reply_to"),
            ("matches often", "user3"),
            ("matches many", "kubernetes"),
        )
        for label, needle in searches:
            shipped_ms, found = timed(lambda: query_events(db, MIND, EventQuery(grep=needle, tail=100)), args.runs)
            print(f"  {label} ({needle!r}): query_events, text and values (as shipped) {shipped_ms:.1f} ms, {len(found[0])} found")
            if label == "matches none":
                figure("events_grep", "--grep that matches nothing (every row read)", f"{shipped_ms:.1f} ms", "(no goal)", None,
                       size=f"{total:,} events")
            for how in DATA_FILTERS:
                ms, rows = timed(lambda: candidate(db, needle, how), args.runs)
                print(f"    text or {how}: {ms:.1f} ms, {len(rows)} found")

if __name__ == "__main__":
    main()
