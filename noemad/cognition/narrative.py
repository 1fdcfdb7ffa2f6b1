"""The narrative: what a mind would say it is doing, and why, after each cycle.

A five-part structure built from state, deterministically (the same state and
the same workspace give the same narrative):

| part      | from                                                                                  |
|-----------|---------------------------------------------------------------------------------------|
| doing     | the cycle's admitted thoughts (the winners), in their order                           |
| why       | the mind's newest stimuli ("alice said …")                                             |
| recently  | notable events among the mind's last `WINDOW` events: replies, belief status changes, |
|           | metacognition warnings, completed or abandoned goals, resolved predictions, notifications |
| resolving | contested beliefs, then active goals                                                  |
| next      | open predictions, soonest due first, with their due times                             |

Each part holds at most `MAX_ITEMS` short strings of at most `MAX_ITEM`
characters. `render` turns it into short first-person prose; empty parts are
left out.

Storing. `update` (a writer job, run right after `cycle_completed`) writes a
`narrative_updated` event only when the five parts differ from the mind's
previous narrative: actor `process:narrative`, text the plain prose, caused
by the cycle's `cycle_completed`, citing what it mentions (stimuli and
notable events, contested beliefs, goals' `goal_created`, predictions'
beliefs and `prediction_made`, the winners' refs), data the five parts,
`rendered_by: "plain"` and the previous narrative's id.

Rephrasing. With `narrative_llm: true` in the mind's settings, the caller then
awaits `apply_rephrase`: the `narrate` role is asked to rephrase the plain
prose without adding content, and the outcome is a `narrative_rephrased`
event caused by the `narrative_updated` one:

* accepted: actor `model:narrate`, text the model's prose,
  `rendered_by: "model"`, citing the model call;
* refused: actor `process:narrative`, text the plain prose,
  `rendered_by: "plain"`, `reason` (no_model, budget, held, refused,
  model_error, truncated, empty_answer, unsupported_content) and `detail`,
  citing the model call when one was recorded (a refused or failed call is
  in the ledger too).

Events are immutable, so the `narrative_updated` event always holds the plain
rendering and the rephrasing is a second event; `latest` joins them.

The "adds no content" rule (`unsupported`) is the wording guard's
(`noemad.cognition.wording`, PROSE vocabulary): the source is the plain prose,
the five parts and the mind's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlite_utils import Database

from noemad.operator import is_operator
from noemad.clock import parse_iso
from noemad.cognition.beliefs import BELIEF_EVENTS, BeliefChange, find_belief, list_beliefs
from noemad.cognition.goals import GoalChange, active_goals
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.predictions import Resolution, list_predictions
from noemad.cognition.thoughts import Thought
from noemad.cognition.wording import PROSE, Support, Worded, adds_nothing, reword
from noemad.events import Event, EventDraft, Ref, append, get_event, latest_events, list_events
from noemad.stimuli import (
    STIMULUS_KINDS,
    Assertion,
    Correction,
    GoalStimulus,
    Message,
    Observation,
    OutcomeStimulus,
    PredictionStimulus,
    as_stimulus,
    named,
)

if TYPE_CHECKING:
    from noemad.config import MindSettings
    from noemad.clock import Clock
    from noemad.models.gateway import ModelGateway
    from noemad.store import Store

PARTS: tuple[str, ...] = ("doing", "why", "recently", "resolving", "next")
MAX_ITEMS = 3  # items per part
MAX_ITEM = 120  # characters per item
MAX_QUOTE = 80  # characters of a quoted text inside an item
WINDOW = 100  # "recently" looks at the mind's newest WINDOW events
MAX_REFS = 64  # what an event may cite
ACTOR = "process:narrative"
MODEL_ACTOR = "model:narrate"
UPDATED = "narrative_updated"
REPHRASED = "narrative_rephrased"
SETTING = "narrative_llm"  # the mind setting that asks for a rephrasing
NOTABLE = ("reply", "belief_created", "belief_updated", "metacognition", "goal_completed", "goal_abandoned",
           "prediction_resolved", "notification")
ELLIPSIS = "…"


@dataclass
class Narrative:
    """The five parts (short strings each) and what they cite."""

    doing: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    recently: list[str] = field(default_factory=list)
    resolving: list[str] = field(default_factory=list)
    next: list[str] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)

    def parts(self) -> dict[str, list[str]]:
        """The structure compared between narratives and stored with them (refs are not part of it)."""
        return {name: list(getattr(self, name)) for name in PARTS}

    def empty(self) -> bool:
        return not any(getattr(self, name) for name in PARTS)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Narrative:
        """The structure stored in a `narrative_updated` event's data."""
        return cls(**{name: [str(item) for item in data.get(name) or []] for name in PARTS})


# building --------------------------------------------------------------------


