"""Beliefs and the evidence behind them.

A belief is a proposition about a subject, held with a confidence computed
from its evidence (`confidence.py`). Subjects and propositions are
normalised (case, spacing, punctuation, leading articles) so that "one
subject" and "the same proposition" are decidable. Status: `active`;
`contested` when strong evidence stands on both sides; `rejected` and
`pinned` by operators — a pinned or rejected belief records new evidence but
its confidence is not moved by it until an operator sets it `active` again.

Every change is a `belief_created` or `belief_updated` event, caused by what
brought the change and citing what it rests on, written in the same
transaction as the change; its data is a `BeliefChange`. This module owns the
`beliefs` and `evidence` tables (a source's trust, which sets an item's
credibility, is `noemad.cognition.trust`'s): other modules read them through
the functions here and change them only by calling them.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Annotated, Any, Literal, NamedTuple

import numpy as np
from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition import belief_history
from noemad.cognition.confidence import Item, assessed
from noemad.cognition.trust import trust
from noemad.errors import InvalidInput, InvalidLink, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of
from noemad.store import savepoint
from noemad.wire import OMIT_NONE, computed, wire

Kind = Literal["observation", "assertion", "inference", "hypothesis", "model_output", "note"]
KINDS: tuple[str, ...] = ("observation", "assertion", "inference", "hypothesis", "model_output", "note")
FLUENT_KINDS: tuple[str, ...] = ("model_output", "note")  # what a mind said or noted itself: no event of the world behind it
Status = Literal["active", "contested", "rejected", "pinned"]
OPERATOR_STATUSES = ("active", "rejected", "pinned")
COUNTER_SOURCE = "metacognition"  # the source of metacognition's counter-evidence, the one kind of item ever withdrawn
MAX_PROPOSITION = 1000

_ARTICLES = re.compile(r"^(the|a|an)\s+")
_NOT_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


class BeliefNotFound(NotFound):
    """No belief has that id."""

    title = "Belief not found"


def normalise(text: str) -> str:
    """The key two texts share when they say the same: casefolded, unaccented spacing and punctuation folded."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _NOT_WORD.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    return _ARTICLES.sub("", text)


def check_proposition(proposition: str, subject: str) -> tuple[str, str]:
    """Cleaned proposition and normalised subject, or `InvalidInput` with a sentence."""
    proposition = " ".join(proposition.split())
    if not proposition:
        raise InvalidInput("a proposition needs some words; say what is believed")
    if len(proposition) > MAX_PROPOSITION:
        raise InvalidInput(f"a proposition is at most {MAX_PROPOSITION} characters, not {len(proposition)}")
    key = normalise(subject)
    if not key:
        raise InvalidInput("a subject needs some words; name what the proposition is about")
    return proposition, key


@wire
@dataclass(frozen=True)
class Evidence:
    """One item behind a belief, and the event that brought it."""

    id: int
    stance: Literal["support", "contradict"]
    weight: float
    credibility: float
    source: str
    kind: str
    event_id: int
    at: str
    withdrawn_by: Annotated[int | None, OMIT_NONE] = None
    """The event that withdrew it, if it was: it is kept but no longer counts (metacognition's counter-evidence once its warning lifted)."""

    @property
    def standing(self) -> bool:
        """Whether it counts: not withdrawn."""
        return self.withdrawn_by is None

    def item(self) -> Item:
        return Item(self.stance, self.weight, self.credibility, self.source)


def standing_items(evidence: Iterable[Evidence]) -> list[Item]:
    """The items the confidence is computed from: every item not withdrawn."""
    return [e.item() for e in evidence if e.standing]


@wire
@dataclass(frozen=True)
class Belief:
    """A belief with its evidence."""

    id: int
    mind: str
    proposition: str
    subject: str
    kind: str
    confidence: float
    status: Status
    created_at: str
    updated_at: str | None
    evidence: tuple[Evidence, ...] = field(default=())

    @computed
    @property
    def support(self) -> int:
        """How many evidence items support it (withdrawn items are not counted)."""
        return sum(1 for e in self.evidence if e.stance == "support" and e.standing)

    @computed
    @property
    def contradict(self) -> int:
        """How many evidence items contradict it (withdrawn items are not counted)."""
        return sum(1 for e in self.evidence if e.stance == "contradict" and e.standing)


@dataclass(frozen=True)
class EvidenceBatch:
    """The items one bulk belief event records: how many, the range of their ids, and per stance."""

    count: int
    first_id: int
    last_id: int
    support: int
    contradict: int

    def to_data(self) -> dict[str, int]:
        return {"count": self.count, "first_id": self.first_id, "last_id": self.last_id, "support": self.support, "contradict": self.contradict}


