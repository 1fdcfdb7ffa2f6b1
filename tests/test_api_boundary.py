"""The API and the dashboard reach the supervisor only through its public methods.

A private member (`sup._check_open`) used from the API layer is a seam the
supervisor does not know it offers: a change to it breaks a route unseen.
Every module under noemad/api and noemad/dashboard is parsed; any attribute
starting with one underscore on something other than `self`/`cls` is named.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_api_layer_uses_no_private_member_of_what_it_is_given() -> None:
    files = sorted([*(ROOT / "noemad" / "api").rglob("*.py"), *(ROOT / "noemad" / "dashboard").rglob("*.py")])
    assert files
    assert [use for path in files for use in private_uses(path)] == []
