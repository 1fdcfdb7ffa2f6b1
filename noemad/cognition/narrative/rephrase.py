"""The optional rephrasing by a model, and the check that it adds nothing the plain narrative does not say."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from noemad.cognition.narrative.model import (
    ACTOR,
    MODEL_ACTOR,
    REPHRASED,
    UPDATED,
    Narrative,
)
from noemad.cognition.narrative.render import render
from noemad.cognition.wording import PROSE, Support, Worded, adds_nothing, reword
from noemad.events import Event, EventDraft, Ref, append

if TYPE_CHECKING:
    from noemad.clock import Clock
    from noemad.config.mind import MindSettings
    from noemad.models.gateway import ModelGateway
    from noemad.store import Store


def _support(plain: str, narrative: Narrative | None, mind: str | None) -> Support:
    """What a rephrasing may say: the plain prose, the five parts and the mind's name."""
    parts = [item for items in (narrative.parts().values() if narrative else ()) for item in items]
    return Support.of(PROSE, [" ".join([plain, *parts, mind or ""])])


def unsupported(answer: str, plain: str, narrative: Narrative | None = None, mind: str | None = None) -> list[str]:
    """What `answer` says that the source (the plain prose, the parts, the mind's name) does not; [] if nothing.

    The rule is `noemad.cognition.wording`'s PROSE vocabulary.
    """
    return list(_support(plain, narrative, mind).added(answer).all)


# rephrasing ----------------------------------------------------------------------

SYSTEM = (
    "You rephrase a mind's account of itself into natural first-person prose. Use only the words, names and numbers"
    " of the account: add no facts, names, numbers, opinions or hedges, and change no number. You may reorder,"
    " join and shorten sentences. Answer with the rephrased account only."
)


def rephrased_data(result: Worded, narrative_event: int) -> dict[str, Any]:
    """The `narrative_rephrased` event's data."""
    data: dict[str, Any] = {"narrative": narrative_event, "rendered_by": result.rendered_by, "model_call": result.call_id}
    if result.model:
        data["model"] = result.model
    if result.reason:
        data["reason"] = result.reason
        data["detail"] = result.detail
    if result.unsupported:
        data["unsupported"] = list(result.unsupported[:20])
    return data


async def rephrase(gateway: ModelGateway, mind: str, narrative: Narrative, plain: str) -> Worded:
    """Ask the `narrate` role to rephrase `plain`; keep the answer only if it adds no content (the wording guard).

    Never raises a `ModelError`: a call that fails or is refused (no model, a
    budget, a hold, a pause) leaves the plain prose, with the reason.
    """
    from noemad.models import Block, Prompt, Turn

    prompt = Prompt(
        role="narrate",
        mind=mind,
        system=(Block(SYSTEM),),
        messages=(Turn.user(f"Rephrase this account by {mind} in the first person, adding nothing:\n\n{plain}"),),
    )
    check = adds_nothing(_support(plain, narrative, mind), "the rephrasing says what the narrative does not")
    return await reword(gateway, prompt, plain, check)


async def apply_rephrase(
    gateway: ModelGateway, store: Store, clock: Clock, mind: str, settings: MindSettings, updated: Event | None
) -> Event | None:
    """After `update`: if the mind's settings ask for it, rephrase the new narrative and record the outcome.

    Does nothing (None) when `update` wrote nothing or `narrative_llm` is not
    true; otherwise writes `narrative_rephrased`, caused by `updated`, and
    returns it. No model call is made inside a writer job.
    """
    if updated is None or updated.kind != UPDATED or not settings.narrative_llm:
        return None
    narrative = Narrative.from_data(updated.data)
    result = await rephrase(gateway, mind, narrative, updated.text or render(narrative))
    draft = EventDraft(
        mind=mind,
        kind=REPHRASED,
        actor=MODEL_ACTOR if result.rendered_by == "model" else ACTOR,
        text=result.text,
        cycle_id=updated.cycle_id,
        causation_id=updated.id,
        refs=[Ref("model_call", result.call_id)] if result.call_id is not None else [],
        data=rephrased_data(result, updated.id),
    )
    return await store.writer.run(lambda db: append(db, draft, clock.now()))