@dataclass(frozen=True)
class BeliefChange:
    """The data of a `belief_created` or `belief_updated` event: the one definition of its fields.

    Every change gives the confidence and status before and after, and
    `held` when a pinned or rejected belief recorded evidence without
    moving. What brought it gives the rest: one item of evidence
    (`evidence_id`, `stance`, `weight`, `credibility`, `source`), many
    (`evidence`, `sources`, `sources_total`), an operator's correction
    (`correction`, `reason`), an outcome that rejects a hypothesis
    (`rejected_by`, `prediction`, `reason`), or a warning that lifted
    (`withdrawn`: the ids of the items it withdrew; `check`, the warning's
    check; `lifted_by`, the id of the item of support that lifted it;
    `reason`).
    """

    confidence_from: float
    confidence_to: float
    status_from: str
    status_to: str
    held: str | None = None
    evidence_id: int | None = None
    stance: str | None = None
    weight: float | None = None
    credibility: float | None = None
    source: str | None = None
    evidence: EvidenceBatch | None = None
    sources: dict[str, Any] | None = None
    sources_total: int | None = None
    correction: bool = False
    reason: str | None = None
    rejected_by: str | None = None
    prediction: int | None = None
    withdrawn: tuple[int, ...] | None = None
    check: str | None = None
    lifted_by: int | None = None

    @property
    def status_changed(self) -> bool:
        return self.status_from != self.status_to

    @property
    def by(self) -> Literal["operator", "outcome", "evidence"]:
        """Who moved the belief: an operator's correction, a prediction's outcome, or evidence."""
        if self.correction:
            return "operator"
        return "outcome" if self.rejected_by == "outcome" else "evidence"

    def to_data(self) -> dict[str, Any]:
        # Keys in the order the event has always been written (the stored JSON sorts them anyway).
        head: list[tuple[str, Any]] = [
            ("correction", True if self.correction else None),
            ("rejected_by", self.rejected_by),
            ("prediction", self.prediction),
            ("reason", self.reason),
            ("evidence_id", self.evidence_id),
            ("stance", self.stance),
            ("weight", self.weight),
            ("credibility", self.credibility),
            ("source", self.source),
            ("evidence", self.evidence.to_data() if self.evidence else None),
            ("sources", self.sources),
            ("sources_total", self.sources_total),
            ("withdrawn", list(self.withdrawn) if self.withdrawn is not None else None),
            ("check", self.check),
            ("lifted_by", self.lifted_by),
        ]
        return {
            **{k: v for k, v in head if v is not None},
            "confidence": {"from": self.confidence_from, "to": self.confidence_to},
            "status": {"from": self.status_from, "to": self.status_to},
            **({"held": self.held} if self.held is not None else {}),
        }

    @classmethod
    def of(cls, event: Event) -> BeliefChange:
        """The payload of a stored belief event."""
        return cls.from_data(data_of(event, *BELIEF_EVENTS))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> BeliefChange:
        conf = data.get("confidence") or {}
        status = data.get("status") or {}
        batch = data.get("evidence")
        return cls(
            confidence_from=float(conf.get("from") or 0.0),
            confidence_to=float(conf.get("to") or 0.0),
            status_from=str(status.get("from")),
            status_to=str(status.get("to")),
            held=data.get("held"),
            evidence_id=data.get("evidence_id"),
            stance=data.get("stance"),
            weight=data.get("weight"),
            credibility=data.get("credibility"),
            source=data.get("source"),
            evidence=EvidenceBatch(**batch) if isinstance(batch, dict) else None,
            sources=data.get("sources"),
            sources_total=data.get("sources_total"),
            correction=bool(data.get("correction")),
            reason=data.get("reason"),
            rejected_by=data.get("rejected_by"),
            prediction=data.get("prediction"),
            withdrawn=tuple(data["withdrawn"]) if isinstance(data.get("withdrawn"), list) else None,
            check=data.get("check"),
            lifted_by=data.get("lifted_by"),
        )


BELIEF_EVENTS = ("belief_created", "belief_updated")


def _held(status: str, moved: bool) -> str | None:
    return None if moved else f"the belief is {status}; evidence is recorded but does not move it"


def _appended(db: Database, draft: EventDraft, now: float, *, support: int = 0, contradict: int = 0) -> Event:
    """Append a belief event (its data a `BeliefChange`) and record the belief's state after it (`support`, `contradict`: how its counts moved)."""
    event = append(db, draft, now)
    change = BeliefChange.from_data(draft.data)
    assert draft.subject is not None
    belief_history.record(
        db, mind=draft.mind, belief_id=draft.subject.id, event_id=event.id, at=event.at,
        confidence=change.confidence_to, status=change.status_to, support=support, contradict=contradict,
    )
    return event


_BELIEF_COLUMNS = "id, mind, proposition, subject, kind, confidence, status, created_at, updated_at"


def _evidence(db: Database, belief_ids: Sequence[int]) -> dict[int, list[Evidence]]:
    out: dict[int, list[Evidence]] = {}
    if not belief_ids:
        return out
    marks = ",".join("?" * len(belief_ids))
    for row in db.execute(
        f"SELECT belief_id, id, stance, weight, credibility, source, kind, event_id, at, withdrawn_by FROM evidence"
        f" WHERE belief_id IN ({marks}) ORDER BY id",
        list(belief_ids),
    ):
        out.setdefault(row[0], []).append(Evidence(*row[1:]))
    return out


def _beliefs(db: Database, rows: list[tuple[Any, ...]]) -> list[Belief]:
    evidence = _evidence(db, [r[0] for r in rows])
    return [
        Belief(belief_id, mind, proposition, subject, kind, confidence, status, created_at, updated_at, tuple(evidence.get(belief_id, ())))
        for belief_id, mind, proposition, subject, kind, confidence, status, created_at, updated_at in rows
    ]


