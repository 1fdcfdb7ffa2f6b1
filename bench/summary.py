"""The one table at the end of `make bench`: every figure, its goal, its baseline, whether it holds.

    .venv/bin/python bench/summary.py FILE [--markdown]

FILE holds the JSON lines the benches wrote through bench/_report.py while
NOEMA_BENCH_REPORT named it. Benches that did not run (or failed before
reporting) are absent from the table; `make bench` says which ones failed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import Figure, read  # noqa: E402  (bench/_report.py)


def machine() -> str:
    """The CPU model and count, for the line above the table."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def verdict(fig: Figure) -> str:
    return "-" if fig.holds is None else "holds" if fig.holds else "NOT met"


def table(figures: list[Figure], markdown: bool = False) -> str:
    head = ("bench", "figure", "value", "baseline (same run)", "goal", "holds", "measured on", "load")
    rows = [
        (f.bench, f.name, f.value, f.baseline or "-", f.goal, verdict(f), f.size or "-", f"{f.load:.1f}") for f in figures
    ]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="the JSON lines the benches wrote (NOEMA_BENCH_REPORT)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table (as the README shows it)")
    args = parser.parse_args(argv)
    figures = read(args.file)
    if not figures:
        print(f"no figures in {args.file}", file=sys.stderr)
        return 1
    loads = [f.load for f in figures]
    held = sum(1 for f in figures if f.holds)
    judged = sum(1 for f in figures if f.holds is not None)
    print()
    print(f"machine: {machine()}; load average {min(loads):.1f} to {max(loads):.1f} during the run")
    print(table(figures, args.markdown))
    print(f"{held} of {judged} goals hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
