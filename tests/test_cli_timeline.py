"""`noemactl timeline` (its own code, run in process against the engine), and its renderers on hand-made graphs.

A message makes the mind run a turn: `cycle_started` (caused by the message,
which is also its parent) and `cycle_completed` (caused by `cycle_started`),
both in one cycle. Walking from `cycle_started` gives one cause and one
consequence. Shapes a daemon without models cannot produce yet (model calls,
cited memories, deep chains) are checked on the renderers directly, with
graphs shaped like the `/events/{id}/chain` answer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from inprocess import InProcess, start_app
from rich.console import Console

from noemactl.dot import to_dot
from noemactl.timeline_view import tree


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    """One engine for the module (in place of conftest's per-test one): every case here only reads the timeline of the same turn."""
    engine = start_app(tmp_path_factory.mktemp("timeline"))
    yield engine
    engine.stop()


@pytest.fixture(scope="module")
def turn(app: InProcess) -> dict[str, int]:
    """One message to mind `ada` and the turn it caused: the ids of message, cycle_started, attention and cycle_completed."""
    mind = "ada"
    assert app.api("POST", "/minds", json={"name": mind}).status_code == 201
    out = app.ctl("say", mind, "what is the weather like?", "--from", "alice")
    assert out.returncode == 0, out.stderr
    message = int(out.stdout.split()[2])
    story = app.wait_for(mind, "narrative_updated", since=message)  # the last event of a turn
    completed = app.api("GET", f"/events/{story['causation_id']}").json()
    started = completed["causation_id"]
    [attention] = app.api("GET", f"/minds/{mind}/events", params={"kind": "attention"}).json()["events"]
    assert message < started < attention["id"] < completed["id"] < story["id"]
    return {"message": message, "started": started, "attention": attention["id"], "completed": completed["id"], "narrative": story["id"]}


def lines_of(out: subprocess.CompletedProcess[str]) -> list[str]:
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout
    return out.stdout.splitlines()


def index(lines: list[str], needle: str) -> int:
    [found] = [i for i, line in enumerate(lines) if needle in line]
    return found


# --- against the engine -----------------------------------------------------------


def test_tree_shows_causes_above_and_consequences_below(app: InProcess, turn: dict[str, int]) -> None:
    m, s, c = turn["message"], turn["started"], turn["completed"]
    lines = lines_of(app.ctl("timeline", str(s)))
    assert lines[0] == f"timeline of #{s} in ada"
    cause = index(lines, f"#{m} message")
    root = index(lines, f"● #{s} cycle_started")
    after = index(lines, f"#{c} cycle_completed")
    a = turn["attention"]
    assert index(lines, "causes (1)") < cause < root < index(lines, "consequences (3)") < index(lines, f"#{a} attention") < after
    assert index(lines, f"#{turn['narrative']} narrative_updated") > after  # it follows the completed cycle

    # edge kinds on the branches: the message both caused and is a parent of the cycle
    assert f'◀ caused, parent  #{m} message user:alice [cli] "what is the weather like?"' in lines[cause]
    assert f"▶ caused  #{c} cycle_completed process:runtime  cycle ada/1" in lines[after]
    # the cycle's text says why the mind woke (the default behaviour: no wake rule)
    assert f'#{s} cycle_started process:runtime "woke: ' in lines[root] and lines[root].endswith("  cycle ada/1")

    # the cycle group: correlation, not causation
    group = index(lines, "cycles (correlation, not causation):")
    assert lines[group + 1] == f"  cycle ada/1: #{s}, #{a}, #{c}, #{turn['narrative']}"
    assert not any(line.startswith("cut at") for line in lines)
    # the workspace cites the message it attended to: a link off the tree, listed
    assert any(f"#{m}" in line and f"#{a}" in line and "cited" in line for line in lines[index(lines, "also linked"):])


def test_walking_from_the_message_nests_the_chain(app: InProcess, turn: dict[str, int]) -> None:
    m, s, c = turn["message"], turn["started"], turn["completed"]
    lines = lines_of(app.ctl("timeline", str(m)))
    assert "causes: none recorded" in lines[1]
    first = index(lines, f"▶ caused, parent  #{s} cycle_started")
    second = index(lines, f"▶ caused  #{c} cycle_completed")
    # #c hangs under #s, one level deeper
    indent = lambda line: len(line) - len(line.lstrip("│ "))  # noqa: E731
    assert second == first + 1 and indent(lines[second]) > indent(lines[first])


def test_json_is_the_apis_chain_unchanged(app: InProcess, turn: dict[str, int]) -> None:
    s = turn["started"]
    api = app.api("GET", f"/events/{s}/chain").json()
    assert app.ctl_json("timeline", str(s)) == api
    assert json.loads(app.ctl("timeline", str(s), "--json").stdout) == api
    assert list(api) == ["root", "nodes", "edges", "groups", "truncation", "limits", "cuts"]
    limited = app.api("GET", f"/events/{s}/chain", params={"back": 1, "forward": 0, "limit": 5}).json()
    assert app.ctl_json("timeline", str(s), "--back", "1", "--forward", "0", "--limit", "5") == limited


def test_dot_is_graphviz_with_a_cluster_per_cycle_and_labelled_edges(app: InProcess, turn: dict[str, int]) -> None:
    m, s, c = turn["message"], turn["started"], turn["completed"]
    out = app.ctl("timeline", str(s), "--dot")
    assert out.returncode == 0, out.stderr
    dot = out.stdout
    assert dot.startswith("digraph timeline {\n") and dot.endswith("}\n")
    assert "  subgraph cluster_0 {\n" in dot
    assert '    label="cycle ada/1 (correlation)"; style=dashed;\n' in dot
    assert f"    e{s};\n    e{turn['attention']};\n    e{c};\n" in dot
    assert f'  e{m} -> e{s} [label="caused", style=solid];' in dot
    assert f'  e{m} -> e{s} [label="parent", style=dashed];' in dot
    assert f'  e{s} -> e{c} [label="caused", style=solid];' in dot
    assert f'  e{s} [label="#{s} cycle_started\\nprocess:runtime\\nwoke: ' in dot and "style=bold, penwidth=2];" in dot
    assert f'  e{m} [label="#{m} message\\nuser:alice [cli]\\nwhat is the weather like?"];' in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_dot_renders_with_graphviz(app: InProcess, turn: dict[str, int]) -> None:
    dot = app.ctl("timeline", str(turn["started"]), "--dot").stdout
    rendered = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=30)
    assert rendered.returncode == 0, rendered.stderr


