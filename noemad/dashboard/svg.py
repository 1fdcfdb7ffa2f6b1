"""The pictures: the causal graph of the timeline page and the calibration chart, as SVG.

Nothing is told by colour alone: edge kinds differ by dash pattern and carry
their name, the walk's root is drawn with a double border and says so, and
cycle frames carry the word correlation. Text is escaped like everywhere
else; presentation goes through classes (the CSP allows no inline style).
"""

from __future__ import annotations

from typing import Any

from noemad.dashboard.html import Markup, href, join, short, tag
from noemad.dashboard.layout import CALLS_SHOWN, CALL_H, FRAME_LABEL, LABEL_LINE_H, Box, Layout, Line

_DEFS = Markup(
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
    '<path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>'
)


# What fits on a node's lines (NODE_W less its padding), in characters of each line's font at its widest
# usual (bold 12 px, 11 px, 12 px): longer is cut with an ellipsis. Text wider than usual is clipped at
# the box's edge, so nothing spills out of it.
TITLE_CHARS = 24
META_CHARS = 30
TEXT_CHARS = 28
CALL_CHARS = 33  # a model call's line (10 px); the whole line is in the node's tooltip


def _call_line(call: dict[str, Any], width: int | None = None) -> str:
    """A model call in one line: role, model, tokens in and out, cost.

    With `width`, as it fits on a node: tokens counted in thousands from
    10,000 (whole thousands from 100,000), the model cut to the room left (left out if less than 4
    characters), the whole line cut to `width`.
    """
    tokens = call.get("input_tokens", 0) + call.get("cache_read_tokens", 0) + call.get("cache_write_tokens", 0)
    role, output, cost = call.get("role"), call.get("output_tokens", 0), f"${call.get('cost_usd', 0):.4f}"
    model = " ".join(str(call.get("model") or "").split())
    if width is None:
        return f"◆ {role} · {model} · {tokens}→{output} tok · {cost}"
    counts = f"{_thousands(tokens)}→{_thousands(output)}"
    line = f"◆ {role} · {counts} · {cost}"
    room = width - len(line) - 3
    if room >= 4:
        line = f"◆ {role} · {short(model, room)} · {counts} · {cost}"
    return short(line, width)


def _clipped(name: str, box: Box, lines: list[Markup]) -> Markup:
    """The node's lines, clipped to its box (what the character counts did not cut is cut here)."""
    edge = tag("clipPath", tag("rect", x=f"{box.x:.1f}", y=f"{box.y:.1f}", width=f"{box.w - 4:.1f}", height=f"{box.h:.1f}"), id=name)
    return Markup(edge + tag("g", *lines, clip_path=f"url(#{name})"))


