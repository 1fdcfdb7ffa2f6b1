"""Benchmark of the timeline page's graph layout (noemad.dashboard.layout) at the walk's limit.

    .venv/bin/python bench/dashboard.py [--events N] [--walks K] [--full] [--seed S]

Walks 6 hops each way / 200 events from K random events of the timeline
bench's database (bench/timeline.py builds it, or reuses the one cached in
bench/.data/), turns each walk into the chain JSON the page reads (as
`GET /api/v1/events/{id}/chain` answers it), then times the layout and the
SVG drawing, and measures readability: event boxes that overlap each other
or a cycle frame they are not in (must be 0), edge labels that meet another
label, an event or a frame's caption (0 by construction) and those left out
for want of room, and edge crossings (pairs of
edges sharing no event whose chords cross), against the crossings of the
same walk laid out without the barycentre sweeps (ordered by id).

Goal: layout + drawing p95 <= 50 ms for a 200-event walk; 0 overlaps.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import data_dir, figure  # noqa: E402  (bench/_report.py)
from timeline import ensure_database  # noqa: E402  (bench/timeline.py)

from noemad.dashboard import layout as graph  # noqa: E402
from noemad.dashboard.svg import timeline as draw  # noqa: E402
from noemad.store import open_db  # noqa: E402
from noemad.timeline import MAX_EVENTS, MAX_HOPS, WalkLimits, walk  # noqa: E402
from noemad.wire import dump_json  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="events in the timeline bench's database (default 100,000)")
    parser.add_argument("--walks", type=int, help="walks to lay out (default 100; 200 with --full)")
    parser.add_argument("--full", action="store_true", help="200 walks")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.walks = args.walks or (200 if args.full else 100)
    path = data_dir() / f"timeline-{args.events}.db"
    built = ensure_database(path, args.events, args.seed, rebuild=False)
    rng = random.Random(args.seed)
    roots = [rng.randint(1, args.events) for _ in range(args.walks)]
    limits = WalkLimits(MAX_HOPS, MAX_HOPS, MAX_EVENTS)
    db = open_db(path, readonly=True)
    chains = [json.loads(dump_json(walk(db, root, limits))) for root in roots]
    db.close()

    lay, svg, sizes, edges, overlaps, crossings, unswept = [], [], [], [], 0, [], []
    labels_met, unlabelled = 0, 0
    for chain in chains:
        start = time.perf_counter()
        placed = graph.lay_out(chain)
        middle = time.perf_counter()
        draw(placed, chain, {"back": 6, "forward": 6, "limit": 200})
        end = time.perf_counter()
        lay.append((middle - start) * 1000)
        svg.append((end - middle) * 1000)
        sizes.append(len(chain["nodes"]))
        edges.append(len(chain["edges"]))
        overlaps += graph.overlaps(placed)
        labels_met += graph.label_collisions(placed)
        unlabelled += sum(not line.labelled for line in placed.lines)
        crossings.append(graph.crossings(placed))
        sweeps, graph.SWEEPS = graph.SWEEPS, 0
        unswept.append(graph.crossings(graph.lay_out(chain)))
        graph.SWEEPS = sweeps
    total = [a + b for a, b in zip(lay, svg)]
    full = [n for n in sizes if n == MAX_EVENTS]
    print(f"dashboard layout bench: {args.walks} walks of {limits.back}/{limits.forward} hops, {limits.limit} events, "
          f"on {args.events:,} events ({built}); seed {args.seed}")
    print(f"walks: {statistics.mean(sizes):.0f} events and {statistics.mean(edges):.0f} edges on average; {len(full)} at the 200-event limit")
    for name, values in (("layout", lay), ("svg drawing", svg), ("layout + drawing", total)):
        print(f"  {name:<18} p50 {pct(values, .5):6.2f} ms   p95 {pct(values, .95):6.2f} ms   max {max(values):6.2f} ms")
    print(f"overlapping boxes (all walks): {overlaps}")
    print(f"edge labels meeting another, an event or a frame's caption (all walks): {labels_met}; "
          f"left out for want of room: {unlabelled} of {sum(edges)}")
    print(f"edge crossings per walk: mean {statistics.mean(crossings):.1f}, p95 {pct(crossings, .95)}, "
          f"max {max(crossings)}; without the sweeps (id order): mean {statistics.mean(unswept):.1f}")
    met = pct(total, .95) <= 50 and overlaps == 0
    print(f"goal (p95 <= 50 ms, 0 overlaps): {'met' if met else 'NOT met'}")
    figure("dashboard", "layout + drawing of a walk, p95", f"{pct(total, .95):.1f} ms", "<= 50 ms", pct(total, .95) <= 50,
           size=f"{args.walks} walks, up to {MAX_EVENTS} events")
    figure("dashboard", "overlapping boxes", f"{overlaps}", "0", overlaps == 0, size=f"{args.walks} walks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
