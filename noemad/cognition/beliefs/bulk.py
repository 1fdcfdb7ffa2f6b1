"""Items of evidence added, an event per belief: the one way evidence is added, many items at once or one.

Consolidation adds tens of thousands of items over a few beliefs: they are
checked and stored column by column, and each belief's confidence is
computed once, from the few items that can still move it
(`RANKS_THAT_COUNT`). One item (`noemad.cognition.beliefs.evidence.add_evidence`)
takes the same path with one item, its event naming the item.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain, repeat
from typing import Any, Literal, NamedTuple

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.beliefs.change import BeliefChange, EvidenceBatch
from noemad.cognition.beliefs.model import KINDS, check_proposition, normalise
from noemad.cognition.beliefs.recording import appended, find_or_create, held, recompute
from noemad.cognition.confidence import Item
from noemad.cognition.trust import trust
from noemad.errors import InvalidInput, InvalidLink
from noemad.events import Event, EventDraft, Ref
from noemad.store import savepoint


class EvidenceColumns(NamedTuple):
    """Items of evidence for `add_evidence_bulk` as parallel columns, one value per item in each.

    What a bulk writer that already holds columns passes (consolidation:
    one item per episode, tens of thousands), so that no row is built per
    item only to be taken apart again. `brought_by` is the event that
    brought each item (stored as its `event_id`); `credibilities` holds None
    where the mind's trust in the source is meant.
    """

    stances: Sequence[Literal["support", "contradict"]]
    weights: Sequence[float]
    sources: Sequence[str]
    brought_by: Sequence[int]
    credibilities: Sequence[float | None]


@dataclass(frozen=True)
class EvidenceAdded:
    """What `add_evidence_bulk` wrote for one proposition.

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
_FEW = 8  # items that cost less to insert one by one than to code for one statement


class Evidenced(NamedTuple):
    """One proposition's new items of evidence, for `add_evidence_bulk`."""

    proposition: str
    subject: str
    items: EvidenceColumns
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
    itemised: bool = False,
) -> list[EvidenceAdded]:
    """Add many items of evidence for (or against) each of several propositions, creating beliefs that are new (a writer job).

    One `belief_created` or `belief_updated` event per proposition, in their
    order, records all of its items, caused by `cause` (None: by nothing but
    the process) and citing its `cites` (at most 64). Its data gives
    `evidence` (count, first and last id, support and contradict counts),
    `sources` (items and credibility of each source, the first
    MAX_SOURCES_LISTED by name; `sources_total` counts them all) and the
    confidence and status before and after, computed once from all of the
    belief's evidence (a pinned or rejected belief records the items without
    being moved). Every `brought_by` must be an event of the mind. An item's
    credibility defaults to the mind's trust in its source.

    `itemised` (`add_evidence`'s one item): each batch holds one item, and
    its event names it (`evidence_id`, `stance`, `weight`, `credibility`,
    `source`) in place of `evidence` and `sources`.

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
    if itemised and any(len(b.columns.stances) != 1 for b in checked):
        raise InvalidInput("an itemised addition of evidence gives one item for each proposition")
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
        return [_recorded(db, mind, at, b, now=now, actor=actor, cause=cause, cycle_id=cycle_id, itemised=itemised) for b in checked]


def _checked(batch: Evidenced) -> _Batch:
    """One proposition's items checked (all but the events that brought them, checked as they are inserted)."""
    proposition, subject_key = check_proposition(batch.proposition, batch.subject)
    # Checked and written column by column, in C where it can be: consolidation adds tens of thousands of items at once.
    columns = batch.items
    if not columns.stances:
        raise InvalidInput("add_evidence_bulk needs at least one item of evidence for each proposition")
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
    b.belief_id, b.created, b.before_conf, b.before_status = find_or_create(
        db, mind=mind, proposition=b.proposition, subject_key=b.subject_key, kind=kind, at=at
    )
    (b.last_before,) = db.execute("SELECT coalesce(max(id), 0) FROM evidence WHERE belief_id = ?", [b.belief_id]).fetchone()


def _not_brought_by(db: Database, mind: str, brought_by: Iterable[int]) -> InvalidLink | None:
    """The error to raise if some of these events are missing or another mind's (evidence is brought by the mind's own); None if none."""
    brought = json.dumps(sorted(set(brought_by)))
    owned, named = db.execute(
        "SELECT (SELECT count(*) FROM json_each(?1) j CROSS JOIN events e ON e.id = j.value WHERE e.mind = ?2), (SELECT count(*) FROM json_each(?1))",
        [brought, mind],
    ).fetchone()
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
    event as it goes, which costs less than a check of its own. Other items,
    and a few (`add_evidence`'s one), go a belief at a time, their events
    checked first.
    """
    import numpy as np  # here, not at import: numpy is a tenth of the daemon's start, and only writing many items at once needs it

    brought_by = [b.columns.brought_by for b in batches]
    alike = dict.fromkeys(row for b in batches for row in b.counted())  # items alike but for belief and event
    few = sum(map(len, brought_by)) <= _FEW
    if few or len(alike) > _AT_ONCE or not all(set(map(type, column)) <= {int} for column in brought_by):
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
    db: Database, mind: str, at: str, b: _Batch, *, now: float, actor: str, cause: int | None, cycle_id: str | None, itemised: bool
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
    new_conf, new_status = recompute(b.before_status, _items_that_count(every))
    if new_conf is not None:
        db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, at, b.belief_id])
    after = new_conf if new_conf is not None else b.before_conf
    change = BeliefChange(b.before_conf, after, b.before_status, new_status, held=held(b.before_status, new_conf is not None))
    support = b.by_stance["support"]
    if itemised:
        (stance, weight, credibility, source), = b.rows
        change = replace(change, evidence_id=first_id, stance=stance, weight=weight, credibility=credibility, source=source)
    else:
        change = _batch_of(b, change, count, first_id, last_id, support)
    event = appended(
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
            data=change.to_data(),
        ),
        now,
        support=support,
        contradict=count - support,
    )
    return EvidenceAdded(b.belief_id, b.created, after, new_status, first_id, last_id, event)


def _batch_of(b: _Batch, change: BeliefChange, count: int, first_id: int, last_id: int, support: int) -> BeliefChange:
    """`change` with what a bulk event says of its items: their count and ids, and each source's items and credibility."""
    by_source: dict[str, Counter[float]] = {}
    for (_, _, credibility, name), times in b.counted().items():
        by_source.setdefault(name, Counter())[credibility] += times
    listed: dict[str, Any] = {}
    for name in sorted(by_source)[:MAX_SOURCES_LISTED]:
        credibility_items = by_source[name]
        distinct = sorted(credibility_items)
        listed[name] = {"items": sum(credibility_items.values()), "credibility": distinct[0] if len(distinct) == 1 else distinct}
    return replace(
        change, evidence=EvidenceBatch(count, first_id, last_id, support, count - support), sources=listed, sources_total=len(by_source)
    )