def _thousands(n: int) -> str:
    if n >= 100_000:
        return f"{n // 1000:,}k"
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def timeline(layout: Layout, chain: dict[str, Any], controls: dict[str, int]) -> Markup:
    """The walk as a graph; each event links to the walk re-centred on it with the same controls."""
    root = chain["root"]
    parts: list[Any] = [tag("title", f"Causal graph around event #{root}", id="graph-title"), _DEFS]
    for frame in layout.frames:
        parts.append(
            tag(
                "g",
                tag("rect", x=f"{frame.x:.1f}", y=f"{frame.y:.1f}", width=f"{frame.w:.1f}", height=f"{frame.h:.1f}", rx="6", class_="frame"),
                tag("text", f"cycle {short(frame.cycle_id, 22)} · correlation", x=f"{frame.x + 6:.1f}", y=f"{frame.y + FRAME_LABEL - 5:.1f}", class_="frame-label"),
                class_="cycle",
            )
        )
    for line in layout.lines:
        via = f" via {line.via['type']} #{line.via['id']}" if line.via else ""
        parts.append(
            tag(
                "g",
                tag("title", f"#{line.source} {line.kind} #{line.target}{via}"),
                tag("path", d=line.d, class_=f"edge edge-{line.kind}", marker_end="url(#arrow)"),
                _edge_label(line) if line.labelled else "",
                class_="link",
            )
        )
    for box in layout.boxes.values():
        node = box.node
        is_root = node["id"] == root
        where = "this event" if is_root else f"hop {node['hop']:+d}"
        lines = [
            tag("text", short(f"#{node['id']} {node['kind']}", TITLE_CHARS), x=f"{box.x + 8:.1f}", y=f"{box.y + 17:.1f}", class_="node-title"),
            tag("text", short(node["actor"], META_CHARS - 3 - len(where)) + f" · {where}", x=f"{box.x + 8:.1f}", y=f"{box.y + 33:.1f}", class_="node-meta"),
            tag("text", short(node.get("text"), TEXT_CHARS), x=f"{box.x + 8:.1f}", y=f"{box.y + 49:.1f}", class_="node-text"),
        ]
        calls = node.get("model_calls") or []
        for k, call in enumerate(calls[:CALLS_SHOWN]):
            lines.append(tag("text", _call_line(call, CALL_CHARS), x=f"{box.x + 8:.1f}", y=f"{box.y + 49 + CALL_H * (k + 1):.1f}", class_="node-call"))
        if len(calls) > CALLS_SHOWN:
            lines.append(tag("text", f"+{len(calls) - CALLS_SHOWN} more model calls", x=f"{box.x + 8:.1f}", y=f"{box.y + 49 + CALL_H * (CALLS_SHOWN + 1):.1f}", class_="node-call"))
        rects = [tag("rect", x=f"{box.x:.1f}", y=f"{box.y:.1f}", width=f"{box.w:.1f}", height=f"{box.h:.1f}", rx="4", class_="box")]
        if is_root:
            rects.append(tag("rect", x=f"{box.x - 4:.1f}", y=f"{box.y - 4:.1f}", width=f"{box.w + 8:.1f}", height=f"{box.h + 8:.1f}", rx="6", class_="root-ring"))
        label = f"event #{node['id']} {node['kind']} by {node['actor']}: {short(node.get('text'), 80)}"
        tooltip = "\n".join([label, *map(_call_line, calls)])
        parts.append(
            tag(
                "a",
                tag(
                    "g", tag("title", tooltip), *rects, _clipped(f"clip-{node['id']}", box, lines),
                    class_="node" + (" root" if is_root else ""), data_event=node["id"],
                ),
                href=href(f"/events/{node['id']}/timeline", **controls),
                aria_label=f"re-centre on {label}",
            )
        )
    truncation = chain["truncation"]
    if truncation.get("omitted_back"):
        parts.append(_cut(12, layout.height, f"cut: {truncation['omitted_back']} more causes"))
    if truncation.get("omitted_forward"):
        parts.append(_cut(layout.width - 12, layout.height, f"cut: {truncation['omitted_forward']} more consequences"))
    return tag(
        "svg",
        *parts,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {layout.width:.0f} {layout.height:.0f}",
        width=f"{layout.width:.0f}",
        height=f"{layout.height:.0f}",
        role="img",
        aria_labelledby="graph-title",
        class_="graph",
    )


def _edge_label(line: Line) -> Markup:
    """The label in the box the layout gave it: one line per part, centred (the kind, then "via memory #9")."""
    x, y, _, h = line.label_box
    centre = f"{line.label_x:.1f}"
    rows = [tag("tspan", text, x=centre, y=f"{y + 1 + LABEL_LINE_H * k + 8.5:.1f}") for k, text in enumerate(line.label)]
    return tag("text", *rows, class_="edge-label")


def _cut(x: float, height: float, text: str) -> Markup:
    return tag(
        "g",
        tag("line", x1=f"{x:.1f}", y1="8", x2=f"{x:.1f}", y2=f"{height - 8:.1f}", class_="cut"),
        tag("text", text, x=f"{x:.1f}", y="20", class_="cut-label", text_anchor="start" if x < 100 else "end"),
        class_="cut-mark",
    )


def calibration(data: dict[str, Any]) -> Markup:
    """Stated confidence (x) against the hit rate (y) by bin, the diagonal as perfect calibration, circles sized by count."""
    size, pad = 240, 34

    def scale(v: float) -> float:
        """Where value v lands on the chart; x and y share one scale."""
        return pad + v * size

    parts: list[Any] = [
        tag("title", f"Calibration: stated confidence against outcome rate; Brier score {_num(data.get('brier'))}", id="cal-title"),
        tag("rect", x=str(pad), y=str(pad), width=str(size), height=str(size), class_="chart-area"),
        tag("line", x1=str(scale(0)), y1=str(pad + size), x2=str(scale(1)), y2=str(pad), class_="diagonal"),
    ]
    for tick in (0, 0.5, 1):
        parts.append(tag("text", f"{tick:.1f}", x=f"{scale(tick):.0f}", y=str(pad + size + 14), class_="tick", text_anchor="middle"))
        parts.append(tag("text", f"{tick:.1f}", x=str(pad - 6), y=f"{pad + size - tick * size + 4:.0f}", class_="tick", text_anchor="end"))
    parts.append(tag("text", "stated confidence", x=str(pad + size / 2), y=str(pad + size + 28), class_="axis", text_anchor="middle"))
    parts.append(tag("text", "outcome rate", x="10", y=str(pad + size / 2), class_="axis", text_anchor="middle", transform=f"rotate(-90 10 {pad + size / 2})"))
    points = []
    for b in data.get("bins", []):
        if not b.get("count"):
            continue
        cx, cy = scale(b["mean_stated"]), pad + size - b["hit_rate"] * size
        r = 4 + min(b["count"], 20) / 2
        points.append(
            tag("g", tag("title", f"{b['low']:.1f}–{b['high']:.1f}: {b['count']} resolved, {b['hits']} hit, stated {b['mean_stated']:.2f}"),
                tag("circle", cx=f"{cx:.1f}", cy=f"{cy:.1f}", r=f"{r:.1f}", class_="bin"),
                tag("text", str(b["count"]), x=f"{cx:.1f}", y=f"{cy + 4:.1f}", class_="bin-count", text_anchor="middle"))
        )
    parts += points
    return tag("svg", *parts, xmlns="http://www.w3.org/2000/svg", viewBox=f"0 0 {size + 2 * pad} {size + 2 * pad}", width=str(size + 2 * pad),
               height=str(size + 2 * pad), role="img", aria_labelledby="cal-title", class_="chart")


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def edge_list(chain: dict[str, Any]) -> Markup:
    """The same edges as text, for screen readers and for copying."""
    items = [
        tag("li", tag("a", f"#{e['from']}", href=f"/events/{e['from']}/timeline"), f" {e['kind']} ",
            tag("a", f"#{e['to']}", href=f"/events/{e['to']}/timeline"),
            f" (via {e['via']['type']} #{e['via']['id']})" if e.get("via") else "")
        for e in chain["edges"]
    ]
    if items:
        return tag("ul", join(items), class_="edge-list")
    cut = chain["truncation"].get("truncated")
    return tag("p", "No links among the events shown: the limits cut the walk before any." if cut else "No stored links from or to this event: nothing is drawn.", class_="empty")


