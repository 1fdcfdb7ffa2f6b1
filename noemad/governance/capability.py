"""The governance capability: composed once (refusing what could never work), then asked per draft.

`GovernanceCapability.compose(reflector, sensitive_terms, sensitive_tags,
confidence_floor, confidence, trigger_policy, read_only_tools,
trivial_ack_patterns)` checks every part before any turn runs and raises
`GovernanceRefused` with a sentence for the first one that could never
work. Then `decide(subject, turn)` is the deterministic gate (no model, no
await) and `govern(subject, turn)` is the gate and, when it fires, one
attempt of the reflector, returning the outcome trace.

The confidence port has four rules:

1. The subject wins: a subject that carries a confidence is not asked of
   the reporter; one source per turn.
2. None withholds: no confidence trigger; other evidence can still fire.
3. A reporter that can never work is refused at composition: no
   `confidence` method, a method that does not take (subject, context), an
   async method or an async callable object (the reflector beside it is
   async; this port is not).
4. A bad value or a failing reporter forces a conservative review: a
   non-number, a bool, NaN, an infinity, a value outside [0, 1], an
   awaitable or an exception is the invalid signal
   `invalid_confidence:<non_number|bool|nan|infinite|out_of_range|awaitable|exception>`,
   never coerced to zero nor hidden as None. A valid confidence below
   `confidence_floor` fires `confidence_below_floor`.

A trigger policy is checked the same way (synchronous, shape-checked at
composition); at run time its exception, awaitable or malformed answer is
`invalid_trigger:<exception|awaitable|malformed>` and fires, and its
deliberate None skips.

The outcome's status is one of five: `reviewed` (fired, the reflector
answered), `skipped`, `invalid-signal` (a configured signal was invalid and
the reflector answered its conservative attempt), `degraded` (fired, the
reflector failed or there is none: the draft goes out unreviewed) and
`invalid-signal-degraded` (both).
"""

from __future__ import annotations

import inspect
import math
import numbers
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from noemad.errors import GovernanceRefused
from noemad.governance.fabrication import fabrication_findings
from noemad.governance.intent import classify_intent
from noemad.governance.policy import AdopterGate, SelectiveMetacognitionPolicy, TriggerPolicy, is_category
from noemad.governance.subject import (
    CriticGateContext,
    GateDecision,
    GovernanceOutcome,
    GovernanceSubject,
    Status,
    TurnEvidence,
)
from noemad.governance.text import fold

Reflector = Callable[[GovernanceSubject, CriticGateContext], Awaitable[Any]]


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)
    return not inspect.isroutine(fn) and call is not None and (inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call))


def _takes(fn: Any, count: int) -> bool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True  # a builtin without a signature: it cannot be told, so it is trusted
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True


def _names(value: Any, what: str, example: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | frozenset | set):
        raise GovernanceRefused(f"{what} is a list of strings such as {example}, not {value!r:.60}")
    items = tuple(value)
    bad = [v for v in items if not isinstance(v, str) or not v.strip()]
    if bad:
        raise GovernanceRefused(f"{what} holds non-empty strings only, such as {example}; not {bad[0]!r:.60}")
    return items


def _invalid_value(value: Any) -> str | None:
    """Why `value` is not a confidence, or None when it is one."""
    if isinstance(value, bool):
        return "bool"
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it so it does not warn
        return "awaitable"
    if not isinstance(value, numbers.Real):
        return "non_number"
    number = float(value)
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "infinite"
    if not 0.0 <= number <= 1.0:
        return "out_of_range"
    return None