def clip(text: str, limit: int = MAX_ITEM) -> str:
    """One line of `text`, cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS


def _quote(text: str | None) -> str:
    return f"“{clip(text or '', MAX_QUOTE)}”"


def _who(event: Event) -> str:
    name = named(event)
    if name is not None:
        return name
    if is_operator(event.actor):
        return "an operator"
    return event.actor.split(":", 1)[-1] if event.actor.startswith(("user:", "source:")) else event.actor


def _stimulus(event: Event) -> str:
    """Why: a stimulus as what someone did ("alice said …")."""
    who = _who(event)
    match as_stimulus(event):
        case Message():
            return f"{who} said {_quote(event.text)}"
        case Observation():
            return f"{who} observed {_quote(event.text)}"
        case Assertion(claim=claim):
            verb = "denied" if claim.stance == "contradicts" else "asserted"
            return f"{who} {verb} that {clip(claim.proposition or event.text or '', MAX_QUOTE)}"
        case Correction(belief=belief):
            return f"{who} corrected belief #{belief}: {clip(event.text or '', MAX_QUOTE)}"
        case GoalStimulus(goal=None, title=title):
            return f"{who} set the goal {_quote(title or event.text)}"
        case GoalStimulus(goal=goal, status=status, progress=progress):
            change = status or (f"moved to {float(progress):.0%}" if progress is not None else "changed")
            return f"{who} {change} goal #{goal}"
        case PredictionStimulus(proposition=proposition):
            return f"{who} predicted that {clip(proposition or event.text or '', MAX_QUOTE)}"
        case OutcomeStimulus(prediction=prediction, result=result, observed=observed):
            said = f" ({clip(str(observed), MAX_QUOTE)})" if observed else ""
            return f"{who} reported prediction #{prediction} as a {result}{said}"
    return f"{who} sent a {event.kind} {_quote(event.text)}"


def _notable(db: Database, event: Event) -> str | None:
    """Recently: what the mind did or saw, as a phrase after "I" ("replied …"); None if not notable."""
    if event.kind == "reply":
        return f"replied {_quote(event.text)}"
    if event.kind in BELIEF_EVENTS:
        change = BeliefChange.of(event)
        if not change.status_changed or event.subject is None:
            return None
        belief = find_belief(db, event.subject.id)
        proposition = belief.proposition if belief else event.text or ""
        return f"saw belief #{event.subject.id} become {change.status_to}: {clip(proposition, MAX_QUOTE)}"
    if event.kind == "metacognition":
        return f"noticed that {clip(event.text or MetacognitionWarning.of(event).check, MAX_QUOTE)}"
    if event.kind in ("goal_completed", "goal_abandoned"):
        verb = "completed" if event.kind == "goal_completed" else "abandoned"
        goal_change = GoalChange.of(event)
        return f"{verb} goal #{goal_change.goal}: {clip(goal_change.title or event.text or '', MAX_QUOTE)}"
    if event.kind == "prediction_resolved":
        resolution = Resolution.of(event)
        return f"learned that prediction #{resolution.prediction} was a {resolution.result}: {clip(resolution.proposition, MAX_QUOTE)}"
    if event.kind == "notification":
        return f"raised a notification: {clip(event.text or '', MAX_QUOTE)}"
    return None


def _when(at: str) -> str:
    """A stored ISO time as `YYYY-MM-DD HH:MM UTC`."""
    return f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 and at[10] == "T" else at


def _window_start(db: Database, mind: str) -> int:
    """`since` for the mind's newest WINDOW events (0 when it has fewer)."""
    row = db.execute("SELECT id FROM events WHERE mind = ? ORDER BY id DESC LIMIT 1 OFFSET ?", [mind, WINDOW - 1]).fetchone()
    return int(row[0]) - 1 if row else 0


def build(db: Database, mind: str, winners: Sequence[Thought], now: float) -> Narrative:
    """The mind's narrative from its state and the cycle's admitted thoughts (no side effects)."""
    n = Narrative()
    refs: list[Ref] = []
    for thought in list(winners)[:MAX_ITEMS]:
        n.doing.append(clip(thought.summary))
        refs.extend(thought.refs)
    for event in latest_events(db, mind, kinds=STIMULUS_KINDS, limit=MAX_ITEMS):
        n.why.append(clip(_stimulus(event)))
        refs.append(Ref("event", event.id))
    notable: list[tuple[str, Event]] = []
    for event in list_events(db, mind, kinds=NOTABLE, since=_window_start(db, mind), limit=WINDOW):
        phrase = _notable(db, event)
        if phrase is not None:
            notable.append((phrase, event))
    for phrase, event in notable[-MAX_ITEMS:]:
        n.recently.append(clip(phrase))
        refs.append(Ref("event", event.id))
    for belief in list_beliefs(db, mind, status="contested", limit=MAX_ITEMS):
        n.resolving.append(clip(f"whether {belief.proposition} (belief #{belief.id}, contested at {belief.confidence:.2f})"))
        refs.append(Ref("belief", belief.id))
    for goal in active_goals(db, mind)[: MAX_ITEMS - len(n.resolving)]:
        n.resolving.append(clip(f"goal #{goal.id}, {goal.title} ({goal.progress:.0%} done)"))
        if goal.event_id is not None:
            refs.append(Ref("event", goal.event_id))
    for prediction in list_predictions(db, mind, status="open", limit=MAX_ITEMS):
        due = "overdue since" if parse_iso(prediction.due_at) <= now else "due"
        n.next.append(
            clip(
                f"that {prediction.proposition} (prediction #{prediction.id} at {prediction.stated_confidence:.2f},"
                f" {due} {_when(prediction.due_at)})"
            )
        )
        refs.extend(r for r in (
            Ref("belief", prediction.belief_id) if prediction.belief_id is not None else None,
            Ref("event", prediction.event_id) if prediction.event_id is not None else None,
        ) if r is not None)
    n.refs = list(dict.fromkeys(refs))[:MAX_REFS]
    return n


