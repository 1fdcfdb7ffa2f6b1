"""The reply judge: one model call, role `judge`, that answers REPLY or WAIT for a judge rule's batch.

`ReplyJudge.decide` is the `Judge` of `noemad.gate.judge.port`: it builds the
request (`noemad.gate.judge.prompt`) from the mind's window as its reply
would read it now, calls the `judge` role through the `ModelGateway` (so
holds, operator pauses, shutdown, budgets and the ledger apply to it as to
any call; its usage is the `judge` role's in `noemactl usage`, never counted
as the mind's turns or replies: R1-8), and reads the verdict.

It never raises but `CancelledError` (a turn that starts while the judge
decides cancels it: the call is cancelled, recorded as such in the ledger,
and there is no verdict). Every other way it can end is an outcome:

- a verdict (`reply`/`wait`) with its reason, the call cited, its tokens;
- a failure (`failed`): an error, no verdict in the answer, or the
  `[gate.judge] timeout` passing on the daemon's clock. A timed-out call is
  cancelled, so a verdict arriving after it is never read;
- a refusal (R1-1, `refusal` and `refused_until`): the call was not made
  under a model hold (until the hold ends), a budget (until the next UTC
  day), an operator pause, a stopping daemon or a provider being swapped
  (until `REFUSAL_RETRY` from now: the gate holds the batch and asks again);
- unwired (`unwired`, a refusal too): no judge model is configured for the
  mind (the actor checks before it asks; this is the config changing in
  between); asked again, the actor finds the rule unwired and runs it as a
  debounce.

The budget (R1-4) is an estimate: characters at a calibrated
characters-per-token ratio. `[gate.judge] max_input_tokens` (default 90,000,
under the 100K price line of claude-haiku-5-5) is never read below 4,000.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

from noemad.clock import Clock
from noemad.config.gate import JudgeSettings
from noemad.config.mind import MindSettings
from noemad.errors import BudgetExceeded, ModelError, NoModelConfigured, Refused
from noemad.events import get_events
from noemad.gate.judge import prompt as text
from noemad.gate.judge.port import JudgeOutcome, JudgeRequest, available
from noemad.models import Block, ModelGateway, ModelResponse, Prompt, Turn
from noemad.models.gateway import day_start
from noemad.models.ratios import calibrated, ratio_for
from noemad.models.settings import role_settings
from noemad.store import Store
from noemad.turn.context import DEFAULT_PERSONA
from noemad.turn.window import window

log = logging.getLogger("noemad.judge")

MAX_TOKENS = 4096  # only what is generated is billed; a low-effort verdict is ~50-70 tokens
REFUSAL_RETRY = 60.0  # seconds: when to ask again after a refusal that states no end
BREAKPOINTS = 4  # the API's most per request: the judge's system prompt needs none of its own (it leads the cached prefix)


@dataclass(frozen=True)
class Built:
    """A judge request and what it was built from."""

    prompt: Prompt
    chars: int  # characters sent (the estimate's input)
    estimated_tokens: int


class ReplyJudge:
    """Decides REPLY or WAIT for judge rules' batches, for every mind of one daemon."""

    def __init__(self, store: Store, clock: Clock, gateway: ModelGateway, settings: Callable[[str], MindSettings]) -> None:
        self._store = store
        self._clock = clock
        self._gateway = gateway
        self._settings = settings

    def build(self, request: JudgeRequest, cfg: JudgeSettings, model: str) -> Built:
        """The judge's prompt for `request` now, read from the store with no side effects.

        The conversation is the token-budgeted window the reply reads too
        (noemad.turn.window), at the judge's budget less what the rest of the
        request takes, rendered in envelopes; the persona (8% of the budget)
        and the batch (10%) come after it.
        """
        db = self._store.reader()
        mind = request.mind
        ratio = ratio_for(db, mind, model)
        budget = cfg.input_budget
        total = ratio.chars(budget)
        settings = self._settings(mind)
        persona = settings.persona or DEFAULT_PERSONA.format(mind=mind)
        ids = list(dict.fromkeys([*request.unanswered, *request.batch]))
        found = get_events(db, ids)
        batch = [found[i] for i in ids if i in found]
        system = text.system_prompt(mind)
        about = text.render_about(mind, persona, int(total * text.PERSONA_SHARE))
        listing = text.render_new_events(
            batch, mind, set(request.addressed), set(request.unanswered), int(total * text.BATCH_SHARE), request.last_turn_failed
        )
        tail = "\n\n".join(
            part
            for part in (
                about,
                listing,
                text.render_instructions(mind, request.instructions),
                text.render_if_you_wait(mind, request.upcoming, self._clock.now()),
                text.question(mind),
            )
            if part
        )
        head, foot = "<conversation>\n", "</conversation>\n\n" + tail
        room = budget - ratio.tokens(len(system) + len(head) + len(foot))
        win = window(db, mind, max(1, room), ratio, role="judge", render=lambda said: text.render_said(said, mind))
        blocks = (Block(head), *win.blocks(cfg.cache_ttl, breakpoints=BREAKPOINTS), Block(foot))
        prompt = Prompt(
            role="judge",
            mind=mind,
            system=(Block(system),),
            messages=(Turn("user", blocks),),
            max_tokens=MAX_TOKENS,
            window=win.use(budget),  # the gateway calibrates the ratio from the answer and keeps the anchor
            effort=cfg.effort,
            timeout=cfg.timeout,
        )
        chars = len(system) + sum(len(b.text) for b in blocks)
        return Built(prompt, chars, ratio.tokens(chars))

    async def decide(self, request: JudgeRequest) -> JudgeOutcome:
        """The verdict on `request`; never raises but `CancelledError`."""
        try:
            return await self._decide(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug here must not stop the gate: fail open, and say so in the log
            log.exception("mind %s: the reply judge failed unexpectedly", request.mind)
            return JudgeOutcome(None, f"the reply judge failed unexpectedly ({type(exc).__name__}); the daemon log has details", failed=True)

    async def _decide(self, request: JudgeRequest) -> JudgeOutcome:
        config = self._gateway.config()
        cfg = config.gate.judge
        if not available(self._gateway, request.mind):
            return self._unwired(NoModelConfigured("no judge model is configured (the judge role in [models] has none)"))
        model = role_settings(config, request.mind, "judge").model or ""
        built = self.build(request, cfg, model)
        call = asyncio.ensure_future(self._gateway.complete(built.prompt))
        timer = asyncio.ensure_future(self._clock.sleep(cfg.timeout))
        try:
            await asyncio.wait({call, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not call.done():
                call.cancel()  # a timeout, or our caller cancelled: the gateway records the call as cancelled
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await call
        if call.cancelled():
            return JudgeOutcome(None, f"the judge did not answer within {cfg.timeout:g} s; the call was cancelled", failed=True)
        error = call.exception()
        outcome = self._error(request.mind, error) if error is not None else self._answer(call.result())
        # The gateway calibrated the ratio from the answer (or shrank it on a context-length error) before returning.
        return replace(outcome, ratio=calibrated(self._store.reader(), request.mind, model))

    def _answer(self, response: ModelResponse) -> JudgeOutcome:
        usage = response.usage  # the gateway has calibrated the mind's ratio from it (the request carries its window)
        reading = text.parse_verdict(response.text)
        tokens = dict(
            call_id=response.call_id,
            input_tokens=usage.input_tokens,
            cache_read=usage.cache_read_tokens,
            cache_write=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
        )
        if reading.verdict is None:
            return JudgeOutcome(None, reading.reason, failed=True, **tokens)  # type: ignore[arg-type]
        return JudgeOutcome(reading.verdict, reading.reason, **tokens)  # type: ignore[arg-type]

    def _unwired(self, error: NoModelConfigured) -> JudgeOutcome:
        """No judge model: a refusal the gate asks again after (by then it sees the rule unwired and runs it as a debounce)."""
        until = self._clock.now() + REFUSAL_RETRY
        return JudgeOutcome(None, error.detail, refused_until=until, refusal=error.detail, call_id=error.call_id, unwired=True)

    def _error(self, mind: str, error: BaseException) -> JudgeOutcome:
        if not isinstance(error, ModelError):
            log.error("mind %s: the reply judge's call failed unexpectedly: %r", mind, error)
            return JudgeOutcome(None, f"the judge's call failed unexpectedly ({type(error).__name__})", failed=True)
        call_id = error.call_id
        if isinstance(error, NoModelConfigured):
            return self._unwired(error)
        if isinstance(error, Refused):
            now = self._clock.now()
            if isinstance(error, BudgetExceeded):
                until = day_start(now) + timedelta(days=1).total_seconds()
            elif error.retry_after is not None:
                until = now + max(0.0, error.retry_after)
            else:
                until = now + REFUSAL_RETRY
            return JudgeOutcome(None, error.detail, refused_until=until, refusal=error.detail, call_id=call_id)
        return JudgeOutcome(None, error.detail, failed=True, call_id=call_id)
