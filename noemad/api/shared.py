"""One built API app served for many engines in one process.

Building the app costs about a quarter of a second of CPU (FastAPI makes
every route's parameter and answer models), which the in-process test tier
paid once per engine, some 300 times a run. Here it is built once per
process (per kind of clock) with routes that find their engine when a request
comes: `serve` wraps the shared app in a thin ASGI layer that sets the
engine for the call, in a context variable, so several engines live at once
(each on its own loop and thread, or side by side on one) never see each
other's state. Tasks a request starts copy the context, so they keep their
engine too. The daemon builds its one app over its own supervisor
(`create_app`), with none of this.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import cast

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from noemad.api.app import build_app
from noemad.clock import ManualClock
from noemad.connectors.manager import Connectors
from noemad.runtime.supervisor import Supervisor


@dataclass(frozen=True)
class Engine:
    """What a request to the shared app is served by."""

    sup: Supervisor
    connectors: Connectors


_ENGINE: ContextVar[Engine] = ContextVar("noemad_engine")
_BUILDING = threading.Lock()  # engines start on their own threads: the app is built once, not once per racer


class _Current:
    """Stands for one part of the engine serving the current request; every attribute is read from it."""

    def __init__(self, part: Callable[[Engine], object]) -> None:
        self._part = part

    def __getattr__(self, name: str) -> object:
        try:
            engine = _ENGINE.get()
        except LookupError:
            raise RuntimeError("the shared app was called with no engine: serve it through noemad.api.shared.serve") from None
        return getattr(self._part(engine), name)


@functools.cache
def _built(manual_clock: bool) -> FastAPI:
    return build_app(cast(Supervisor, _Current(lambda e: e.sup)), cast(Connectors, _Current(lambda e: e.connectors)), manual_clock)


def shared_app(manual_clock: bool) -> FastAPI:
    """The process's one app for engines on a manual clock (or on a real one), built on first use."""
    with _BUILDING:
        return _built(manual_clock)


class Bound:
    """The shared app, answering as one engine."""

    def __init__(self, app: ASGIApp, engine: Engine) -> None:
        self.app = app
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _ENGINE.set(self.engine)
        try:
            await self.app(scope, receive, send)
        finally:
            _ENGINE.reset(token)


def serve(sup: Supervisor, connectors: Connectors) -> Bound:
    """The API over `sup` and `connectors`, as `create_app` builds it, from the process's shared app."""
    return Bound(shared_app(isinstance(sup.clock, ManualClock)), Engine(sup, connectors))