def test_back_0_says_what_was_cut_and_how_many_were_left_out(app: InProcess, turn: dict[str, int]) -> None:
    s, c = turn["started"], turn["completed"]
    lines = lines_of(app.ctl("timeline", str(s), "--back", "0"))
    # Not walking causes is what was asked, not a cut: the heading says it, with what lies one hop back.
    assert "causes: not walked (--back 0); 1 event one hop away" in lines[1]
    assert any(f"#{c} cycle_completed" in line for line in lines)
    assert not any(line.startswith("cut at") for line in lines)


def test_event_limit_says_what_was_cut(app: InProcess, turn: dict[str, int]) -> None:
    lines = lines_of(app.ctl("timeline", str(turn["started"]), "--limit", "1"))
    assert "causes: none shown (the walk reached its event limit)" in lines[1]
    assert lines[-1].startswith("cut at the limit of 1 event: 1 more cause and 2 more consequences not shown;")


def test_unknown_event_is_a_sentence_and_exit_4(app: InProcess) -> None:
    out = app.ctl("timeline", "999")
    assert (out.returncode, out.stdout) == (4, "")
    assert out.stderr == "noemactl: event 999 does not exist; list a mind's events with `noemactl events MIND`\n"
    assert app.ctl("timeline", "0").returncode == 2
    assert app.ctl("timeline", "1", "--forward", "7").returncode == 2


# --- the renderers on hand-made graphs ---------------------------------------------


def node(id: int, hop: int, kind: str, reached_from: int | None = None, reached_by: str | None = None, **extra: Any) -> dict[str, Any]:
    base = {
        "id": id, "mind": "ada", "kind": kind, "actor": "process:test", "at": "2026-01-01T00:00:00.000Z",
        "channel": None, "text": None, "data": {}, "cycle_id": None, "causation_id": None, "parents": [],
        "refs": [], "subject": None, "hop": hop, "reached_from": reached_from, "reached_by": reached_by, "model_calls": [],
    }  # fmt: skip
    return {**base, **extra}


