"""The mind as it stood at a time: its beliefs then, one belief's history, and what changed in a window.

A time is given as an event id, a span back from now (`3d`) or an ISO time;
`resolve` turns it into the id of the last event of the mind written by
then (events are appended in time order), so every answer here is "right
after event N". Beliefs' states come from `belief_history` (written with
each belief event), never from today's `beliefs` row, of which only what
never changes (proposition, subject, kind, creation time) is read. The
causes come from the events themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

from sqlite_utils import Database

from noemad.clock import iso, parse_since
from noemad.cognition import belief_history
from noemad.cognition.beliefs.change import BeliefChange
from noemad.cognition.beliefs.model import BeliefNotFound, normalise
from noemad.cognition.beliefs.queries import beliefs_then, find_belief
from noemad.cognition.memory.reads import memories_by_id
from noemad.errors import InvalidInput
from noemad.events import first_event_since
from noemad.wire import OMIT_NONE, computed, wire

DEFAULT_THRESHOLD = 0.2  # how far a belief's confidence moves in a window before `changes` names it


@wire
@dataclass(frozen=True)
class Cutoff:
    """The point in the log an "as of" answer stands at: right after event `event_id`."""

    event_id: int
    """The newest event counted (0: before the mind's first)."""
    at: str | None
    """When that event was written (None before the first)."""


def resolve(db: Database, mind: str, when: str | None, now: float) -> Cutoff:
    """The cutoff `when` names: an event id, a span back from `now` (30m, 24h, 3d) or an ISO date or time; None is now."""
    text = (when or "").strip()
    newest = _newest(db)
    if when is None:
        through = newest
    elif text.isdigit():
        through = min(int(text), newest)
    else:
        try:
            moment = parse_since(text, now)
        except InvalidInput:
            raise InvalidInput(
                f"at={when!r} is neither an event id, an ISO date or time (2026-01-31, 2026-01-31T12:00:00Z) nor a span back (30m, 24h, 7d)"
            ) from None
        through = first_event_since(db, mind, iso(moment), newest, strictly=True) - 1
    row = db.execute("SELECT id, at FROM events WHERE mind = ? AND id <= ? ORDER BY id DESC LIMIT 1", [mind, through]).fetchone()
    return Cutoff(int(row[0]), str(row[1])) if row else Cutoff(0, None)


def _newest(db: Database) -> int:
    (newest,) = db.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()
    return int(newest)


@wire
@dataclass(frozen=True)
class BeliefThen:
    """A belief as it stood at a cutoff."""

    id: int
    proposition: str
    subject: str
    kind: str
    confidence: float
    status: str
    support: int
    """Standing items of evidence for it then."""
    contradict: int
    """Standing items against it then."""
    created_at: str
    changed_by: int
    """The newest event that had changed it by then."""
    changed_at: str

    @computed
    @property
    def contested(self) -> bool:
        """Strong evidence stood on both sides then."""
        return self.status == "contested"

    @computed
    @property
    def pinned(self) -> bool:
        """An operator held it at its confidence then."""
        return self.status == "pinned"


def beliefs_at(
    db: Database, mind: str, through: int, *, subject: str | None = None, status: str | None = None, limit: int | None = None
) -> list[BeliefThen]:
    """The mind's beliefs as they stood right after event `through`, most confident first (ties by id); those created later are absent."""
    rows = beliefs_then(
        db, mind, through, subject_key=normalise(subject) if subject is not None else None, status=status, limit=limit
    )
    return [BeliefThen(*row) for row in rows]


@wire
@dataclass(frozen=True)
class Step:
    """One change of a belief's confidence or status: the event that made it, what was behind it, and who."""

    event_id: int
    at: str
    kind: str
    actor: str
    by: str
    """operator (a correction), outcome (a missed prediction), warning (a warning lifted: its items withdrawn) or evidence."""
    confidence_from: float
    confidence_to: float
    status_from: str
    status_to: str
    support: int
    """Standing items for it after the change."""
    contradict: int
    cause: Annotated[int | None, OMIT_NONE] = None
    """The event that brought the change (the evidence's event, the outcome, the operator's request)."""
    cause_kind: Annotated[str | None, OMIT_NONE] = None
    evidence: Annotated[dict[str, Any] | None, OMIT_NONE] = None
    """The item (id, stance, source, weight, credibility) or the batch (count, support, contradict) behind it."""
    warning: Annotated[str | None, OMIT_NONE] = None
    """The check of the warning whose items were withdrawn."""
    reason: Annotated[str | None, OMIT_NONE] = None


def _evidence_of(change: BeliefChange) -> dict[str, Any] | None:
    if change.evidence is not None:
        return change.evidence.to_data()
    if change.evidence_id is not None:
        return {"id": change.evidence_id, "stance": change.stance, "source": change.source, "weight": change.weight, "credibility": change.credibility}
    if change.withdrawn:
        return {"withdrawn": list(change.withdrawn)}
    return None


def history(db: Database, belief_id: int) -> list[Step]:
    """Every change of a belief's confidence or status, oldest first (evidence that moved neither is not a change)."""
    if find_belief(db, belief_id) is None:
        raise BeliefNotFound(f"belief {belief_id} does not exist; list a mind's beliefs with `noemactl beliefs MIND`")
    return [_step(row) for row in belief_history.logged(db, belief_id, moved_only=True)]


def _step(row: belief_history.Logged) -> Step:
    if row.data is None:  # its event archived (its belief gone): the state is known, not its cause
        return Step(row.event_id, row.at, "belief_updated", "", "evidence", row.confidence, row.confidence, row.status, row.status, row.support, row.contradict)
    change = BeliefChange.from_data(json.loads(row.data))
    return Step(
        row.event_id, row.at, row.kind or "", row.actor or "", "warning" if change.withdrawn else change.by, change.confidence_from,
        change.confidence_to, change.status_from, change.status_to, row.support, row.contradict, row.cause, row.cause_kind,
        _evidence_of(change), change.check, change.reason,
    )


@wire
@dataclass(frozen=True)
class BeliefMove:
    """A belief the mind changed its mind about in a window, and the event that did it.

    For `moved`, the confidence and status at the window's start and end, and the step that moved it most; for the
    others, the one step that created, contested or rejected it."""

    belief_id: int
    proposition: str
    what: str
    """created, moved, contested or rejected."""
    confidence_from: float
    confidence_to: float
    status_from: str
    status_to: str
    event_id: int
    """The event that made the change (for `moved`, the step that moved it most)."""
    cause: Annotated[int | None, OMIT_NONE] = None
    cause_kind: Annotated[str | None, OMIT_NONE] = None
    actor: str = ""


@wire
@dataclass(frozen=True)
class MemoryChange:
    """A memory retracted, or a lesson learnt, in a window, with its cause."""

    memory_id: int
    what: str
    """retracted or learnt."""
    text: str
    """The memory's text."""
    event_id: int
    actor: str
    cause: Annotated[int | None, OMIT_NONE] = None
    cause_kind: Annotated[str | None, OMIT_NONE] = None
    reason: Annotated[str | None, OMIT_NONE] = None
    """Why it was retracted."""


@wire
@dataclass(frozen=True)
class Changes:
    """What the mind changed its mind about between two cutoffs."""

    mind: str
    since: Cutoff
    until: Cutoff
    threshold: float
    beliefs: list[BeliefMove]
    memories: list[MemoryChange]


def changes(db: Database, mind: str, after: Cutoff, until: Cutoff, threshold: float = DEFAULT_THRESHOLD) -> Changes:
    """Beliefs created, moved by more than `threshold`, contested or rejected; memories retracted and lessons learnt, in (after, until]."""
    if not 0.0 <= threshold <= 1.0:
        raise InvalidInput(f"threshold is a confidence step between 0 and 1, not {threshold}")
    lo, hi = after.event_id, until.event_id
    if lo > hi:
        raise InvalidInput(f"the window ends (event #{hi}) before it starts (event #{lo}); give --until a later time than --since")
    touched = belief_history.moved_between(db, mind, lo, hi)
    before = {s.belief_id: s for s in belief_history.states_at(db, touched, lo)}
    moves: list[BeliefMove] = []
    for belief_id in touched:
        # Only its moves: an item that moved neither confidence nor status is not a change, nor the biggest step.
        window = belief_history.logged(db, belief_id, after=lo, through=hi, moved_only=True)
        if not window:
            continue
        steps = [_step(row) for row in window]
        head = find_belief(db, belief_id)
        proposition = head.proposition if head else ""
        first, last = before.get(belief_id), window[-1]
        conf_from = first.confidence if first else 0.0
        status_from = first.status if first else "active"

        def move(what: str, step: Step, whole: bool = False) -> BeliefMove:
            # `moved` spans the window; the others are the one step that made them.
            c0, c1 = (conf_from, last.confidence) if whole else (step.confidence_from, step.confidence_to)
            s0, s1 = (status_from, last.status) if whole else (step.status_from, step.status_to)
            return BeliefMove(belief_id, proposition, what, c0, c1, s0, s1, step.event_id, step.cause, step.cause_kind, step.actor)

        if first is None:
            moves.append(move("created", steps[0]))
        elif abs(last.confidence - conf_from) > threshold:
            biggest = max(steps, key=lambda s: (abs(s.confidence_to - s.confidence_from), -s.event_id))
            moves.append(move("moved", biggest, whole=True))
        for what in ("contested", "rejected"):
            into = [s for s in steps if s.status_to == what and s.status_from != what]
            if into:
                moves.append(move(what, into[-1]))
    moves.sort(key=lambda m: (m.event_id, m.what))
    return Changes(mind, after, until, threshold, moves, _memory_changes(db, mind, lo, hi))


def _memory_changes(db: Database, mind: str, lo: int, hi: int) -> list[MemoryChange]:
    rows = db.execute(
        "SELECT e.id, e.kind, e.subject_id, e.text, e.actor, e.causation_id, c.kind FROM events e LEFT JOIN events c ON c.id = e.causation_id"
        " WHERE e.mind = ? AND e.id > ? AND e.id <= ? AND e.subject_type = 'memory'"
        " AND (e.kind = 'memory_retracted' OR (e.kind = 'memory_created' AND c.kind = 'reflection')) ORDER BY e.id",
        [mind, lo, hi],
    ).fetchall()
    texts = {m.id: m.text for m in memories_by_id(db, sorted({int(r[2]) for r in rows}))}
    return [
        MemoryChange(
            int(memory), "retracted" if kind == "memory_retracted" else "learnt", texts.get(int(memory), ""), int(event), actor, cause, cause_kind,
            text if kind == "memory_retracted" else None,
        )
        for event, kind, memory, text, actor, cause, cause_kind in rows
    ]

