"""`noemactl timeline --dot`: the causal walk as a Graphviz digraph.

Built from the `/events/{id}/chain` JSON (noemactl never imports noemad, so it
cannot reuse `noemad.timeline.to_dot`; keep the two alike): one dashed cluster
per cognitive cycle labelled "cycle X (correlation)", edges labelled by kind
(caused solid, parent dashed, cited dotted), the root drawn bold, model calls
on their node's label. Render with `noemactl timeline 12 --dot | dot -Tsvg`.
"""

from __future__ import annotations

from typing import Any

from noemactl.output import visible
from noemactl.render import clip

LABEL_TEXT = 40
STYLES = {"caused": "solid", "parent": "dashed", "cited": "dotted"}


def _escape(value: str) -> str:
    # Control characters shown, as the human views show them: a DOT file is read in terminals too.
    return visible(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def quote(value: str) -> str:
    """A DOT double-quoted string."""
    return '"' + _escape(value) + '"'


def _label(node: dict[str, Any]) -> str:
    parts = [f"#{node['id']} {node['kind']}", node["actor"]]
    if node.get("channel"):
        parts[-1] += f" [{node['channel']}]"
    if node.get("text"):
        parts.append(clip(node["text"], LABEL_TEXT))
    for call in node.get("model_calls") or []:
        parts.append(f"model call #{call.get('id')} {call.get('role')} {call.get('model')}")
    return '"' + "\\n".join(_escape(p) for p in parts) + '"'  # parts joined by DOT line breaks


def to_dot(graph: dict[str, Any]) -> str:
    """The walk as a Graphviz digraph."""
    lines = ["digraph timeline {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    for index, group in enumerate(graph.get("groups") or []):
        lines.append(f"  subgraph cluster_{index} {{")
        lines.append(f"    label={quote('cycle ' + group['cycle_id'] + ' (correlation)')}; style=dashed;")
        lines.extend(f"    e{member};" for member in group["events"])
        lines.append("  }")
    for node in graph["nodes"]:
        extra = ", style=bold, penwidth=2" if node["id"] == graph["root"] else ""
        lines.append(f"  e{node['id']} [label={_label(node)}{extra}];")
    for edge in graph["edges"]:
        label = edge["kind"]
        if edge.get("via"):
            label += f" via {edge['via']['type']} {edge['via']['id']}"
        lines.append(f"  e{edge['from']} -> e{edge['to']} [label={quote(label)}, style={STYLES.get(edge['kind'], 'solid')}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
