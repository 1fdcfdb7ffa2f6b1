"""Metacognition: the mind audits its own reasoning every cycle.

Six checks propose warnings, which compete for attention like any thought;
only an admitted warning takes effect. Each effect is a `metacognition`
event with `check` and `ref` in its data, caused by the attention event that
admitted it; the same check on the same target is not repeated within a day
(of the daemon's clock).

| check                   | fires when                                                   | effect                                  |
|-------------------------|--------------------------------------------------------------|-----------------------------------------|
| insufficient_evidence   | a belief is at >= 0.7 with a single supporting item          | counter-evidence (weight 0.25)          |
| single_source           | all support for a >= 0.6 belief comes from one source        | counter-evidence (weight 0.25)          |
| fluent_without_evidence | a belief rests only on model output or free notes            | counter-evidence (weight 0.25)          |
| repeated_failure        | >= 3 hypotheses about one subject rejected within 30 days    | a warning                               |
| stale_contradiction     | a belief contested since a day ago or longer                 | an investigation goal                   |
| overconfidence          | calibration shows stated confidence running ahead of outcomes | a warning                              |

What each check looks at:

* insufficient_evidence and single_source look at the beliefs the cycle
  changed, and count only *support a source gave*: a prediction's stated
  confidence (source `prediction`) is the mind's own bet, not a source to
  corroborate, and an outcome (source `outcome`) is the decisive observation
  of whether the bet came true. A prediction is judged by its outcome
  instead: calibration over resolved predictions (`overconfidence`) is the
  check for bets, and a missed hypothesis is rejected where it is resolved.
  A hypothesis that also has support from elsewhere (an observation, an
  assertion) is checked on that support.
* fluent_without_evidence looks at the beliefs the cycle changed and at every
  belief given model-output or note support within the last day
  (`beliefs.fluent_beliefs`): that support arrives outside perception — a
  reply's claims that nothing the mind was given supports are recorded as
  `model_output` evidence after the reply (`noemad.turn.stated`) — so the
  next cycle audits it.
* stale_contradiction: a belief contested since at least a day ago
  (`beliefs.contested_since`: since the event that moved it into
  `contested`), however much evidence kept arriving meanwhile — the
  contradiction is unresolved, not merely quiet.
* repeated_failure and overconfidence look at the whole mind.

Pinned and rejected beliefs are the operator's and are left alone.
Counter-evidence comes from the source `metacognition` with credibility 1,
so two warnings on one belief count with the same-source discount.

A warning lifts when its cause is gone (`lift`, every cycle, on the beliefs
the cycle changed, before the checks): its condition, without the
confidence threshold the warning itself pushed down, no longer holds —
insufficient_evidence once a second item of support arrived,
single_source once another source supports the belief, and
fluent_without_evidence once support other than the mind's own words or
notes did (support counts when its weight and credibility are above zero).
Its counter-evidence is then withdrawn (`beliefs.withdraw_evidence`): a
`belief_updated` event caused by the event that brought the support that
lifted it, with the warning as its parent, so the timeline shows why the
confidence rose. Support only grows, so a lifted warning does not return:
a belief with enough independent credible support ends at the confidence
its evidence alone gives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.beliefs.evidence import add_evidence, withdraw_evidence
from noemad.cognition.beliefs.model import Belief, COUNTER_SOURCE, Evidence, FLUENT_KINDS
from noemad.cognition.beliefs.queries import contested_since, fluent_beliefs, get_belief, rejected_hypotheses, with_standing_counter
from noemad.cognition.calibration import overconfident
from noemad.cognition.goals import create_goal
from noemad.cognition.thoughts import Thought
from noemad.events import Event, EventDraft, Ref, append, data_of, get_events

DAY = 86_400.0
MONTH = 30 * DAY
COUNTER_WEIGHT = 0.25
SOURCE = COUNTER_SOURCE
ACTOR = "process:metacognition"


@dataclass(frozen=True)
class Check:
    """A check's name, how salient its warning is, and what it does when admitted."""

    name: str
    salience: float
    effect: str  # counter_evidence | warning | goal


CHECKS = {
    c.name: c
    for c in (
        Check("insufficient_evidence", 0.8, "counter_evidence"),
        Check("single_source", 0.7, "counter_evidence"),
        Check("fluent_without_evidence", 0.75, "counter_evidence"),
        Check("repeated_failure", 0.85, "warning"),
        Check("stale_contradiction", 0.7, "goal"),
        Check("overconfidence", 0.9, "warning"),
    )
}
# Support that is no source's word: the mind's own stated bet, and the outcome that settles it.
NOT_A_SOURCE = frozenset({"prediction", "outcome"})


