"""A failed turn's retry: a stored stimulus (answered 201) is a promise that the mind perceives it.

When a turn fails (a full disk, a bug), the stimuli it took and did not
perceive (no episode records them) go back to the mind's untaken set, and its
actor tries again after a backoff on the injectable clock: 5 s, doubling, at
most 5 minutes, until a turn succeeds. Each failure is recorded as a
`turn_failed` event (best effort: on a full disk that write fails too, and
the daemon log says so), and `noemactl status` shows the retry to come.
A restart finds the same stimuli pending (`noemad.runtime.actor.pending_stimuli`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.events import Event, EventDraft, append, data_of
from noemad.wire import wire

RETRY_FIRST = 5.0  # seconds before the first retry
RETRY_MOST = 300.0  # the backoff stops doubling here: a disk freed is noticed within five minutes
RETRY_REASON = "a retry of a turn that failed"


def backoff(attempt: int) -> float:
    """Seconds to wait before retry `attempt` (1: the first)."""
    return min(RETRY_FIRST * 2.0 ** min(attempt - 1, 16), RETRY_MOST)


@wire
@dataclass(frozen=True)
class TurnRetry:
    """A mind's last turn failed: its stimuli are taken again at `at` (backoff from 5 s, doubling, at most 5 min)."""

    attempt: int
    """Failures in a row."""
    at: str
    stimuli: int
    """Stored stimuli the failed turn did not perceive."""
    error: str


@dataclass(frozen=True)
class TurnFailed:
    """The data of a `turn_failed` event, and what `status` shows of a mind's retry."""

    stimuli: tuple[int, ...]  # the stimuli the turn took and did not perceive: the retry takes them
    attempt: int  # failures in a row
    retry_at: float
    error: str

    def to_data(self) -> dict[str, Any]:
        return {"stimuli": list(self.stimuli), "attempt": self.attempt, "retry_at": iso(self.retry_at), "error": self.error}

    def status(self) -> TurnRetry:
        """The mind's retry as `GET /status` answers it."""
        return TurnRetry(self.attempt, iso(self.retry_at), len(self.stimuli), self.error)

    @classmethod
    def of(cls, event: Event) -> TurnFailed:
        data = data_of(event, "turn_failed")
        return cls(tuple(data["stimuli"]), int(data["attempt"]), parse_iso(data["retry_at"]), str(data["error"]))


def record_turn_failed(db: Database, mind: str, failed: TurnFailed, now: float) -> Event:
    """Write the `turn_failed` event (run it on the writer)."""
    count = len(failed.stimuli)
    what = "its stimulus is" if count == 1 else f"its {count} stimuli are"
    return append(
        db,
        EventDraft(
            mind=mind,
            kind="turn_failed",
            actor="noemad",
            text=f"a turn failed ({failed.error}); {what} retried at {iso(failed.retry_at)}",
            data=failed.to_data(),
            causation_id=failed.stimuli[-1] if failed.stimuli else None,
        ),
        now,
    )
