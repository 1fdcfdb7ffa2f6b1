"""The ingest endpoint's hot path, served beneath FastAPI's routing.

`POST /api/v1/minds/{mind}/events` is the one endpoint whose rate matters:
every stimulus of every mind arrives through it. FastAPI's per-request
machinery (the request object, route matching, dependency solving) costs
about as much CPU as storing the event, so this ASGI layer serves JSON
bodies for that path directly: the same pydantic model validates the raw
bytes, the same supervisor call stores the stimulus, the same problem+json
answers errors. Requests it does not take (another content type) go on to
the FastAPI route of the same path, which also defines the endpoint in the
OpenAPI document.
"""

from __future__ import annotations

import re

from pydantic import TypeAdapter, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from noemad.api.problems import describe_request_errors, error_problem, problem
from noemad.api.schemas import AssertionIn, ClaimIn, CorrectionIn, GoalIn, MessageIn, ObservationIn, PredictionIn, StimulusIn
from noemad.cognition.predictions import parse_due
from noemad.errors import NoemaError
from noemad.operator import of_scope
from noemad.runtime.supervisor import Supervisor
from noemad.wire import dump_json
from noemad.stimuli import (
    Assertion,
    Claim,
    Correction,
    GoalStimulus,
    Message,
    Observation,
    OutcomeStimulus,
    PredictionStimulus,
    Stimulus,
)

INGEST_PATH = re.compile(r"/api/v1/minds/([^/]+)/events")
_STIMULUS: TypeAdapter[StimulusIn] = TypeAdapter(StimulusIn)


def _claim(body: ClaimIn | None) -> Claim | None:
    return None if body is None else Claim(body.proposition, body.subject, body.stance)


def to_stimulus(body: StimulusIn, now: float) -> Stimulus:
    """The engine's stimulus for a validated request body; `now` (the daemon's clock) places a prediction's due span."""
    if isinstance(body, MessageIn):
        return Message(
            author=body.author, text=body.text, channel=body.channel, mentions=tuple(body.mentions),
            dm=body.dm, reply_to=body.reply_to, bot=body.bot, tags=tuple(dict.fromkeys(body.tags)),
        )
    if isinstance(body, ObservationIn):
        return Observation(source=body.source, text=body.text, data=body.data, claim=_claim(body.claim), tags=tuple(dict.fromkeys(body.tags)))
    if isinstance(body, AssertionIn):
        claim = _claim(body.claim)
        assert claim is not None
        return Assertion(source=body.source, claim=claim, channel=body.channel)
    if isinstance(body, CorrectionIn):
        return Correction(belief=body.belief, reason=body.reason, status=body.status, confidence=body.confidence)
    if isinstance(body, GoalIn):
        return GoalStimulus(title=body.title, goal=body.goal, progress=body.progress, status=body.status, note=body.note)
    if isinstance(body, PredictionIn):
        return PredictionStimulus(body.proposition, body.subject, body.confidence, parse_due(body.due, now))
    return OutcomeStimulus(prediction=body.prediction, result=body.result, observed=body.observed)


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
            try:
                body = _STIMULUS.validate_json(raw)
            except ValidationError as exc:
                status, detail = describe_request_errors(list(exc.errors()))
                response = problem(status, "Malformed body" if status == 400 else "Invalid input", detail)
            else:
                event = await self.sup.ingest(mind, to_stimulus(body, self.sup.clock.now()), operator=of_scope(scope))
                response = Response(dump_json(event), status_code=201, media_type="application/json")
        except NoemaError as exc:
            response = error_problem(exc)
        except StarletteHTTPException as exc:
            response = problem(exc.status_code, "Body too large" if exc.status_code == 413 else "Bad request", str(exc.detail))
        await response(scope, receive, send)
