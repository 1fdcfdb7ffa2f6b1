"""What every bench shares: where its cached data lives, and how it reports its figures.

Each bench prints its own detail, and also hands each headline figure to
`figure()`: with NOEMA_BENCH_REPORT set (as `make bench` sets it) the figure is
appended to that file as one JSON line, which `bench/summary.py` turns into
one table (figure, goal, baseline measured in the same run, holds or not).
Without it, `figure()` only returns what it was given.

NOEMA_BENCH_DATA moves the cached stores out of bench/.data (the bench test
builds its small ones in a temporary directory, so it never replaces the
full-size ones a developer has built).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT_ENV = "NOEMA_BENCH_REPORT"
DATA_ENV = "NOEMA_BENCH_DATA"


def data_dir() -> Path:
    """Where benches cache the stores they build (bench/.data unless NOEMA_BENCH_DATA names another)."""
    return Path(os.environ.get(DATA_ENV) or ROOT / "bench" / ".data")


@dataclass(frozen=True)
class Figure:
    """One headline figure of one bench run, as the summary table shows it."""

    bench: str
    name: str
    value: str  # already formatted with its unit, e.g. "12.3 ms" or "1.35x"
    goal: str  # e.g. "<= 1.4x the bare FTS5 query"
    holds: bool | None  # None: nothing to hold it against (a figure reported for information)
    baseline: str = ""  # the baseline measured in the same run, formatted, if the goal is relative to one
    size: str = ""  # what it was measured on, e.g. "100k memories"
    load: float = 0.0  # the 1-minute load average when the figure was taken


def figure(
    bench: str, name: str, value: str, goal: str, holds: bool | None, *, baseline: str = "", size: str = ""
) -> Figure:
    """Record one figure (to NOEMA_BENCH_REPORT's file when set); returns it."""
    fig = Figure(bench, name, value, goal, holds, baseline, size, os.getloadavg()[0])
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(fig)) + "\n")
    return fig


def read(path: Path) -> list[Figure]:
    """The figures recorded in `path`, in the order they were recorded."""
    if not path.exists():
        return []
    return [Figure(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _tag_path(path: Path) -> Path:
    return path.with_name(path.name + ".tag")


def stamp(path: Path, tag: str) -> None:
    """Mark the store at `path` as built with `tag` (a sidecar file: no bench key in a mind's settings)."""
    _tag_path(path).write_text(tag + "\n", encoding="utf-8")


def stamped(path: Path, tag: str) -> bool:
    """Whether the store at `path` exists and was built with `tag` (so it can be reused)."""
    sidecar = _tag_path(path)
    return path.exists() and sidecar.exists() and sidecar.read_text(encoding="utf-8").strip() == tag
