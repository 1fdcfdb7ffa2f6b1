"""The ingest endpoint's hot path, served in front of FastAPI.

`POST /api/v1/minds/{mind}/events` is the one endpoint whose rate matters:
every stimulus of every mind arrives through it. FastAPI's per-request
machinery (its middlewares, the request object, route matching, dependency
solving) costs about as much CPU as storing the event, so this ASGI layer,
the outermost one (`FrontDoorAPI`), serves JSON bodies for that path
directly: the same pydantic model validates the raw bytes, the same `ingest`
stores the stimulus, the same `problem_of` answers errors, under the same
body limit as every other request (`BodyLimit`'s). Requests it does not take
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

from noemad.api.problems import internal_error, problem_of, too_large
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


def _takes(scope: Scope) -> tuple[str, bytes | None] | None:
    """The mind named by an ingest request this layer serves, and its Content-Length as sent; else None."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    match = INGEST_PATH.fullmatch(scope["path"])
    if match is None:
        return None
    length: bytes | None = None
    for name, value in scope["headers"]:
        if name == b"content-type":
            if value.split(b";")[0].strip().lower() != _JSON:
                return None
        elif name == b"content-length":
            length = value
    return match.group(1), length  # no content type: JSON, as FastAPI assumes


async def _read_body(receive: Receive, length: bytes | None, limit: int) -> bytes:
    """The whole body, refused (413) past `limit` bytes whether its length was declared or not."""
    if length is not None:
        try:
            declared = int(length)
        except ValueError:
            raise StarletteHTTPException(400, "Content-Length is not a number") from None
        if declared > limit:
            raise StarletteHTTPException(413, too_large(limit))
    chunks = []
    seen = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise StarletteHTTPException(400, "the client went away before sending the whole body")
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > limit:  # a chunked body has no Content-Length: counted as it arrives
            raise StarletteHTTPException(413, too_large(limit))
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


class FastIngest:
    """Serves JSON ingest requests; passes everything else on."""

    def __init__(self, app: ASGIApp, sup: Supervisor, limit: Callable[[], int]) -> None:
        self.app = app
        self.sup = sup
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        taken = _takes(scope)
        if taken is None:
            await self.app(scope, receive, send)
            return
        mind, length = taken
        try:
            raw = await _read_body(receive, length, self.limit())
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
    """FastAPI with the fast ingest path in front of the middlewares it stacks (its error handler, telemetry, body limits).

    Each of those layers wraps every request's `receive` and `send`; together they cost the ingest path more
    CPU than validating its body does.
    """

    def __init__(self, *, sup: Supervisor, limit: Callable[[], int], **settings: Any) -> None:
        super().__init__(**settings)
        self._front = (sup, limit)

    def build_middleware_stack(self) -> ASGIApp:
        sup, limit = self._front
        return FastIngest(super().build_middleware_stack(), sup, limit)
