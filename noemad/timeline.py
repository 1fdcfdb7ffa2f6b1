"""The causal walk: from one event back to its causes and forward to its consequences.

Edges come only from links written with the events: `caused` (causation_id),
`parent` (event parents) and `cited` (evidence refs; a ref to a memory or
belief reaches the events that wrote or changed it before the citing event).
Nothing is inferred: no link, no edge. Events of one cognitive cycle are
grouped, and the group is labelled correlation, not causation. Model calls an
event cites are artefacts on its node, not hops.

The walk is breadth-first and alternates directions hop by hop so causes and
consequences share the event limit fairly; within a hop, lower ids come first.
A walk cut short says by what (hops, limit) and how many events it left out
at the cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.errors import InvalidInput
from noemad.events import Event, Ref, get_event, get_events

EdgeKind = Literal["caused", "parent", "cited"]
MAX_HOPS = 6
MAX_EVENTS = 200
_KIND_ORDER = {"caused": 0, "parent": 1, "cited": 2}
_CHUNK = 500


@dataclass(frozen=True)
class WalkLimits:
    """How far one walk may go; each bound may only be lowered from the maximum."""

    back: int = MAX_HOPS
    forward: int = MAX_HOPS
    limit: int = MAX_EVENTS

    def __post_init__(self) -> None:
        for name, value, top in (("back", self.back, MAX_HOPS), ("forward", self.forward, MAX_HOPS), ("limit", self.limit, MAX_EVENTS)):
            if not 0 <= value <= top:
                raise InvalidInput(f"{name} must be between 0 and {top}, not {value}")
        if self.limit < 1:
            raise InvalidInput("limit must be at least 1 (the event itself)")


@dataclass(frozen=True)
class Edge:
    """A link from cause to consequence."""

    source: int
    target: int
    kind: EdgeKind
    via: Ref | None = None  # the memory or belief a `cited` edge passes through

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": self.source, "to": self.target, "kind": self.kind}
        if self.via is not None:
            out["via"] = {"type": self.via.type, "id": self.via.id}
        return out


@dataclass
class Node:
    """An event on the walk: how far from the root (negative: a cause) and how it was reached."""

    event: Event
    hop: int
    reached_from: int | None = None
    reached_by: EdgeKind | None = None
    model_calls: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.event.to_json(),
            "hop": self.hop,
            "reached_from": self.reached_from,
            "reached_by": self.reached_by,
            "model_calls": self.model_calls,
        }


@dataclass(frozen=True)
class Truncation:
    """Whether and where the walk was cut, and how many events it left out there."""

    by_hops: bool = False
    by_limit: bool = False
    omitted_back: int = 0
    omitted_forward: int = 0

    @property
    def truncated(self) -> bool:
        return self.by_hops or self.by_limit

    def to_json(self) -> dict[str, Any]:
        return {
            "truncated": self.truncated,
            "by": [name for name, hit in (("hops", self.by_hops), ("limit", self.by_limit)) if hit],
            "omitted_back": self.omitted_back,
            "omitted_forward": self.omitted_forward,
        }


@dataclass(frozen=True)
class Timeline:
    """The result of one walk."""

    root: int
    nodes: list[Node]
    edges: list[Edge]
    groups: list[dict[str, Any]]
    truncation: Truncation
    limits: WalkLimits

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
            "groups": self.groups,
            "truncation": self.truncation.to_json(),
            "limits": {"back": self.limits.back, "forward": self.limits.forward, "limit": self.limits.limit},
        }


def _chunks(ids: Sequence[int]) -> Iterable[tuple[list[int], str]]:
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def links_into(db: Database, ids: Sequence[int]) -> list[Edge]:
    """Every edge whose consequence is one of `ids` (one step toward causes)."""
    edges: list[Edge] = []
    for chunk, marks in _chunks(ids):
        for target, source in db.execute(
            f"SELECT id, causation_id FROM events WHERE id IN ({marks}) AND causation_id IS NOT NULL", chunk
        ):
            edges.append(Edge(source, target, "caused"))
        for target, source in db.execute(f"SELECT event_id, parent_id FROM event_parents WHERE event_id IN ({marks})", chunk):
            edges.append(Edge(source, target, "parent"))
        for target, source in db.execute(
            f"SELECT event_id, ref_id FROM event_refs WHERE event_id IN ({marks}) AND ref_type = 'event'", chunk
        ):
            edges.append(Edge(source, target, "cited"))
        for target, source, ref_type, ref_id in db.execute(
            "SELECT r.event_id, w.id, r.ref_type, r.ref_id FROM event_refs r"
            " JOIN events w ON w.subject_type = r.ref_type AND w.subject_id = r.ref_id AND w.id < r.event_id"
            f" WHERE r.event_id IN ({marks}) AND r.ref_type IN ('memory', 'belief')",
            chunk,
        ):
            edges.append(Edge(source, target, "cited", Ref(ref_type, ref_id)))
    return edges


def links_out_of(db: Database, ids: Sequence[int]) -> list[Edge]:
    """Every edge whose cause is one of `ids` (one step toward consequences)."""
    edges: list[Edge] = []
    for chunk, marks in _chunks(ids):
        for target, source in db.execute(f"SELECT id, causation_id FROM events WHERE causation_id IN ({marks})", chunk):
            edges.append(Edge(source, target, "caused"))
        for target, source in db.execute(f"SELECT event_id, parent_id FROM event_parents WHERE parent_id IN ({marks})", chunk):
            edges.append(Edge(source, target, "parent"))
        for target, source in db.execute(
            f"SELECT event_id, ref_id FROM event_refs WHERE ref_type = 'event' AND ref_id IN ({marks})", chunk
        ):
            edges.append(Edge(source, target, "cited"))
        for target, source, ref_type, ref_id in db.execute(
            "SELECT r.event_id, w.id, w.subject_type, w.subject_id FROM events w"
            " JOIN event_refs r ON r.ref_type = w.subject_type AND r.ref_id = w.subject_id AND r.event_id > w.id"
            f" WHERE w.id IN ({marks}) AND w.subject_type IS NOT NULL",
            chunk,
        ):
            edges.append(Edge(source, target, "cited", Ref(ref_type, ref_id)))
    return edges


def _edge_key(edge: Edge) -> tuple[int, int, int, str, int]:
    via = edge.via or Ref("event", 0)
    return (edge.source, edge.target, _KIND_ORDER[edge.kind], via.type, via.id)


def walk(db: Database, event_id: int, limits: WalkLimits | None = None) -> Timeline:
    """Walk the causal links around `event_id` within `limits`."""
    limits = limits or WalkLimits()
    root = get_event(db, event_id)
    hops: dict[int, int] = {root.id: 0}
    reached: dict[int, tuple[int, EdgeKind]] = {}
    frontier = {-1: [root.id], 1: [root.id]}  # direction -> ids reached at the last hop
    bound = {-1: limits.back, 1: limits.forward}
    omitted = {-1: 0, 1: 0}
    by_limit = by_hops = False

    for hop in range(1, MAX_HOPS + 2):
        for direction in (-1, 1):
            ids = frontier[direction]
            if not ids:
                continue
            edges = links_into(db, ids) if direction < 0 else links_out_of(db, ids)
            best: dict[int, tuple[int, int, EdgeKind]] = {}  # new id -> (kind order, from, kind)
            for edge in edges:
                new, old = (edge.source, edge.target) if direction < 0 else (edge.target, edge.source)
                if new in hops:
                    continue
                candidate = (_KIND_ORDER[edge.kind], old, edge.kind)
                if new not in best or candidate < best[new]:
                    best[new] = candidate
            fresh = sorted(best)
            if hop > bound[direction]:
                # Only counted: these lie one hop past the bound.
                if fresh:
                    by_hops = True
                    omitted[direction] += len(fresh)
                frontier[direction] = []
                continue
            room = limits.limit - len(hops)
            taken, left = fresh[:room], fresh[room:]
            if left:
                by_limit = True
                omitted[direction] += len(left)
            for new in taken:
                hops[new] = direction * hop
                reached[new] = (best[new][1], best[new][2])
            frontier[direction] = taken
        if by_limit:
            # The limit is reached: nothing more is taken either way. Both
            # directions of this hop have been looked at, so what each left
            # out at the cut is counted.
            break

    ids = sorted(hops)
    events = get_events(db, ids)
    included = set(ids)
    edges = sorted(
        {e for e in links_into(db, ids) if e.source in included},
        key=_edge_key,
    )
    nodes = [
        Node(
            event=events[i],
            hop=hops[i],
            reached_from=reached[i][0] if i in reached else None,
            reached_by=reached[i][1] if i in reached else None,
        )
        for i in ids
    ]
    _attach_model_calls(db, nodes)
    groups: dict[str, list[int]] = {}
    for node in nodes:
        if node.event.cycle_id:
            groups.setdefault(node.event.cycle_id, []).append(node.event.id)
    return Timeline(
        root=root.id,
        nodes=nodes,
        edges=edges,
        groups=[
            {"cycle_id": cycle, "label": "correlation", "events": members}
            for cycle, members in sorted(groups.items(), key=lambda kv: kv[1][0])
        ],
        truncation=Truncation(by_hops, by_limit, omitted[-1], omitted[1]),
        limits=limits,
    )


def _attach_model_calls(db: Database, nodes: list[Node]) -> None:
    wanted = {ref.id for node in nodes for ref in node.event.refs if ref.type == "model_call"}
    if not wanted:
        return
    calls: dict[int, dict[str, Any]] = {}
    for chunk, marks in _chunks(sorted(wanted)):
        cur = db.execute(f"SELECT * FROM model_calls WHERE id IN ({marks})", chunk)
        cols = [c[0] for c in cur.description]
        for row in cur:
            record = dict(zip(cols, row))
            calls[record["id"]] = record
    for node in nodes:
        node.model_calls = [calls[r.id] for r in node.event.refs if r.type == "model_call" and r.id in calls]


def to_dot(timeline: Timeline) -> str:
    """The walk as a Graphviz digraph; one cluster per cognitive cycle, labelled correlation."""

    def label(node: Node) -> str:
        text = (node.event.text or "").replace("\n", " ")
        if len(text) > 40:
            text = text[:39] + "…"
        parts = [f"#{node.event.id} {node.event.kind}", node.event.actor]
        if text:
            parts.append(text)
        for call in node.model_calls:
            parts.append(f"model call #{call['id']} {call['role']} {call['model']}")
        escaped = (p.replace("\\", "\\\\").replace('"', '\\"') for p in parts)
        return '"' + "\\n".join(escaped) + '"'

    lines = ["digraph timeline {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    in_group: set[int] = set()
    for index, group in enumerate(timeline.groups):
        lines.append(f"  subgraph cluster_{index} {{")
        lines.append(f'    label={json.dumps("cycle " + group["cycle_id"] + " (correlation)")}; style=dashed;')
        for member in group["events"]:
            lines.append(f"    e{member};")
            in_group.add(member)
        lines.append("  }")
    for node in timeline.nodes:
        extra = ", penwidth=2" if node.event.id == timeline.root else ""
        lines.append(f"  e{node.event.id} [label={label(node)}{extra}];")
    styles = {"caused": "solid", "parent": "dashed", "cited": "dotted"}
    for edge in timeline.edges:
        lines.append(f'  e{edge.source} -> e{edge.target} [label="{edge.kind}", style={styles[edge.kind]}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