def get_belief(db: Database, belief_id: int) -> Belief:
    """One belief with its evidence, or `BeliefNotFound`."""
    rows = db.execute(f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE id = ?", [belief_id]).fetchall()
    if not rows:
        raise BeliefNotFound(f"belief {belief_id} does not exist; list a mind's beliefs with `noemactl beliefs MIND`")
    return _beliefs(db, rows)[0]


def belief_events(db: Database, belief_id: int) -> list[int]:
    """The events that wrote and changed a belief, oldest first: where to start its timeline."""
    rows = db.execute(
        "SELECT id FROM events WHERE subject_type = 'belief' AND subject_id = ? ORDER BY id", [belief_id]
    ).fetchall()
    return [r[0] for r in rows]


def list_beliefs(
    db: Database, mind: str, *, subject: str | None = None, status: str | None = None, limit: int = 100
) -> list[Belief]:
    """A mind's beliefs, most confident first (ties by id)."""
    sql = f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE mind = ?"
    params: list[Any] = [mind]
    if subject is not None:
        sql += " AND subject = ?"
        params.append(normalise(subject))
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY confidence DESC, id LIMIT ?"
    params.append(limit)
    return _beliefs(db, db.execute(sql, params).fetchall())


def _recompute(status: str, items: list[Item]) -> tuple[float | None, str]:
    """The confidence and status evidence gives; None keeps an operator's pinned or rejected value."""
    if status in ("pinned", "rejected"):
        return None, status
    value, split = assessed(items)
    return value, "contested" if split else "active"


def add_evidence(
    db: Database,
    *,
    mind: str,
    proposition: str,
    subject: str,
    kind: str,
    stance: Literal["support", "contradict"],
    weight: float,
    source: str,
    brought_by: int,
    now: float,
    actor: str,
    cycle_id: str | None = None,
    cites: Sequence[Ref] = (),
    credibility: float | None = None,
) -> tuple[Belief, Event]:
    """Add one item of evidence for (or against) a proposition, creating the belief if new (a writer job).

    Credibility defaults to the mind's trust in `source`. The event is caused
    by `brought_by` (the event that brought the evidence) and cites `cites`.
    """
    proposition, subject_key = check_proposition(proposition, subject)
    if kind not in KINDS:
        raise InvalidInput(f"epistemic kind {kind!r} is not one of {', '.join(KINDS)}")
    key = normalise(proposition)
    cred = trust(db, mind, source) if credibility is None else credibility
    row = db.execute(
        f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE mind = ? AND proposition_key = ? AND proposition_key != ''", [mind, key]
    ).fetchone()
    created = row is None
    if created:
        cur = db.execute(
            "INSERT INTO beliefs (mind, proposition, proposition_key, subject, kind, confidence, status, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, 0, 'active', ?, ?)",
            [mind, proposition, key, subject_key, kind, iso(now), iso(now)],
        )
        belief_id = int(cur.lastrowid or 0)
        before_conf, before_status = 0.0, "active"
    else:
        belief_id, before_conf, before_status = row[0], row[5], row[6]
    evidence_id = int(
        db.execute(
            "INSERT INTO evidence (mind, belief_id, stance, weight, credibility, source, kind, event_id, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [mind, belief_id, stance, weight, cred, source, kind, brought_by, iso(now)],
        ).lastrowid
        or 0
    )
    items = standing_items(_evidence(db, [belief_id]).get(belief_id, []))
    new_conf, new_status = _recompute(before_status, items)
    if new_conf is not None:
        db.execute(
            "UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?",
            [new_conf, new_status, iso(now), belief_id],
        )
    after = new_conf if new_conf is not None else before_conf
    event = _appended(
        db,
        EventDraft(
            mind=mind,
            kind="belief_created" if created else "belief_updated",
            actor=actor,
            text=proposition,
            cycle_id=cycle_id,
            causation_id=brought_by,
            refs=list(cites),
            subject=Ref("belief", belief_id),
            data=BeliefChange(
                before_conf, after, before_status, new_status, held=_held(before_status, new_conf is not None),
                evidence_id=evidence_id, stance=stance, weight=weight, credibility=cred, source=source,
            ).to_data(),
        ),
        now,
        support=int(stance == "support"),
        contradict=int(stance == "contradict"),
    )
    return get_belief(db, belief_id), event


class NewEvidence(NamedTuple):
    """One item of evidence to add with `add_evidence_many`.

    `brought_by` is the event that brought the item (stored as the
    evidence's `event_id`); `credibility` defaults to the mind's trust in
    `source`. A named tuple, not a dataclass: consolidation builds one per
    episode, by the hundred thousand.
    """

    stance: Literal["support", "contradict"]
    weight: float
    source: str
    brought_by: int
    credibility: float | None = None


class EvidenceColumns(NamedTuple):
    """Items of evidence for `add_evidence_many` as parallel columns, one value per item in each.

    What a bulk writer that already holds columns passes (consolidation:
    one item per episode, tens of thousands), so that no row is built per
    item only to be taken apart again. `credibilities` holds None where the
    mind's trust in the source is meant.
    """

    stances: Sequence[Literal["support", "contradict"]]
    weights: Sequence[float]
    sources: Sequence[str]
    brought_by: Sequence[int]
    credibilities: Sequence[float | None]


@dataclass(frozen=True)
class EvidenceAdded:
    """What `add_evidence_many` wrote.

    The belief's state after the items (its evidence is not read back: a
    bulk write has no use for thousands of rows it just wrote; `get_belief`
    reads them), the lowest and highest id of the new items, and the one
    event.
    """

    belief_id: int
    created: bool
    confidence: float
    status: str
    first: int
    last: int
    event: Event


MAX_SOURCES_LISTED = 32  # sources a bulk belief event names in its data
# Within one source, the k-th strongest item counts strength x 0.5^(k-1); from
# the 55th on that is below half an ulp of 1.0, so 1 - it is exactly 1.0 and
# the item changes nothing. Computing a side from each source's strongest
# RANKS_THAT_COUNT items gives bit for bit the confidence all of them give.
RANKS_THAT_COUNT = 64


def _items_that_count(counted: Counter[tuple[str, float, float, str]]) -> list[Item]:
    """Items from (stance, weight, credibility, source) rows counted alike: per stance and source, the RANKS_THAT_COUNT strongest.

    Rows are counted alike first (a consolidation's thousands of items are
    a handful of distinct rows); the confidence does not depend on the order
    of the items, so neither does the result.
    """
    groups: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    for (stance, weight, credibility, source), times in counted.items():
        groups.setdefault((stance, source), []).append((weight, credibility, times))
    items: list[Item] = []
    for (stance, source), alike in groups.items():
        if sum(times for _, _, times in alike) > RANKS_THAT_COUNT:
            # Strongest first, strength as Item.strength computes it.
            alike.sort(key=lambda wct: min(1.0, max(0.0, wct[0])) * min(1.0, max(0.0, wct[1])), reverse=True)
        left = RANKS_THAT_COUNT
        for weight, credibility, times in alike:
            take = min(times, left)
            items.extend(repeat(Item(stance, weight, credibility, source), take))  # type: ignore[arg-type]
            left -= take
            if not left:
                break
    return items


def _odd_numbers(values: Sequence[Any], *, allow_none: bool) -> list[Any]:
    """The values that are not a number between 0 and 1 (None allowed if `allow_none`), in order.

    Thousands of items share a handful of values: when their types are
    right, each distinct value is checked once and the usual answer comes
    without a loop in Python.
    """
    def odd(v: Any) -> bool:
        return not ((allow_none and v is None) or (type(v) in (int, float) and 0.0 <= v <= 1.0))

    if set(map(type, values)).issubset((int, float, type(None)) if allow_none else (int, float)) and not any(map(odd, set(values))):
        return []
    return [v for v in values if odd(v)]


_AT_ONCE = 64  # beliefs, and kinds of item (stance, weight, credibility, source), that one insert statement takes


class Evidenced(NamedTuple):
    """One proposition's new items of evidence, for `add_evidence_bulk`."""

    proposition: str
    subject: str
    items: Sequence[NewEvidence] | EvidenceColumns
    cites: Sequence[Ref] = ()


@dataclass
class _Batch:
    """One proposition's items, checked, and then its belief as found or created."""

    proposition: str
    subject_key: str
    columns: EvidenceColumns
    by_stance: Counter[str]
    cites: Sequence[Ref]
    belief_id: int = 0
    created: bool = False
    before_conf: float = 0.0
    before_status: str = "active"
    last_before: int = 0
    _counted: Counter[tuple[str, float, float, str]] | None = None

    @property
    def rows(self) -> Iterable[tuple[str, float, float, str]]:
        """(stance, weight, credibility, source) of each item, in order."""
        c = self.columns
        return zip(c.stances, c.weights, c.credibilities, c.sources)  # type: ignore[arg-type]

    def counted(self) -> Counter[tuple[str, float, float, str]]:
        """The items' rows counted alike (made once: tens of thousands of items are a few dozen rows)."""
        if self._counted is None:
            self._counted = Counter(self.rows)
        return self._counted


def add_evidence_many(
    db: Database,
    *,
    mind: str,
    proposition: str,
    subject: str,
    kind: str,
    items: Sequence[NewEvidence] | EvidenceColumns,
    now: float,
    actor: str,
    cause: int | None,
    cycle_id: str | None = None,
    cites: Sequence[Ref] = (),
) -> EvidenceAdded:
    """Add many items of evidence for (or against) one proposition at once, creating the belief if new (a writer job).

    As `add_evidence` does item by item, with one difference: one
    `belief_created` or `belief_updated` event records all the items,
    caused by `cause` (None: by nothing but the process) and citing `cites`
    (at most 64). Its data gives `evidence` (count, first and last id,
    support and contradict counts), `sources` (items and credibility of each
    source, the first MAX_SOURCES_LISTED by name; `sources_total` counts
    them all) and the confidence and status before and after, computed
    once from all of the belief's evidence (a pinned or rejected belief
    records the items without being moved). Every `brought_by` must be an
    event of the mind; if anything fails its check, nothing is written.
    `items` may come as columns (`EvidenceColumns`) rather than rows.
    """
    batch = Evidenced(proposition, subject, items, cites)
    return add_evidence_bulk(db, mind=mind, kind=kind, batches=[batch], now=now, actor=actor, cause=cause, cycle_id=cycle_id)[0]


def add_evidence_bulk(
    db: Database,
    *,
    mind: str,
    kind: str,
    batches: Sequence[Evidenced],
    now: float,
    actor: str,
    cause: int | None,
    cycle_id: str | None = None,
) -> list[EvidenceAdded]:
    """`add_evidence_many` for several propositions at once (a writer job): a belief event each, in their order.

    The items of all are stored together, in the order of the events that
    brought them when each proposition's items come in that order (else
    proposition after proposition); each belief's items keep their order.
    So each event, and each place in the index of evidence by event, is
    found next to the one before: tens of thousands of items spread over
    twenty beliefs are stored in half the time a statement per belief takes.
    No two batches may state the same proposition. If anything fails its
    check, nothing is written.
    """
    if kind not in KINDS:
        raise InvalidInput(f"epistemic kind {kind!r} is not one of {', '.join(KINDS)}")
    if not batches:
        raise InvalidInput("add_evidence_bulk needs at least one proposition")
    checked = [_checked(b) for b in batches]
    keys = Counter(normalise(b.proposition) for b in checked)
    twice = [key for key, times in keys.items() if times > 1]
    if twice:
        raise InvalidInput(f"two batches of evidence state the same proposition ({twice[0]!r}); give its items in one")
    trusted = {source: trust(db, mind, source) for source in sorted({s for b in checked for s in b.columns.sources})}
    at = iso(now)
    with savepoint(db, "evidence_bulk"):  # the items' events are checked as they are inserted: a failure leaves nothing
        for b in checked:
            _find_or_create(db, mind, kind, at, b)
            b.columns = _credible(b.columns, trusted)
        for start in range(0, len(checked), _AT_ONCE):
            _insert_items(db, mind, kind, at, checked[start : start + _AT_ONCE])
        return [_recorded(db, mind, at, b, now=now, actor=actor, cause=cause, cycle_id=cycle_id) for b in checked]


def _checked(batch: Evidenced) -> _Batch:
    """One proposition's items checked (all but the events that brought them, checked as they are inserted)."""
    proposition, subject_key = check_proposition(batch.proposition, batch.subject)
    # Checked and written column by column, in C where it can be: consolidation adds tens of thousands of items at once.
    items = batch.items
    columns = items if isinstance(items, EvidenceColumns) else EvidenceColumns(*zip(*items)) if items else None
    if columns is None or not columns.stances:
        raise InvalidInput("add_evidence_many needs at least one item of evidence")
    count = len(columns.stances)
    if any(len(column) != count for column in columns):
        raise InvalidInput("every column of evidence has one value per item")
    by_stance: Counter[str] = Counter(columns.stances)  # str: a caller's row may hold any stance until checked here
    wrong = set(by_stance) - {"support", "contradict"}
    if wrong:
        raise InvalidInput(f"an item's stance is support or contradict, not {sorted(wrong, key=repr)[0]!r}")
    for column, what in ((columns.weights, "weight"), (columns.credibilities, "credibility")):
        for value in _odd_numbers(column, allow_none=what == "credibility"):
            raise InvalidInput(f"an item's {what} is a number between 0 and 1, not {value!r}")
    if any(not isinstance(source, str) or not source.strip() for source in set(columns.sources)):
        raise InvalidInput("every item of evidence names its source")
    return _Batch(proposition, subject_key, columns, by_stance, batch.cites)


def _credible(columns: EvidenceColumns, trusted: dict[str, float]) -> EvidenceColumns:
    """The columns with weights as floats and each credibility given: the mind's trust in the source where it was None."""
    sources, credibilities = columns.sources, columns.credibilities
    if set(credibilities) == {None}:  # the mind's trust in each source (consolidation's items)
        credibilities = tuple(map(trusted.__getitem__, sources))
    else:  # each given one as a float, the mind's trust where it is None
        credibilities = tuple(trusted[s] if c is None else float(c) for s, c in zip(sources, credibilities))
    return columns._replace(weights=tuple(map(float, columns.weights)), credibilities=credibilities)


def _find_or_create(db: Database, mind: str, kind: str, at: str, b: _Batch) -> None:
    """The batch's belief: found by its proposition, or created (confidence 0, active); and where its evidence ends now."""
    key = normalise(b.proposition)
    row = db.execute(
        f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE mind = ? AND proposition_key = ? AND proposition_key != ''", [mind, key]
    ).fetchone()
    b.created = row is None
    if b.created:
        cur = db.execute(
            "INSERT INTO beliefs (mind, proposition, proposition_key, subject, kind, confidence, status, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, 0, 'active', ?, ?)",
            [mind, b.proposition, key, b.subject_key, kind, at, at],
        )
        b.belief_id = int(cur.lastrowid or 0)
    else:
        b.belief_id, b.before_conf, b.before_status = row[0], row[5], row[6]
    (b.last_before,) = db.execute("SELECT coalesce(max(id), 0) FROM evidence WHERE belief_id = ?", [b.belief_id]).fetchone()


def _not_brought_by(db: Database, mind: str, brought_by: Iterable[int]) -> InvalidLink | None:
    """The error to raise if some of these events are missing or another mind's (evidence is brought by the mind's own); None if none."""
    brought = json.dumps(sorted(set(brought_by)))
    (owned,) = db.execute("SELECT count(*) FROM json_each(?) j CROSS JOIN events e ON e.id = j.value WHERE e.mind = ?", [brought, mind]).fetchone()
    (named,) = db.execute("SELECT count(*) FROM json_each(?)", [brought]).fetchone()
    if owned == named:
        return None
    return InvalidLink(
        f"evidence is brought only by events of mind {mind!r}; {named - owned} of the {named} events named are missing or another mind's"
    )


def _insert_items(db: Database, mind: str, kind: str, at: str, batches: Sequence[_Batch]) -> None:
    """Insert the items of at most _AT_ONCE beliefs; `InvalidLink` if an item's event is missing or another mind's.

    Items of at most _AT_ONCE kinds (stance, weight, credibility, source)
    go in one statement, each as one integer: (event id x 64 + its belief's
    number) x 64 + its kind's number. SQLite reads them from JSON and the
    beliefs' ids and the kinds' values from bound parameters (numbers
    exactly as given) without holding the interpreter's lock, and finds each
    event as it goes, which costs less than a check of its own. Other items
    go a belief at a time, their events checked first.
    """
    brought_by = [b.columns.brought_by for b in batches]
    alike = dict.fromkeys(row for b in batches for row in b.counted())  # items alike but for belief and event
    if len(alike) > _AT_ONCE or not all(set(map(type, column)) <= {int} for column in brought_by):
        problem = _not_brought_by(db, mind, chain.from_iterable(brought_by))
        if problem is not None:
            raise problem
        for b in batches:
            db.conn.executemany(
                "INSERT INTO evidence (mind, belief_id, stance, weight, credibility, source, kind, event_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ((mind, b.belief_id, *row, kind, brought, at) for row, brought in zip(b.rows, b.columns.brought_by)),
            )
        return
    number = dict(zip(alike, range(len(alike))))
    events = np.fromiter(chain.from_iterable(brought_by), dtype=np.int64)
    kinds = np.fromiter(map(number.__getitem__, chain.from_iterable(b.rows for b in batches)), dtype=np.int64, count=len(events))
    sizes = [len(column) for column in brought_by]
    belief = np.repeat(np.arange(len(batches), dtype=np.int64), sizes)
    codes = (events * _AT_ONCE + belief) * _AT_ONCE + kinds
    steps = np.diff(events)
    starts = np.cumsum(sizes)[:-1] - 1  # where one belief's items end and the next one's begin: no step within a belief
    if np.all(np.delete(steps, starts) >= 0):
        codes = codes[np.argsort(events, kind="stable")]  # by event; each belief's items stay in their order
    one = f"(j.value / {_AT_ONCE}) % {_AT_ONCE}"
    beliefs = f"CASE {one} " + " ".join(["WHEN ? THEN ?"] * len(batches)) + " END"
    case = f"CASE j.value % {_AT_ONCE} " + " ".join(["WHEN ? THEN ?"] * len(alike)) + " END"
    values = [[value for k, item in enumerate(alike) for value in (k, item[c])] for c in range(4)]
    inserted = db.execute(
        "INSERT INTO evidence (mind, belief_id, stance, weight, credibility, source, kind, event_id, at)"
        f" SELECT ?, {beliefs}, {case}, {case}, {case}, {case}, ?, e.id, ? FROM json_each(?) j"
        f" CROSS JOIN events e ON e.id = j.value / {_AT_ONCE * _AT_ONCE} WHERE e.mind = ?",
        [
            mind, *(value for k, b in enumerate(batches) for value in (k, b.belief_id)),
            *values[0], *values[1], *values[2], *values[3], kind, at, json.dumps(codes.tolist()), mind,
        ],
    ).rowcount
    if inserted != len(codes):  # an item's event is missing or another mind's: it was not inserted
        raise _not_brought_by(db, mind, events.tolist()) or InvalidLink(f"{len(codes) - inserted} items of evidence could not be stored")


def _recorded(
    db: Database, mind: str, at: str, b: _Batch, *, now: float, actor: str, cause: int | None, cycle_id: str | None
) -> EvidenceAdded:
    """A batch's belief after its items: its confidence and status computed once, and the event that records them."""
    count = len(b.columns.stances)
    first_id, last_id = db.execute(
        "SELECT min(id), max(id) FROM evidence WHERE belief_id = ? AND id > ?", [b.belief_id, b.last_before]
    ).fetchone()
    if b.created:
        every = b.counted()
    else:
        every = Counter(
            db.execute("SELECT stance, weight, credibility, source FROM evidence WHERE belief_id = ? AND withdrawn_by IS NULL", [b.belief_id]).fetchall()
        )
    new_conf, new_status = _recompute(b.before_status, _items_that_count(every))
    if new_conf is not None:
        db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, at, b.belief_id])
    after = new_conf if new_conf is not None else b.before_conf
    by_source: dict[str, Counter[float]] = {}
    for (_, _, credibility, name), times in b.counted().items():
        by_source.setdefault(name, Counter())[credibility] += times
    listed: dict[str, Any] = {}
    for name in sorted(by_source)[:MAX_SOURCES_LISTED]:
        credibility_items = by_source[name]
        distinct = sorted(credibility_items)
        listed[name] = {"items": sum(credibility_items.values()), "credibility": distinct[0] if len(distinct) == 1 else distinct}
    support = b.by_stance["support"]
    event = _appended(
        db,
        EventDraft(
            mind=mind,
            kind="belief_created" if b.created else "belief_updated",
            actor=actor,
            text=b.proposition,
            cycle_id=cycle_id,
            causation_id=cause,
            refs=list(b.cites),
            subject=Ref("belief", b.belief_id),
            data=BeliefChange(
                b.before_conf, after, b.before_status, new_status, held=_held(b.before_status, new_conf is not None),
                evidence=EvidenceBatch(count, first_id, last_id, support, count - support),
                sources=listed, sources_total=len(by_source),
            ).to_data(),
        ),
        now,
        support=support,
        contradict=count - support,
    )
    return EvidenceAdded(b.belief_id, b.created, after, new_status, first_id, last_id, event)


