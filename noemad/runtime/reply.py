"""A mind's reply: drafted by its `respond` model after the cycle, emitted as an event.

The context is what the mind's respond call would send now: its persona (the
`persona` setting) as a system block cached for an hour, then its recent
conversation (messages and observations as user turns, its own replies as
assistant turns), with a five-minute cache breakpoint after what it had
already seen before this turn. With no respond model the mind records and
does not reply: that is the deterministic path, not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.config import MindSettings
from noemad.errors import ModelError, NoModelConfigured
from noemad.events import Event, EventDraft, Ref, append, get_events, latest_events
from noemad.models import Block, ModelGateway, Prompt, Turn
from noemad.store import Store

log = logging.getLogger("noemad.reply")
HISTORY = 40  # events of conversation sent with each reply
DEFAULT_PERSONA = "You are {mind}, a long-lived mind. Answer briefly and only with what you know."


def _line(event: Event) -> str:
    if event.kind == "message":
        return f"{event.data.get('author', event.actor)} ({event.channel}): {event.text}"
    return f"[observation from {event.data.get('source', event.actor)}] {event.text}"


def build_prompt(db: Database, mind: str, settings: MindSettings, new: Sequence[int]) -> Prompt:
    """The respond prompt for a turn over the stimuli `new`, built without side effects."""
    history = latest_events(db, mind, kinds=("message", "observation", "reply"), limit=HISTORY)
    fresh = set(new)
    # Cache everything up to the last event the mind had already seen before this turn.
    last_seen = max((e.id for e in history if e.id not in fresh), default=None)
    turns: list[tuple[str, list[Block]]] = []
    for event in history:
        role = "assistant" if event.kind == "reply" else "user"
        block = Block((event.text or "") if role == "assistant" else _line(event), "5m" if event.id == last_seen else None)
        if turns and turns[-1][0] == role:
            turns[-1][1].append(block)  # the API wants the roles to alternate: merge neighbours
        else:
            turns.append((role, [block]))
    while turns and turns[0][0] == "assistant":
        turns.pop(0)
    persona = settings.persona or DEFAULT_PERSONA.format(mind=mind)
    return Prompt(
        role="respond",
        mind=mind,
        system=(Block(persona, "1h"),),
        messages=tuple(Turn(role, tuple(blocks)) for role, blocks in turns),  # type: ignore[arg-type]
    )


async def reply(
    gateway: ModelGateway, store: Store, clock: Clock, mind: str, settings: MindSettings, stimuli: list[int], cycle_id: str
) -> Event | None:
    """Draft and emit the reply to the newest message among `stimuli`, if the mind has a respond model."""
    if not gateway.configured(mind, "respond"):
        return None
    db = store.reader()
    events = get_events(db, stimuli)
    messages = [events[i] for i in stimuli if i in events and events[i].kind == "message"]
    if not messages:
        return None
    answered = messages[-1]
    prompt = build_prompt(db, mind, settings, stimuli)
    try:
        response = await gateway.complete(prompt)
    except NoModelConfigured:
        return None
    except ModelError as exc:
        log.warning("mind %s could not reply: %s", mind, exc.detail)
        failed = EventDraft(
            mind=mind,
            kind="reply_failed",
            actor="model:respond",
            channel=answered.channel,
            cycle_id=cycle_id,
            causation_id=answered.id,
            parents=stimuli,
            refs=[Ref("model_call", exc.call_id)] if exc.call_id else [],
            data={"category": exc.category, "detail": exc.detail, "retry_after": exc.retry_after},
        )
        return await store.writer.run(lambda db: append(db, failed, clock.now()))
    draft = EventDraft(
        mind=mind,
        kind="reply",
        actor="model:respond",
        channel=answered.channel,
        text=response.text,
        cycle_id=cycle_id,
        causation_id=answered.id,
        parents=stimuli,
        refs=[Ref("model_call", response.call_id)] if response.call_id else [],
        data={"model": response.model, "stop_reason": response.stop_reason, "in_reply_to": answered.id},
    )
    return await store.writer.run(lambda db: append(db, draft, clock.now()))
