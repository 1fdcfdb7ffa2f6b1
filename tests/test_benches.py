"""Every bench in bench/ runs, at its smallest size, and reports its figures for `make bench`'s table.

A bench nobody runs rots (bench/reflection.py stopped `make bench` for weeks
when strict settings refused its `bench` key). Each runs here as `make bench`
runs it, a subprocess of the venv's python, on stores built in a temporary
directory (NOEMA_BENCH_DATA), with sizes small enough for a few seconds; the
figures are not judged here, only that the bench finished and reported them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _report import DATA_ENV, REPORT_ENV, read  # noqa: E402  (bench/_report.py)
from summary import table  # noqa: E402  (bench/summary.py)

# bench -> the arguments of its smallest run. The benches that start a real noemad say so: the
# in-process tier (NOEMA_TESTS=fast) skips them.
SMALLEST: dict[str, tuple[str, ...]] = {
    "timeline": ("--events", "3000", "--walks", "20"),
    "retrieval": ("--memories", "1000", "--other", "200", "--queries", "20"),
    "cycle": ("--memories", "1000", "--beliefs", "100", "--events", "5000", "--cycles", "5"),
    "gate": ("--stimuli", "500", "--rounds", "1"),
    "consolidation": ("--sizes", "300"),
    "reflection": ("--days", "1", "--runs", "1"),
    "guard": ("--jobs", "50", "--cycles", "5", "--rounds", "1"),
    "governance": ("--rounds", "1"),
    "judge": ("--requests", "4", "--dense-budget", "1000", "--dense-requests", "3"),
    "dashboard": ("--events", "3000", "--walks", "10"),
    "metrics": ("-n", "5", "--events-per-mind", "300"),
    "asof": ("--size", "50,2000,100", "--runs", "3"),
    "export": ("--sizes", "2000"),
    "archive": ("--messages", "60", "--days", "120", "--probe-seconds", "0.2"),
}
DAEMON: dict[str, tuple[str, ...]] = {
    "ingest": ("--events", "100", "--minds", "2", "--clients", "2", "--gate", "debounce", "--no-baseline", "--max-seconds", "3", "--repeat", "1"),
    "cli_status": ("--runs", "2", "--warmup", "0", "--starts", "1"),
    "growth": ("--messages", "2"),
    "events_grep": ("--events", "500", "--runs", "1"),
    "replica": ("--seconds", "1", "--events", "2000"),
    "rooms": ("--samples", "3", "--per-sender", "1"),
}
RUN_TIMEOUT = 120  # seconds: a bound on a hang, far above a smallest run


def test_every_bench_is_listed() -> None:
    """A new bench must be added here (and so run by this test)."""
    benches = {p.stem for p in (ROOT / "bench").glob("*.py") if not p.stem.startswith("_")}
    assert benches - {"summary", "habit_window"} == set(SMALLEST) | set(DAEMON)


@pytest.mark.parametrize("bench", sorted(SMALLEST) + sorted(DAEMON))
def test_bench_runs_at_its_smallest_size(bench: str, tmp_path: Path) -> None:
    if bench in DAEMON and os.environ.get("NOEMA_TESTS") == "fast":
        pytest.skip("starts a real noemad; `make test` runs it")
    report = tmp_path / "figures.jsonl"
    env = {**os.environ, DATA_ENV: str(tmp_path / "data"), REPORT_ENV: str(report)}
    args = SMALLEST.get(bench) or DAEMON[bench]
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{bench}.py"), *args],
        env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=tmp_path,
    )
    assert out.returncode == 0, f"bench/{bench}.py exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    figures = read(report)
    assert figures and {f.bench for f in figures} == {bench}, out.stdout[-3000:]
    assert bench in table(figures)