def correct(
    db: Database,
    *,
    belief_id: int,
    status: str | None,
    confidence_value: float | None,
    reason: str,
    brought_by: int,
    now: float,
    actor: str,
    cycle_id: str | None = None,
) -> tuple[Belief, Event]:
    """An operator's correction (a writer job): pin at a confidence, reject, or set active again.

    A confidence pins the belief there unless another status is given;
    `active` unpins and lets the evidence decide again.
    """
    belief = get_belief(db, belief_id)
    if status is None:
        status = "pinned" if confidence_value is not None else None
    if status is None:
        raise InvalidInput("a correction sets a status (active, pinned, rejected) or a confidence, or both")
    if status not in OPERATOR_STATUSES:
        raise InvalidInput(f"operators set a belief {', '.join(OPERATOR_STATUSES)}, not {status!r}")
    if confidence_value is not None and not 0.0 <= confidence_value <= 1.0:
        raise InvalidInput(f"confidence is between 0 and 1, not {confidence_value}")
    if status == "active":
        new_conf, new_status = _recompute("active", standing_items(belief.evidence))
        assert new_conf is not None
    else:
        new_conf = belief.confidence if confidence_value is None else confidence_value
        new_status = status
        if status == "rejected" and confidence_value is None:
            new_conf = 0.0
    db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, iso(now), belief_id])
    event = _appended(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=reason,
            cycle_id=cycle_id,
            causation_id=brought_by,
            subject=Ref("belief", belief_id),
            data=BeliefChange(belief.confidence, new_conf, belief.status, new_status, correction=True, reason=reason).to_data(),
        ),
        now,
    )
    return get_belief(db, belief_id), event