@dataclass(frozen=True)
class GovernanceCapability:
    """A composed governance gate (see the module); build it with `compose`, never directly."""

    reflector: Reflector | None
    policy: TriggerPolicy
    sensitive_terms: tuple[str, ...]
    sensitive_tags: tuple[str, ...]
    confidence_floor: float | None
    confidence: Any  # the reporter: an object with a sync confidence(subject, context) -> float | None
    read_only_tools: frozenset[str]
    trivial_ack_patterns: tuple[str, ...]
    _terms: tuple[tuple[str, re.Pattern[str]], ...] = ()

    @classmethod
    def compose(
        cls,
        reflector: Reflector | None = None,
        sensitive_terms: Sequence[str] = (),
        sensitive_tags: Sequence[str] = (),
        confidence_floor: float | None = None,
        confidence: Any = None,
        trigger_policy: Any = None,
        read_only_tools: Sequence[str] = (),
        trivial_ack_patterns: Sequence[str] = (),
    ) -> GovernanceCapability:
        """The capability, or `GovernanceRefused` naming the part that could never work."""
        if reflector is not None:
            if not callable(reflector):
                raise GovernanceRefused(f"reflector must be an async callable (subject, context), not {reflector!r:.60}")
            if not _is_async(reflector):
                raise GovernanceRefused("reflector must be async (an `async def` taking subject and context): it runs beside the reply")
            if not _takes(reflector, 2):
                raise GovernanceRefused("reflector must take two arguments, the subject and the CriticGateContext")
        terms = _names(sensitive_terms, "sensitive_terms", '["jurisdiccion", "clausula"]')
        tags = _names(sensitive_tags, "sensitive_tags", '["legal", "medical"]')
        tools = _names(read_only_tools, "read_only_tools", '["search", "calendar_read"]')
        patterns = _names(trivial_ack_patterns, "trivial_ack_patterns", '["^ack$", "^roger wilco$"]')
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise GovernanceRefused(f"trivial_ack_patterns: {pattern!r:.60} is not a regular expression ({exc})") from None
        if confidence_floor is not None and (_invalid_value(confidence_floor) is not None):
            raise GovernanceRefused(f"confidence_floor is a number from 0 to 1 such as 0.7, not {confidence_floor!r:.60}")
        if confidence is not None:
            method = getattr(confidence, "confidence", None)
            if method is None or not callable(method):
                raise GovernanceRefused(
                    "the confidence reporter has no confidence(subject, context) method; give an object with one, or None"
                )
            if _is_async(method) or _is_async(confidence):
                raise GovernanceRefused(
                    "the confidence reporter is async; confidence(subject, context) must be a plain def returning a number"
                    " or None (the reflector is the async part)"
                )
            if not _takes(method, 2):
                raise GovernanceRefused("the confidence reporter's confidence method must take two arguments, the subject and the context")
            if confidence_floor is None:
                raise GovernanceRefused("a confidence reporter needs confidence_floor, the confidence below which review fires (0 to 1)")
        policy = cls._policy(trigger_policy)
        return cls(
            reflector=reflector,
            policy=policy,
            sensitive_terms=terms,
            sensitive_tags=tags,
            confidence_floor=None if confidence_floor is None else float(confidence_floor),
            confidence=confidence,
            read_only_tools=frozenset(tools),
            trivial_ack_patterns=patterns,
            _terms=tuple((t, re.compile(r"(?<!\w)" + re.escape(fold(t)) + r"(?!\w)")) for t in terms),
        )

    @staticmethod
    def _policy(trigger_policy: Any) -> TriggerPolicy:
        if trigger_policy is None:
            return SelectiveMetacognitionPolicy()
        method = getattr(trigger_policy, "trigger", None)
        if method is not None:
            if not callable(method):
                raise GovernanceRefused("trigger_policy.trigger must be a method trigger(subject, context)")
            if _is_async(method):
                raise GovernanceRefused("trigger_policy.trigger is async; a trigger policy is a plain def returning a category or None")
            if not _takes(method, 2):
                raise GovernanceRefused("trigger_policy.trigger must take two arguments, the subject and the CriticGateContext")
            return trigger_policy  # type: ignore[no-any-return]
        if not callable(trigger_policy):
            raise GovernanceRefused(
                f"trigger_policy must be a policy (an object with trigger(subject, context)) or a gate"
                f" (a callable over the CriticGateContext returning True or False), not {trigger_policy!r:.60}"
            )
        if _is_async(trigger_policy):
            raise GovernanceRefused("the adopter gate is async; it must be a plain callable returning True (fire) or False (skip)")
        if not _takes(trigger_policy, 1):
            raise GovernanceRefused("the adopter gate must take one argument, the CriticGateContext")
        return AdopterGate(trigger_policy)

    @property
    def selective(self) -> bool:
        """Whether this capability may skip trivial acks (the default policy, a custom policy or an adopter gate)."""
        return bool(getattr(self.policy, "selective", True))

    def _sensitive_hit(self, draft: str) -> str | None:
        if not self._terms:
            return None
        folded = fold(draft)
        return next((term for term, pattern in self._terms if pattern.search(folded)), None)

    def _confidence(self, subject: GovernanceSubject, context: CriticGateContext) -> tuple[float | None, str | None]:
        if subject.confidence is not None:  # the subject wins
            value = subject.confidence
        elif self.confidence is None:
            return None, None
        else:
            try:
                value = self.confidence.confidence(subject, context)
            except Exception:
                return None, "invalid_confidence:exception"
            if value is None:  # withheld
                return None, None
        why = _invalid_value(value)
        return (None, f"invalid_confidence:{why}") if why else (float(value), None)

    def _trigger(self, subject: GovernanceSubject, context: CriticGateContext) -> tuple[str | None, str | None]:
        try:
            answer = self.policy.trigger(subject, context)
        except Exception:
            return None, "invalid_trigger:exception"
        if answer is None:
            return None, None
        if inspect.isawaitable(answer):
            if inspect.iscoroutine(answer):
                answer.close()
            return None, "invalid_trigger:awaitable"
        return (answer, None) if is_category(answer) else (None, "invalid_trigger:malformed")

    def context(self, subject: GovernanceSubject, turn: TurnEvidence | None = None) -> CriticGateContext:
        """The gate's context for `subject` in `turn`, before any confidence is known."""
        turn = turn or TurnEvidence()
        draft = subject.draft
        intent = turn.intent_verdict
        if intent is None and turn.message is not None:
            intent = classify_intent(turn.message)
        findings = turn.fabrication_findings
        if findings is None:
            findings = fabrication_findings(draft, turn.evidence) if turn.evidence is not None else ()
        recalled = {fold(t) for t in turn.recalled_tags}
        return CriticGateContext(
            draft=draft,
            tool_calls_this_turn=tuple(turn.tool_calls),
            fabrication_findings=tuple(findings),
            intent_verdict=intent,
            confidence=None,
            sensitive_hit=self._sensitive_hit(draft),
            read_only_tools=self.read_only_tools,
            selective_gate_enabled=self.selective,
            trivial_ack_patterns=self.trivial_ack_patterns,
            scope=turn.scope,
            run_id=turn.run_id,
            recalled_sensitive_tags=tuple(t for t in self.sensitive_tags if fold(t) in recalled),
        )

    def decide(self, subject: GovernanceSubject, turn: TurnEvidence | None = None) -> GateDecision:
        """The deterministic gate: whether the reflector should review `subject`, and why (no model, no await)."""
        context = self.context(subject, turn)
        confidence, invalid_confidence = self._confidence(subject, context)
        if confidence is not None:
            context = replace(context, confidence=confidence)
        category, invalid_trigger = self._trigger(subject, context)
        triggers = [category] if category else []
        if confidence is not None and self.confidence_floor is not None and confidence < self.confidence_floor:
            triggers.append("confidence_below_floor")
        invalid = [i for i in (invalid_confidence, invalid_trigger) if i]
        triggers += invalid
        return GateDecision(bool(triggers), triggers[0] if triggers else None, tuple(triggers), invalid[0] if invalid else None, context)

    async def govern(self, subject: GovernanceSubject, turn: TurnEvidence | None = None) -> GovernanceOutcome:
        """Decide, and when the gate fires attempt the reflector once; a reflector failure fails open, marked degraded."""
        decision = self.decide(subject, turn)
        if not decision.fire:
            return GovernanceOutcome("skipped", None, (), False, decision=decision)
        invalid = decision.invalid is not None
        if self.reflector is None:
            status: Status = "invalid-signal-degraded" if invalid else "degraded"
            return GovernanceOutcome(status, decision.trigger, decision.triggers, False, decision=decision)
        try:
            review = await self.reflector(subject, decision.context)
        except Exception as exc:  # fail open: the draft goes out, marked degraded
            status = "invalid-signal-degraded" if invalid else "degraded"
            return GovernanceOutcome(status, decision.trigger, decision.triggers, True, decision=decision, error=exc)
        status = "invalid-signal" if invalid else "reviewed"
        return GovernanceOutcome(status, decision.trigger, decision.triggers, True, review, decision)
