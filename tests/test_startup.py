"""noemad's start-up: what it does to be cheap must not change how the daemon runs once it serves.

`bench/cli_status.py` measures the start (CPU to READY=1, modules imported);
these tests hold what those cuts must keep true.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.routing import APIRoute

import noemad.main
import noemad.process.daemon
from noemad.api.shared import shared_app
from noemad.process.daemon import settle_heap


def test_the_collector_is_off_while_noemad_starts_and_on_once_it_serves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """main() starts the daemon with the collector off; the daemon turns it back on, with start-up frozen, when it serves."""
    seen: dict[str, object] = {}

    class Serving:
        """Stands for the daemon: records the collector as serve() finds it, and as settle_heap leaves it."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        async def serve(self) -> None:
            seen["starting"] = gc.isenabled()
            settle_heap()  # as Daemon._serve does right before READY=1
            seen["serving"] = gc.isenabled()
            seen["frozen"] = gc.get_freeze_count() > 0

    monkeypatch.setattr(noemad.process.daemon, "Daemon", Serving)
    monkeypatch.setattr(noemad.main, "setup_logging", lambda *args: None)  # the test process keeps its own log handlers
    monkeypatch.setattr(noemad.main.os, "umask", lambda mask: 0o022)  # and its umask
    monkeypatch.delenv("NOEMA_CLOCK", raising=False)
    try:
        assert noemad.main.main(["--home", str(tmp_path)]) == 0
    finally:
        gc.unfreeze()
        gc.enable()
    assert seen == {"starting": False, "serving": True, "frozen": True}


def test_settle_heap_turns_the_collector_on() -> None:
    """However the collector was left, a serving daemon collects: a long-lived process must free its cycles."""
    gc.disable()
    try:
        settle_heap()
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_routes_document_their_errors_without_a_problem_model_each() -> None:
    """Every route documents the same errors by reference; a Problem answer model is built for one route, not ~70."""
    app = shared_app(manual_clock=False)
    built = [route.path for route in app.routes if isinstance(route, APIRoute) and route.response_fields]
    assert built == ["/api/v1/metrics"]
    doc = app.openapi()
    assert "Problem" in doc["components"]["schemas"]
    ref = {"schema": {"$ref": "#/components/schemas/Problem"}}
    assert doc["paths"]["/api/v1/minds/{mind}"]["get"]["responses"]["404"]["content"] == {"application/problem+json": ref, "application/json": ref}
    assert doc["paths"]["/api/v1/metrics"]["get"]["responses"]["404"]["content"] == {"application/problem+json": ref, "text/plain": ref}


# What a daemon serving with none of them configured never loads: a Litestream replica (httpx, to its
# control socket), an Anthropic model (the SDK), a matrix connector (matrix-nio and aiohttp); and numpy
# until consolidation runs or many links or evidence items are written at once.
ONLY_WHEN_CONFIGURED = ("httpx", "anthropic", "nio", "aiohttp", "numpy")


def test_the_server_stack_imports_only_what_serving_needs() -> None:
    code = (
        "import sys, noemad.main; noemad.main._import_sqlite_utils_without_numpy(); import noemad.process.daemon;"  # as main() does
        " print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))"
    )
    out = subprocess.run([sys.executable, "-c", code, *ONLY_WHEN_CONFIGURED], capture_output=True, text=True, timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_turn_over_a_message_loads_no_numpy(tmp_path: Path) -> None:
    """Only consolidation and bulk writes need numpy: a daemon whose minds only talk never loads it (some 20 MB, 0.1 s)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import noemad.main; noemad.main._import_sqlite_utils_without_numpy();"
        " from pathlib import Path; from inprocess import start_app; app = start_app(Path(sys.argv[2]));"
        " app.api('POST', '/minds', json={'name': 'ada'});"
        " sent = app.api('POST', '/minds/ada/events', json={'kind': 'message', 'author': 'alice', 'text': 'hello there'}).json();"
        " app.wait_for('ada', 'cycle_completed', sent['id']); app.settle('ada'); app.stop(); print('numpy' in sys.modules)"
    )
    tests = str(Path(__file__).resolve().parent)
    out = subprocess.run([sys.executable, "-c", code, tests, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


SAMPLE = '''\
"""A module of wire classes, for the field docstrings."""
from dataclasses import dataclass


@dataclass
class First:
    a: int
    """The first.

This line starts at the margin, inside the string."""
# a comment at the margin, inside the class
    b: int
    """The second."""

    @dataclass
    class Inner:
        c: str
        """Nested."""


def helper() -> None:
    class First:
        z: int
        """Not this one."""


@dataclass(
    frozen=True
)
class Second(
    object,
):
    d: int
    """After a bracket at the margin."""
'''


def test_field_docs_read_from_a_class_alone_match_the_whole_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """wire reads a class's own lines for its fields' docs; what it finds is what parsing the whole module finds."""
    import importlib.util

    from noemad import wire

    path = tmp_path / "wiredocs_sample.py"
    path.write_text(SAMPLE)
    spec = importlib.util.spec_from_file_location("wiredocs_sample", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "wiredocs_sample", module)
    spec.loader.exec_module(module)
    whole = wire._field_docs("wiredocs_sample")
    for qualname in ("First", "First.Inner", "Second"):
        assert wire._class_docs("wiredocs_sample", qualname.split(".")[0]).get(qualname) == whole[qualname]
    assert whole["First"] == {"a": "The first.\n\nThis line starts at the margin, inside the string.", "b": "The second."}
    assert whole["Second"] == {"d": "After a bracket at the margin."}
