"""The ingest endpoint's hot path, served beneath FastAPI's routing.

`POST /api/v1/minds/{mind}/events` is the one endpoint whose rate matters:
every stimulus of every mind arrives through it. FastAPI's per-request
machinery (the request object, route matching, dependency solving) costs
about as much CPU as storing the event, so this ASGI layer serves JSON
bodies for that path directly: the same pydantic model validates the raw
bytes, the same `ingest` stores the stimulus, the same `problem_of` answers
errors. Requests it does not take (another content type) go on to
the FastAPI route of the same path, which also defines the endpoint in the
OpenAPI document.
"""

from __future__ import annotations

import re

from pydantic import TypeAdapter, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from noemad.api.problems import problem_of
from noemad.errors import NoemaError
from noemad.operator import Operator, of_scope
from noemad.runtime.ingested import Ingested
from noemad.runtime.supervisor import Supervisor
from noemad.stimuli import StimulusIn
from noemad.wire import dump_json, from_body

INGEST_PATH = re.compile(r"/api/v1/minds/([^/]+)/events")
_STIMULUS: TypeAdapter[StimulusIn] = TypeAdapter(StimulusIn)


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
            return match.group(1) if value.split(b";")[0].strip().lower() == b"application/json" else None
    return match.group(1)  # no content type: JSON, as FastAPI assumes


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
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
        response: Response
        try:
            raw = await _read_body(receive)  # the body limit is enforced by the layer above
            event = await ingest(self.sup, mind, _STIMULUS.validate_json(raw), of_scope(scope))
            response = Response(dump_json(event), status_code=201, media_type="application/json")
        except (NoemaError, ValidationError, StarletteHTTPException) as exc:
            response = problem_of(exc)  # what the route's exception handlers answer
        await response(scope, receive, send)
