"""The ingest endpoint's hot path, served in front of FastAPI.

`POST /api/v1/minds/{mind}/events` is the one endpoint whose rate matters:
every stimulus of every mind arrives through it. FastAPI's per-request
machinery (its middlewares, the request object, route matching, dependency
solving) costs about as much CPU as storing the event, so this ASGI layer,
the outermost one (`FrontDoorAPI`), serves JSON bodies for that path
directly: the same pydantic model validates the raw bytes, the same `ingest`
stores the stimulus, the same `problem_of` answers errors, behind the same
`BodyLimit` as every other request (the one layer in front of it). Requests it does not take
(another content type) go on to the FastAPI route of the same path, which
also defines the endpoint in the OpenAPI document.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from pydantic import TypeAdapter, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from noemad.api.problems import BodyLimit, internal_error, problem_of
from noemad.errors import NoemaError
from noemad.operator import Operator, of_scope
from noemad.runtime.ingested import Ingested
from noemad.runtime.supervisor import Supervisor
from noemad.stimuli import StimulusIn
from noemad.wire import dump_json, from_body

INGEST_PATH = re.compile(r"/api/v1/minds/([^/]+)/events")
_STIMULUS: TypeAdapter[StimulusIn] = TypeAdapter(StimulusIn)
_JSON = b"application/json"


async def ingest(sup: Supervisor, mind: str, body: StimulusIn, operator: Operator | None) -> Ingested:
    """Store the stimulus a validated body asks for (both ingest paths serve it so); `now` for a prediction's due span is the daemon's clock."""
    return await sup.ingest(mind, from_body(body, sup.clock.now()), operator=operator)


def _takes(scope: Scope) -> str | None:
    """The mind named by an ingest request this layer serves, else None."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    match = INGEST_PATH.fullmatch(scope["path"])
    if match is None:
        return None
    for name, value in scope["headers"]:
        if name == b"content-type":
            return match.group(1) if value.split(b";")[0].strip().lower() == _JSON else None
    return match.group(1)  # no content type: JSON, as FastAPI assumes


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()  # BodyLimit's: a body past the limit is refused (413) as it arrives
        if message["type"] == "http.disconnect":
            raise StarletteHTTPException(400, "the client went away before sending the whole body")
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class FastIngest:
    """Serves JSON ingest requests; passes everything else on."""

    def __init__(self, app: ASGIApp, sup: Supervisor) -> None:
        self.app = app
        self.sup = sup

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mind = _takes(scope)
        if mind is None:
            await self.app(scope, receive, send)
            return
        try:
            raw = await _read_body(receive)
            body = dump_json(await ingest(self.sup, mind, _STIMULUS.validate_json(raw), of_scope(scope)))
        except (NoemaError, ValidationError, StarletteHTTPException) as exc:
            await problem_of(exc)(scope, receive, send)  # what the routes' exception handlers answer
            return
        except Exception as exc:  # noqa: BLE001  (as FastAPI's error middleware, which this layer is in front of, answers it)
            await internal_error(exc)(scope, receive, send)
            return
        # Sent as two plain messages, with no Response object to build: the same headers Starlette's would carry.
        await send({"type": "http.response.start", "status": 201, "headers": [(b"content-type", _JSON), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})


class FrontDoorAPI(FastAPI):
    """FastAPI with the body limit and the fast ingest path in front of the middlewares it stacks (its error handler,
    telemetry, its own body limit).

    Each of those layers wraps every request's `receive` and `send`; together they cost the ingest path more
    CPU than validating its body does.
    """

    def __init__(self, *, sup: Supervisor, limit: Callable[[], int], unlimited: tuple[str, ...], **settings: Any) -> None:
        super().__init__(**settings)
        self._front = (sup, limit, unlimited)

    def build_middleware_stack(self) -> ASGIApp:
        sup, limit, unlimited = self._front
        return BodyLimit(FastIngest(super().build_middleware_stack(), sup), limit, unlimited)
