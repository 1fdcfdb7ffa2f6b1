"""The Anthropic provider: the Messages API through the official SDK.

One `AsyncAnthropic` client per provider. A `ModelRequest` becomes one
`messages.create` call: text blocks for the system prompt and every turn, a
`cache_control` breakpoint (`{"type": "ephemeral", "ttl": "5m" | "1h"}`)
exactly where a `Block` has `cache` set, `output_config.effort` only when the
role's effort is not `none`, and the request's timeout. The answer's text
blocks are joined; usage is split four ways, cache writes also by TTL.

Tools, as the Messages API has them: a request's `Tool`s become `tools`
(`{"name", "description", "input_schema"}`, sent only when there are any, so
a request without tools is byte for byte what it was before tools existed);
a `ToolUse` in an assistant turn is a `{"type": "tool_use", "id", "name",
"input"}` block and a `ToolResult` in a user turn a `{"type": "tool_result",
"tool_use_id", "content"}` block with `"is_error": true` when it failed. The
answer's `tool_use` blocks come back as the response's `tool_uses`.

The API key comes from `[models.anthropic] api_key_file` (a bare name is
looked up in `$CREDENTIALS_DIRECTORY`, as systemd's `LoadCredential=` puts it)
or else from the variable `api_key_env`. Without a usable key the provider
still builds, and each call fails as `AuthFailed` without making a request;
the key is looked for again on the next call. The key is only ever handed to
the SDK as a client header: no message this module composes names it, SDK
exceptions are mapped to our own with texts composed here (status, the API's
error type and message, request id) and raised outside the handler so that
neither `__cause__` nor `__context__` holds the SDK's exception (whose
request carries the headers).

The key goes in the `x-api-key` header. This SDK release (anthropic 2.14)
sends an `api_key` as `Authorization: Bearer …` — its own credentials code
says Bearer auth needs an OAuth beta header, and the API documents
`x-api-key` for keys — so the client is built with `X-Api-Key` set and
`Authorization` omitted.

Retries. The SDK retries connection errors, timeouts, 408/409/429 and 5xx
itself, `max_retries` times, with exponential backoff (0.5 s to 8 s). When
the API states a wait (`retry-after` or `retry-after-ms`), this SDK would
sleep that long inside the call, however long (it caps at ~49 days), on the
wall clock, invisibly. We stop that: a response that states a positive wait
is never retried by the SDK (a middleware sets `x-should-retry: false` on
it) and is raised at once with `retry_after`, so the gateway arms a hold —
visible in status, on the daemon's clock, shared by every call to the
model: auxiliary roles are refused under it and `respond` waits it out.
Faults without a stated wait are the SDK's to retry. `timeout` bounds each
attempt (httpx applies it to connecting, each read and each write, so it is
an inactivity bound, not a total), so one call may take up to
(max_retries + 1) × timeout plus backoff.

Cancelling the task that awaits `complete` cancels the HTTP request: the
connection is closed and the API sees the client go away. `aclose` takes no
new calls and closes the client once the calls in flight have ended.
"""

from __future__ import annotations

import email.utils
import logging
import re
from typing import Any, cast

import anthropic
from anthropic import AsyncAnthropic

from noemad.clock import Clock
from noemad.config.models import AnthropicSettings
from noemad.errors import (
    AuthFailed,
    ContextLength,
    InvalidRequest,
    ModelError,
    ModelTimeout,
    Overloaded,
    RateLimited,
    Refused,
    Unavailable,
)
from noemad.models.apikey import KeyProblem, resolve_api_key
from noemad.models.types import Block, Content, ModelRequest, ModelResponse, ToolResult, ToolUse, Turn, Usage

log = logging.getLogger("noemad.models.anthropic")

_TOO_LONG = re.compile(r"prompt is too long:\s*([\d,]+)\s*tokens\s*>\s*([\d,]+)", re.IGNORECASE)
_MAX_MESSAGE = 400  # characters of the API's error message kept in a detail


