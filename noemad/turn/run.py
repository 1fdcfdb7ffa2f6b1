"""One turn, as the algorithm reads.

A turn takes every stimulus stored since the mind's last turn:

1. the cognitive cycle over them (one transaction: perceive, retrieve,
   deliberate, notify);
2. with a `respond` model and a message among them, a drafted reply to the
   newest message, from the respond context (with `[gate] mind_tools`, the
   model may use its tools first: list and change its wake rules, or skip);
3. governance (`govern.py`): with a `critic` model, the deterministic gate
   decides whether the critic reviews the draft (a `governance` event), and a
   REVISE verdict has the draft written once more;
4. the reply emitted as an event (or `reply_failed`, or `reply_skipped`);
   what it states that nothing the mind was given supports becomes the
   mind's own `model_output` evidence (`stated.py`), for metacognition;
5. the narrative updated, after the reply so it counts among what the mind
   did recently;
6. the narrative rephrased, if the mind's settings ask for it.

No model call happens inside a writer job: each step that writes commits
before the next one calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass

from noemad.clock import Clock
from noemad.config.mind import MindSettings
from noemad.cognition.cycle import CycleResult, run_cycle
from noemad.events import MAX_LINKS, Event, get_event
from noemad.models import ModelGateway
from noemad.store import Store
from noemad.turn.context import answered, batch_messages, respond_context
from noemad.turn.draft import draft_reply
from noemad.turn.emit import emit, reply_event
from noemad.turn.govern import govern_reply
from noemad.turn.narrate import rephrase_narrative, update_narrative
from noemad.turn.stated import given, record_statements
from noemad.turn.tools import MindTools, SkipReply
from noemad.wake import Wake


@dataclass(frozen=True)
class Turn:
    """A turn to run: whose, which of the mind's cycles it is, what it takes and why it woke."""

    mind: str
    number: int  # the mind's cycles so far, this one included
    stimuli: list[int]  # stored stimulus ids, oldest first
    wake: Wake | str  # why the turn runs, as the gate delivered it (a str: the reason, every stimulus delivered)
    settings: MindSettings
    answer: int | None = None  # the message to answer when none is among the stimuli (a self-wake: the one it skipped)

    @property
    def cycle_id(self) -> str:
        return f"{self.mind}/{self.number}"


@dataclass(frozen=True)
class TurnResult:
    """What one turn wrote."""

    cycle: CycleResult
    reply: Event | None  # the reply or reply_failed event; None when the mind did not draft
    narrative: Event | None  # narrative_updated, when the narrative changed
    rephrased: Event | None  # narrative_rephrased, when the mind asks for a model's wording
    skipped: SkipReply | None = None  # the mind chose not to reply (reply_skipped), and when to wake itself
    rules_changed: bool = False  # the mind's tools added or removed a wake rule: the gate reloads them


async def run_turn(store: Store, clock: Clock, gateway: ModelGateway, turn: Turn) -> TurnResult:
    """Run `turn`: cycle, draft (with a respond model and a message to answer), emit, narrative, rephrase."""
    cycle = await run_cycle(store, clock, turn.mind, turn.stimuli, turn.cycle_id, wake=turn.wake, settings=turn.settings)
    reply: Event | None = None
    message: Event | None = None
    if gateway.configured(turn.mind, "respond"):
        message = answered(store.reader(), turn.stimuli)
        if message is None and turn.answer is not None:
            message = get_event(store.reader(), turn.answer)
    tools: MindTools | None = None
    if message is not None:
        tools = MindTools(store, clock, turn.mind, message, turn.cycle_id, settings=turn.settings) if gateway.config().gate.mind_tools else None
        context = respond_context(store.reader(), turn.mind, turn.settings, gateway.model_for(turn.mind, "respond"))
        drafted = await draft_reply(gateway, context, tools)
        if drafted is not None and not (tools and tools.skip):
            # The reply answers every message of the batch: a question among them makes it an answer, not only the newest.
            asked = [m.text or "" for m in batch_messages(store.reader(), turn.stimuli)] or [message.text or ""]
            drafted = await govern_reply(
                store, clock, gateway, turn.mind, turn.settings, message, turn.cycle_id, context, drafted, cycle.retrieved, asked
            )
        if drafted is not None:
            # A batch may be larger than an event may link: the reply names the newest of it.
            parents = turn.stimuli[-MAX_LINKS:]
            skip = tools.skip if tools is not None else None
            reply = await emit(store, clock, reply_event(turn.mind, message, parents, turn.cycle_id, drafted, skip), turn.settings.connectors)
            if reply.kind == "reply":  # what it said that nothing it was given supports: its own, fluent, evidence
                said, recalled, cycle_id = reply, cycle.retrieved, turn.cycle_id
                await store.writer.run(
                    lambda db: record_statements(
                        db, mind=turn.mind, reply=said, evidence=given(db, turn.mind, context, recalled), cycle_id=cycle_id, now=clock.now()
                    )
                )
    narrative = await update_narrative(store, clock, turn.mind, cycle, turn.cycle_id)
    rephrased = await rephrase_narrative(gateway, store, clock, turn.mind, turn.settings, narrative)
    skipped = None
    if reply is not None and tools is not None and tools.skip is not None:  # the event written is reply_skipped
        skipped, reply = SkipReply(tools.skip.wake_in, tools.skip.in_reply_to, reply.id), None
    return TurnResult(cycle, reply, narrative, rephrased, skipped, rules_changed=bool(tools and tools.rules_changed))
