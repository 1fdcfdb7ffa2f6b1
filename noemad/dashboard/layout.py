"""Where each event of a causal walk goes on the timeline page: computed here, deterministically.

Causes to the left, consequences to the right: one column per hop. Within a
column the events of one cognitive cycle sit together (they are framed, and
the frame is labelled correlation), and the order is chosen by a few
barycentre sweeps to keep edges from crossing. Ties break on event ids, so
the same walk always gets the same picture. Only the walk's own edges are
laid out; nothing is added.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

NODE_W = 210
NODE_H = 58
CALL_H = 15  # one line per model call drawn on its node
CALLS_SHOWN = 3
COL_GAP = 120  # room for the edges and their labels between columns
ROW_GAP = 14
FRAME_PAD = 8
FRAME_LABEL = 18
MARGIN = 40
SWEEPS = 4
LABEL_CHAR_W = 5.8  # px per character of an edge label (10 px system-ui): a little over the average, so boxes are not too small
LABEL_LINE_H = 11  # px per line of an edge label
ARROW = 10  # px an arrowhead reaches out from the side of the box it points at
# Where on its curve a label is tried, in turn: from the middle outwards, in steps of 0.04.
LABEL_AT = tuple(sorted((round(0.5 + k * 0.04, 2) for k in range(-11, 12)), key=lambda t: (abs(t - 0.5), t)))


@dataclass(frozen=True)
class Box:
    """One event's rectangle."""

    id: int
    x: float
    y: float
    w: float
    h: float
    column: int
    node: dict[str, Any]


@dataclass(frozen=True)
class Line:
    """One stored edge, cause to consequence, as an SVG path with its label's place."""

    source: int
    target: int
    kind: str
    via: dict[str, Any] | None
    d: str
    label_x: float  # the centre of the label's box; None-free: an unplaced label keeps the curve's midpoint
    label_y: float
    ends: tuple[float, float, float, float]  # x1, y1, x2, y2: the straight chord, for counting crossings
    curve: tuple[float, ...] = ()  # the cubic's control points x0, y0, ..., x3, y3, where the label may go
    labelled: bool = True  # False: no free place was found; the edge keeps its dash pattern and its title

    @property
    def label(self) -> tuple[str, ...]:
        """The label's lines: the kind, then what it went through ("via memory #9"), if anything."""
        return (self.kind, f"via {self.via['type']} #{self.via['id']}") if self.via else (self.kind,)

    @property
    def label_box(self) -> tuple[float, float, float, float]:
        """x, y, w, h of the label as drawn (10 px text, a few pixels of halo), estimated."""
        w = max(len(text) for text in self.label) * LABEL_CHAR_W + 4
        h = len(self.label) * LABEL_LINE_H + 2
        return self.label_x - w / 2, self.label_y - h / 2, w, h


@dataclass(frozen=True)
class Frame:
    """A cycle's events in one column, framed."""

    cycle_id: str
    x: float
    y: float
    w: float
    h: float


@dataclass
class Layout:
    boxes: dict[int, Box] = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    width: float = 0
    height: float = 0
    first_hop: int = 0


def height_of(node: dict[str, Any]) -> float:
    calls = len(node.get("model_calls") or [])
    return NODE_H + CALL_H * (min(calls, CALLS_SHOWN) + (1 if calls > CALLS_SHOWN else 0))


def lay_out(chain: dict[str, Any]) -> Layout:
    """The layout of a chain as `GET /api/v1/events/{id}/chain` answers it."""
    nodes = {n["id"]: n for n in chain["nodes"]}
    if not nodes:
        return Layout()
    grouped = {e: g["cycle_id"] for g in chain["groups"] for e in g["events"]}
    first = min(n["hop"] for n in nodes.values())
    columns: dict[int, list[int]] = {}
    for node_id in sorted(nodes):
        columns.setdefault(nodes[node_id]["hop"] - first, []).append(node_id)
    neighbours: dict[int, list[int]] = {i: [] for i in nodes}
    for edge in chain["edges"]:
        if edge["from"] in nodes and edge["to"] in nodes and edge["from"] != edge["to"]:
            neighbours[edge["from"]].append(edge["to"])
            neighbours[edge["to"]].append(edge["from"])

    rank = {i: float(pos) for col in columns.values() for pos, i in enumerate(_grouped_order(col, grouped, {}))}
    order = sorted(columns)
    for sweep in range(SWEEPS):
        for c in order if sweep % 2 == 0 else reversed(order):
            centre = {}
            for i in columns[c]:
                around = [rank[j] for j in neighbours[i] if nodes[j]["hop"] - first != c]
                centre[i] = sum(around) / len(around) if around else rank[i]
            columns[c] = _grouped_order(columns[c], grouped, centre)
            rank.update({i: float(pos) for pos, i in enumerate(columns[c])})

    layout = Layout(first_hop=first)
    heights = {c: _column_height(columns[c], grouped, nodes) for c in order}
    tallest = max(heights.values())
    for c in order:
        x = MARGIN + c * (NODE_W + COL_GAP)
        y = MARGIN + (tallest - heights[c]) / 2
        index = 0
        ids = columns[c]
        while index < len(ids):
            cycle = grouped.get(ids[index])
            run = [ids[index]]
            while cycle is not None and index + len(run) < len(ids) and grouped.get(ids[index + len(run)]) == cycle:
                run.append(ids[index + len(run)])
            if cycle is not None:
                top = y
                y += FRAME_LABEL
            for i in run:
                h = height_of(nodes[i])
                layout.boxes[i] = Box(i, x, y, NODE_W, h, c, nodes[i])
                y += h + ROW_GAP
            if cycle is not None:
                y += FRAME_PAD - ROW_GAP
                layout.frames.append(Frame(cycle, x - FRAME_PAD, top, NODE_W + 2 * FRAME_PAD, y - top))
                y += ROW_GAP
            index += len(run)
    layout.width = MARGIN * 2 + (max(order) + 1) * NODE_W + max(order) * COL_GAP
    layout.height = MARGIN * 2 + tallest
    drawn = [e for e in chain["edges"] if e["from"] in layout.boxes and e["to"] in layout.boxes]
    ports = _ports(layout.boxes, drawn)
    layout.lines = _place_labels(layout, [_line(layout.boxes, e, ports[(n, "from")], ports[(n, "to")]) for n, e in enumerate(drawn)])
    return layout