def _block(block: Block) -> dict[str, Any]:
    param: dict[str, Any] = {"type": "text", "text": block.text}
    if block.cache is not None:
        param["cache_control"] = {"type": "ephemeral", "ttl": block.cache}
    return param


def _content(block: Content) -> dict[str, Any]:
    if isinstance(block, ToolUse):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResult):
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content}
        if block.is_error:
            result["is_error"] = True
        return result
    return _block(block)


def _turn(turn: Turn) -> dict[str, Any]:
    return {"role": turn.role, "content": [_content(b) for b in turn.content]}


def request_params(request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for one request."""
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [_turn(t) for t in request.messages],
        "timeout": request.timeout,
    }
    if request.system:
        params["system"] = [_block(b) for b in request.system]
    if request.effort != "none":
        params["output_config"] = {"effort": request.effort}
    if request.tools:
        params["tools"] = [tool.to_data() for tool in request.tools]
    return params


def parse_retry_after(headers: Any, now: float) -> float | None:
    """Seconds the response asks us to wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date, counted from `now`)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _redact(text: str, key: str | None) -> str:
    if key and key in text:
        text = text.replace(key, "[redacted]")
    return text


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


class AnthropicProvider:
    """Makes model calls to the Anthropic Messages API."""

    name = "anthropic"

    def __init__(self, settings: AnthropicSettings, clock: Clock) -> None:
        self.settings = settings
        self._clock = clock  # an HTTP-date retry-after is counted from the daemon's clock, as holds are
        self._key: str | None = None
        self._client: AsyncAnthropic | None = None
        self._closed = False
        self._inflight = 0  # calls awaiting the API now
        self._connect()

    def _connect(self) -> str | None:
        """Build the client if a key is found; the reason there is none otherwise."""
        try:
            key = resolve_api_key(self.settings)
        except KeyProblem as exc:
            return str(exc)
        self._key = key
        self._client = AsyncAnthropic(
            api_key=key,  # explicit, so the SDK neither reads its own variables nor looks for profiles
            base_url=self.settings.base_url,
            max_retries=self.settings.max_retries,
            default_headers=cast("dict[str, str]", {"X-Api-Key": key, "Authorization": anthropic.omit}),
            middleware=[self._stated_waits_make_holds],
            open_telemetry=False,  # noemad exports no traces; keep ANTHROPIC_OPEN_TELEMETRY_* from adding spans
        )
        return None

    async def _stated_waits_make_holds(self, request: Any, call_next: Any) -> Any:
        """SDK middleware: never let the SDK sleep out a wait the API states; the gateway holds instead."""
        response = await call_next(request)
        raw = response.http_response
        if raw.status_code >= 400:
            wait = parse_retry_after(raw.headers, self._clock.now())
            if wait is not None and wait > 0:
                raw.headers["x-should-retry"] = "false"
        return response

    @property
    def base_url(self) -> str:
        return str(self._client.base_url) if self._client is not None else (self.settings.base_url or "the SDK's default")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._closed:
            raise Refused("the Anthropic provider is closed (noemad is stopping or reconfiguring); the call was not made")
        if self._client is None:
            problem = self._connect()
            if problem is not None:
                raise AuthFailed(problem)
        client = self._client
        assert client is not None
        self._inflight += 1
        try:
            try:
                message = await client.messages.create(**request_params(request))
            except anthropic.AnthropicError as exc:
                error = self._error(exc, request)
            else:
                return self._response(message, request)
            # Raised here, outside the handler, so the SDK's exception is neither its cause nor its context.
            raise error
        finally:
            self._inflight -= 1
            if self._closed and self._inflight == 0:
                await self._close_client()

    async def aclose(self) -> None:
        """Take no new calls; close the client now, or when the last call in flight ends.

        The gateway closes the old provider when a reload changes `[models]`: calls already
        made finish on it rather than failing as their connections close under them.
        """
        self._closed = True
        if self._inflight == 0:
            await self._close_client()

    async def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- answers ------------------------------------------------------------

    @staticmethod
    def _response(message: Any, request: ModelRequest) -> ModelResponse:
        text = "".join(getattr(b, "text", "") for b in message.content if getattr(b, "type", None) == "text")
        u = message.usage
        creation = getattr(u, "cache_creation", None)
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
            cache_write_1h_tokens=(creation.ephemeral_1h_input_tokens or 0) if creation is not None else 0,
            output_tokens=u.output_tokens or 0,
        )
        uses = tuple(
            ToolUse(b.id, b.name, dict(b.input)) for b in message.content if getattr(b, "type", None) == "tool_use"
        )
        return ModelResponse(
            text=text, stop_reason=message.stop_reason or "", usage=usage, model=message.model or request.model, tool_uses=uses
        )

    def _error(self, exc: anthropic.AnthropicError, request: ModelRequest) -> ModelError:
        """Our error for an SDK exception, in words composed here (never the SDK's own text)."""
        model = request.model
        if isinstance(exc, anthropic.APITimeoutError):
            return ModelTimeout(f"the Anthropic API did not answer {model} within {request.timeout:g} s; the call timed out")
        if isinstance(exc, anthropic.APIConnectionError):
            cause = exc.__cause__
            why = type(cause).__name__ if cause is not None else "connection error"
            reason = _clip(_redact(str(cause), self._key)) if cause is not None and str(cause) else ""
            return Unavailable(f"cannot reach the Anthropic API at {self.base_url} ({why}{': ' + reason if reason else ''})")
        if isinstance(exc, anthropic.APIStatusError):
            return self._status_error(exc, model)
        if isinstance(exc, anthropic.APIResponseValidationError):
            return ModelError(f"the Anthropic API answered {model} with a body that is not a message (HTTP {exc.status_code})")
        return ModelError(f"the Anthropic SDK failed the call to {model} ({type(exc).__name__})")

    def _status_error(self, exc: anthropic.APIStatusError, model: str) -> ModelError:
        status = exc.status_code
        kind = exc.type if isinstance(exc.type, str) else None
        said = _clip(_redact(exc.api_message, self._key)) if isinstance(exc.api_message, str) else ""
        headers = exc.response.headers
        retry_after = parse_retry_after(headers, self._clock.now())
        request_id = exc.request_id if isinstance(exc.request_id, str) else None
        what = f"HTTP {status}" + (f" {kind}" if kind else "") + (f": {said}" if said else "")
        where = f"; request {_redact(request_id, self._key)}" if request_id else ""
        wait = f"; it asked to wait {retry_after:g} s" if retry_after is not None else ""
        if status == 429:
            return RateLimited(f"the Anthropic API rate-limited {model} ({what}{where}){wait}", retry_after=retry_after)
        if status == 529 or kind == "overloaded_error":
            return Overloaded(f"the Anthropic API is overloaded ({what}{where}){wait}", retry_after=retry_after)
        if status in (401, 403):
            return AuthFailed(
                f"the Anthropic API refused the credentials ({what}{where}); check the key in"
                f" {self.settings.api_key_file or '$' + self.settings.api_key_env}"
            )
        if status == 408:
            return ModelTimeout(f"the Anthropic API timed out the request for {model} ({what}{where})", retry_after=retry_after)
        if status == 409 or status >= 500:
            return Unavailable(f"the Anthropic API failed the call to {model} ({what}{where}){wait}", retry_after=retry_after)
        too_long = _TOO_LONG.search(said) if status in (400, 413) else None
        if too_long is not None:
            tokens = int(too_long.group(1).replace(",", ""))
            return ContextLength(f"the prompt is too long for {model} ({what}{where})", tokens=tokens)
        return InvalidRequest(f"the Anthropic API refused the request to {model} ({what}{where})")
