"""The reply judge: one model call, role `judge`, that answers REPLY or WAIT for a judge rule's batch.

`ReplyJudge.decide` is the `Judge` of `noemad.gate.judging`: it builds the
request (`noemad.gate.judge_prompt`) from the mind's window as its reply
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.config import JudgeSettings, MindSettings
from noemad.errors import BudgetExceeded, ContextLength, ModelError, NoModelConfigured, Refused
from noemad.events import Event, get_events, latest_events
from noemad.gate import judge_prompt as text
from noemad.gate.judging import JudgeOutcome, JudgeRequest, available
from noemad.models import Block, ModelGateway, ModelResponse, Prompt, Turn
from noemad.models.gateway import day_start
from noemad.models.settings import role_settings
from noemad.store import Store
from noemad.turn.context import DEFAULT_PERSONA

log = logging.getLogger("noemad.judge")

MAX_TOKENS = 4096  # only what is generated is billed; a low-effort verdict is ~50-70 tokens
REFUSAL_RETRY = 60.0  # seconds: when to ask again after a refusal that states no end
CHUNK_CHARS = 16_000  # ~6K tokens of chat: fixed in characters so a recalibrated ratio moves no chunk boundary


class _Ratios:
    """Characters per token, per mind and model: a conservative start, calibrated from each answer's reported input."""

    START = 2.5  # English chat measured ~2.9; start below it so a cold first request stays under budget

    def __init__(self) -> None:
        self._ratio: dict[tuple[str, str], float] = {}

    def get(self, mind: str, model: str) -> float:
        return self._ratio.get((mind, model), self.START)

    def calibrate(self, mind: str, model: str, chars: int, tokens: int, budget: int) -> None:
        if tokens <= 0 or chars <= 0:
            return
        measured, current = chars / tokens, self.get(mind, model)
        if tokens > budget:
            new = measured * 0.9  # over budget: take the measured ratio at once, with a margin
        elif measured < current:
            new = current + 0.6 * (measured - current)  # denser than thought: correct fast
        else:
            new = current + 0.15 * (measured - current)  # sparser: correct slowly
        self._ratio[(mind, model)] = new

    def too_long(self, mind: str, model: str, chars: int, tokens: int | None) -> None:
        current = self.get(mind, model)
        self._ratio[(mind, model)] = min(current * 0.7, chars / tokens * 0.9) if tokens else current * 0.7


def _conversation(db: Database, mind: str, chars: int) -> list[Event]:
    """The newest whole events of the mind's conversation that fit `chars` of envelopes, oldest first."""
    history = latest_events(db, mind, kinds=("message", "observation", "reply"), limit=2_000)
    kept: list[Event] = []
    used = 0
    for event in reversed(history):
        size = len(text.render_event(event, mind)) + 1
        if used + size > chars:
            break
        kept.append(event)
        used += size
    return list(reversed(kept))


def _chunks(lines: Sequence[str], chunk_chars: int, ttl: str) -> list[Block]:
    """Whole envelopes in full chunks of about `chunk_chars`, then the rest one block per envelope.

    Breakpoints after the last full chunk and after the last envelope: the
    next request, one message longer, finds the previous one's end at a block
    boundary within the service's lookback and reads it from the cache.
    """
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        current.append(line)
        size += len(line) + 1
        if size >= chunk_chars:
            chunks.append("\n".join(current) + "\n")
            current, size = [], 0
    blocks = [Block(c) for c in chunks] + [Block(line + "\n") for line in current]
    marks = {len(chunks) - 1, len(blocks) - 1} - {-1}
    return [Block(b.text, ttl if i in marks else None) for i, b in enumerate(blocks)]  # type: ignore[arg-type]


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
        self.ratios = _Ratios()

    def build(self, request: JudgeRequest, cfg: JudgeSettings, model: str) -> Built:
        """The judge's prompt for `request` now, read from the store with no side effects."""
        db = self._store.reader()
        mind = request.mind
        ratio = self.ratios.get(mind, model)
        total = int(cfg.input_budget * ratio)
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
        room = max(0, total - len(system) - len(tail) - 200)
        lines = [text.render_event(e, mind) for e in _conversation(db, mind, room)]
        head = "<conversation>\n"
        blocks = _chunks(lines, CHUNK_CHARS, cfg.cache_ttl)
        conversation = [Block(head), *blocks, Block("</conversation>\n\n" + tail)] if blocks else [Block(head + "</conversation>\n\n" + tail)]
        prompt = Prompt(
            role="judge",
            mind=mind,
            system=(Block(system),),
            messages=(Turn("user", tuple(conversation)),),
            max_tokens=MAX_TOKENS,
            effort=cfg.effort,  # type: ignore[arg-type]
            timeout=cfg.timeout,
        )
        chars = len(system) + sum(len(b.text) for b in conversation)
        return Built(prompt, chars, int(chars / ratio) + 1)

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
        if error is not None:
            return self._error(request.mind, model, built, error)
        return self._answer(request.mind, model, built, cfg, call.result())

    def _answer(self, mind: str, model: str, built: Built, cfg: JudgeSettings, response: ModelResponse) -> JudgeOutcome:
        usage = response.usage
        self.ratios.calibrate(mind, model, built.chars, usage.total_input, cfg.input_budget)
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

    def _error(self, mind: str, model: str, built: Built, error: BaseException) -> JudgeOutcome:
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
        if isinstance(error, ContextLength):
            self.ratios.too_long(mind, model, built.chars, error.tokens)
        return JudgeOutcome(None, error.detail, failed=True, call_id=call_id)
