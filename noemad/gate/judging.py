"""The reply judge's seam: what the actor asks a judge, and what it answers.

The actor (`noemad.runtime.actor`) holds the timing; a `Judge` makes the one
model call. JUDGECALL implements the call in this module; until then only
the contract is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from noemad.gate.status import UpcomingWake


@dataclass(frozen=True)
class JudgeRequest:
    mind: str
    rule: str
    instructions: str | None
    batch: tuple[int, ...]  # stimulus ids, oldest first
    addressed: tuple[int, ...]  # those the judge rule matched as addressing the mind
    unanswered: tuple[int, ...]  # R1-2: a REPLY batch whose turn failed
    last_turn_failed: bool
    upcoming: tuple[UpcomingWake, ...]  # noemad/gate/status.py, soonest first


@dataclass(frozen=True)
class JudgeOutcome:
    verdict: Literal["reply", "wait"] | None  # None: failed, refused or unreadable
    reason: str  # the judge's reason, or what went wrong
    failed: bool = False  # an error, timeout or no verdict (fail-open path)
    refused_until: float | None = None  # R1-1: a refusal (hold, pause, budget, shutdown) and until when
    refusal: str | None = None
    call_id: int | None = None  # the model call (ledger row) to cite
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0


class Judge(Protocol):
    async def decide(self, request: JudgeRequest) -> JudgeOutcome: ...  # never raises but CancelledError
