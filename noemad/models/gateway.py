"""The gateway every model call goes through: settings, holds, budgets, the ledger.

A caller names the role, the mind and what to say (`Prompt`); the gateway
picks the model and its settings for that mind, refuses the call when it may
not be made (no model, a hold, an operator pause, a stopping daemon, a
budget), makes it through the configured provider, records it in the ledger
whatever happened, and arms a hold when the provider states a wait.

Auxiliary roles (critic, judge, narrate, summarise) are refused under a hold;
`respond` waits for the hold to end instead, on the daemon's clock.

A request built on a token-budgeted window (`Prompt.window`) teaches the
gateway: its answer calibrates the mind's characters-per-token ratio for the
model and keeps the window's anchor for the role, and a context-length error
shrinks the ratio before the next call (noemad.models.ratios).

Tool use (`converse`) is a bounded loop of such calls: each round is one
`complete` (so each is admitted, budgeted and in the ledger with its tokens
like any other call). A round whose answer asks for tools has them run by the
caller's `handle` and their results sent back in the next round. The loop
ends at the first answer that asks for no tools, at the first error, or after
`max_rounds` calls: if the last allowed answer still asks for tools, those
calls are NOT run and the conversation ends with `ToolRoundsExhausted` (an
honest failure, rather than one more call made without the tools: the API
refuses a conversation holding tool_use blocks when no tools are offered).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Literal

from noemad.clock import Clock, iso
from noemad.config.models import ModelsSettings
from noemad.config.schema import Config
from noemad.errors import BudgetExceeded, ContextLength, ModelError, NoModelConfigured, Refused, ToolRoundsExhausted, Unavailable
from noemad.models.holds import Holds
from noemad.ledger import ON_BEHALF_OF, CallRecord, record
from noemad.ledger import spent_since as ledger_spent_since
from noemad.models.pricing import cost
from noemad.models.provider import Provider
from noemad.models.ratios import learn, shrink
from noemad.models.settings import budget, price, role_settings
from noemad.models.types import (
    AUXILIARY_ROLES,
    Block,
    Effort,
    ModelRequest,
    ModelResponse,
    Role,
    Tool,
    ToolResult,
    ToolUse,
    Turn,
    Usage,
    WindowUse,
)
from noemad.store.writer import Writer

log = logging.getLogger("noemad.models")
CHARS_PER_TOKEN = 4  # budget estimates before a call: the provider's count is only known after


@dataclass(frozen=True)
class Prompt:
    """What a caller asks of a role: the gateway adds the model and its settings."""

    role: Role
    mind: str
    messages: tuple[Turn, ...]
    system: tuple[Block, ...] = ()
    max_tokens: int | None = None  # None: the role's configured limit
    tools: tuple[Tool, ...] = ()  # what the model may call (see `ModelGateway.converse`)
    window: WindowUse | None = None  # built on a token-budgeted window: the answer calibrates it (noemad.models.ratios)
    effort: Effort | None = None  # None: the role's configured effort (the reply judge sends [gate.judge] effort)
    timeout: float | None = None  # None: the role's configured timeout


ToolHandler = Callable[[ToolUse, ModelResponse], Awaitable[ToolResult]]  # a call, and the answer (ledger row) that asked for it
MAX_ROUNDS = 4  # calls one conversation may make: enough to look, change and answer


@dataclass(frozen=True)
class Conversation:
    """A bounded tool-use exchange: every answer, in order, and the error that ended it, if one did."""

    responses: tuple[ModelResponse, ...]
    error: ModelError | None = None

    @property
    def final(self) -> ModelResponse | None:
        """The answer that ended the conversation (None when an error ended it)."""
        return self.responses[-1] if self.error is None and self.responses else None

    @property
    def call_ids(self) -> tuple[int, ...]:
        """The ledger rows of every call made, the failed one too, in order."""
        ids = [r.call_id for r in self.responses]
        if self.error is not None:
            ids.append(self.error.call_id)
        return tuple(dict.fromkeys(i for i in ids if i is not None))


def estimate_tokens(request: ModelRequest) -> int:
    """A call's most likely size before it is made: its text, and all the output it may produce."""
    return len(request.text()) // CHARS_PER_TOKEN + 1 + request.max_tokens


