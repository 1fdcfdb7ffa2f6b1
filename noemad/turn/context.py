"""The respond context: what a mind's `respond` call would send now, built with no side effects.

The context is the mind's persona (the `persona` setting) as a system block
cached for an hour, then its recent conversation (messages and observations
as user turns, its own replies as assistant turns), with a five-minute cache
breakpoint after what it had already seen before this turn. Building it reads
the store and writes nothing, so anything may look at what a mind would be
shown (the turn drafts from it; the reply judge will read the same builder).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from noemad.config import MindSettings
from noemad.events import Event, get_events, latest_events
from noemad.models import Block, Prompt, Turn
from noemad.stimuli import Message, Observation

HISTORY = 40  # events of conversation sent with each reply
DEFAULT_PERSONA = "You are {mind}, a long-lived mind. Answer briefly and only with what you know."


def _line(event: Event) -> str:
    if event.kind == "message":
        return f"{Message.of(event).author} ({event.channel}): {event.text}"
    return f"[observation from {Observation.of(event).source}] {event.text}"


def answered(db: Database, stimuli: Sequence[int]) -> Event | None:
    """The message a turn over `stimuli` answers: the newest message among them (None if none is a message)."""
    events = get_events(db, stimuli)
    messages = [events[i] for i in stimuli if i in events and events[i].kind == "message"]
    return messages[-1] if messages else None


def respond_context(db: Database, mind: str, settings: MindSettings, new: Sequence[int]) -> Prompt:
    """The respond prompt for a turn over the stimuli `new`."""
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
