"""Attention: the most salient few thoughts enter the workspace.

Capacity is per mind (`MindSettings.attention_capacity`, checked where the
settings enter). Thoughts are ranked by salience, then by process
(`thoughts.PROCESSES`), then by key, so the same candidates always give the
same winners. One `attention` event records every candidate and which won,
citing what the winners are about.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from noemad.cognition.thoughts import Thought
from noemad.events import Event, EventDraft, Ref, append
from noemad.wire import dump

def select(thoughts: Sequence[Thought], size: int) -> list[Thought]:
    """The winners, most salient first."""
    return sorted(thoughts, key=Thought.order)[:size]


def attend(
    db: Database, *, mind: str, thoughts: Sequence[Thought], size: int, cause: int, cycle_id: str, now: float
) -> tuple[list[Thought], Event | None]:
    """Admit the winners and record the competition (a writer job); no candidates, no event."""
    if not thoughts:
        return [], None
    ranked = sorted(thoughts, key=Thought.order)
    winners = ranked[:size]
    cited: list[Ref] = []
    for thought in winners:
        for ref in thought.refs:
            if ref not in cited:
                cited.append(ref)
    event = append(
        db,
        EventDraft(
            mind=mind,
            kind="attention",
            actor="process:attention",
            cycle_id=cycle_id,
            causation_id=cause,
            refs=cited[:64],
            text="; ".join(t.summary for t in winners),
            data={
                "capacity": size,
                "candidates": [dump(t) for t in ranked],
                "admitted": len(winners),
            },
        ),
        now,
    )
    return winners, event