def _place_labels(layout: Layout, lines: list[Line]) -> list[Line]:
    """Put each edge's label by its curve where it meets no event, no frame's caption and no label placed before it.

    Tried in turn, at points along the curve from its middle out (LABEL_AT):
    centred on it; then just above or below it; then beside it, right or
    left (a loop in one column has room only to its right). A label with no
    free place is left out: the edge keeps its dash pattern (the legend
    names it) and its tooltip, and the list of links under the graph names
    every edge.
    """
    taken = _Grid()
    for b in layout.boxes.values():  # with the arrowheads at its sides
        taken.add((b.x - ARROW, b.y, b.w + 2 * ARROW, b.h))
    for f in layout.frames:
        taken.add((f.x, f.y, f.w, FRAME_LABEL))
    placed = []
    for line in lines:
        _, _, w, h = line.label_box
        spot = _free_spot(line, w, h, taken)
        if spot is None:
            placed.append(dataclasses.replace(line, labelled=False))
            continue
        x, y = spot
        placed.append(dataclasses.replace(line, label_x=x, label_y=y))
        taken.add((x - w / 2, y - h / 2, w, h))
    return placed


def _free_spot(line: Line, w: float, h: float, taken: _Grid) -> tuple[float, float] | None:
    """The first free centre for `line`'s label (w by h), or None; the curve's points are computed only as far as needed (most labels fit at the first)."""
    up, side = h / 2 + 3, w / 2 + 3
    shifts = [(0.0, 0.0), (0.0, -up), (0.0, up), (0.0, -2 * up), (0.0, 2 * up)]
    shifts += [(dx, dy) for dy in (0.0, -up, up, -2 * up, 2 * up) for dx in (side, -side)]
    points: list[tuple[float, float]] = []
    for dx, dy in shifts:
        for k, t in enumerate(LABEL_AT):
            if k == len(points):
                points.append(_bezier(t, *line.curve))
            x, y = points[k][0] + dx, points[k][1] + dy
            if taken.free((x - w / 2, y - h / 2, w, h)):
                return x, y
    return None


