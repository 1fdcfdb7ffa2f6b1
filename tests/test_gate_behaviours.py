"""The gate's behaviours are found by name and dispatched in one place.

Each wake-rule behaviour has its state class in `noemad/gate/behaviours/<kind>.py`,
behind one protocol; `state_for` is the one place that picks it (a `match`),
so no module asks a behaviour which class it is (34 isinstance branches did).
"""

from __future__ import annotations

import ast
from pathlib import Path

from noemad.gate.behaviours import state_for
from noemad.rules.shape import Always, Behaviour, Debounce, Defer, JudgeBehaviour, PassiveSample, RateLimit

ROOT = Path(__file__).resolve().parents[1]
BEHAVIOURS: list[Behaviour] = [Always(), Defer(), Debounce(2000), RateLimit(3, 60_000), PassiveSample(10), JudgeBehaviour(5000)]
CLASSES = {"Always", "Defer", "Debounce", "RateLimit", "PassiveSample", "JudgeBehaviour"}


def test_each_behaviour_has_its_state_in_a_module_named_for_it() -> None:
    for behaviour in BEHAVIOURS:
        state = state_for(behaviour)
        assert type(state).__module__ == f"noemad.gate.behaviours.{behaviour.kind}"
        assert state.gathers == (behaviour.kind in ("debounce", "judge"))
        assert (state.judge is not None) == (behaviour.kind == "judge")


def _asks_behaviour_class(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2):
        return False
    kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
    return any(isinstance(k, ast.Name) and k.id in CLASSES for k in kinds)


def test_no_module_dispatches_on_a_behaviours_class() -> None:
    paths = sorted((ROOT / "noemad").rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in paths
        for node in ast.walk(ast.parse(path.read_text()))
        if _asks_behaviour_class(node)
    ]
    assert found == []


def test_no_module_of_the_gate_is_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "noemad" / "gate").rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}
