"""The timeline graph's edge labels do not collide: with each other, with an event's box, or with a cycle frame's caption.

Read off the SVG the page serves: each label's lines and where they are
drawn, each event's box. A label's size is estimated as 10 px text is
(5.8 px a character, 11 px a line). The chain is shaped like a
consolidation's walk (tests/test_dashboard_browser.py draws a real one):
many memories, each in its cycle, each cited by a belief beside them and by
the event the walk is about, so a dozen labelled edges share one gap.
"""

from __future__ import annotations

import re
from typing import Any

from noemad.dashboard.layout import lay_out, label_collisions
from noemad.dashboard.svg import timeline as draw

CHAR_W, LINE_H = 5.8, 11


def consolidation_chain(memories: int = 6) -> dict[str, Any]:
    root, belief, after, job = 500, 400, 600, 300
    nodes = [
        {"id": root, "kind": "memory_created", "actor": "process:consolidation", "text": "a generalisation", "hop": 0, "cycle_id": None},
        {"id": belief, "kind": "belief_created", "actor": "process:consolidation", "text": "a belief", "hop": -1, "cycle_id": None},
        {"id": after, "kind": "consolidation", "actor": "process:consolidation", "text": "1 generalisation", "hop": 1, "cycle_id": None},
        {"id": job, "kind": "mode_changed", "actor": "process:jobs", "text": "job 2 started", "hop": -2, "cycle_id": None},
    ]
    edges = [
        {"from": job, "to": belief, "kind": "caused"},
        {"from": job, "to": after, "kind": "caused"},
        {"from": belief, "to": root, "kind": "caused"},
        {"from": belief, "to": after, "kind": "cited", "via": {"type": "belief", "id": 5}},
        {"from": root, "to": after, "kind": "cited", "via": {"type": "memory", "id": 16}},
    ]
    groups = []
    for n in range(memories):
        message, memory = 100 + n, 200 + n
        nodes.append({"id": message, "kind": "message", "actor": "user:alice", "text": f"message {n}", "hop": -2, "cycle_id": f"m/{n}"})
        nodes.append({"id": memory, "kind": "memory_created", "actor": "process:perception", "text": f"memory {n}", "hop": -1, "cycle_id": f"m/{n}"})
        groups.append({"cycle_id": f"m/{n}", "label": "correlation", "events": [message, memory]})
        edges += [
            {"from": message, "to": memory, "kind": "caused"},
            {"from": memory, "to": belief, "kind": "cited", "via": {"type": "memory", "id": 10 + n}},
            {"from": memory, "to": root, "kind": "cited", "via": {"type": "memory", "id": 10 + n}},
        ]
    for node in nodes:
        node["model_calls"] = []
    return {
        "root": root, "nodes": nodes, "edges": edges, "groups": groups,
        "truncation": {"truncated": False, "by": [], "omitted_back": 0, "omitted_forward": 0},
        "limits": {"back": 6, "forward": 6, "limit": 200},
    }


def drawn_labels(svg: str) -> list[tuple[float, float, float, float]]:
    """Each edge label's box as drawn: its lines' text and the positions given to them (on <text> or each <tspan>)."""
    boxes = []
    for attrs, body in re.findall(r'<text([^>]*)class="edge-label"[^>]*>(.*?)</text>', svg):
        if "<tspan" in body:
            rows = [(float(x), float(y), text) for x, y, text in re.findall(r'<tspan x="([\d.]+)" y="([\d.]+)">([^<]*)</tspan>', body)]
        else:
            x, y = re.findall(r'x="([\d.]+)" y="([\d.]+)"', attrs)[0]
            rows = [(float(x), float(y), body)]
        width = max(len(text) for _, _, text in rows) * CHAR_W + 4
        top = min(y for _, y, _ in rows) - 8.5
        bottom = max(y for _, y, _ in rows) + 2.5
        boxes.append((rows[0][0] - width / 2, top, width, bottom - top))
    return boxes


def drawn_boxes(svg: str) -> list[tuple[float, float, float, float]]:
    boxes = [tuple(map(float, m)) for m in re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" rx="4" class="box"', svg)]
    frames = [(float(x), float(y), float(w), 18.0) for x, y, w in re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" rx="6" class="frame"', svg)]
    return boxes + frames  # a frame's caption is its top 18 px


def meet(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def test_no_edge_label_meets_another_an_event_or_a_frame_caption() -> None:
    chain = consolidation_chain()
    layout = lay_out(chain)
    svg = draw(layout, chain, {"back": 6, "forward": 6, "limit": 200})
    labels, boxes = drawn_labels(svg), drawn_boxes(svg)
    assert len(boxes) == len(chain["nodes"]) + len(layout.frames)
    clashes = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :] if meet(a, b)]
    clashes += [(a, b) for a in labels for b in boxes if meet(a, b)]
    assert clashes == []
    assert label_collisions(layout) == 0
    # Every edge keeps its label here: there is room for all of them.
    assert len(labels) == len(chain["edges"])
    assert svg.count(">via memory #10</tspan>") == 2  # the two citations of the first memory, each labelled


def test_a_crowded_gap_leaves_a_label_out_rather_than_draw_it_over_another() -> None:
    chain = consolidation_chain(memories=30)
    layout = lay_out(chain)
    svg = draw(layout, chain, {"back": 6, "forward": 6, "limit": 200})
    labels, boxes = drawn_labels(svg), drawn_boxes(svg)
    assert [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :] + boxes if meet(a, b)] == []
    unlabelled = [line for line in layout.lines if not line.labelled]
    assert len(labels) + len(unlabelled) == len(chain["edges"])
    # An edge without its label still names itself on hover, and the list of links under the graph names it.
    for line in unlabelled:
        assert f"<title>#{line.source} {line.kind} #{line.target}" in svg
