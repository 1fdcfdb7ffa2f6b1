"""How each thing a mind did or learnt is said as a clause: quoted, folded, in words a person would use (see the comment below)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlite_utils import Database

from noemad.cognition.beliefs.change import BELIEF_EVENTS, BeliefChange
from noemad.cognition.beliefs.queries import find_belief
from noemad.cognition.goals import GoalChange, get_goal
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.narrative.model import (
    ELLIPSIS,
    MAX_ITEM,
    MAX_QUOTE,
    NOTABLE,
)
from noemad.cognition.notifications.table import Raised
from noemad.cognition.predictions import PREDICTION_SOURCE, Resolution, get_prediction
from noemad.cognition.thoughts import Thought
from noemad.errors import NotFound
from noemad.events import Event, Ref, get_event
from noemad.operator import is_operator
from noemad.stimuli import (
    Assertion,
    Correction,
    GoalStimulus,
    Message,
    Observation,
    OutcomeStimulus,
    PredictionStimulus,
    Stimulus,
    as_stimulus,
    named,
)

if TYPE_CHECKING:
    pass


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


def quote(text: str | None) -> str:
    return f"“{trim(text or '')}”"


def prop(text: str | None) -> str:
    """A proposition to say after "that": whole when short, else quoted and cut at a word (never cut bare)."""
    line = " ".join((text or "").split()).rstrip(" .")
    return line if len(line) <= MAX_QUOTE else quote(line)


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
    return prop(belief.proposition) if belief is not None else "something I no longer hold"


def _goal_title(db: Database, goal_id: int | None) -> str:
    try:
        return quote(get_goal(db, goal_id).title) if goal_id is not None else "a goal"
    except NotFound:
        return "a goal"


def _prediction_text(db: Database, prediction_id: int) -> str:
    try:
        return prop(get_prediction(db, prediction_id).proposition)
    except NotFound:
        return "an earlier prediction"


def _did(db: Database, event: Event, stimulus: Stimulus | None, predicted: str | None = None) -> str:
    """Why: what someone did, without who ("said “…”", "had me predict that …"); `stimulus` is the event's `as_stimulus`.

    An outcome of the prediction `predicted` (the proposition the same person
    just had me predict) is "told me it missed", not the proposition again.
    """
    match stimulus:
        case Message():
            return f"said {quote(event.text)}"
        case Observation():
            return f"reported {quote(event.text)}"
        case Assertion(claim=claim):
            verb = "denied" if claim.stance == "contradicts" else "told me"
            return f"{verb} that {prop(claim.proposition or event.text)}"
        case Correction(belief=belief, status=status, confidence=value):
            pinned = status or ("pinned" if value is not None else "")  # a confidence alone pins
            what = {"rejected": "rejected", "pinned": "fixed", "active": "reopened"}.get(pinned, "corrected")
            at = f", {sureness(float(value))}" if value is not None and pinned != "rejected" else ""
            why = f", saying {quote(event.text)}" if event.text else ""
            return f"{what} my belief that {_belief_text(db, belief)}{at}{why}"
        case GoalStimulus(goal=None, title=title):
            return f"gave me the goal {quote(title or event.text)}"
        case GoalStimulus(goal=goal, status=status, progress=progress):
            goal_title = _goal_title(db, goal)
            if status:
                return f"marked {goal_title} {status}"
            return f"moved {goal_title} to {float(progress):.0%} done" if progress is not None else f"changed {goal_title}"
        case PredictionStimulus(proposition=proposition):
            return f"had me predict that {prop(proposition or event.text)}"
        case OutcomeStimulus(prediction=prediction, result=result, observed=observed):
            verdict = "came true" if result == "hit" else "missed"
            said = f": {quote(str(observed))}" if observed else ""
            what = _prediction_text(db, prediction)
            return f"told me {'it' if what == predicted else 'my prediction that ' + what} {verdict}{said}"
    return f"sent me {quote(event.text)}"


def _stimulus(db: Database, event: Event) -> str:
    """Why: a stimulus as what someone did ("alice said “…”")."""
    return f"{_who(event)} {_did(db, event, as_stimulus(event))}"


def stimuli_items(db: Database, events: Sequence[Event]) -> list[str]:
    """Why: the stimuli, oldest first, one clause per run of one person's ("alice said “a”, then “b”")."""
    runs: list[tuple[str, list[str]]] = []
    predicted: str | None = None
    for event in events:
        who = _who(event)
        same = bool(runs) and runs[-1][0] == who
        stimulus = as_stimulus(event)
        did = _did(db, event, stimulus, predicted if same else None)
        predicted = prop(stimulus.proposition or event.text) if isinstance(stimulus, PredictionStimulus) else None
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
    p = prop(proposition)
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
            what = f"my confident prediction that {prop(v.get('proposition'))} missed"
        case "contradiction":
            what = f"I am torn on whether {prop(v.get('proposition'))}"
        case "strong_belief":
            what = f"I am now {sureness(float(v.get('confidence') or 0.0))} that {prop(v.get('proposition'))}"
        case "goal_completed":
            what = f"the goal {quote(v.get('title'))} is done"
        case "warning":
            return "warned an operator that " + _warned(db, str(v.get("check")), v).removeprefix("noticed that ")
        case "denied_action":
            what = f"I was refused {quote(v.get('action'))}"
        case "salient_observation":
            what = f"{v.get('source') or 'a source'} reported something that matters: {quote(v.get('text'))}"
        case _:
            what = "something needs attention"
    return f"let an operator know that {what}"