def confidence_chart(steps: list[dict[str, Any]]) -> Markup:
    """A belief's confidence over its changes: a step line, each change a point linking to that event's timeline page.

    Changes are spaced evenly (a belief's history comes in bursts: spaced by
    time, a day's changes would sit on one pixel); the first and last times
    are written under the axis. A point's colour says the status it left.
    """
    width, height, pad_x, pad_y = 640, 200, 40, 24
    inner_w, inner_h = width - 2 * pad_x, height - 2 * pad_y
    count = len(steps)

    def x(k: int) -> float:
        return pad_x + (inner_w * k / (count - 1) if count > 1 else inner_w / 2)

    def y(v: float) -> float:
        return pad_y + inner_h * (1 - v)

    parts: list[Any] = [
        tag("title", f"Confidence over {count} change{'s' if count != 1 else ''}; each point links to its event's timeline", id="conf-title"),
        tag("rect", x=str(pad_x), y=str(pad_y), width=str(inner_w), height=str(inner_h), class_="chart-area"),
    ]
    for tick in (0, 0.5, 1):
        parts.append(tag("text", f"{tick:.1f}", x=str(pad_x - 6), y=f"{y(tick) + 4:.0f}", class_="tick", text_anchor="end"))
    if steps:
        path = [f"M {x(0):.1f} {y(steps[0]['confidence_from']):.1f}", f"L {x(0):.1f} {y(steps[0]['confidence_to']):.1f}"]
        for k in range(1, count):
            path += [f"L {x(k):.1f} {y(steps[k - 1]['confidence_to']):.1f}", f"L {x(k):.1f} {y(steps[k]['confidence_to']):.1f}"]
        parts.append(tag("path", d=" ".join(path), class_="confidence-line"))
        parts.append(tag("text", _day(steps[0]["at"]), x=str(pad_x), y=str(height - 6), class_="tick", text_anchor="start"))
        if count > 1:
            parts.append(tag("text", _day(steps[-1]["at"]), x=str(width - pad_x), y=str(height - 6), class_="tick", text_anchor="end"))
    for k, s in enumerate(steps):
        moved = f"{s['confidence_from']:.2f} → {s['confidence_to']:.2f}"
        status = s["status_to"] if s["status_from"] == s["status_to"] else f"{s['status_from']} → {s['status_to']}"
        label = f"event #{s['event_id']}: {moved}, {status}, by {s['by']}"
        parts.append(
            tag("a", tag("title", label), tag("circle", cx=f"{x(k):.1f}", cy=f"{y(s['confidence_to']):.1f}", r="5", class_=f"step {s['status_to']}"),
                href=f"/events/{s['event_id']}/timeline", class_="step-link", data_event=str(s["event_id"]), aria_label=label)
        )
    return tag("svg", *parts, xmlns="http://www.w3.org/2000/svg", viewBox=f"0 0 {width} {height}", width=str(width), height=str(height),
               role="img", aria_labelledby="conf-title", class_="chart confidence")


def _day(at: str) -> str:
    """An event time as `YYYY-MM-DD HH:MM` (UTC, as stored)."""
    return f"{at[:10]} {at[11:16]}" if len(at) >= 16 else at
