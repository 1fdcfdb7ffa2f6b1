"""Denied actions: something the mind asked to do and was refused.

A tool call that would act — add or remove a wake rule, skip the reply —
or names a tool the mind does not have, and is refused (a rule of bad
shape, a judge rule where judging is off, a taken name, a rule that is not
there, the rule table full, a wrong input), is a denied action. It is
recorded as an `action_denied` event beside the call's `tool_called`:
caused by that call, citing the model call that asked for it, in the same
writer job; its data is an `ActionDenied`. The `denied_action` notification
rule reads it (`noemad.cognition.notifications`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.events import Event, EventDraft, Ref, append, data_of

KIND = "action_denied"
MAX_REASON = 500  # characters of the refusal's sentence kept in the event


@dataclass(frozen=True)
class ActionDenied:
    """The data of an `action_denied` event: the one definition of its fields.

    `action` names what was asked (the tool called), `reason` is the
    sentence it was refused with; what the call gave is in the `tool_called`
    event that caused it.
    """

    action: str
    reason: str | None = None

    def to_data(self) -> dict[str, Any]:
        return {"action": self.action, **({"reason": self.reason} if self.reason is not None else {})}

    @classmethod
    def of(cls, event: Event) -> ActionDenied:
        data = data_of(event, KIND)
        reason = data.get("reason")
        return cls(str(data.get("action") or "action"), None if reason is None else str(reason))


def record_denied(
    db: Database,
    *,
    mind: str,
    denied: ActionDenied,
    actor: str,
    cause: int,
    now: float,
    cycle_id: str | None = None,
    channel: str | None = None,
    refs: tuple[Ref, ...] = (),
) -> Event:
    """Record a denied action (a writer job, or part of one): its `action_denied` event."""
    reason = denied.reason if denied.reason is None or len(denied.reason) <= MAX_REASON else denied.reason[: MAX_REASON - 1] + "…"
    kept = ActionDenied(denied.action, reason)
    return append(
        db,
        EventDraft(
            mind=mind,
            kind=KIND,
            actor=actor,
            channel=channel,
            cycle_id=cycle_id,
            causation_id=cause,
            refs=list(refs),
            text=f"{denied.action} refused" + (f": {reason}" if reason else ""),
            data=kept.to_data(),
        ),
        now,
    )