def reply_to(db: Database, event: Event) -> str | None:
    """Who a reply answered (the author of the stimulus it answers); None if that is not known."""
    if event.causation_id is None:
        return None
    try:
        return _who(get_event(db, event.causation_id))
    except NotFound:
        return None


def replied_item(to: str | None, text: str | None, times: int) -> str:
    """"replied to alice: “…”", or, for several replies, "answered three messages from alice"."""
    if times > 1:
        return f"answered {counted(times, 'message')}" + (f" from {to}" if to else "")
    return f"replied to {to}: {quote(text)}" if to else f"replied {quote(text)}"


def is_notable(event: Event) -> bool:
    """Whether "recently" tells of `event`: a reply, a belief's status change, a warning, a goal ended, a bet resolved, a notification."""
    if event.kind in BELIEF_EVENTS:
        return event.subject is not None and BeliefChange.of(event).status_changed
    return event.kind in NOTABLE


def notable_item(db: Database, event: Event, named: set[int]) -> str:
    """Recently: what the mind did or saw, as a clause after "I" ("replied to alice: “…”").

    `named`: beliefs this part has named so far ("it" after that).
    """
    if event.kind == "reply":
        return replied_item(reply_to(db, event), event.text, 1)
    if event.kind in BELIEF_EVENTS and event.subject is not None:
        named.add(event.subject.id)
        return _belief_event(db, event)
    if event.kind == "metacognition":
        warning = MetacognitionWarning.of(event)
        return _warned(db, warning.check, warning.detail, named)
    if event.kind in ("goal_completed", "goal_abandoned"):
        verb = "completed" if event.kind == "goal_completed" else "gave up"
        goal_change = GoalChange.of(event)
        return f"{verb} the goal {quote(goal_change.title or event.text)}"
    if event.kind == "prediction_resolved":
        resolution = Resolution.of(event)
        verdict = "came true" if resolution.result == "hit" else "did not come true"
        return f"learned that my prediction that {prop(resolution.proposition)} {verdict}"
    return _told(db, event)


def topics_of(event: Event) -> set[Any]:
    """What an item telling `event` is about: the event, its belief, a warning's check and target."""
    about: set[Any] = {Ref("event", event.id)}
    if event.kind in BELIEF_EVENTS and event.subject is not None:
        about.add(Ref("belief", event.subject.id))
    if event.kind == "metacognition":
        warning = MetacognitionWarning.of(event)
        about.add((warning.check, warning.ref))
    return about


def raised_topics(event: Event) -> set[Any]:
    """What a notification is about: the event that fired it, and its belief if it has one."""
    belief = Raised.of(event).values.get("belief")
    return {Ref("event", event.causation_id or 0)} | ({Ref("belief", belief)} if isinstance(belief, int) else set())


def folded_notable(db: Database, notable: Sequence[Event]) -> list[tuple[Event, int]]:
    """Repeats as one: the replies to one person are one item, (their newest reply, how many), where the newest stands."""
    replies: dict[str | None, list[Event]] = {}
    for event in notable:
        if event.kind == "reply":
            replies.setdefault(reply_to(db, event), []).append(event)
    newest = {group[-1].id: len(group) for group in replies.values()}
    return [(event, newest.get(event.id, 1)) for event in notable if event.kind != "reply" or event.id in newest]


def doing_item(db: Database, thought: Thought, quoted: set[int], resolving: set[Ref], expected: set[int], named: set[int]) -> str | None:
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


def when_said(at: str) -> str:
    """A stored ISO time as `YYYY-MM-DD HH:MM UTC`."""
    return f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 and at[10] == "T" else at


def belief_of(db: Database, thought: Thought) -> tuple[int, int] | None:
    """(belief, event) an evidence winner tells of; None for any other winner."""
    if thought.process != "evidence":
        return None
    beliefs = [r.id for r in thought.refs if r.type == "belief"]
    events = [r.id for r in thought.refs if r.type == "event"]
    return (beliefs[0], events[0]) if beliefs and events else None
