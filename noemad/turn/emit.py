"""The emitted reply: the draft becomes an event caused by the message it answers.

A reply is actor `model:respond` on the answered message's channel, its
parents the turn's stimuli, citing the model call; a call that failed is a
`reply_failed` event with the error's category, detail and retry-after.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from noemad.clock import Clock
from noemad.errors import ModelError
from noemad.events import Event, EventDraft, Ref, append
from noemad.models import ModelResponse
from noemad.store import Store


def reply_event(mind: str, answered: Event, stimuli: Sequence[int], cycle_id: str, drafted: ModelResponse | ModelError) -> EventDraft:
    """The event that records `drafted`: the reply, or why there is none."""
    reply = EventDraft(
        mind=mind,
        kind="reply",
        actor="model:respond",
        channel=answered.channel,
        cycle_id=cycle_id,
        causation_id=answered.id,
        parents=stimuli,
        refs=[Ref("model_call", drafted.call_id)] if drafted.call_id else [],
    )
    if isinstance(drafted, ModelError):
        failure = {"category": drafted.category, "detail": drafted.detail, "retry_after": drafted.retry_after}
        return replace(reply, kind="reply_failed", data=failure)
    return replace(reply, text=drafted.text, data={"model": drafted.model, "stop_reason": drafted.stop_reason, "in_reply_to": answered.id})


async def emit(store: Store, clock: Clock, draft: EventDraft) -> Event:
    """Append the reply (or its failure) on the writer."""
    return await store.writer.run(lambda db: append(db, draft, clock.now()))