def withdraw_evidence(
    db: Database,
    *,
    belief_id: int,
    evidence_ids: Sequence[int],
    reason: str,
    cause: int,
    now: float,
    actor: str,
    cycle_id: str | None = None,
    parents: Sequence[int] = (),
    check: str | None = None,
    lifted_by: int | None = None,
) -> tuple[Belief, Event]:
    """Withdraw items of a belief's evidence (a writer job): kept, marked with the event that withdrew them, no longer counted.

    The `belief_updated` event is caused by `cause` (what made the items
    stand no more: the event that brought the evidence that lifted a
    warning), has `parents` (the warnings whose items these were), says
    the confidence before and after and `reason` in its text, and gives
    them in its data. A pinned or rejected belief records
    the withdrawal without moving, as it records new evidence.
    """
    belief = get_belief(db, belief_id)
    wanted = set(evidence_ids)
    mine = {e.id for e in belief.evidence if e.standing}
    if not wanted or not wanted <= mine:
        raise InvalidInput(f"belief {belief_id} has no standing evidence {sorted(wanted - mine) or '(none named)'} to withdraw")
    new_conf, new_status = _recompute(belief.status, standing_items(e for e in belief.evidence if e.id not in wanted))
    after = new_conf if new_conf is not None else belief.confidence
    event = _appended(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=f"{belief.confidence:.2f} -> {after:.2f}: {reason}",  # front-loaded: a timeline shows the first 60 characters
            cycle_id=cycle_id,
            causation_id=cause,
            parents=sorted(set(parents)),
            subject=Ref("belief", belief_id),
            data=BeliefChange(
                belief.confidence, after, belief.status, new_status, held=_held(belief.status, new_conf is not None),
                withdrawn=tuple(sorted(wanted)), check=check, lifted_by=lifted_by, reason=reason,
            ).to_data(),
        ),
        now,
        support=-sum(1 for e in belief.evidence if e.id in wanted and e.stance == "support"),
        contradict=-sum(1 for e in belief.evidence if e.id in wanted and e.stance == "contradict"),
    )
    marks = ",".join("?" * len(wanted))
    db.execute(f"UPDATE evidence SET withdrawn_by = ? WHERE id IN ({marks})", [event.id, *sorted(wanted)])
    if new_conf is not None:
        db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, iso(now), belief_id])
    return get_belief(db, belief_id), event


