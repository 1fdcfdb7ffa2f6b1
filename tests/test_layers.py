"""Imports point down the layers, and the CLI and the daemon share no code.

Every module under `noemad/` is parsed with `ast`; every import it makes (at
module level, inside a function, or under `TYPE_CHECKING`) is checked
against the layer order below. A module may import its own layer and the
layers under it, never one above. The README's "Architecture" section
describes the same layers; a test keeps the two naming the same parts.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Top to bottom. A layer is a set of module prefixes: "noemad.api" holds the
# package and everything in it; a bare module ("noemad.clock") only itself.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("process", ("noemad.__main__", "noemad.main", "noemad.process")),
    ("api", ("noemad.api", "noemad.dashboard")),
    ("connectors", ("noemad.connectors",)),
    ("runtime", ("noemad.runtime",)),
    ("archive", ("noemad.archive",)),
    ("gate", ("noemad.gate",)),
    ("turn", ("noemad.turn",)),
    ("background", ("noemad.background",)),
    ("cognition", ("noemad.cognition",)),
    ("models", ("noemad.models",)),
    ("governance", ("noemad.governance",)),
    ("records", ("noemad.stimuli", "noemad.wake", "noemad.inbox", "noemad.outbox", "noemad.minds", "noemad.ledger", "noemad.timeline", "noemad.rules", "noemad.archive.cuts")),
    ("events", ("noemad.events",)),
    ("store", ("noemad.store",)),
    ("base", ("noemad", "noemad.clock", "noemad.config", "noemad.errors", "noemad.fields", "noemad.names", "noemad.operator", "noemad.paths", "noemad.validation", "noemad.wire", "noemad.words", "noemad.rules.shape", "noemad.rules.phrasing")),
]

# Known upward imports, each with the work that removes it. The test fails
# when one of them is gone, so the list cannot outlive its reason.
EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module it imports
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(module: str, source: str, is_package: bool = False) -> list[Import]:
    """Every import in `source` of a module of the project (noemad or noemactl), wherever it sits in the file."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from noemad.cognition import narrative` imports the submodule when there is one.
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(module, sub if _exists(sub) else base, node.lineno))
    return list(dict.fromkeys(i for i in found if i.target.split(".")[0] in ("noemad", "noemactl")))


def _exists(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def layer_of(module: str) -> int:
    """The index of the layer holding `module` (0 is the top): its longest matching prefix."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            holds = module == prefix or (module.startswith(prefix + ".") and prefix != "noemad")
            if holds and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py and to the README's Architecture")
    return best[1]


def upward(found: list[Import]) -> list[Import]:
    """The imports in `found` that point to a layer above their module's."""
    return [i for i in found if i.target.startswith("noemad") and layer_of(i.target) < layer_of(i.module)]


def project_imports(package: str) -> list[Import]:
    found: list[Import] = []
    for path in sorted((ROOT / package).rglob("*.py")):
        found += imports(module_name(path), path.read_text(), is_package=path.name == "__init__.py")
    return found


def describe(i: Import) -> str:
    return f"{i.module} (line {i.line}) imports {i.target}: {LAYERS[layer_of(i.module)][0]} may not import {LAYERS[layer_of(i.target)][0]}"


def test_every_module_has_a_layer() -> None:
    missing = []
    for path in sorted((ROOT / "noemad").rglob("*.py")):
        try:
            layer_of(module_name(path))
        except LookupError as exc:
            missing.append(str(exc))
    assert missing == []


def test_no_import_points_up_the_layers() -> None:
    found = upward(project_imports("noemad"))
    unexpected = [describe(i) for i in found if (i.module, i.target) not in EXCEPTIONS]
    assert unexpected == []
    stale = sorted(set(EXCEPTIONS) - {(i.module, i.target) for i in found})
    assert stale == [], f"these exceptions no longer happen; remove them from EXCEPTIONS: {stale}"


def test_the_check_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from noemad.errors import NotFound\n"
        "if TYPE_CHECKING:\n    from noemad.runtime.supervisor import Supervisor\n"
        "def f():\n    from noemad.cognition import narrative\n    import noemad.api\n"
        "from . import connection\n"
    )
    found = upward(imports("noemad.store.example", source))
    assert [(i.target, i.line) for i in found] == [
        ("noemad.runtime.supervisor", 4),
        ("noemad.cognition.narrative", 6),
        ("noemad.api", 7),
    ]
    assert describe(found[0]) == "noemad.store.example (line 4) imports noemad.runtime.supervisor: store may not import runtime"


def test_the_cli_and_the_daemon_share_no_code() -> None:
    # test_cli checks what running noemactl loads; this checks every line of both, lazy imports included.
    cli = [f"{i.module} imports {i.target}" for i in project_imports("noemactl") if i.target.split(".")[0] == "noemad"]
    daemon = [f"{i.module} imports {i.target}" for i in project_imports("noemad") if i.target.split(".")[0] == "noemactl"]
    assert cli == [] and daemon == []


def test_the_readme_names_every_layer_in_order() -> None:
    section = re.search(r"^## Architecture\n(.*?)^## ", (ROOT / "README.md").read_text(), re.S | re.M)
    assert section is not None, "README.md has no Architecture section"
    cells = [line.split("|")[1] for line in section.group(1).splitlines() if line.startswith("| `")]
    named = [sorted(re.findall(r"`([^`]+)`", cell)) for cell in cells]
    expected = [sorted(_readme_name(p) for p in prefixes if p not in ("noemad", "noemad.__main__")) for _, prefixes in LAYERS]
    assert named == [["noemactl/"], *expected]


def _readme_name(prefix: str) -> str:
    name = prefix.removeprefix("noemad.")
    return f"{name}/" if (ROOT / "noemad" / name).is_dir() else name


def test_noemactl_has_no_import_cycle() -> None:
    """Each command module owns its commands and the root app adds them: no noemactl module imports one that imports it back."""
    graph: dict[str, set[str]] = {}
    for i in project_imports("noemactl"):
        if i.target.startswith("noemactl") and i.target != i.module:
            graph.setdefault(i.module, set()).add(i.target)

    def cycle_from(start: str) -> list[str] | None:
        path: list[str] = []

        def visit(node: str) -> list[str] | None:
            if node in path:
                return path[path.index(node):] + [node]
            path.append(node)
            for nxt in sorted(graph.get(node, ())):
                if (found := visit(nxt)) is not None:
                    return found
            path.pop()
            return None

        return visit(start)

    cycles = [c for c in (cycle_from(m) for m in sorted(graph)) if c is not None]
    assert cycles == [], "noemactl import cycles: " + "; ".join(" -> ".join(c) for c in cycles)
