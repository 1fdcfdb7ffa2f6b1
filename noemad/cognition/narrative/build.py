"""`build`: the mind's narrative from its state and the cycle's admitted thoughts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlite_utils import Database

from noemad.clock import parse_iso
from noemad.cognition.beliefs.change import BELIEF_EVENTS
from noemad.cognition.beliefs.queries import list_beliefs
from noemad.cognition.goals import active_goals
from noemad.cognition.narrative.model import (
    MAX_ITEMS,
    MAX_REFS,
    NOTABLE,
    WINDOW,
    Narrative,
)
from noemad.cognition.narrative.phrasing import (
    belief_of,
    clip,
    doing_item,
    folded_notable,
    is_notable,
    notable_item,
    prop,
    quote,
    raised_topics,
    replied_item,
    reply_to,
    stimuli_items,
    sureness,
    topics_of,
    when_said,
)
from noemad.cognition.notifications.table import Raised
from noemad.cognition.predictions import Resolution, list_predictions
from noemad.cognition.thoughts import Thought
from noemad.events import Ref, in_window, latest_events
from noemad.stimuli import (
    STIMULUS_KINDS,
)

if TYPE_CHECKING:
    pass


def build(db: Database, mind: str, winners: Sequence[Thought], now: float) -> Narrative:
    """The mind's narrative from its state and the cycle's admitted thoughts (no side effects).

    The refs are collected from the same things in the same order whatever
    the prose says of them: a winner whose stimulus, goal or prediction
    another part already tells is left out of `doing`, never out of the refs;
    so is a belief change a newer change of the same belief supersedes (a
    missed bet is split, then rejected: it is told once, as rejected).
    """
    n = Narrative()
    refs: list[Ref] = []
    admitted = list(winners)[:MAX_ITEMS]
    for thought in admitted:
        refs.extend(thought.refs)
    stimuli = latest_events(db, mind, kinds=STIMULUS_KINDS, limit=MAX_ITEMS)
    n.why = [clip(item) for item in stimuli_items(db, stimuli)]
    refs.extend(Ref("event", event.id) for event in stimuli)
    notable = [e for e in in_window(db, mind, kinds=NOTABLE, window=WINDOW) if is_notable(e)]
    newest: dict[int, int] = {}  # belief -> its newest change told anywhere
    for belief_id, event_id in [b for b in (belief_of(db, t) for t in admitted) if b is not None] + [
        (e.subject.id, e.id) for e in notable if e.kind in BELIEF_EVENTS and e.subject is not None
    ]:
        newest[belief_id] = max(newest.get(belief_id, 0), event_id)
    notable = [
        e for e in notable
        if not (e.kind in BELIEF_EVENTS and e.subject is not None and newest.get(e.subject.id) != e.id)  # superseded
        and not (e.kind == "prediction_resolved" and Resolution.of(e).belief in newest)  # its belief's change tells it
    ]
    recent = folded_notable(db, notable)[-MAX_ITEMS:]
    refs.extend(Ref("event", event.id) for event, _ in recent)
    resolving_refs: set[Ref] = set()
    contested = list_beliefs(db, mind, status="contested", limit=MAX_ITEMS)
    for belief in contested:
        n.resolving.append(clip(f"have not settled whether {prop(belief.proposition)}"))
        refs.append(Ref("belief", belief.id))
    for goal in active_goals(db, mind)[: MAX_ITEMS - len(n.resolving)]:
        n.resolving.append(clip(f"am working on {quote(goal.title)}, {goal.progress:.0%} done"))
        if goal.event_id is not None:
            refs.append(Ref("event", goal.event_id))
            resolving_refs.add(Ref("event", goal.event_id))
    expected: set[int] = set()
    betting: set[int] = set()  # beliefs an open prediction stands on: `next` tells the bet
    for prediction in list_predictions(db, mind, status="open", limit=MAX_ITEMS):
        expected.add(prediction.id)
        if prediction.belief_id is not None:
            betting.add(prediction.belief_id)
        sure = sureness(prediction.stated_confidence)
        if parse_iso(prediction.due_at) <= now:
            item = f"am still waiting to learn whether {prop(prediction.proposition)} (due {when_said(prediction.due_at)})"
        else:
            item = f"expect that {prop(prediction.proposition)} (due {when_said(prediction.due_at)}, {sure})"
        n.next.append(clip(item))
        refs.extend(r for r in (
            Ref("belief", prediction.belief_id) if prediction.belief_id is not None else None,
            Ref("event", prediction.event_id) if prediction.event_id is not None else None,
        ) if r is not None)
    quoted = {e.id for e in stimuli}
    # Where each thing is told (part, index, the newest event it tells), so a warning a winner told is
    # not told again and a notification about something told before it reads "… and told an operator"
    # on that item (an older notification is not pinned on a newer change: it is told on its own).
    where: dict[Any, tuple[list[str], int, int]] = {}
    named: set[int] = set()
    for thought in admitted:
        belief_told = belief_of(db, thought)
        if belief_told is not None and (newest.get(belief_told[0]) != belief_told[1] or (belief_told[0] in betting and thought.kind == "belief_created")):
            continue  # a newer change of this belief is told instead, or the open bet `next` tells
        phrase = doing_item(db, thought, quoted, resolving_refs, expected, named)
        if phrase is not None:
            n.doing.append(phrase)
            keys: set[Any] = set(thought.refs)
            if thought.process == "metacognition":
                keys.add((thought.detail.get("check"), thought.detail.get("ref")))
            told_event = max((r.id for r in thought.refs if r.type == "event"), default=0)
            for key in keys:
                where.setdefault(key, (n.doing, len(n.doing) - 1, told_event))
    # A belief still contested is told in `resolving`: a notification that it is, with nothing newer, rides there.
    unsettled = {Ref("belief", b.id): (n.resolving, i, 0) for i, b in enumerate(contested)}
    recent_named: set[int] = set()
    for event, times in recent:
        about = topics_of(event)
        if event.kind == "metacognition" and about & where.keys():
            for key in about:
                where.setdefault(key, where[next(iter(about & where.keys()))])
            continue  # the winner that raised it is told in `doing`
        if event.kind == "notification":
            about_it = sorted(raised_topics(event), key=str)
            told = next((where[key] for key in about_it if key in where and where[key][2] < event.id), None)
            told = told or next((unsettled[key] for key in about_it if key in unsettled and not any(key in where for key in about_it)), None)
            if told is not None:
                part, i, _ = told
                suffix = " and warned an operator" if Raised.of(event).rule == "warning" else " and told an operator"
                part[i] = part[i] if part[i].endswith(suffix) else part[i] + suffix
                continue
        phrase = replied_item(reply_to(db, event), event.text, times) if times > 1 else notable_item(db, event, recent_named)
        if phrase in n.doing:
            continue  # not what `doing` tells
        n.recently.append(phrase)
        for key in about:
            where.setdefault(key, (n.recently, len(n.recently) - 1, event.id))
    n.doing = [clip(item) for item in n.doing]
    n.recently = [clip(item) for item in n.recently]
    n.refs = list(dict.fromkeys(refs))[:MAX_REFS]
    return n
