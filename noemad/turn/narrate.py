"""The turn's narrative step: what the mind would now say it is doing, then its rephrasing.

It runs after the reply, so the reply counts among what the mind did
recently. The narrative is built and stored in one writer job; the
rephrasing (a model call, when the mind's settings ask for one) runs after
it, outside any writer job. What both write is `noemad.cognition.narrative`'s.
"""

from __future__ import annotations

from noemad.clock import Clock
from noemad.config.mind import MindSettings
from noemad.cognition.narrative.build import build
from noemad.cognition.narrative.rephrase import apply_rephrase
from noemad.cognition.narrative.stored import update
from noemad.cognition.cycle import CycleResult
from noemad.events import Event
from noemad.models import ModelGateway
from noemad.store import Store


async def update_narrative(store: Store, clock: Clock, mind: str, cycle: CycleResult, cycle_id: str) -> Event | None:
    """Store the narrative after `cycle` if it changed (`narrative_updated`, caused by `cycle_completed`)."""
    return await store.writer.run(
        lambda db: update(
            db,
            mind=mind,
            narrative=build(db, mind, cycle.winners, clock.now()),
            cause=cycle.completed.id,
            cycle_id=cycle_id,
            now=clock.now(),
        )
    )


async def rephrase_narrative(
    gateway: ModelGateway, store: Store, clock: Clock, mind: str, settings: MindSettings, updated: Event | None
) -> Event | None:
    """Have the `narrate` model reword the new narrative, if the mind asks for it (`narrative_rephrased`)."""
    return await apply_rephrase(gateway, store, clock, mind, settings, updated)