def day_start(ts: float) -> float:
    """The start of the UTC day holding `ts`: budgets are per UTC day."""
    day = datetime.fromtimestamp(ts, tz=timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp()


def build_provider(settings: ModelsSettings, clock: Clock) -> Provider | None:
    """The provider `[models]` names, or None for `none`."""
    if settings.provider == "anthropic":
        from noemad.models.anthropic import AnthropicProvider

        return AnthropicProvider(settings.anthropic, clock)
    if settings.provider == "scripted":
        from noemad.models.scripted import ScriptedProvider

        return ScriptedProvider.from_settings(settings.scripted)
    return None


class ModelGateway:
    """Makes every model call of one daemon."""

    def __init__(
        self,
        config: Callable[[], Config],
        clock: Clock,
        writer: Writer,
        *,
        paused: Callable[[str], bool] = lambda mind: False,
        stopping: Callable[[], bool] = lambda: False,
        provider: Provider | None = None,
    ) -> None:
        self._config = config
        self._clock = clock
        self._writer = writer
        self._paused = paused
        self._stopping = stopping
        self._settings = config().models
        self.provider = provider if provider is not None else build_provider(self._settings, clock)
        self.holds = Holds(clock)
        self._inflight: dict[tuple[str, str], tuple[int, float]] = {}  # budget reserved by calls under way

    def prepare(self, config: Config) -> Provider | Literal[False] | None:
        """The provider a new config needs, built now so a bad one refuses the config; False if unchanged.

        Raises `ConfigError` (e.g. an unreadable script) without touching the running provider.
        """
        changed_on_disk = getattr(self.provider, "changed_on_disk", None)  # e.g. the scripted provider's file
        if config.models == self._settings and not (changed_on_disk and changed_on_disk()):
            return False
        return build_provider(config.models, self._clock)

    async def swap(self, config: Config, provider: Provider | None) -> None:
        """Take the provider `prepare` built for `config` and close the old one."""
        old, self.provider, self._settings = self.provider, provider, config.models
        if old is not None:
            await old.aclose()

    async def reconfigure(self) -> None:
        """Follow the current config: rebuild the provider if `[models]` changed."""
        config = self._config()
        provider = self.prepare(config)
        if provider is not False:
            await self.swap(config, provider)

    async def aclose(self) -> None:
        if self.provider is not None:
            await self.provider.aclose()

    def config(self) -> Config:
        """The daemon's current config, as the gateway reads it (a turn reads `[gate] mind_tools` from it)."""
        return self._config()

    def configured(self, mind: str, role: Role) -> bool:
        """Whether `role` has a model for `mind`: callers skip building a prompt that nothing would read."""
        return self.provider is not None and bool(role_settings(self._config(), mind, role).model)

    def model_for(self, mind: str, role: Role) -> str | None:
        """The model `role` calls for `mind` (None without one): a window is sized at the mind's ratio for it."""
        if self.provider is None:
            return None
        return role_settings(self._config(), mind, role).model or None

    def request_for(self, prompt: Prompt) -> ModelRequest:
        """The request a prompt becomes, with the role's settings for its mind; `NoModelConfigured` if none."""
        settings = role_settings(self._config(), prompt.mind, prompt.role)
        if self.provider is None or not settings.model:
            raise NoModelConfigured(f"no model is configured for the {prompt.role} role; set [models] in noemad.toml")
        return ModelRequest(
            role=prompt.role,
            mind=prompt.mind,
            model=settings.model,
            messages=prompt.messages,
            system=prompt.system,
            max_tokens=prompt.max_tokens or settings.max_tokens,
            effort=prompt.effort or settings.effort,
            timeout=prompt.timeout or settings.timeout,
            tools=prompt.tools,
            window=prompt.window,
        )

    async def complete(self, prompt: Prompt) -> ModelResponse:
        """Make one call for `prompt`, or raise a `ModelError` (recorded either way)."""
        request = self.request_for(prompt)
        provider = self.provider
        assert provider is not None
        key = (request.mind, request.role)
        reserved = await self._admit(request, provider)
        try:
            return await self._call(request, provider)
        finally:
            # Given back only once the call's ledger row is written: in between, a
            # concurrent call's budget check would count this spend nowhere.
            self._release(key, reserved)

    async def _call(self, request: ModelRequest, provider: Provider) -> ModelResponse:
        """Make an admitted call and record it in the ledger, whatever its outcome."""
        started = time.perf_counter()
        try:
            response = await provider.complete(request)
        except asyncio.CancelledError:
            await self._record(request, provider, "cancelled", Usage(), started, category="cancelled", detail="the caller cancelled the call")
            raise
        except ModelError as exc:
            if exc.retry_after is not None and exc.retryable:
                self.holds.arm(request.model, exc.retry_after, exc.category)
            exc.call_id = await self._record(
                request, provider, "error", Usage(), started, category=exc.category, detail=exc.detail, retry_after=exc.retry_after
            )
            if isinstance(exc, ContextLength) and request.window is not None:
                await self._calibrate(request, None, exc.tokens)
            raise
        except Exception as exc:
            # A provider bug, or an SDK error it did not translate: recorded and
            # turned into a ModelError so callers take their deterministic path.
            log.exception("the %s provider failed unexpectedly", provider.name)
            error = Unavailable(f"the {provider.name} provider failed unexpectedly ({type(exc).__name__}); the daemon log has details")
            error.call_id = await self._record(request, provider, "error", Usage(), started, category="unexpected", detail=error.detail)
            raise error from None
        call_id = await self._record(request, provider, "ok", response.usage, started, stop_reason=response.stop_reason)
        if request.window is not None:
            await self._calibrate(request, response.usage, None)
        return replace(response, model=response.model or request.model, call_id=call_id)

    async def converse(
        self, prompt: Prompt, handle: ToolHandler, max_rounds: int = MAX_ROUNDS, *, done: Callable[[], bool] = lambda: False
    ) -> Conversation:
        """Call, run the tools the answer asks for through `handle`, call again with their results; at most `max_rounds` calls.

        Never raises a `ModelError`: the error that ends a conversation is in
        its `error`, beside the answers before it (their tools already ran).
        `handle` answers every tool use, unknown names too, with a `ToolResult`; it is
        given the answer that asked for it too (its `call_id` is the ledger row to cite).
        `done` is asked after a round's tools ran: True ends the conversation
        there, its last answer final (a tool that ends the turn, such as
        skip_reply, needs no further call to hear the model agree).
        """
        responses: list[ModelResponse] = []
        messages = prompt.messages
        for round_ in range(1, max_rounds + 1):
            try:
                response = await self.complete(replace(prompt, messages=messages))
            except ModelError as exc:
                return Conversation(tuple(responses), exc)
            responses.append(response)
            if not response.asks_for_tools:
                return Conversation(tuple(responses))
            if round_ == max_rounds:
                break
            results = [await handle(use, response) for use in response.tool_uses]
            if done():
                return Conversation(tuple(responses))
            messages = (*messages, response.turn(), Turn("user", tuple(results)))
        asked = ", ".join(use.name for use in responses[-1].tool_uses)
        error = ToolRoundsExhausted(
            f"the {prompt.role} model still asked for tools ({asked}) after {max_rounds} rounds; those calls were not run"
        )
        error.call_id = responses[-1].call_id
        return Conversation(tuple(responses), error)

    async def _calibrate(self, request: ModelRequest, usage: Usage | None, stated_tokens: int | None) -> None:
        """Learn from a request built on a window: its answer calibrates the ratio, a context-length error shrinks it."""
        window, chars, now = request.window, len(request.text()), self._clock.now()
        assert window is not None
        if usage is not None:
            job = lambda db: learn(db, request.mind, request.model, request.role, window, chars, usage.total_input, now)  # noqa: E731
        else:
            job = lambda db: shrink(db, request.mind, request.model, chars, stated_tokens, now)  # noqa: E731
        try:
            await asyncio.shield(self._writer.run(job))
        except Exception:  # a measurement lost is not the call lost: its answer stands, the next one measures again
            log.exception("could not keep the token ratio of %s for mind %s", request.model, request.mind)

    def _release(self, key: tuple[str, str], reserved: tuple[int, float]) -> None:
        tokens, dollars = self._inflight.get(key, (0, 0.0))
        left = (tokens - reserved[0], dollars - reserved[1])
        if left[0] <= 0 and left[1] <= 1e-12:
            self._inflight.pop(key, None)
        else:
            self._inflight[key] = left

    async def _admit(self, request: ModelRequest, provider: Provider) -> tuple[int, float]:
        """Refuse (and record) a call that may not be made now; a `respond` call waits out a hold.

        Returns what the call reserves of its budget while it is in flight, so
        concurrent calls cannot together spend past it; `_release` gives it back.
        """
        auxiliary = request.role in AUXILIARY_ROLES
        if auxiliary and self._stopping():
            await self._refuse(request, provider, Refused("noemad is stopping; auxiliary model calls are not made"))
        if auxiliary and self._paused(request.mind):
            await self._refuse(
                request, provider, Refused(f"mind {request.mind!r} is paused by an operator; auxiliary model calls are not made")
            )
        hold = self.holds.active(request.model)
        while hold is not None:
            if auxiliary:
                await self._refuse(
                    request,
                    provider,
                    Refused(
                        f"{request.model} is on hold until {iso(hold.until)} ({hold.reason}); the call was not made",
                        until=iso(hold.until),
                        retry_after=hold.until - self._clock.now(),
                    ),
                )
            try:
                await self._clock.sleep(hold.until - self._clock.now())
            except asyncio.CancelledError:
                await self._record(
                    request, provider, "cancelled", Usage(), None, category="cancelled",
                    detail=f"the caller cancelled the call while it waited for the hold on {request.model}",
                )
                raise
            hold = self.holds.active(request.model)
        limits = budget(self._config(), request.mind, request.role)
        if limits.tokens_per_day is None and limits.cost_per_day is None:
            return (0, 0.0)
        spent_tokens, spent_cost = await self._writer.run(
            lambda db: ledger_spent_since(db, request.mind, request.role, day_start(self._clock.now()))
        )
        key = (request.mind, request.role)
        pending_tokens, pending_cost = self._inflight.get(key, (0, 0.0))
        spent_tokens += pending_tokens
        spent_cost += pending_cost
        estimate = estimate_tokens(request)
        if limits.tokens_per_day is not None and spent_tokens + estimate > limits.tokens_per_day:
            await self._refuse(
                request,
                provider,
                BudgetExceeded(
                    f"mind {request.mind!r} has spent {spent_tokens:,} of its {limits.tokens_per_day:,} {request.role} tokens today"
                    f" and this call may take {estimate:,}; raise [budgets.{request.role}] or wait for the next UTC day"
                ),
            )
        model_price = price(self._config(), request.model)
        worst = 0.0
        if model_price is not None:
            worst = cost(model_price, Usage(input_tokens=estimate - request.max_tokens, output_tokens=request.max_tokens))
        if limits.cost_per_day is not None and model_price is not None and spent_cost + worst > limits.cost_per_day:
            await self._refuse(
                request,
                provider,
                BudgetExceeded(
                    f"mind {request.mind!r} has spent ${spent_cost:.4f} of its ${limits.cost_per_day:.4f} {request.role} budget today"
                    f" and this call may cost ${worst:.4f}; raise [budgets.{request.role}] or wait for the next UTC day"
                ),
            )
        self._inflight[key] = (pending_tokens + estimate, pending_cost + worst)
        return (estimate, worst)

    async def _refuse(self, request: ModelRequest, provider: Provider, error: Refused) -> None:
        error.call_id = await self._record(
            request, provider, "refused", Usage(), None, category=error.category, detail=error.detail, retry_after=error.retry_after
        )
        raise error

    async def _record(
        self,
        request: ModelRequest,
        provider: Provider,
        outcome: str,
        usage: Usage,
        started: float | None,
        *,
        category: str | None = None,
        detail: str | None = None,
        stop_reason: str | None = None,
        retry_after: float | None = None,
    ) -> int:
        model_price = price(self._config(), request.model)
        rec = CallRecord(
            mind=request.mind,
            role=request.role,
            model=request.model,
            provider=provider.name,
            outcome=outcome,  # type: ignore[arg-type]
            usage=usage,
            cost_usd=cost(model_price, usage) if model_price else 0.0,
            at=self._clock.now(),
            latency_ms=None if started is None else round((time.perf_counter() - started) * 1000, 3),
            error_category=category,
            detail=detail,
            stop_reason=stop_reason,
            retry_after=retry_after,
            actor=ON_BEHALF_OF.get(),
        )
        # Shielded: a cancelled caller still gets its call recorded.
        return await asyncio.shield(self._writer.run(lambda db: record(db, rec)))
