"""The seam between a judge rule and the reply judge: what the gate asks, what it is answered.

The actor (`noemad.runtime.actor`) holds the timing and hands a fired judge
batch to a `Judge` as a `JudgeRequest`; the judge (`noemad.gate.judge.call`)
makes the one model call. On the `JudgeOutcome`: REPLY delivers the batch,
WAIT delivers nothing, a failure takes `[gate.judge] on_error`'s path, and a
refusal (R1-1, `refusal` set) holds the batch until `refused_until`, which a
refusal always states. `decide` never raises but `CancelledError` (a turn that
starts while the judge decides cancels the call: no verdict, no failure).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from noemad.gate.status import UpcomingWake

if TYPE_CHECKING:
    from noemad.models import ModelGateway


@dataclass(frozen=True)
class JudgeRequest:
    """One judge rule's fired batch, and what the judge is told beside it."""

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
    """What the judge decided, or why it did not."""

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
    # Added by JUDGECALL after the contract (defaults keep the contract's constructor calls valid):
    unwired: bool = False  # a refusal because no judge model is configured: asked again, the rule runs as a debounce
    ratio: float | None = None  # the chars-per-token of the judge's window once the call calibrated it (gate-status shows it)

    @property
    def refused(self) -> bool:
        """The call was not made (R1-1): hold the batch until `refused_until`, then judge it."""
        return self.refusal is not None


class Judge(Protocol):
    """Decides REPLY or WAIT for a judge rule's batch."""

    async def decide(self, request: JudgeRequest) -> JudgeOutcome:
        """The verdict on `request`; never raises but `CancelledError`."""
        ...


def available(gateway: ModelGateway, mind: str) -> bool:
    """Whether a judge model is configured for `mind` (without one, a judge rule runs as a debounce)."""
    return gateway.configured(mind, "judge")
