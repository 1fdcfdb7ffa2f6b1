"""The emitted reply: the draft becomes an event caused by the message it answers.

A reply is actor `model:respond` on the answered message's channel, its
parents the turn's stimuli, citing every model call of the draft (one, or
each round of a tool conversation); a draft that failed is a `reply_failed`
event with the error's category, detail and retry-after; a draft whose model
called skip_reply is a `reply_skipped` event (`ReplySkipped`), with when the
mind wakes itself again if it asked. A reply's deliveries (back to the room
of the message it answers, and to each webhook) are written with it, in the
same writer job (`noemad.outbox`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlite_utils import Database

from noemad import outbox
from noemad.clock import Clock
from noemad.config.connectors import ConnectorSettings
from noemad.events import Event, EventDraft, Ref, append, data_of
from noemad.models import Conversation
from noemad.store import Store


@dataclass(frozen=True)
class ReplySkipped:
    """The data of a `reply_skipped` event: the message not answered, and the seconds until the mind wakes itself (if asked)."""

    in_reply_to: int
    wake_in: int | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"in_reply_to": self.in_reply_to}
        if self.wake_in is not None:
            data["wake_in"] = self.wake_in
        return data

    @classmethod
    def of(cls, event: Event) -> ReplySkipped:
        data = data_of(event, "reply_skipped")
        return cls(data["in_reply_to"], data.get("wake_in"))


def reply_event(
    mind: str,
    answered: Event,
    stimuli: Sequence[int],
    cycle_id: str,
    drafted: Conversation,
    skipped: ReplySkipped | None = None,
) -> EventDraft:
    """The event that records `drafted`: the reply, why there is none, or that the mind chose none (`skipped`)."""
    reply = EventDraft(
        mind=mind,
        kind="reply",
        actor="model:respond",
        channel=answered.channel,
        cycle_id=cycle_id,
        causation_id=answered.id,
        parents=stimuli,
        refs=[Ref("model_call", call) for call in drafted.call_ids],
    )
    if skipped is not None:
        wake_in = skipped.wake_in
        text = "chose not to reply" + (f"; will wake itself in {wake_in} s" if wake_in is not None else "")
        return replace(reply, kind="reply_skipped", text=text, data=skipped.to_data())
    if drafted.error is not None:
        error = drafted.error
        failure = {"category": error.category, "detail": error.detail, "retry_after": error.retry_after}
        return replace(reply, kind="reply_failed", data=failure)
    final = drafted.final
    assert final is not None
    if not final.text.strip():
        # A model may end its turn with no words (after a tool call, say): nothing to send, and not a reply.
        detail = f"the respond model ended its answer with no text (stop reason {final.stop_reason})"
        return replace(reply, kind="reply_failed", data={"category": "empty_answer", "detail": detail, "retry_after": None})
    return replace(reply, text=final.text, data={"model": final.model, "stop_reason": final.stop_reason, "in_reply_to": answered.id})


async def emit(store: Store, clock: Clock, draft: EventDraft, connectors: Sequence[ConnectorSettings] = ()) -> Event:
    """Append the reply (or its failure, or its skipping) on the writer, with its deliveries in the same job.

    A reply goes back through the connector that brought the message it
    answers (to its room and thread, answering it) and to each of the mind's
    webhooks (`connectors`: the mind's running `[[minds.NAME.connectors]]`).
    """
    now = clock.now()

    def job(db: Database) -> Event:
        event = append(db, draft, now)
        if event.kind == "reply" and connectors:
            webhooks = [c.key for c in connectors if c.kind == "webhook"]
            routes = outbox.routes_for_reply(db, draft.causation_id, [c.key for c in connectors], webhooks)
            outbox.enqueue(db, event, "reply", routes, {c.key: c.give_up_after for c in connectors}, now)
        return event

    return await store.writer.run(job)
