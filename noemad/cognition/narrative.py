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
left out. The prose is what the mind would tell a colleague: no ids, labels
or bare figures (how sure is said in words; the citations carry the rest), no
text cut outside a quote, each thing told once with the verb for what
happened, and repeats folded (see "building" below).

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
from noemad.errors import NotFound
from noemad.cognition.beliefs.change import BELIEF_EVENTS, BeliefChange
from noemad.cognition.beliefs.queries import find_belief, list_beliefs
from noemad.cognition.goals import GoalChange, active_goals, get_goal
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.notifications import Raised
from noemad.cognition.predictions import PREDICTION_SOURCE, Resolution, get_prediction, list_predictions
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
    from noemad.config.schema import MindSettings
    from noemad.clock import Clock
    from noemad.models.gateway import ModelGateway
    from noemad.store import Store

PARTS: tuple[str, ...] = ("doing", "why", "recently", "resolving", "next")
MAX_ITEMS = 3  # items per part
MAX_ITEM = 600  # characters per item: a safety bound; quoting every text within MAX_QUOTE keeps items well under it
MAX_QUOTE = 60  # characters of a quoted text inside an item, cut at a word boundary
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
        narrative = cls()
        for name in PARTS:  # by name, as parts() reads them
            setattr(narrative, name, [str(item) for item in data.get(name) or []])
        return narrative


# building --------------------------------------------------------------------
#
# Each item is a clause a person would write after "I" (doing, recently,
# resolving, next) or a whole clause (why): what someone said, what I came to
# believe and how sure, what I replied, what changed. It reads as the mind
# would tell a colleague: no ids, labels or bare figures (the event cites what
# it mentions, and the citations carry them); how sure is said in words; a
# text is quoted whole when short, else cut at a word inside its quotes with
# an ellipsis, so nothing is cut outside a quote; a proposition too long to
# say is quoted the same way. Repeats are folded: three replies to alice are
# one item, three messages from her one clause.


def clip(text: str, limit: int = MAX_ITEM) -> str:
    """One line of `text`, cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS


def trim(text: str, limit: int = MAX_QUOTE) -> str:
    """One line of `text`, cut at the last word boundary before `limit` characters (trailing punctuation dropped) with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a word boundary not too far back; else a cut inside one long word
        cut = cut[:space]
    return cut.rstrip(" ,;:-–—") + ELLIPSIS


def _quote(text: str | None) -> str:
    return f"“{trim(text or '')}”"


def _prop(text: str | None) -> str:
    """A proposition to say after "that": whole when short, else quoted and cut at a word (never cut bare)."""
    line = " ".join((text or "").split()).rstrip(" .")
    return line if len(line) <= MAX_QUOTE else _quote(line)


SURENESS: tuple[tuple[float, str], ...] = (
    (0.95, "all but certain"), (0.8, "quite sure"), (0.6, "fairly sure"), (0.4, "half sure"), (0.2, "barely sure"),
    (0.0, "hardly sure at all"),
)
NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def sureness(confidence: float) -> str:
    """How sure, in the words a person would use ("quite sure" for 0.85); the figure is in the cited event."""
    return next(word for floor, word in SURENESS if confidence >= floor)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """"three questions": a count in words up to twelve, the noun in the right number."""
    word = NUMBERS[n] if 0 <= n < len(NUMBERS) else str(n)
    return f"{word} {noun if n == 1 else plural or noun + 's'}"


def _who(event: Event) -> str:
    name = named(event)
    if name is not None:
        return name
    if is_operator(event.actor):
        return "an operator"
    return event.actor.split(":", 1)[-1] if event.actor.startswith(("user:", "source:")) else event.actor


def _belief_text(db: Database, belief_id: int | None) -> str:
    belief = find_belief(db, belief_id) if belief_id is not None else None
    return _prop(belief.proposition) if belief is not None else "something I no longer hold"


def _goal_title(db: Database, goal_id: int | None) -> str:
    try:
        return _quote(get_goal(db, goal_id).title) if goal_id is not None else "a goal"
    except NotFound:
        return "a goal"


def _prediction_text(db: Database, prediction_id: int) -> str:
    try:
        return _prop(get_prediction(db, prediction_id).proposition)
    except NotFound:
        return "an earlier prediction"