# rendering -------------------------------------------------------------------


def _join(items: Sequence[str]) -> str:
    return "; ".join(items)


def render(n: Narrative) -> str:
    """Short first-person prose; empty parts are left out. Deterministic."""
    sentences = []
    if n.doing and n.why:
        sentences.append(f"I am thinking about {_join(n.doing)}, because {_join(n.why)}.")
    elif n.doing:
        sentences.append(f"I am thinking about {_join(n.doing)}.")
    elif n.why:
        sentences.append(f"Lately {_join(n.why)}.")
    if n.recently:
        sentences.append(f"Recently I {_join(n.recently)}.")
    if n.resolving:
        sentences.append(f"I am still resolving {_join(n.resolving)}.")
    if n.next:
        sentences.append(f"Next I expect {_join(n.next)}.")
    return " ".join(sentences) if sentences else "I have nothing on my mind yet."


# storing ---------------------------------------------------------------------


def last_updated(db: Database, mind: str) -> Event | None:
    """The mind's newest `narrative_updated` event."""
    found = latest_events(db, mind, kinds=(UPDATED,), limit=1)
    return found[0] if found else None


def update(db: Database, *, mind: str, narrative: Narrative, cause: int, cycle_id: str | None, now: float) -> Event | None:
    """Store `narrative` as `narrative_updated` if its parts changed since the last one (a writer job); else None.

    A mind's first narrative is stored unless it is empty.
    """
    previous = last_updated(db, mind)
    before = Narrative.from_data(previous.data).parts() if previous else Narrative().parts()
    if narrative.parts() == before:
        return None
    return append(
        db,
        EventDraft(
            mind=mind,
            kind=UPDATED,
            actor=ACTOR,
            text=render(narrative),
            cycle_id=cycle_id,
            causation_id=cause,
            refs=list(dict.fromkeys(narrative.refs))[:MAX_REFS],
            data={**narrative.parts(), "rendered_by": "plain", "previous": previous.id if previous else None},
        ),
        now,
    )


# the "adds no content" check ---------------------------------------------------


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


# reading -------------------------------------------------------------------------


def _rephrased(db: Database, updated: Event) -> Event | None:
    row = db.execute(
        "SELECT id FROM events WHERE causation_id = ? AND kind = ? ORDER BY id DESC LIMIT 1", [updated.id, REPHRASED]
    ).fetchone()
    return None if row is None else get_event(db, int(row[0]))


def latest(db: Database, mind: str, settings: MindSettings | None = None) -> dict[str, Any] | None:
    """The mind's newest narrative: parts, the prose as shown, the plain prose, who rendered it and why; None if none yet."""
    updated = last_updated(db, mind)
    if updated is None:
        return None
    rephrased = _rephrased(db, updated)
    out: dict[str, Any] = {
        "event_id": updated.id,
        "at": updated.at,
        "cycle_id": updated.cycle_id,
        "text": updated.text,
        "plain": updated.text,
        "rendered_by": "plain",
        "reason": None,
        "detail": None,
        "model_call": None,
        "rephrased_event_id": None,
        "parts": Narrative.from_data(updated.data).parts(),
    }
    if rephrased is not None:
        out.update(
            text=rephrased.text,
            rendered_by=rephrased.data.get("rendered_by", "plain"),
            reason=rephrased.data.get("reason"),
            detail=rephrased.data.get("detail"),
            model_call=rephrased.data.get("model_call"),
            rephrased_event_id=rephrased.id,
        )
    elif settings is None or not settings.narrative_llm:
        out.update(reason="narrative_llm_off", detail=f"the mind's settings do not set {SETTING}: true")
    else:
        out.update(reason="not_rephrased", detail="no rephrasing was recorded for this narrative")
    return out


def empty_json(mind: str) -> dict[str, Any]:
    """What the API answers for a mind with no narrative yet."""
    return {
        "mind": mind, "event_id": None, "at": None, "cycle_id": None, "text": None, "plain": None, "rendered_by": None,
        "reason": None, "detail": None, "model_call": None, "rephrased_event_id": None, "parts": None,
    }


def narrative_json(db: Database, mind: str, settings: MindSettings | None = None) -> dict[str, Any]:
    """The API's answer: `latest` with the mind's name (running `settings`), or `empty_json`."""
    found = latest(db, mind, settings)
    return {"mind": mind, **found} if found is not None else empty_json(mind)