@dataclass(frozen=True)
class MetacognitionWarning:
    """The data of a `metacognition` event: the one definition of its fields.

    `check` and `ref` (the target: `belief:ID`, `subject:S`, `mind:M`) name
    the warning; `detail` holds what that check adds (`belief`, `source`,
    `subject`, `rejected`, `brier`); `effect` and `salience` say what it did
    and how strongly it was proposed.
    """

    check: str
    ref: str
    effect: str
    salience: float
    detail: dict[str, Any] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        return {"check": self.check, "ref": self.ref, **self.detail, "effect": self.effect, "salience": self.salience}

    @classmethod
    def of(cls, event: Event) -> MetacognitionWarning:
        data = data_of(event, "metacognition")
        return cls(
            check=str(data.get("check")),
            ref=str(data.get("ref", "")),
            effect=str(data.get("effect", "")),
            salience=float(data.get("salience") or 0.0),
            detail={k: v for k, v in data.items() if k not in ("check", "ref", "effect", "salience")},
        )

    @property
    def belief(self) -> int | None:
        value = self.detail.get("belief")
        return value if isinstance(value, int) else None


def recently_warned(db: Database, mind: str, check: str, ref: str, now: float) -> bool:
    """Whether the same check fired on the same target within the last day."""
    row = db.execute(
        "SELECT 1 FROM events WHERE mind = ? AND kind = 'metacognition' AND at >= ?"
        " AND json_extract(data, '$.check') = ? AND json_extract(data, '$.ref') = ? LIMIT 1",
        [mind, iso(now - DAY), check, ref],
    ).fetchone()
    return row is not None


def _warning(check: str, ref: str, summary: str, refs: tuple[Ref, ...], **detail: object) -> Thought:
    return Thought(
        process="metacognition",
        kind=check,
        salience=CHECKS[check].salience,
        summary=summary,
        key=f"{check}:{ref}",
        refs=refs,
        detail={"check": check, "ref": ref, **detail},
    )


def belief_checks(belief: Belief) -> list[Thought]:
    """The evidence checks that fire on one belief."""
    if belief.status in ("pinned", "rejected"):
        return []
    every = [e for e in belief.evidence if e.stance == "support"]
    if not every:
        return []
    ref = f"belief:{belief.id}"
    about = (Ref("belief", belief.id),)
    out: list[Thought] = []
    if all(e.kind in FLUENT_KINDS for e in every):
        out.append(_warning("fluent_without_evidence", ref, f"I hold “{belief.proposition}” only on my own words or notes, with nothing to back it", about, belief=belief.id))
    support = [e for e in every if e.source not in NOT_A_SOURCE]  # a bet and its outcome are judged by calibration
    if not support:
        return out
    if belief.confidence >= 0.7 and len(support) == 1:
        out.append(_warning("insufficient_evidence", ref, f"I am {belief.confidence:.2f} sure that {belief.proposition} on a single piece of support", about, belief=belief.id))
    sources = {e.source for e in support}
    if belief.confidence >= 0.6 and len(sources) == 1:
        out.append(_warning("single_source", ref, f"all my support for “{belief.proposition}” comes from {next(iter(sources))}", about, belief=belief.id, source=next(iter(sources))))
    return sorted(out, key=lambda t: list(CHECKS).index(t.kind))


def propose(db: Database, mind: str, changed: Iterable[int], now: float) -> list[Thought]:
    """Every warning the checks would raise now (no side effects)."""
    thoughts: list[Thought] = []
    touched = set(changed)
    for belief_id in sorted(touched):
        thoughts.extend(belief_checks(get_belief(db, belief_id)))
    for belief_id in fluent_beliefs(db, mind, iso(now - DAY)):  # support that came outside perception
        if belief_id not in touched:
            thoughts.extend(t for t in belief_checks(get_belief(db, belief_id)) if t.kind == "fluent_without_evidence")
    for belief_id, proposition in contested_since(db, mind, iso(now - DAY)):
        thoughts.append(
            _warning("stale_contradiction", f"belief:{belief_id}", f"I have been torn on whether {proposition} for over a day",
                     (Ref("belief", belief_id),), belief=belief_id)
        )
    for subject, count in rejected_hypotheses(db, mind, iso(now - MONTH), at_least=3):
        thoughts.append(
            _warning("repeated_failure", f"subject:{subject}", f"{count} of my hypotheses about {subject} were rejected in 30 days", (),
                     subject=subject, rejected=count)
        )
    overconfidence = _overconfidence(db, mind)
    if overconfidence is not None:
        thoughts.append(overconfidence)
    return [t for t in thoughts if not recently_warned(db, mind, t.detail["check"], t.detail["ref"], now)]


def _overconfidence(db: Database, mind: str) -> Thought | None:
    cal = overconfident(db, mind)
    if cal is None:
        return None
    return _warning("overconfidence", f"mind:{mind}", "my stated confidence is running ahead of outcomes", (), brier=cal.brier)