def _did(db: Database, event: Event, predicted: str | None = None) -> str:
    """Why: what someone did, without who ("said “…”", "had me predict that …").

    An outcome of the prediction `predicted` (the proposition the same person
    just had me predict) is "told me it missed", not the proposition again.
    """
    match as_stimulus(event):
        case Message():
            return f"said {_quote(event.text)}"
        case Observation():
            return f"reported {_quote(event.text)}"
        case Assertion(claim=claim):
            verb = "denied" if claim.stance == "contradicts" else "told me"
            return f"{verb} that {_prop(claim.proposition or event.text)}"
        case Correction(belief=belief, status=status, confidence=value):
            pinned = status or ("pinned" if value is not None else "")  # a confidence alone pins
            what = {"rejected": "rejected", "pinned": "fixed", "active": "reopened"}.get(pinned, "corrected")
            at = f", {sureness(float(value))}" if value is not None and pinned != "rejected" else ""
            why = f", saying {_quote(event.text)}" if event.text else ""
            return f"{what} my belief that {_belief_text(db, belief)}{at}{why}"
        case GoalStimulus(goal=None, title=title):
            return f"gave me the goal {_quote(title or event.text)}"
        case GoalStimulus(goal=goal, status=status, progress=progress):
            goal_title = _goal_title(db, goal)
            if status:
                return f"marked {goal_title} {status}"
            return f"moved {goal_title} to {float(progress):.0%} done" if progress is not None else f"changed {goal_title}"
        case PredictionStimulus(proposition=proposition):
            return f"had me predict that {_prop(proposition or event.text)}"
        case OutcomeStimulus(prediction=prediction, result=result, observed=observed):
            verdict = "came true" if result == "hit" else "missed"
            said = f": {_quote(str(observed))}" if observed else ""
            what = _prediction_text(db, prediction)
            return f"told me {'it' if what == predicted else 'my prediction that ' + what} {verdict}{said}"
    return f"sent me {_quote(event.text)}"


def _stimulus(db: Database, event: Event) -> str:
    """Why: a stimulus as what someone did ("alice said “…”")."""
    return f"{_who(event)} {_did(db, event)}"


def _stimuli(db: Database, events: Sequence[Event]) -> list[str]:
    """Why: the stimuli, oldest first, one clause per run of one person's ("alice said “a”, then “b”")."""
    runs: list[tuple[str, list[str]]] = []
    predicted: str | None = None
    for event in events:
        who = _who(event)
        same = bool(runs) and runs[-1][0] == who
        did = _did(db, event, predicted if same else None)
        stimulus = as_stimulus(event)
        predicted = _prop(stimulus.proposition or event.text) if isinstance(stimulus, PredictionStimulus) else None
        if same:
            runs[-1][1].append(did)
        else:
            runs.append((who, [did]))
    return [f"{who} {_then(did)}" for who, did in runs]


def _then(clauses: Sequence[str]) -> str:
    """"said “a”, then “b”": one person's doings in order, a verb said again left out."""
    out = [clauses[0]]
    for before, clause in zip(clauses, clauses[1:]):
        verb, before_verb = clause.split(" ", 1)[0], before.split(" ", 1)[0]
        out.append(clause.split(" ", 1)[1] if verb == before_verb and verb in ("said", "reported") else clause)
    return ", then ".join(out)


def belief_phrase(change: BeliefChange, proposition: str, created: bool = False) -> str:
    """What a belief change did, as a clause after "I" ("came to believe that … (quite sure)")."""
    p = _prop(proposition)
    now = sureness(change.confidence_to)
    if change.status_changed and change.status_to == "rejected":
        if change.by == "outcome":
            return f"gave up my bet that {p} when it missed"
        why = "when an operator rejected it" if change.by == "operator" else "as the evidence turned against it"
        return f"stopped believing that {p} {why}"
    if change.status_changed and change.status_to == "pinned":
        return f"was told to hold that {p} ({now})"
    if change.correction and change.status_to == "active":
        return f"was told to weigh again whether {p}"
    if change.status_changed and change.status_to == "contested":
        return f"found the evidence split on whether {p}"
    if change.held is not None:
        return f"noted new evidence on whether {p}, which stays {change.status_to}"
    if created and change.source == PREDICTION_SOURCE:
        return f"bet that {p} ({now})"
    if created:
        return f"came to believe that {p} ({now})"
    if change.status_changed and change.status_from == "contested":
        return f"settled whether {p} (now {now})"
    before = sureness(change.confidence_from)
    if change.confidence_to > change.confidence_from:
        return f"grew surer that {p} ({'still' if before == now else 'now'} {now})"
    if change.confidence_to < change.confidence_from:
        return f"grew less sure that {p} ({'still' if before == now else 'now'} {now})"
    return f"weighed new evidence on whether {p} ({now})"


