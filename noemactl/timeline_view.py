"""The tree `noemactl timeline` draws: the causal walk around one event.

The graph is noemad's `/events/{id}/chain` answer. Causes hang above the event
(nearest first, each nested under the event it was reached from), the event
itself is highlighted, consequences hang below it the same way. Each branch
names the links that join it to its parent (`◀ caused` toward a cause,
`▶ caused` toward a consequence). Model calls are artefacts under their node,
not hops. Below the tree: other links among the shown events ("also linked"),
the cycle groups (correlation, not causation) and, when the walk was cut,
what was cut and how many events were left out at the cut.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from rich.tree import Tree

from noemactl.render import clip, kind_style, plural, stored_by

TEXT_WIDTH = 60  # characters of an event's text on its node
MAX_HOPS, MAX_EVENTS = 6, 200  # the most any noemad walks; its answer says its own bounds (`limits`)
KIND_ORDER = {"caused": 0, "parent": 1, "cited": 2}

Node = dict[str, Any]
Edge = dict[str, Any]


def node_label(node: Node, root: bool = False) -> Text:
    """`#id kind actor [channel] "text…"  cycle X` for one event."""
    label = Text()
    label.append(f"#{node['id']}", style="bold reverse" if root else "bold")
    label.append(" ")
    label.append(node["kind"], style="bold " + kind_style(node["kind"]) if root else kind_style(node["kind"]))
    label.append(" " + node["actor"], style="magenta")
    if node.get("channel"):
        label.append(f" [{node['channel']}]")
    if node.get("text"):
        label.append(' "' + clip(node["text"], TEXT_WIDTH) + '"')
    if by := stored_by(node):
        label.append(f"  ({by})", style="dim")
    if node.get("cycle_id"):
        label.append(f"  cycle {node['cycle_id']}", style="dim")
    return label


def model_call_label(call: dict[str, Any]) -> Text:
    """A model call as an artefact: id, role, model, tokens, outcome."""
    tokens = f"{call.get('input_tokens', 0)} in / {call.get('output_tokens', 0)} out tokens"
    cached = [
        f"{call[key]} {name}" for key, name in (("cache_read_tokens", "cache read"), ("cache_write_tokens", "cache write")) if call.get(key)
    ]
    if cached:
        tokens += " (" + ", ".join(cached) + ")"
    text = f"⚙ model call #{call.get('id')} {call.get('role', '?')} {call.get('model', '?')}: {tokens}"
    if call.get("outcome") and call["outcome"] != "ok":
        text += f", {call['outcome']}"
    return Text(text, style="dim italic")


def _via(edge: Edge) -> str:
    via = edge.get("via")
    return f" via {via['type']} {via['id']}" if via else ""


def _edge_names(edges: Sequence[Edge], first: str | None) -> str:
    kinds = sorted({e["kind"] + _via(e) for e in edges}, key=lambda k: (k.split()[0] != first, KIND_ORDER.get(k.split()[0], 9), k))
    return ", ".join(kinds) if kinds else (first or "linked")


class _Walk:
    def __init__(self, graph: dict[str, Any]) -> None:
        self.graph = graph
        self.root: int = graph["root"]
        self.nodes: dict[int, Node] = {n["id"]: n for n in graph["nodes"]}
        self.children: dict[int, list[Node]] = defaultdict(list)
        for node in graph["nodes"]:
            if node.get("reached_from") is not None:
                self.children[node["reached_from"]].append(node)
        self.pairs: dict[tuple[int, int], list[Edge]] = defaultdict(list)
        for edge in graph["edges"]:
            self.pairs[(edge["from"], edge["to"])].append(edge)

    def tree_pair(self, node: Node) -> tuple[int, int]:
        """(cause, consequence) of the link that reached `node`."""
        other = node["reached_from"]
        return (node["id"], other) if node["hop"] < 0 else (other, node["id"])

    def add_node(self, branch: Tree, node: Node, direction: int) -> None:
        arrow = "◀" if direction < 0 else "▶"
        kinds = _edge_names(self.pairs.get(self.tree_pair(node), []), node.get("reached_by"))
        label = Text.assemble((f"{arrow} {kinds}", "yellow"), "  ", node_label(node))
        child = branch.add(label)
        self.add_calls(child, node)
        for nxt in sorted(self.children.get(node["id"], []), key=lambda n: n["id"]):
            if (nxt["hop"] < 0) == (direction < 0):
                self.add_node(child, nxt, direction)

    @staticmethod
    def add_calls(branch: Tree, node: Node) -> None:
        for call in node.get("model_calls") or []:
            branch.add(model_call_label(call))

    def side(self, direction: int) -> list[Node]:
        return sorted(
            (n for n in self.children.get(self.root, []) if (n["hop"] < 0) == (direction < 0)),
            key=lambda n: n["id"],
        )

    def also_linked(self) -> list[tuple[int, int, str]]:
        """The links the tree does not draw: one line per pair of events, naming every link between them.

        A pair can be joined twice (an event cites another, and a belief it
        wrote): both are named on the pair's one line, as on a tree branch.
        """
        in_tree = {self.tree_pair(n) for n in self.nodes.values() if n.get("reached_from") is not None}
        return [
            (source, target, _edge_names(edges, None))
            for (source, target), edges in sorted(self.pairs.items())
            if (source, target) not in in_tree
        ]


def tree(graph: dict[str, Any]) -> list[RenderableType]:
    """The walk as a rich Tree plus the lines below it."""
    walk = _Walk(graph)
    root = walk.nodes[walk.root]
    top = Tree(Text.assemble(("timeline of ", "bold"), (f"#{walk.root}", "bold"), f" in {root['mind']}"), guide_style="dim")
    truncation = graph.get("truncation") or {}
    for direction, title in ((-1, "causes"), (1, "consequences")):
        shown = [n for n in walk.nodes.values() if (n["hop"] < 0 if direction < 0 else n["hop"] > 0)]
        if direction > 0:
            here = top.add(Text.assemble(("● ", "bold"), node_label(root, root=True)))
            walk.add_calls(here, root)
        if shown:
            branch = top.add(Text(f"{title} ({len(shown)})", style="bold"))
            for node in walk.side(direction):
                walk.add_node(branch, node, direction)
        else:
            top.add(Text(f"{title}: {_none_note(graph, direction)}", style="dim"))
    out: list[RenderableType] = [top]
    if graph.get("archive"):
        out.insert(0, Text(f"walked inside the archive {graph['archive']}: #{graph['root']} is no longer in the store", style="yellow"))
    extra = walk.also_linked()
    if extra:
        out.append(Text("also linked:", style="bold"))
        for source, target, kinds in extra:
            out.append(Text(f"  #{source} ─{kinds}→ #{target}"))
    groups = graph.get("groups") or []
    if groups:
        out.append(Text("cycles (correlation, not causation):", style="bold"))
        for group in groups:
            members = ", ".join(f"#{i}" for i in group["events"])
            out.append(Text(f"  cycle {group['cycle_id']}: {members}"))
    out.extend(archived_lines(graph))
    cut = truncation_line(graph) if truncation.get("truncated") else None
    if cut:
        out.append(Text(cut, style="yellow"))
    return out


def archived_lines(graph: dict[str, Any]) -> list[Text]:
    """Where the walk ran into an archive (or, inside one, out of it): one line per cut link, grouped by file.

    (A walk inside an archive says so above its tree.)
    """
    lines: list[Text] = []
    cuts = graph.get("cuts") or []
    if not cuts:
        return lines
    heading = "the walk stops at links out of this archive" if graph.get("archive") else "the linked events are archived; the walk stops at them"
    lines.append(Text(f"cut here ({heading}):", style="bold"))
    for archive, path in sorted({(c["archive"], c["path"]) for c in cuts}):
        # archive 0: a walk inside an archive file, at a link out of it
        where = "outside this archive (in the store, or in an older archive)" if archive == 0 else f"in {path}"
        lines.append(Text(f"  {where}:", style="yellow"))
        for cut in (c for c in cuts if c["archive"] == archive):
            arrow = "◀" if cut["side"] == "cause" else "▶"
            lines.append(Text(f"    #{cut['event']} {arrow} {cut['link']} #{cut['archived']}"))
    return lines


def _none_note(graph: dict[str, Any], direction: int) -> str:
    option = "back" if direction < 0 else "forward"
    omitted = (graph.get("truncation") or {}).get(f"omitted_{option}", 0)
    if graph["limits"][option] == 0:
        return f"not walked (--{option} 0)" + (f"; {plural(omitted, 'event')} one hop away" if omitted else "")
    if omitted:
        return "none shown (the walk reached its event limit)"
    side = "cause" if direction < 0 else "consequence"
    if any(c["side"] == side and c["event"] == graph["root"] for c in graph.get("cuts") or []):
        return "none here: the links lead out of this archive (cut here, below)" if graph.get("archive") else "none here: the links lead to archived events (cut here, below)"
    return "none recorded"


def truncation_line(graph: dict[str, Any]) -> str | None:
    """What cut the walk short, how many events were left out at the cut, and how to see more; None if nothing was cut.

    A direction walked 0 hops is not cut (its heading says it was not
    walked), and only a direction with events past its bound was cut by hops.
    """
    t, limits = graph["truncation"], graph["limits"]
    max_hops, max_events = limits.get("max_hops", MAX_HOPS), limits.get("max_events", MAX_EVENTS)
    omitted = {"back": t["omitted_back"], "forward": t["omitted_forward"]}
    walked = [d for d in ("back", "forward") if limits[d] > 0 and omitted[d]]
    by_hops = [d for d in walked if "hops" in t["by"]]
    by_limit = "limit" in t["by"]
    cuts = []
    if len(by_hops) == 2 and limits["back"] == limits["forward"]:
        cuts.append(f"{plural(limits['back'], 'hop')} each way")
    elif by_hops:
        cuts.append(" and ".join(f"{plural(limits[d], 'hop')} {d}" for d in by_hops))
    if by_limit:
        cuts.append(f"the limit of {plural(limits['limit'], 'event')}")
    if not cuts:
        return None
    nouns = {"back": "more cause", "forward": "more consequence"}
    left = " and ".join(plural(omitted[d], nouns[d]) for d in walked) + " not shown"
    if any(limits[d] < max_hops for d in by_hops) or (by_limit and limits["limit"] < max_events):
        hint = f"walk again with --back/--forward/--limit (this noemad walks at most {plural(max_hops, 'hop')} each way and {max_events} events)"
    else:
        hint = f"walk again from an event at the edge, e.g. `noemactl timeline {_edge_event(graph)}`"
    return f"cut at {' and at '.join(cuts)}: {left}; {hint}"


def _edge_event(graph: dict[str, Any]) -> int:
    nodes = graph["nodes"]
    if graph["truncation"]["omitted_back"]:
        return int(min(nodes, key=lambda n: (n["hop"], n["id"]))["id"])
    return int(max(nodes, key=lambda n: (n["hop"], -n["id"]))["id"])
