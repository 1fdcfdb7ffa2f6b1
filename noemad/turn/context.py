"""The respond context: what a mind's `respond` call would send now, built with no side effects.

The context is the mind's persona (the `persona` setting) as a system block
cached for an hour, then its conversation as the token-budgeted window
(noemad.turn.window): messages and observations as user turns, its own
replies as assistant turns, whole messages from the window's anchor to the
newest event, within the mind's `context_tokens` (an estimate at the mind's
calibrated ratio for the respond model).

The budget. By default 60,000 tokens for the whole request (`context_tokens`,
per mind, 4,000 to 1,000,000): the persona and the mind's tools are counted
first, the window gets the rest. That is roughly an hour
or two of a busy room, or days of a quiet one; enough that the mind sees
what it said and what was asked of it well before the last few exchanges,
and, because the window's earlier chunks are read from the prompt cache at a
tenth of the input price, a reply over a full window costs about what one
over 6,000 uncached tokens would. It stays well under the context length of
every respond model and under the long-context price lines. A request over
it (the estimate was off) recalibrates the ratio at once.

Cache breakpoints: the persona (1h), then at most three in the conversation
(5m): after the last full chunk, at the end of the conversation, and one 16
messages before the end (see noemad.turn.window). Building it reads the store
and writes nothing, so anything may look at what a mind would be shown (the
turn drafts from it; the reply judge reads the same builder at its own
budget).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlite_utils import Database

from noemad.config.mind import MindSettings
from noemad.events import Event, get_events
from noemad.models import Block, Prompt, Turn
from noemad.models.ratios import TokenRatio, ratio_for
from noemad.turn.tools import MIND_TOOLS
from noemad.turn.window import Said, breakpoint_indexes, window

DEFAULT_PERSONA = "You are {mind}, a long-lived mind. Answer briefly and only with what you know."
# The mind's tools may be offered after the context is built (`[gate] mind_tools`): their bytes are reserved
# whether or not, half as much again for the longer descriptions some settings give them (e.g. a judge example).
_TOOLS_CHARS = 3 * sum(len(json.dumps(tool.to_data(), sort_keys=True)) + 1 for tool in MIND_TOOLS) // 2


def _line(said: Said) -> str:
    """A conversation event as its turn shows it: the mind's replies as said, others with who and where."""
    if said.kind == "reply":
        return said.text
    if said.kind == "message":
        return f"{said.who} ({said.channel}): {said.text}"
    return f"[observation from {said.who}] {said.text}"


def batch_messages(db: Database, stimuli: Sequence[int]) -> list[Event]:
    """The messages among `stimuli`, in their order: everything a turn over them answers at once."""
    events = get_events(db, stimuli)
    return [events[i] for i in stimuli if i in events and events[i].kind == "message"]


def answered(db: Database, stimuli: Sequence[int]) -> Event | None:
    """The message a turn over `stimuli` answers: the newest message among them (None if none is a message)."""
    messages = batch_messages(db, stimuli)
    return messages[-1] if messages else None


def respond_context(db: Database, mind: str, settings: MindSettings, model: str | None = None) -> Prompt:
    """The respond prompt the mind would send now (`model`: the respond model, whose calibrated ratio sizes it)."""
    persona = settings.persona or DEFAULT_PERSONA.format(mind=mind)
    ratio = ratio_for(db, mind, model) if model else TokenRatio()
    budget = settings.context_tokens
    room = budget - ratio.tokens(len(persona) + _TOOLS_CHARS)
    win = window(db, mind, max(1, room), ratio, role="respond", render=_line)
    entries = list(win.entries)
    dropped = 0
    while dropped < len(entries) and entries[dropped].said.kind == "reply":
        dropped += 1  # the API wants the conversation to open with a user turn
    last_full = win.last_full
    marks = breakpoint_indexes(
        len(entries) - dropped, None if last_full is None or last_full < dropped else last_full - dropped, breakpoints=3
    )
    turns: list[tuple[str, list[Block]]] = []
    for i, entry in enumerate(entries[dropped:]):
        role = "assistant" if entry.said.kind == "reply" else "user"
        block = Block(entry.text, "5m" if i in marks else None)
        if turns and turns[-1][0] == role:
            turns[-1][1].append(block)  # the API wants the roles to alternate: merge neighbours
        else:
            turns.append((role, [block]))
    return Prompt(
        role="respond",
        mind=mind,
        system=(Block(persona, "1h"),),
        messages=tuple(Turn(role, tuple(blocks)) for role, blocks in turns),  # type: ignore[arg-type]
        window=win.use(budget),
    )