def _belief_event(db: Database, event: Event) -> str:
    belief = find_belief(db, event.subject.id) if event.subject is not None else None
    proposition = belief.proposition if belief is not None else event.text or ""
    return belief_phrase(BeliefChange.of(event), proposition, created=event.kind == "belief_created")


def _warned(db: Database, check: str, detail: Mapping[str, Any], named: set[int] | None = None) -> str:
    """What a metacognition warning noticed, as a clause after "I" (from its check and detail, never its label).

    A belief the same part has just named (`named`) is "it".
    """
    belief = detail.get("belief")
    belief = belief if isinstance(belief, int) else None
    said = belief is not None and belief in (named or set())
    p = _belief_text(db, belief)
    if belief is not None and named is not None:
        named.add(belief)
    match check:
        case "insufficient_evidence":
            return f"noticed that I hold {'it' if said else 'that ' + p} on a single piece of support"
        case "single_source":
            return f"noticed that only {detail.get('source') or 'one source'} supports {'it' if said else 'my belief that ' + p}"
        case "fluent_without_evidence":
            return f"noticed that nothing but my own words backs {'it' if said else 'my belief that ' + p}"
        case "repeated_failure":
            rejected = detail.get("rejected")
            how_many = counted(rejected, "of my hypotheses", "of my hypotheses") if isinstance(rejected, int) else "several of my hypotheses"
            return f"noticed that {how_many} about {detail.get('subject') or 'one subject'} were rejected this month"
        case "stale_contradiction":
            return f"noticed that I have been torn on {'it' if said else 'whether ' + p} for over a day"
        case "overconfidence":
            return "noticed that my predictions have been surer than their outcomes"
    return "noticed a flaw in my own reasoning"


def _told(db: Database, event: Event) -> str:
    """What a notification told the operator, as a clause after "I" (from its rule and values, never its title)."""
    raised = Raised.of(event)
    v = raised.values
    match raised.rule:
        case "prediction_miss":
            what = f"my confident prediction that {_prop(v.get('proposition'))} missed"
        case "contradiction":
            what = f"I am torn on whether {_prop(v.get('proposition'))}"
        case "strong_belief":
            what = f"I am now {sureness(float(v.get('confidence') or 0.0))} that {_prop(v.get('proposition'))}"
        case "goal_completed":
            what = f"the goal {_quote(v.get('title'))} is done"
        case "warning":
            return "warned an operator that " + _warned(db, str(v.get("check")), v).removeprefix("noticed that ")
        case "denied_action":
            what = f"I was refused {_quote(v.get('action'))}"
        case "salient_observation":
            what = f"{v.get('source') or 'a source'} reported something that matters: {_quote(v.get('text'))}"
        case _:
            what = "something needs attention"
    return f"let an operator know that {what}"


def _reply_to(db: Database, event: Event) -> str | None:
    """Who a reply answered (the author of the stimulus it answers); None if that is not known."""
    if event.causation_id is None:
        return None
    try:
        return _who(get_event(db, event.causation_id))
    except NotFound:
        return None


def _replied(to: str | None, text: str | None, times: int) -> str:
    """"replied to alice: “…”", or, for several replies, "answered three messages from alice"."""
    if times > 1:
        return f"answered {counted(times, 'message')}" + (f" from {to}" if to else "")
    return f"replied to {to}: {_quote(text)}" if to else f"replied {_quote(text)}"


def _is_notable(event: Event) -> bool:
    """Whether "recently" tells of `event`: a reply, a belief's status change, a warning, a goal ended, a bet resolved, a notification."""
    if event.kind in BELIEF_EVENTS:
        return event.subject is not None and BeliefChange.of(event).status_changed
    return event.kind in NOTABLE


