"""Errors as problem+json, and the request body limit.

Every error the API answers has a status, a title and a detail sentence that
says what is wrong and what to do. Bad input is always a 4xx; a 5xx means a
bug, and its detail points at the daemon log.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from noemad.errors import NoemaError
from noemad.stimuli import STIMULUS_KINDS
from noemad.validation import Noun, number, read_error

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


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    """Where in the request an error is, as a person writes it: `claim.subject`, `mentions[2]`, `source`."""
    path = [p for p in loc if p not in ("body", "query", "path")]
    # Drop the discriminator tag pydantic inserts ("message", "observation").
    if len(path) > 1 and path[0] in STIMULUS_KINDS:
        path = path[1:]
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not isinstance(part, str) or "[" in part or "(" in part:
            continue  # pydantic's names for union members and validators ("function-after[...]"): not a field
        else:
            text += ("." if text else "") + part
    return text or "the body"


def _given(value: Any) -> str:
    """A value as quoted in a sentence, clipped."""
    if isinstance(value, bytes):  # a body that is not JSON at all arrives as its bytes
        value = value.decode("utf-8", "replace")
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def _count(n: Any, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


# What a value should have been, by the type pydantic wanted, in a JSON body's words.
_NOUNS: dict[Noun, str] = {
    "whole": "a whole number", "number": "a number", "finite": "a finite number",
    "bool": "true or false",
    "string": "text (a JSON string)", "unicode": "valid Unicode text",
    "list": "a list (a JSON array)",
    "table": "a JSON object",
}
_BOUNDS = {"ge": "at least", "le": "at most", "gt": "more than", "lt": "less than"}


def describe_error(err: Mapping[str, Any]) -> str:
    """One of pydantic's request errors as a sentence that names the field, what is wrong and what is allowed.

    The body's reader of the one translator (`noemad.validation` reads the
    error; `noemad.config.problems` words the same for a file's keys):
    pattern, length, range, type, missing and extra fields. A validator of
    ours (a name, a due time) already wrote its sentence; it is used as it is.
    """
    problem = read_error(err)
    field = _field(problem.loc)
    ctx, given = problem.ctx, problem.given
    match problem.category:
        case "missing":
            return f"{field} is missing; it is required here"
        case "unknown":
            return f"{field} is not a field here; remove it (a typo?)"
        case "tag" if problem.kind == "union_tag_not_found":
            return f"kind is missing; use {_KINDS}"
        case "tag":
            return f"kind {ctx.get('tag', '')!r} is not a stimulus kind; use {_KINDS}"
        case "ours":
            sentence = problem.sentence
            head = field.split("[")[0].split(".")[-1]
            # A sentence that names its field already ("author 'x y' is not a name") needs no prefix; "mentions[2]" keeps it.
            named = sentence.startswith(head) or sentence.startswith(head.rstrip("s") + " ")
            return sentence if field == "the body" or (named and "[" not in field) else f"{field}: {sentence}"
        case "type" if problem.noun is not None:
            return f"{field} must be {_NOUNS[problem.noun]}, not {_given(given)}"
        case "text_length" if problem.too_long:
            return f"{field} is {_count(len(given) if isinstance(given, str) else '?', 'character')} long; at most {ctx.get('max_length')} are allowed"
        case "text_length":
            low = ctx.get("min_length", 1)
            return f"{field} is empty; give some text" if low == 1 else f"{field} is too short: give at least {_count(low, 'character')}"
        case "list_length" if problem.too_long:
            return f"{field} has {_count(ctx.get('actual_length', '?'), 'item')}; at most {ctx.get('max_length')} are allowed"
        case "list_length":
            return f"{field} has {_count(ctx.get('actual_length', '?'), 'item')}; give at least {ctx.get('min_length')}"
        case "pattern":
            return f"{field} {_given(given)} is not in the form allowed here (the pattern {ctx.get('pattern')})"
        case "bound" if problem.limits:
            key, limit = next(iter(problem.limits.items()))  # a bound error names the one it broke
            return f"{field} must be {_BOUNDS[key]} {number(limit)}, not {_given(given)}"
        case "choice":
            return f"{field} must be {ctx.get('expected', 'one of the listed values')}, not {_given(given)}"
    return f"{field}: {problem.msg}"


def describe_request_errors(errors: Sequence[Mapping[str, Any]]) -> tuple[int, str]:
    """Turn pydantic's request errors into a status and one sentence (one clause per error)."""
    if any(e.get("type") == "json_invalid" for e in errors):
        where = next(e for e in errors if e.get("type") == "json_invalid")
        reason = (where.get("ctx") or {}).get("error", "not valid JSON")
        return 400, f"the request body is not valid JSON ({reason}); send a JSON object"
    return 422, "; ".join(dict.fromkeys(describe_error(err) for err in errors))


RequestError = NoemaError | ValidationError | RequestValidationError | StarletteHTTPException
"""What a request can fail with before or while it is served: each has one problem+json (`problem_of`)."""


def problem_of(exc: RequestError) -> JSONResponse:
    """The one answer to a request's error, for every route and for the fast ingest path (noemad.api.fastpath)."""
    if isinstance(exc, NoemaError):
        return error_problem(exc)
    if isinstance(exc, (ValidationError, RequestValidationError)):
        status, detail = describe_request_errors(list(exc.errors()))
        return problem(status, "Malformed body" if status == 400 else "Invalid input", detail)
    return problem(exc.status_code, _title(exc.status_code), str(exc.detail))


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error as problem+json."""

    @app.exception_handler(NoemaError)
    async def _noema(_: Request, exc: NoemaError) -> JSONResponse:
        return problem_of(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return problem_of(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            detail = f"no such endpoint: {request.method} {request.url.path}; the API is described at /api/v1/openapi.json"
        elif exc.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}; see /api/v1/openapi.json"
        else:
            return problem_of(exc)
        return problem(exc.status_code, _title(exc.status_code), detail)

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception) -> JSONResponse:
        return internal_error(exc)


def internal_error(exc: Exception) -> JSONResponse:
    """The answer to an error nothing expected: logged with its traceback, answered 500 without its details."""
    log.exception("unhandled error: %s", exc)
    return problem(500, "Internal error", "noemad hit an internal error; the daemon log has the details")


_TITLES = {400: "Bad request", 413: "Body too large"}  # as `BodyLimit` titles its own refusals


def _title(status: int) -> str:
    from http import HTTPStatus

    if status in _TITLES:
        return _TITLES[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _too_large(limit: int) -> str:
    return f"the request body is larger than {limit} bytes; send less, or raise daemon.max_body_bytes in noemad.toml"


class BodyLimit:
    """Refuses bodies larger than the configured limit with 413, before they are parsed.

    The paths in `unlimited` take a body of any size: a file streamed to disk, never parsed in memory (a mind's import).
    """

    def __init__(self, app: ASGIApp, limit: Callable[[], int], unlimited: tuple[str, ...] = ()) -> None:
        self.app = app
        self.limit = limit
        self.unlimited = unlimited

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self.unlimited:
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