class _Grid:
    """Rectangles bucketed by 100 px squares, so a label is tested against what is near it only (a 200-event walk has hundreds)."""

    CELL = 100.0

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}

    def add(self, r: tuple[float, float, float, float]) -> None:
        x, y, w, h = r
        c = self.CELL
        for i in range(int(x // c), int((x + w) // c) + 1):
            for j in range(int(y // c), int((y + h) // c) + 1):
                self.cells.setdefault((i, j), []).append(r)

    def free(self, r: tuple[float, float, float, float]) -> bool:
        x, y, w, h = r
        c = self.CELL
        for i in range(int(x // c), int((x + w) // c) + 1):
            for j in range(int(y // c), int((y + h) // c) + 1):
                for ox, oy, ow, oh in self.cells.get((i, j), ()):
                    if x < ox + ow and ox < x + w and y < oy + oh and oy < y + h:
                        return False
        return True


def _ports(boxes: dict[int, Box], edges: list[dict[str, Any]]) -> dict[tuple[int, str], float]:
    """Where each edge leaves and enters its boxes: spread down the side, in the order of the other ends, so arrows do not meet in one point."""
    sides: dict[tuple[int, str], list[tuple[float, int, str]]] = {}
    for n, e in enumerate(edges):
        a, b = boxes[e["from"]], boxes[e["to"]]
        for end, box, other in (("from", a, b), ("to", b, a)):
            side = "right" if (end == "from") == (a.column <= b.column) else "left"
            sides.setdefault((box.id, side), []).append((other.y + other.h / 2, n, end))
    at: dict[tuple[int, str], float] = {}
    for (box_id, _), ends in sides.items():
        box = boxes[box_id]
        ends.sort()
        span = box.h - 16
        for k, (_, n, end) in enumerate(ends):
            at[(n, end)] = box.y + 8 + span * (k + 1) / (len(ends) + 1)
    return at


def _grouped_order(ids: list[int], grouped: dict[int, str], centre: dict[int, float]) -> list[int]:
    """`ids` ordered by barycentre, the members of one cycle kept together at their mean place."""
    place = {i: centre.get(i, float(pos)) for pos, i in enumerate(ids)}
    runs: dict[str, list[int]] = {}
    for i in ids:
        runs.setdefault(grouped.get(i) or f"#{i}", []).append(i)
    key = {name: (sum(place[i] for i in members) / len(members), min(members)) for name, members in runs.items()}
    out: list[int] = []
    for name in sorted(runs, key=lambda n: key[n]):
        out += sorted(runs[name], key=lambda i: (place[i], i))
    return out


def _column_height(ids: list[int], grouped: dict[int, str], nodes: dict[int, dict[str, Any]]) -> float:
    total = sum(height_of(nodes[i]) + ROW_GAP for i in ids)
    previous: str | None = None
    for i in ids:
        cycle = grouped.get(i)
        if cycle is not None and cycle != previous:
            total += FRAME_LABEL + FRAME_PAD
        previous = cycle
    return total - ROW_GAP


def _line(boxes: dict[int, Box], edge: dict[str, Any], ay: float, by: float) -> Line:
    a, b = boxes[edge["from"]], boxes[edge["to"]]
    if a.column < b.column:  # forward, the usual case: right side to left side
        x1, x2 = a.x + a.w, b.x
        bend = (x2 - x1) / 2
        curve = (x1, ay, x1 + bend, ay, x2 - bend, by, x2, by)
    elif a.column > b.column:  # a cause the walk placed right of its consequence
        x1, x2 = a.x, b.x + b.w
        bend = (x1 - x2) / 2
        curve = (x1, ay, x1 - bend, ay, x2 + bend, by, x2, by)
    else:  # same column: a loop out to the right
        x1 = x2 = a.x + a.w
        reach = 30 + min(abs(by - ay) / 4, COL_GAP / 2 - 30)
        curve = (x1, ay, x1 + reach, ay, x2 + reach, by, x2, by)
    d = "M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}".format(*curve)
    lx, ly = _bezier(0.5, *curve)
    return Line(edge["from"], edge["to"], edge["kind"], edge.get("via"), d, lx, ly, (x1, ay, x2, by), curve)


def _bezier(t: float, *p: float) -> tuple[float, float]:
    """The point at `t` on the cubic curve through control points p (x0, y0, ..., x3, y3)."""
    u = 1 - t
    a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
    return a * p[0] + b * p[2] + c * p[4] + d * p[6], a * p[1] + b * p[3] + c * p[5] + d * p[7]


# --- measures (bench/dashboard.py and the tests) -------------------------------------------


def overlaps(layout: Layout) -> int:
    """How many pairs of event boxes overlap, plus frames that overlap an event not in their cycle."""
    boxes = sorted(layout.boxes.values(), key=lambda b: (b.x, b.y))
    count = 0
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if b.x >= a.x + a.w:
                break
            if _meet(a.x, a.y, a.w, a.h, b.x, b.y, b.w, b.h):
                count += 1
    for frame in layout.frames:
        for box in boxes:
            inside = box.node.get("cycle_id") == frame.cycle_id
            if not inside and _meet(frame.x, frame.y, frame.w, frame.h, box.x, box.y, box.w, box.h):
                count += 1
    return count


def label_collisions(layout: Layout) -> int:
    """How many drawn edge labels meet an event, a frame's caption or another drawn label (pairs counted once)."""
    drawn = [line.label_box for line in layout.lines if line.labelled]
    others = [(b.x, b.y, b.w, b.h) for b in layout.boxes.values()] + [(f.x, f.y, f.w, FRAME_LABEL) for f in layout.frames]
    count = sum(1 for i, a in enumerate(drawn) for b in drawn[i + 1 :] if _meet(*a, *b))
    return count + sum(1 for a in drawn for b in others if _meet(*a, *b))


def crossings(layout: Layout) -> int:
    """Pairs of edges (sharing no event) whose chords cross: a measure of how readable the picture is."""
    count = 0
    lines = layout.lines
    for i, a in enumerate(lines):
        for b in lines[i + 1 :]:
            if {a.source, a.target} & {b.source, b.target}:
                continue
            if _cross(a.ends, b.ends):
                count += 1
    return count


def _meet(ax: float, ay: float, aw: float, ah: float, bx: float, by: float, bw: float, bh: float) -> bool:
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def _cross(p: tuple[float, float, float, float], q: tuple[float, float, float, float]) -> bool:
    def side(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> float:
        return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)

    d1 = side(q[0], q[1], q[2], q[3], p[0], p[1])
    d2 = side(q[0], q[1], q[2], q[3], p[2], p[3])
    d3 = side(p[0], p[1], p[2], p[3], q[0], q[1])
    d4 = side(p[0], p[1], p[2], p[3], q[2], q[3])
    return d1 * d2 < 0 and d3 * d4 < 0