def _notable(db: Database, event: Event, named: set[int]) -> str:
    """Recently: what the mind did or saw, as a clause after "I" ("replied to alice: “…”").

    `named`: beliefs this part has named so far ("it" after that).
    """
    if event.kind == "reply":
        return _replied(_reply_to(db, event), event.text, 1)
    if event.kind in BELIEF_EVENTS and event.subject is not None:
        named.add(event.subject.id)
        return _belief_event(db, event)
    if event.kind == "metacognition":
        warning = MetacognitionWarning.of(event)
        return _warned(db, warning.check, warning.detail, named)
    if event.kind in ("goal_completed", "goal_abandoned"):
        verb = "completed" if event.kind == "goal_completed" else "gave up"
        goal_change = GoalChange.of(event)
        return f"{verb} the goal {_quote(goal_change.title or event.text)}"
    if event.kind == "prediction_resolved":
        resolution = Resolution.of(event)
        verdict = "came true" if resolution.result == "hit" else "did not come true"
        return f"learned that my prediction that {_prop(resolution.proposition)} {verdict}"
    return _told(db, event)


def _about(event: Event) -> set[Any]:
    """What an item telling `event` is about: the event, its belief, a warning's check and target."""
    about: set[Any] = {Ref("event", event.id)}
    if event.kind in BELIEF_EVENTS and event.subject is not None:
        about.add(Ref("belief", event.subject.id))
    if event.kind == "metacognition":
        warning = MetacognitionWarning.of(event)
        about.add((warning.check, warning.ref))
    return about


def _raised_about(event: Event) -> set[Any]:
    """What a notification is about: the event that fired it, and its belief if it has one."""
    belief = Raised.of(event).values.get("belief")
    return {Ref("event", event.causation_id or 0)} | ({Ref("belief", belief)} if isinstance(belief, int) else set())


def _folded(db: Database, notable: Sequence[Event]) -> list[tuple[Event, int]]:
    """Repeats as one: the replies to one person are one item, (their newest reply, how many), where the newest stands."""
    replies: dict[str | None, list[Event]] = {}
    for event in notable:
        if event.kind == "reply":
            replies.setdefault(_reply_to(db, event), []).append(event)
    newest = {group[-1].id: len(group) for group in replies.values()}
    return [(event, newest.get(event.id, 1)) for event in notable if event.kind != "reply" or event.id in newest]


def _doing(db: Database, thought: Thought, quoted: set[int], resolving: set[Ref], expected: set[int], named: set[int]) -> str | None:
    """A winner as a clause after "I"; None when another part already says it (its stimulus, goal or prediction)."""
    events = [r.id for r in thought.refs if r.type == "event"]
    if thought.process == "perception":
        if events and events[0] in quoted:
            return None
        try:
            event = get_event(db, events[0]) if events else None
        except NotFound:
            event = None
        return f"thought over what {_stimulus(db, event)}" if event is not None else "thought over something I was told"
    if thought.process == "evidence" and events:
        try:
            event = get_event(db, events[0])
        except NotFound:
            return None
        if event.subject is not None:
            named.add(event.subject.id)
        return _belief_event(db, event)
    if thought.process == "goals":
        if any(Ref("event", e) in resolving for e in events):
            return None
        goal = int(thought.key.split(":", 1)[1]) if ":" in thought.key else None
        return f"kept in mind the goal {_goal_title(db, goal)}"
    if thought.process == "predictions":
        prediction = int(thought.key.split(":", 1)[1]) if ":" in thought.key else None
        if prediction is not None and prediction in expected:
            return None
        return f"checked whether {_prediction_text(db, prediction)} has come true" if prediction is not None else None
    if thought.process == "metacognition":
        return _warned(db, str(thought.detail.get("check", thought.kind)), thought.detail, named)
    return None


def _when(at: str) -> str:
    """A stored ISO time as `YYYY-MM-DD HH:MM UTC`."""
    return f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 and at[10] == "T" else at


def _window_start(db: Database, mind: str) -> int:
    """`since` for the mind's newest WINDOW events (0 when it has fewer)."""
    row = db.execute("SELECT id FROM events WHERE mind = ? ORDER BY id DESC LIMIT 1 OFFSET ?", [mind, WINDOW - 1]).fetchone()
    return int(row[0]) - 1 if row else 0


