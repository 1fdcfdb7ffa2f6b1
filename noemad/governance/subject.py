"""The values governance reads and answers: the subject, the turn's evidence, the gate's context, the outcome.

All frozen: a policy, a reporter or an adopter gate reads them and cannot
change what the next one sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from noemad.governance.fabrication import Finding
from noemad.governance.intent import Intent

Status = Literal["reviewed", "skipped", "invalid-signal", "degraded", "invalid-signal-degraded"]
STATUSES: tuple[Status, ...] = ("reviewed", "skipped", "invalid-signal", "degraded", "invalid-signal-degraded")


@dataclass(frozen=True)
class GovernanceSubject:
    """The draft under governance, what the caller knows about it, and (optionally) its confidence.

    `confidence`, when set, wins over any reporter: one source per turn.
    Nothing upstream invents it.
    """

    draft: str
    properties: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    confidence: Any = None  # a number in [0, 1] when known; anything else is an invalid signal

    def __post_init__(self) -> None:
        if not isinstance(self.properties, MappingProxyType):
            object.__setattr__(self, "properties", MappingProxyType(dict(self.properties)))


@dataclass(frozen=True)
class TurnEvidence:
    """What the caller knows of the turn the draft belongs to, all of it factual state, none of it invented.

    `message` is the text the draft answers (its intent is classified unless
    `intent_verdict` is given); `tool_calls` the names of the tools called
    this turn; `evidence` the texts the draft could draw on (the
    conversation, recalled memories, beliefs) for fabrication findings
    (unless `fabrication_findings` is given); `recalled_tags` the tags of
    what was actually recalled for this turn.
    """

    message: str | None = None
    tool_calls: tuple[str, ...] = ()
    evidence: tuple[str, ...] | None = None  # None: no evidence was supplied, so there are no findings to make
    recalled_tags: tuple[str, ...] = ()
    scope: str | None = None
    run_id: str | None = None
    intent_verdict: Intent | None = None
    fabrication_findings: tuple[Finding, ...] | None = None


@dataclass(frozen=True)
class CriticGateContext:
    """The deterministic signals before the critic call, all computed first, so a gate costs nothing more to read."""

    draft: str
    tool_calls_this_turn: tuple[str, ...]
    fabrication_findings: tuple[Finding, ...]
    intent_verdict: Intent | None
    confidence: float | None
    sensitive_hit: str | None  # the configured sensitive term the draft holds, if any
    read_only_tools: frozenset[str]
    selective_gate_enabled: bool
    trivial_ack_patterns: tuple[str, ...]
    scope: str | None
    run_id: str | None
    recalled_sensitive_tags: tuple[str, ...] = ()  # the configured sensitive tags among what the turn recalled

    @property
    def mutating_tools(self) -> tuple[str, ...]:
        """The tools called this turn that are not named read-only."""
        return tuple(t for t in self.tool_calls_this_turn if t not in self.read_only_tools)


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer before any reflector: whether to review, the deciding category, every category, and what was invalid."""

    fire: bool
    trigger: str | None  # the stable category that decided (None when skipped)
    triggers: tuple[str, ...]  # every category that fired, most decisive first
    invalid: str | None  # "invalid_confidence:<why>" or "invalid_trigger:<why>" when a configured signal was bad
    context: CriticGateContext


@dataclass(frozen=True)
class GovernanceOutcome:
    """What `govern` did: the bounded status, the stable trigger category, whether the reflector was attempted, its review."""

    status: Status
    trigger: str | None
    triggers: tuple[str, ...]
    reflector_attempted: bool
    review: Any = None  # what the reflector answered (None when skipped or failed)
    decision: GateDecision | None = None
    error: BaseException | None = field(default=None, compare=False)  # the reflector's failure, for the caller's logs only
