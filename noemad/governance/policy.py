"""Trigger policies: given the subject and the gate's context, a stable category that fires review, or None.

`SelectiveMetacognitionPolicy` is the default. It keeps every hard floor —
a configured sensitive term in the draft (`sensitive_term`), a configured
sensitive tag among what the turn recalled (`recalled_sensitive_tag:<tag>`),
a fabrication finding (`fabrication_finding`), a mutating tool call
(`mutating_tool`; tools named in `read_only_tools` are exempt), a message
asking for action or of unclear intent (`intent:action`,
`intent:ambiguous`), a claim in the draft (`draft_claim`), a message that
asks something (`answers_question`: the reply is an answer, and "Of
course", "Certainly", "Claro que sí" answering "Is the loan approved?"
assert that it is) — and otherwise
fires (`not_trivial_ack`) unless the draft is a trivial acknowledgment.
So it skips only when there is no hard-fire signal and the whole draft is a
short, claim-free ack in a recognized language; every ambiguity fires.

`ConfidenceOnlyMetacognitionPolicy` is the explicit, cheaper earlier
behaviour: it fires only on a configured sensitive term, leaving the rest
to the confidence signal (a confidence below the floor, or an invalid one).
It deliberately drops the hard floors above: a numeric claim, a mutating
tool or a request for action with no confidence reported is not reviewed.

A custom policy is any object with a synchronous `trigger(subject,
context)` returning a category (lowercase, `name` or `name:detail`, at most
64 characters) or None to skip. An adopter gate is a synchronous callable
over the `CriticGateContext` returning True (fire, category `adopter_gate`)
or False (skip); composing one opts into selective mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from noemad.governance.acks import draft_is_trivial_ack
from noemad.governance.claims import draft_has_claims
from noemad.governance.subject import CriticGateContext, GovernanceSubject

CATEGORY = re.compile(r"[a-z][a-z0-9_]*(?::[a-z0-9_.\-]+)?")
MAX_CATEGORY = 64


def is_category(value: Any) -> bool:
    """Whether `value` is a stable trigger category a policy may return."""
    return isinstance(value, str) and len(value) <= MAX_CATEGORY and CATEGORY.fullmatch(value) is not None


class TriggerPolicy(Protocol):
    """A synchronous policy: the category that fires review of this draft, or None to skip it."""

    def trigger(self, subject: GovernanceSubject, context: CriticGateContext) -> str | None: ...


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


def hard_floors(context: CriticGateContext) -> list[str]:
    """Every hard-fire category the context holds, most decisive first."""
    found: list[str] = []
    if context.sensitive_hit is not None:
        found.append("sensitive_term")
    found += [f"recalled_sensitive_tag:{tag}" for tag in context.recalled_sensitive_tags]
    if context.fabrication_findings:
        found.append("fabrication_finding")
    if context.mutating_tools:
        found.append("mutating_tool")
    if context.intent_verdict in ("action", "ambiguous"):
        found.append(f"intent:{context.intent_verdict}")
    if draft_has_claims(context.draft):
        found.append("draft_claim")
    if context.intent_verdict == "question":
        found.append("answers_question")  # an answer asserts, however much it reads like an ack ("Of course")
    return found


class SelectiveMetacognitionPolicy:
    """The default: every hard floor fires; only a trivial ack with no other evidence skips."""

    selective = True

    def trigger(self, subject: GovernanceSubject, context: CriticGateContext) -> str | None:
        floors = hard_floors(context)
        if floors:
            return floors[0]
        if draft_is_trivial_ack(context.draft, _compiled(context.trivial_ack_patterns)):
            return None
        return "not_trivial_ack"


class ConfidenceOnlyMetacognitionPolicy:
    """Explicit, cheaper, and without the hard floors: only a sensitive term fires here; the rest is the confidence signal's."""

    selective = False

    def trigger(self, subject: GovernanceSubject, context: CriticGateContext) -> str | None:
        return "sensitive_term" if context.sensitive_hit is not None else None


class MalformedGateResult:
    """What an adopter gate answered that was neither True nor False (the capability fires on it)."""

    def __init__(self, value: Any) -> None:
        self.value = value


class AdopterGate:
    """An adopter's `Callable[[CriticGateContext], bool]` as a policy: True fires (`adopter_gate`), False skips."""

    selective = True

    def __init__(self, gate: Callable[[CriticGateContext], bool]) -> None:
        self.gate = gate

    def trigger(self, subject: GovernanceSubject, context: CriticGateContext) -> Any:
        answer = self.gate(context)
        if answer is True:
            return "adopter_gate"
        if answer is False:
            return None
        return answer if hasattr(answer, "__await__") else MalformedGateResult(answer)