def _belief_of(db: Database, thought: Thought) -> tuple[int, int] | None:
    """(belief, event) an evidence winner tells of; None for any other winner."""
    if thought.process != "evidence":
        return None
    beliefs = [r.id for r in thought.refs if r.type == "belief"]
    events = [r.id for r in thought.refs if r.type == "event"]
    return (beliefs[0], events[0]) if beliefs and events else None


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
    n.why = [clip(item) for item in _stimuli(db, stimuli)]
    refs.extend(Ref("event", event.id) for event in stimuli)
    notable = [e for e in list_events(db, mind, kinds=NOTABLE, since=_window_start(db, mind), limit=WINDOW) if _is_notable(e)]
    newest: dict[int, int] = {}  # belief -> its newest change told anywhere
    for belief_id, event_id in [b for b in (_belief_of(db, t) for t in admitted) if b is not None] + [
        (e.subject.id, e.id) for e in notable if e.kind in BELIEF_EVENTS and e.subject is not None
    ]:
        newest[belief_id] = max(newest.get(belief_id, 0), event_id)
    notable = [
        e for e in notable
        if not (e.kind in BELIEF_EVENTS and e.subject is not None and newest.get(e.subject.id) != e.id)  # superseded
        and not (e.kind == "prediction_resolved" and Resolution.of(e).belief in newest)  # its belief's change tells it
    ]
    recent = _folded(db, notable)[-MAX_ITEMS:]
    refs.extend(Ref("event", event.id) for event, _ in recent)
    resolving_refs: set[Ref] = set()
    for belief in list_beliefs(db, mind, status="contested", limit=MAX_ITEMS):
        n.resolving.append(clip(f"have not settled whether {_prop(belief.proposition)}"))
        refs.append(Ref("belief", belief.id))
    for goal in active_goals(db, mind)[: MAX_ITEMS - len(n.resolving)]:
        n.resolving.append(clip(f"am working on {_quote(goal.title)}, {goal.progress:.0%} done"))
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
            item = f"am still waiting to learn whether {_prop(prediction.proposition)} (due {_when(prediction.due_at)})"
        else:
            item = f"expect that {_prop(prediction.proposition)} (due {_when(prediction.due_at)}, {sure})"
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
        belief_told = _belief_of(db, thought)
        if belief_told is not None and (newest.get(belief_told[0]) != belief_told[1] or (belief_told[0] in betting and thought.kind == "belief_created")):
            continue  # a newer change of this belief is told instead, or the open bet `next` tells
        phrase = _doing(db, thought, quoted, resolving_refs, expected, named)
        if phrase is not None:
            n.doing.append(phrase)
            keys: set[Any] = set(thought.refs)
            if thought.process == "metacognition":
                keys.add((thought.detail.get("check"), thought.detail.get("ref")))
            told_event = max((r.id for r in thought.refs if r.type == "event"), default=0)
            for key in keys:
                where.setdefault(key, (n.doing, len(n.doing) - 1, told_event))
    # A belief still contested is told in `resolving`: a notification that it is, with nothing newer, rides there.
    unsettled = {Ref("belief", b.id): (n.resolving, i, 0) for i, b in enumerate(list_beliefs(db, mind, status="contested", limit=MAX_ITEMS))}
    recent_named: set[int] = set()
    for event, times in recent:
        about = _about(event)
        if event.kind == "metacognition" and about & where.keys():
            for key in about:
                where.setdefault(key, where[next(iter(about & where.keys()))])
            continue  # the winner that raised it is told in `doing`
        if event.kind == "notification":
            about_it = sorted(_raised_about(event), key=str)
            told = next((where[key] for key in about_it if key in where and where[key][2] < event.id), None)
            told = told or next((unsettled[key] for key in about_it if key in unsettled and not any(key in where for key in about_it)), None)
            if told is not None:
                part, i, _ = told
                suffix = " and warned an operator" if Raised.of(event).rule == "warning" else " and told an operator"
                part[i] = part[i] if part[i].endswith(suffix) else part[i] + suffix
                continue
        phrase = _replied(_reply_to(db, event), event.text, times) if times > 1 else _notable(db, event, recent_named)
        if phrase in n.doing:
            continue  # not what `doing` tells
        n.recently.append(phrase)
        for key in about:
            where.setdefault(key, (n.recently, len(n.recently) - 1, event.id))
    n.doing = [clip(item) for item in n.doing]
    n.recently = [clip(item) for item in n.recently]
    n.refs = list(dict.fromkeys(refs))[:MAX_REFS]
    return n