def reject_hypothesis(
    db: Database,
    *,
    belief_id: int,
    prediction_id: int,
    cause: int,
    now: float,
    actor: str,
    cycle_id: str | None,
) -> Event:
    """A missed prediction rejects the hypothesis it rested on: status `rejected`, confidence 0 (a writer job, or part of one)."""
    belief = find_belief(db, belief_id)
    if belief is None:
        raise BeliefNotFound(f"belief {belief_id} does not exist")
    db.execute("UPDATE beliefs SET confidence = 0, status = 'rejected', updated_at = ? WHERE id = ?", [iso(now), belief_id])
    return _appended(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=f"rejected: prediction {prediction_id} missed",
            cycle_id=cycle_id,
            causation_id=cause,
            subject=Ref("belief", belief_id),
            data=BeliefChange(
                belief.confidence, 0.0, belief.status, "rejected", rejected_by="outcome", prediction=prediction_id,
                reason="a hypothesis whose prediction missed is rejected; outcomes are decisive for hypotheses",
            ).to_data(),
        ),
        now,
    )


# Queries other modules need, so that none of them writes SQL on these tables. ---------


def find_belief(db: Database, belief_id: int) -> Belief | None:
    """One belief without its evidence (a belief may have many thousands of items), or None."""
    row = db.execute(f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE id = ?", [belief_id]).fetchone()
    return None if row is None else Belief(*row)


def beliefs_then(
    db: Database, mind: str, through: int, *, subject_key: str | None = None, status: str | None = None, limit: int | None = None
) -> list[tuple[Any, ...]]:
    """The mind's beliefs as they stood right after event `through`, most confident first (ties by id), at most `limit`.

    Each row: id, proposition, subject, kind, confidence, status, support,
    contradict, created_at, the event of its newest change by then, and
    that event's time. The belief's columns read here never change after
    it is made; its state then is `belief_history`'s (beliefs created later
    have none and are left out). One query, sorted and cut in SQL: a mind of
    10,000 beliefs gives its top 1,000 without 10,000 rows reaching Python
    (bench/asof.py).
    """
    sql = (
        "SELECT b.id, b.proposition, b.subject, b.kind, h.confidence, h.status, h.support, h.contradict, b.created_at, h.event_id, h.at"
        " FROM beliefs b JOIN belief_history h ON h.belief_id = b.id"
        " AND h.event_id = (SELECT max(event_id) FROM belief_history WHERE belief_id = b.id AND event_id <= ?) WHERE b.mind = ?"
    )
    params: list[Any] = [through, mind]
    if subject_key is not None:
        sql += " AND b.subject = ?"
        params.append(subject_key)
    if status is not None:
        sql += " AND h.status = ?"
        params.append(status)
    sql += " ORDER BY h.confidence DESC, b.id LIMIT ?"
    params.append(-1 if limit is None else limit)
    return db.execute(sql, params).fetchall()


def find_by_proposition(db: Database, mind: str, proposition: str) -> Belief | None:
    """The mind's belief in `proposition` (as `normalise` keys it) without its evidence, or None."""
    row = db.execute(
        f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE mind = ? AND proposition_key = ? AND proposition_key != ''",
        [mind, normalise(proposition)],
    ).fetchone()
    return None if row is None else Belief(*row)


def evidence_counts(db: Database, belief_id: int) -> tuple[int, int]:
    """How many items support and how many contradict a belief (those withdrawn are not counted)."""
    support, contradict = db.execute(
        "SELECT coalesce(sum(stance = 'support'), 0), coalesce(sum(stance = 'contradict'), 0) FROM evidence"
        " WHERE belief_id = ? AND withdrawn_by IS NULL",
        [belief_id],
    ).fetchone()
    return int(support), int(contradict)


def support_items(db: Database, belief_ids: Sequence[int]) -> list[tuple[int, str, int]]:
    """(belief, source, event that brought it) of every supporting item of these beliefs, oldest first."""
    if not belief_ids:
        return []
    marks = ",".join("?" * len(belief_ids))
    return [
        (int(b), str(source), int(event))
        for b, source, event in db.execute(
            f"SELECT belief_id, source, event_id FROM evidence WHERE belief_id IN ({marks}) AND stance = 'support' ORDER BY id",
            list(belief_ids),
        )
    ]


def with_standing_counter(db: Database, belief_ids: Iterable[int]) -> list[int]:
    """Those of these beliefs that hold counter-evidence from COUNTER_SOURCE not withdrawn, by id (found on a partial index)."""
    ids = sorted(set(belief_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [
        int(b)
        for (b,) in db.execute(
            f"SELECT DISTINCT belief_id FROM evidence WHERE belief_id IN ({marks})"
            f" AND source = '{COUNTER_SOURCE}' AND stance = 'contradict' AND withdrawn_by IS NULL ORDER BY belief_id",
            ids,
        )
    ]


def contested_since(db: Database, mind: str, before: str) -> list[tuple[int, str]]:
    """(id, proposition) of the mind's contested beliefs that became contested at or before `before` (ISO), by id.

    Since when a belief is contested is the time of the newest event that
    moved it *into* `contested`; evidence arriving while it stays contested
    (more for one side, more for the other) does not restart that time.
    """
    return [
        (int(i), str(p))
        for i, p in db.execute(
            "SELECT b.id, b.proposition FROM beliefs b WHERE b.mind = ? AND b.status = 'contested'"
            " AND coalesce((SELECT max(e.at) FROM events e WHERE e.subject_type = 'belief' AND e.subject_id = b.id"
            "   AND e.kind IN ('belief_created', 'belief_updated') AND json_extract(e.data, '$.status.to') = 'contested'"
            "   AND json_extract(e.data, '$.status.from') IS NOT 'contested'), b.updated_at) <= ?"
            " ORDER BY b.id",
            [mind, before],
        )
    ]


def fluent_beliefs(db: Database, mind: str, since: str) -> list[int]:
    """Ids of the mind's active or contested beliefs that rest only on FLUENT_KINDS, given such support at or after `since` (ISO).

    Found through the partial index on fluent support (the kinds are written
    out so SQLite can use it), then each belief checked for any other support.
    """
    return [
        int(i)
        for (i,) in db.execute(
            "SELECT DISTINCT f.belief_id FROM evidence f JOIN beliefs b ON b.id = f.belief_id"
            " WHERE f.mind = ? AND f.kind IN ('model_output', 'note') AND f.stance = 'support' AND f.at >= ?"
            " AND b.status IN ('active', 'contested')"
            " AND NOT EXISTS (SELECT 1 FROM evidence e WHERE e.belief_id = f.belief_id AND e.stance = 'support'"
            "   AND e.kind NOT IN ('model_output', 'note'))"
            " ORDER BY f.belief_id",
            [mind, since],
        )
    ]


def rejected_hypotheses(db: Database, mind: str, since: str, at_least: int = 1) -> list[tuple[str, int]]:
    """(subject, how many) of the mind's hypotheses rejected at or after `since` (ISO), for subjects with `at_least` of them."""
    return [
        (str(subject), int(count))
        for subject, count in db.execute(
            "SELECT subject, count(*) FROM beliefs WHERE mind = ? AND kind = 'hypothesis' AND status = 'rejected'"
            " AND updated_at >= ? GROUP BY subject HAVING count(*) >= ? ORDER BY subject",
            [mind, since, at_least],
        )
    ]


@dataclass(frozen=True)
class StatusChange:
    """A belief event that changed the belief's status or was a correction, with the belief as it is now."""

    event: int
    cause: int | None
    belief: int
    subject: str
    proposition: str
    status_now: str | None
    change: BeliefChange


def status_changes(db: Database, mind: str, lo: int, hi: int) -> list[StatusChange]:
    """The mind's belief events with id in [lo, hi] that changed a status or were corrections, oldest first.

    The filter runs in SQL so the many evidence-only updates never reach Python.
    """
    rows = db.execute(
        "SELECT e.id, e.causation_id, e.subject_id, e.data, b.subject, b.proposition, b.status FROM events e"
        " LEFT JOIN beliefs b ON b.id = e.subject_id"
        " WHERE e.mind = ? AND e.kind IN ('belief_created', 'belief_updated') AND e.id >= ? AND e.id <= ?"
        " AND e.subject_type = 'belief'"
        " AND (json_extract(e.data, '$.correction') = 1"
        "      OR json_extract(e.data, '$.status.from') IS NOT json_extract(e.data, '$.status.to'))",
        [mind, lo, hi],
    ).fetchall()
    # Sorted here: with ORDER BY, SQLite walks every event of the range on
    # events(mind, id) instead of the two kinds' ranges on events(mind, kind, id).
    rows.sort(key=lambda r: r[0])
    return [
        StatusChange(event_id, cause, int(belief_id), subject or "", proposition or "", status_now, BeliefChange.from_data(json.loads(raw)))
        for event_id, cause, belief_id, raw, subject, proposition, status_now in rows
    ]


def events_held(db: Database, mind: str, low: int, high: int) -> set[int]:
    """The mind's events in [low, high] a belief stands on: evidence, and every live belief's history; archiving keeps them."""
    rows = db.execute(
        "SELECT event_id FROM evidence WHERE event_id BETWEEN ?1 AND ?2 AND mind = ?3"
        " UNION SELECT e.id FROM events e JOIN beliefs b ON b.id = e.subject_id"
        " WHERE e.mind = ?3 AND e.id BETWEEN ?1 AND ?2 AND e.subject_type = 'belief'",
        [low, high, mind],
    )
    return {row[0] for row in rows}
