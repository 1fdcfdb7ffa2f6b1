"""The supervisor answers the API with typed wire objects, never with dicts, and the document names them.

An answer built as a dict had its shape written twice: once where it was
built, once in the pydantic model the route validated it against. Each is now
a `@wire` dataclass (noemad/wire.py) built by the part of the supervisor that
owns it, served as it is: its fields are the schema. The first test reads
every function under `noemad/runtime/` and fails on one that returns a
`dict[str, Any]` (or a list of them), with a short list of exceptions, each
with its reason, as the layers test keeps its own. The JSON itself is pinned
by tests/test_wire.py.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from inprocess import InProcess

ROOT = Path(__file__).resolve().parents[1]
UNTYPED = ("dict[str, Any]", "list[dict[str, Any]]")

# (module, function): why it returns a dict. The test fails when one is gone, so the list cannot outlive its reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("noemad.runtime.retry", "TurnFailed.to_data"): "a turn_failed event's data, the JSON stored in the event (read back by TurnFailed.of)",
}


def untyped_answers(package: Path) -> list[tuple[str, str, int]]:
    """(module, qualified function name, line) of every function under `package` that returns an untyped dict."""
    found: list[tuple[str, str, int]] = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)

        def visit(body: list[ast.stmt], prefix: str) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if node.returns is not None and ast.unparse(node.returns) in UNTYPED:
                        found.append((module, prefix + node.name, node.lineno))
                    visit(node.body, f"{prefix}{node.name}.")

        visit(ast.parse(path.read_text()).body, "")
    return found


def test_the_supervisor_answers_with_typed_objects() -> None:
    found = untyped_answers(ROOT / "noemad" / "runtime")
    unexpected = [f"{module}.{name} (line {line}) returns a dict: make it a @wire dataclass" for module, name, line in found
                  if (module, name) not in EXCEPTIONS]
    assert unexpected == []
    stale = sorted(set(EXCEPTIONS) - {(module, name) for module, name, _ in found})
    assert stale == [], f"these exceptions no longer happen; remove them from EXCEPTIONS: {stale}"


def test_the_document_names_each_answer_and_describes_its_fields(app: InProcess) -> None:
    doc = app.api("GET", "/openapi.json").json()
    schemas = doc["components"]["schemas"]

    def answer(method: str, path: str, status: str = "200") -> Any:
        return doc["paths"]["/api/v1" + path][method]["responses"][status]["content"]["application/json"]["schema"]

    assert answer("get", "/status") == {"$ref": "#/components/schemas/DaemonStatus"}
    assert [s["$ref"] for s in answer("get", "/minds/{mind}")["anyOf"]] == ["#/components/schemas/MindOverview", "#/components/schemas/MindThen"]
    assert answer("get", "/minds/{mind}/narrative") == {"$ref": "#/components/schemas/NarrativeShown"}
    assert answer("get", "/usage") == {"$ref": "#/components/schemas/Usage"}
    assert answer("put", "/schedules/{kind}") == {"$ref": "#/components/schemas/Schedule"}
    assert answer("post", "/memories/{memory_id}/reject") == {"$ref": "#/components/schemas/Rejected"}
    described = {
        "DaemonStatus": ["replica", "connectors"],
        "MindStatus": ["retry"],
        "TurnRetry": ["attempt", "stimuli"],
        "JobsState": ["running", "scheduler_looked_at"],
        "MindConnectors": ["up", "pending", "given_up"],
        "MindOverview": ["settings_problems", "settings_in_force", "warnings"],
        "NarrativeShown": ["event_id", "text", "plain", "reason", "detail", "model_call", "rephrased_event_id"],
        "NarrativeParts": ["doing", "why", "recently", "resolving", "next"],
        "UsageRow": ["cancelled", "cache_hit_rate", "role", "model", "day", "mind"],
        "Rejected": ["belief", "event"],
    }
    missing = [f"{name}.{field}" for name, fields in described.items() for field in fields
               if not schemas[name]["properties"][field].get("description")]
    assert missing == []
    # A usage row's group key is one of four named fields, not any extra key.
    assert schemas["UsageRow"].get("additionalProperties") is None