# rendering -------------------------------------------------------------------


def _and(items: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"; a verb said again is left out ("noticed that a and that b")."""
    items = _fold(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _lead(item: str) -> str:
    """The verb an item opens with: the words before its "that"/"whether" (within four words), else its first word."""
    words = item.split(" ")
    for i, word in enumerate(words[:5]):
        if word in ("that", "whether") and i > 0:
            return " ".join(words[:i])
    return words[0]


def _fold(items: Sequence[str]) -> list[str]:
    """Items in a row that open with the same verb as one: "noticed that a", "noticed that b" -> "noticed that a and that b"."""
    runs: list[tuple[str, list[str]]] = []
    for item in items:
        lead = _lead(item)
        if runs and runs[-1][0] == lead:
            runs[-1][1].append(item[len(lead):].lstrip())
        else:
            runs.append((lead, [item[len(lead):].lstrip()]))
    out = []
    for lead, rests in runs:
        # A serial comma when a folded clause has an "and" of its own, so the last one reads apart.
        last = ", and " if any(" and " in rest for rest in rests[:-1]) else " and "
        joined = rests[0] if len(rests) == 1 else ", ".join(rests[:-1]) + last + rests[-1]
        out.append(f"{lead} {joined}".rstrip())
    return out


def _sentence(text: str) -> str:
    """A sentence: a full stop unless it ends with one (or a closing quote after one), its first word capitalised.

    Unless that word is a name: "alice said …" keeps alice's name as she
    spells it (a source "ci" is not "Ci"); only the template's own words
    ("an operator") are capitalised.
    """
    if text.startswith("an "):
        text = "A" + text[1:]
    return text if text.endswith((".", "!", "?", ".”", "!”", "?”", "…”", "…")) else text + "."


def render(n: Narrative) -> str:
    """Short first-person prose; empty parts are left out. Deterministic.

    What happened (why), what I made of it (doing), what I did lately
    (recently), what is still open (resolving) and what I expect (next),
    one sentence each.
    """
    sentences = []
    if n.why:
        sentences.append(_sentence("; then ".join(n.why)))
    if n.doing:
        sentences.append(_sentence(("So I " if n.why else "I ") + _and(n.doing)))
    if n.recently:
        sentences.append(_sentence("Lately I " + _and(n.recently)))
    if n.resolving:
        sentences.append(_sentence("I " + _and(n.resolving)))
    if n.next:
        sentences.append(_sentence("I " + _and(n.next)))
    return " ".join(sentences) if sentences else "I have nothing on my mind yet."


# storing ---------------------------------------------------------------------


def last_updated(db: Database, mind: str, through: int | None = None) -> Event | None:
    """The mind's newest `narrative_updated` event (of those up to event `through`, if given)."""
    if through is not None:
        row = db.execute("SELECT id FROM events WHERE mind = ? AND kind = ? AND id <= ? ORDER BY id DESC LIMIT 1", [mind, UPDATED, through]).fetchone()
        return None if row is None else get_event(db, int(row[0]))
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


def _rephrased(db: Database, updated: Event, through: int | None = None) -> Event | None:
    bounded = " AND id <= ?" if through is not None else ""
    row = db.execute(
        f"SELECT id FROM events WHERE causation_id = ? AND kind = ?{bounded} ORDER BY id DESC LIMIT 1",
        [updated.id, REPHRASED, *([through] if through is not None else [])],
    ).fetchone()
    return None if row is None else get_event(db, int(row[0]))


def latest(db: Database, mind: str, settings: MindSettings | None = None, through: int | None = None) -> dict[str, Any] | None:
    """The mind's newest narrative: parts, the prose as shown, the plain prose, who rendered it and why; None if none yet.

    With `through`, the narrative as it read right after that event: the newest written by then, rephrased if it was by then.
    """
    updated = last_updated(db, mind, through)
    if updated is None:
        return None
    rephrased = _rephrased(db, updated, through)
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


def narrative_json(db: Database, mind: str, settings: MindSettings | None = None, through: int | None = None) -> dict[str, Any]:
    """The API's answer: `latest` with the mind's name (running `settings`; as of event `through` if given), or `empty_json`."""
    found = latest(db, mind, settings, through)
    return {"mind": mind, **found} if found is not None else empty_json(mind)