CALL = {"id": 7, "role": "respond", "model": "claude-test", "input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100, "outcome": "ok"}
GRAPH: dict[str, Any] = {
    "root": 4,
    "nodes": [
        node(1, -2, "message", 2, "caused", actor="user:bob", channel="cli", text="x" * 100),
        node(2, -1, "belief_formed", 4, "cited", cycle_id="ada/1"),
        node(3, -1, "observation", 4, "parent", text='say "hi"\nand \\ go'),
        node(4, 0, "reply", cycle_id="ada/2", model_calls=[CALL], text="fine"),
        node(5, 1, "cycle_completed", 4, "caused", cycle_id="ada/2"),
        node(6, 2, "narrated", 5, "cited", model_calls=[{**CALL, "id": 8, "role": "narrate", "outcome": "timeout"}]),
    ],
    "edges": [
        {"from": 1, "to": 2, "kind": "caused", "via": None},
        {"from": 1, "to": 3, "kind": "parent", "via": None},
        {"from": 2, "to": 4, "kind": "cited", "via": {"type": "belief", "id": 9}},
        {"from": 3, "to": 4, "kind": "parent", "via": None},
        {"from": 4, "to": 5, "kind": "caused", "via": None},
        {"from": 5, "to": 6, "kind": "cited", "via": {"type": "memory", "id": 2}},
    ],
    "groups": [{"cycle_id": "ada/1", "label": "correlation", "events": [2]}, {"cycle_id": "ada/2", "label": "correlation", "events": [4, 5]}],
    "truncation": {"truncated": True, "by": ["hops", "limit"], "omitted_back": 3, "omitted_forward": 0},
    "limits": {"back": 6, "forward": 6, "limit": 200, "max_hops": 6, "max_events": 200},
}


def render(renderables: list[Any]) -> list[str]:
    console = Console(width=200, no_color=True, highlight=False, markup=False, soft_wrap=True)
    with console.capture() as captured:
        for item in renderables:
            console.print(item)
    return captured.get().splitlines()


def test_tree_nests_deep_chains_shows_model_calls_and_extra_links() -> None:
    lines = render(tree(GRAPH))
    assert lines == [
        "timeline of #4 in ada",
        "├── causes (3)",
        "│   ├── ◀ cited via belief 9  #2 belief_formed process:test  cycle ada/1",
        "│   │   └── ◀ caused  #1 message user:bob [cli] \"" + "x" * 59 + "…\"",
        "│   └── ◀ parent  #3 observation process:test \"say \"hi\" and \\ go\"",
        "├── ● #4 reply process:test \"fine\"  cycle ada/2",
        "│   └── ⚙ model call #7 respond claude-test: 120 in / 30 out tokens (100 cache read)",
        "└── consequences (2)",
        "    └── ▶ caused  #5 cycle_completed process:test  cycle ada/2",
        "        └── ▶ cited via memory 2  #6 narrated process:test",
        "            └── ⚙ model call #8 narrate claude-test: 120 in / 30 out tokens (100 cache read), timeout",
        "also linked:",
        "  #1 ─parent→ #3",
        "cycles (correlation, not causation):",
        "  cycle ada/1: #2",
        "  cycle ada/2: #4, #5",
        "cut at 6 hops back and at the limit of 200 events: 3 more causes not shown;"
        " walk again from an event at the edge, e.g. `noemactl timeline 1`",
    ]


def test_dot_escapes_labels_and_marks_cited_edges() -> None:
    dot = to_dot(GRAPH)
    assert "  subgraph cluster_1 {\n" in dot and 'label="cycle ada/2 (correlation)"' in dot
    assert '  e3 [label="#3 observation\\nprocess:test\\nsay \\"hi\\" and \\\\ go"];' in dot
    assert '  e4 [label="#4 reply\\nprocess:test\\nfine\\nmodel call #7 respond claude-test", style=bold, penwidth=2];' in dot
    assert '  e2 -> e4 [label="cited via belief 9", style=dotted];' in dot
