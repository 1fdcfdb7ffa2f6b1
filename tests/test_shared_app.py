"""The in-process tier builds the API once per process and serves every engine from it, each as itself.

Building the app is most of an engine's start (FastAPI makes every route's
models), so `tests/inprocess.py` serves each engine from one shared app
(`noemad.api.shared`). Two engines live at once in one process (as
tests/test_transfer.py runs two hosts) must still each answer with their own
minds, clock, configuration and pages: through the routes, the fast ingest
layer, the body limit and the dashboard's reads of its own API.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from fastapi import FastAPI

from inprocess import InProcess, start_app

HELLO = {"kind": "message", "author": "alice", "text": "hello"}


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[InProcess, InProcess]]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = start_app(tmp_path / "a")
    try:
        second = start_app(tmp_path / "b", "[daemon]\nmax_body_bytes = 1024\n")
        try:
            yield first, second
        finally:
            second.stop()
    finally:
        first.stop()


def test_engines_started_in_one_process_build_the_app_at_most_once(tmp_path: Path) -> None:
    built = 0
    real = FastAPI.__init__

    def counted(self: FastAPI, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        real(self, *args, **kwargs)

    with mock.patch.object(FastAPI, "__init__", counted):
        engines = [start_app(tmp_path / name) for name in ("a", "b", "c") if not (tmp_path / name).mkdir()]
        try:
            assert all(e.api("GET", "/minds").status_code == 200 for e in engines)
        finally:
            for engine in engines:
                engine.stop()
    assert built <= 1


def test_two_live_engines_each_answer_as_themselves(pair: tuple[InProcess, InProcess]) -> None:
    a, b = pair
    assert a.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    assert b.api("POST", "/minds", json={"name": "bob"}).status_code == 201
    assert [m["name"] for m in a.api("GET", "/minds").json()["minds"]] == ["ada"]
    assert [m["name"] for m in b.api("GET", "/minds").json()["minds"]] == ["bob"]

    # The fast ingest layer stores into the engine asked, and only there.
    assert a.api("POST", "/minds/ada/events", json=HELLO).status_code == 201
    assert b.api("POST", "/minds/ada/events", json=HELLO).status_code == 404

    # Each engine's own configuration: b refuses a body a takes.
    big = {**HELLO, "text": "x" * 2000}
    assert a.api("POST", "/minds/ada/events", json=big).status_code == 201
    assert b.api("POST", "/minds/bob/events", json=big).status_code == 413

    # The clock route moves the clock of the engine asked.
    before = b.clock.now()
    assert a.api("POST", "/clock/advance", json={"seconds": 60}).json()["now"] == before + 60
    assert a.clock.now() == before + 60 and b.clock.now() == before

    # The dashboard reads its own engine's API.
    page_a = a.run(a.client.get("/")).text
    page_b = b.run(b.client.get("/")).text
    assert "ada" in page_a and "bob" not in page_a
    assert "bob" in page_b and "ada" not in page_b
