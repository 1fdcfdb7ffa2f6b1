"""Errors as problem+json, and the request body limit.

Every error the API answers has a status, a title and a detail sentence that
says what is wrong and what to do. Bad input is always a 4xx; a 5xx means a
bug, and its detail points at the daemon log.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from noemad.errors import NoemaError
from noemad.stimuli import STIMULUS_KINDS

log = logging.getLogger("noemad.api")
PROBLEM = "application/problem+json"
_KINDS = ", ".join(repr(k) for k in STIMULUS_KINDS[:-1]) + f" or {STIMULUS_KINDS[-1]!r}"  # 'message', ... or 'outcome'


def problem(status: int, title: str, detail: str, retry_after: float | None = None) -> JSONResponse:
    """A problem+json response; `retry_after` (seconds) becomes a Retry-After header."""
    return JSONResponse(
        {"type": "about:blank", "title": title, "status": status, "detail": detail},
        status_code=status,
        media_type=PROBLEM,
        headers=None if retry_after is None else {"retry-after": str(max(1, math.ceil(retry_after)))},
    )


def error_problem(exc: NoemaError) -> JSONResponse:
    """The problem+json for one of our errors, with Retry-After when it says when to try again (a full disk)."""
    return problem(exc.status, exc.title, exc.detail, getattr(exc, "retry_after", None) if exc.status in (503, 507) else None)


def describe_request_errors(errors: list[dict[str, Any]]) -> tuple[int, str]:
    """Turn pydantic's request errors into a status and one sentence."""
    if any(e.get("type") == "json_invalid" for e in errors):
        where = next(e for e in errors if e.get("type") == "json_invalid")
        reason = (where.get("ctx") or {}).get("error", "not valid JSON")
        return 400, f"the request body is not valid JSON ({reason}); send a JSON object"
    parts = []
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body",)]
        # Drop the discriminator tag pydantic inserts ("message", "observation").
        if len(loc) > 1 and loc[0] in STIMULUS_KINDS:
            loc = loc[1:]
        field = ".".join(loc) or "body"
        kind = err.get("type", "")
        if kind == "extra_forbidden":
            parts.append(f"{field}: unknown field; remove it")
        elif kind == "missing":
            parts.append(f"{field}: required")
        elif kind == "union_tag_not_found":
            parts.append(f"kind: required; use {_KINDS}")
        elif kind == "union_tag_invalid":
            tag = (err.get("ctx") or {}).get("tag", "")
            parts.append(f"kind: {tag!r} is not a stimulus kind; use {_KINDS}")
        elif kind == "model_attributes_type" or kind == "dict_type":
            parts.append(f"{field}: must be a JSON object")
        elif kind == "value_error":  # our own validators' sentence, without pydantic's "Value error, " before it
            parts.append(f"{field}: {(err.get('ctx') or {}).get('error', err.get('msg', 'invalid'))}")
        else:
            parts.append(f"{field}: {err.get('msg', 'invalid')}")
    return 422, "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error as problem+json."""

    @app.exception_handler(NoemaError)
    async def _noema(_: Request, exc: NoemaError) -> JSONResponse:
        return error_problem(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        status, detail = describe_request_errors(list(exc.errors()))
        return problem(status, "Malformed body" if status == 400 else "Invalid input", detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            detail = f"no such endpoint: {request.method} {request.url.path}; the API is described at /api/v1/openapi.json"
        elif exc.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}; see /api/v1/openapi.json"
        else:
            detail = str(exc.detail)
        return problem(exc.status_code, _title(exc.status_code), detail)

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error: %s", exc)
        return problem(500, "Internal error", "noemad hit an internal error; the daemon log has the details")


def _title(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _too_large(limit: int) -> str:
    return f"the request body is larger than {limit} bytes; send less, or raise daemon.max_body_bytes in noemad.toml"


class BodyLimit:
    """Refuses bodies larger than the configured limit with 413, before they are parsed."""

    def __init__(self, app: ASGIApp, limit: Callable[[], int]) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit()
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await self._refuse(send, 400, "Bad request", "Content-Length is not a number")
                    return
                if declared > limit:
                    await self._refuse_large(send, limit)
                    return
        seen = 0

        async def counted() -> Message:
            # A chunked body has no Content-Length: count it as it arrives.
            # FastAPI lets an HTTPException from here through to the handlers.
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise StarletteHTTPException(413, detail=_too_large(limit))
            return message

        await self.app(scope, counted, send)

    async def _refuse_large(self, send: Send, limit: int) -> None:
        await self._refuse(send, 413, "Body too large", _too_large(limit))

    @staticmethod
    async def _refuse(send: Send, status: int, title: str, detail: str) -> None:
        body = json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", PROBLEM.encode()), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
