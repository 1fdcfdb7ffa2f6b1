"""Store growth per stimulus: events and bytes a message costs, with and without a reply.

    .venv/bin/python bench/growth.py [--messages 300]

A real noemad on the system clock; one mind; messages sent one at a time
(each wakes the mind: the default `always`), waiting for the mind's turn to
finish before the next. Two runs: the embedded defaults (no model: the cycle
writes its events, no reply), and a scripted `respond` model (a reply each
turn). Bytes are measured on a backup (`GET /api/v1/backup`, `VACUUM INTO`:
the compacted size an operator would keep), so the WAL and free pages do not
blur the figure. Printed: events per stimulus by kind, bytes per stimulus,
and what a year at 1,000 messages a day comes to. No goal: the README's
"Store" paragraph quotes these figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _daemon import exit_on_sigterm, running_daemon  # noqa: E402
from _report import figure  # noqa: E402

SCRIPT = '[respond]\ndefault = "Noted; I will keep that in mind for the deploy."\n'


def _settle(c, mind: str, before: int) -> int:  # type: ignore[no-untyped-def]
    """Wait until the mind's turn has run (no turn running, the count moved past `before`); return the count."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row = next(m for m in c.get("/api/v1/status").json()["minds"] if m["name"] == mind)
        if not row["turn_running"] and row["events"] > before + 1:
            return int(row["events"])
        time.sleep(0.01)  # a bench on the real clock may wait; tests never do
    raise RuntimeError("the turn did not finish within 30 s")


def run(messages: int, config: str | None) -> tuple[int, Counter[str], int]:
    with running_daemon(config=config) as d:
        d.create_minds(["ops"])
        with d.client() as c:
            count = 1
            for i in range(messages):
                text = f"we deploy service {i % 17} with kubernetes today, after the review at {9 + i % 8}:00"
                r = c.post("/api/v1/minds/ops/events", json={"kind": "message", "author": f"user{i % 5}", "text": text})
                r.raise_for_status()
                count = _settle(c, "ops", count)
            kinds: Counter[str] = Counter()
            since = 0
            while True:
                page = c.get("/api/v1/minds/ops/events", params={"since": since, "limit": 1000}).json()
                kinds.update(e["kind"] for e in page["events"])
                if not page["events"]:
                    break
                since = page["events"][-1]["id"]
            with tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / "b.sqlite"
                with c.stream("GET", "/api/v1/backup") as resp, open(target, "wb") as out:
                    for chunk in resp.iter_bytes():
                        out.write(chunk)
                size = target.stat().st_size
    return size, kinds, messages


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.toml"
        script.write_text(SCRIPT)
        replying = f'[models]\nprovider = "scripted"\n[models.scripted]\nfile = "{script}"\n[models.respond]\nmodel = "claude-haiku-4-5"\n'
        for label, config in (("no model (embedded defaults)", None), ("scripted respond model", replying)):
            empty, _, _ = run(0, config)
            size, kinds, n = run(args.messages, config)
            per = (size - empty) / n
            total = sum(kinds.values())
            print(f"{label}: {n} messages")
            print(f"  events per stimulus: {total / n:.2f}  ({', '.join(f'{k} {v / n:.2f}' for k, v in kinds.most_common())})")
            print(f"  bytes per stimulus (compacted backup): {per:,.0f}; a year at 1,000 messages a day: {per * 365_000 / 2**30:.2f} GiB")
            figure("growth", f"bytes per message, {label}", f"{per:,.0f} B", "(what a year costs; no goal)", None,
                   size=f"{n} messages, {total / n:.1f} events each")


if __name__ == "__main__":
    main()