def apply(db: Database, mind: str, thought: Thought, cause: int, cycle_id: str, now: float) -> list[Event]:
    """Take effect for an admitted warning (a writer job): the event, then its effect."""
    check = CHECKS[thought.detail["check"]]
    warning = append(
        db,
        EventDraft(
            mind=mind,
            kind="metacognition",
            actor=ACTOR,
            text=thought.summary,
            cycle_id=cycle_id,
            causation_id=cause,
            refs=list(thought.refs),
            data=MetacognitionWarning(
                check.name,
                str(thought.detail["ref"]),
                check.effect,
                thought.salience,
                {k: v for k, v in thought.detail.items() if k not in ("check", "ref")},
            ).to_data(),
        ),
        now,
    )
    events = [warning]
    belief_id = thought.detail.get("belief")
    if check.effect == "counter_evidence" and isinstance(belief_id, int):
        belief = get_belief(db, belief_id)
        _, updated = add_evidence(
            db,
            mind=mind,
            proposition=belief.proposition,
            subject=belief.subject,
            kind="inference",
            stance="contradict",
            weight=COUNTER_WEIGHT,
            credibility=1.0,
            source=SOURCE,
            brought_by=warning.id,
            now=now,
            actor=ACTOR,
            cycle_id=cycle_id,
        )
        events.append(updated)
    elif check.effect == "goal" and isinstance(belief_id, int):
        belief = get_belief(db, belief_id)
        _, goal_event = create_goal(
            db, mind=mind, title=f"investigate: {belief.proposition}", origin="mind", cause=warning.id, cycle_id=cycle_id, now=now
        )
        events.append(goal_event)
    return events


def lifted_by(check: str, belief: Belief, warned_source: str | None = None) -> Evidence | None:
    """The item of support that makes a counter-evidence warning hold no more, or None while it holds.

    Each check's condition without its confidence threshold (that confidence
    is what the warning lowered): `insufficient_evidence` holds while a
    single item supports the belief, and the second lifts it;
    `single_source` while one source (`warned_source`, else the first) gives
    all the support, and the first item from another lifts it;
    `fluent_without_evidence` while the support is only the mind's own words
    or notes, and the first other item lifts it. Support from no source (a
    bet, an outcome) lifts none of the first two, as it never fired them;
    support with no weight or no credibility says nothing and lifts nothing.
    """
    said = [e for e in belief.evidence if e.stance == "support" and e.standing and e.item().strength > 0]
    if check == "fluent_without_evidence":
        return next((e for e in said if e.kind not in FLUENT_KINDS), None)
    sourced = [e for e in said if e.source not in NOT_A_SOURCE]
    if check == "insufficient_evidence":
        return sourced[1] if len(sourced) > 1 else None
    if check == "single_source":
        first = warned_source if warned_source is not None else (sourced[0].source if sourced else None)
        return next((e for e in sourced if e.source != first), None)
    return None


def _lift_reason(check: str, belief: Belief, by: Evidence) -> str:
    too = "" if check == "fluent_without_evidence" else " too"
    return f"{check} lifted: {by.source} supports “{belief.proposition}”{too}"


def lift(db: Database, mind: str, changed: Iterable[int], cycle_id: str, now: float) -> list[Event]:
    """Withdraw the counter-evidence of each warning on the changed beliefs whose cause is gone (a writer job); the events.

    One `belief_updated` per lifted warning, oldest warning first, caused by
    the event that brought the support that lifted it, the warning its parent.
    """
    events: list[Event] = []
    for belief_id in with_standing_counter(db, changed):
        belief = get_belief(db, belief_id)
        if belief.status in ("pinned", "rejected"):
            continue  # the operator's
        counters: dict[int, list[int]] = {}  # warning event -> its items of counter-evidence
        for e in belief.evidence:
            if e.standing and e.source == SOURCE and e.stance == "contradict":
                counters.setdefault(e.event_id, []).append(e.id)
        found = get_events(db, sorted(counters))
        for warning_id in sorted(counters):
            if warning_id not in found or found[warning_id].kind != "metacognition":
                continue  # archived, or not a warning's: nothing says which condition to test
            warning = MetacognitionWarning.of(found[warning_id])
            source = warning.detail.get("source")
            warned = source if isinstance(source, str) else None
            by = lifted_by(warning.check, belief, warned)
            if by is None:
                continue
            belief, event = withdraw_evidence(
                db, belief_id=belief_id, evidence_ids=counters[warning_id], reason=_lift_reason(warning.check, belief, by),
                cause=by.event_id, parents=[warning_id], check=warning.check, lifted_by=by.id, now=now, actor=ACTOR, cycle_id=cycle_id,
            )
            events.append(event)
    return events
