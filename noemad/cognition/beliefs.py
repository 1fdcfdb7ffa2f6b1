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
transaction as the change.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.cognition.confidence import Item, confidence, contested
from noemad.errors import InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append

Kind = Literal["observation", "assertion", "inference", "hypothesis", "model_output", "note"]
KINDS: tuple[str, ...] = ("observation", "assertion", "inference", "hypothesis", "model_output", "note")
Status = Literal["active", "contested", "rejected", "pinned"]
OPERATOR_STATUSES = ("active", "rejected", "pinned")
DEFAULT_TRUST = 0.6  # how far a mind trusts a source it has not been told about
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

    def item(self) -> Item:
        return Item(self.stance, self.weight, self.credibility, self.source)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "stance": self.stance,
            "weight": self.weight,
            "credibility": self.credibility,
            "source": self.source,
            "kind": self.kind,
            "event_id": self.event_id,
            "at": self.at,
        }


@dataclass(frozen=True)
class Belief:
    """A belief with its evidence."""

    id: int
    mind: str
    proposition: str
    subject: str
    kind: str
    confidence: float
    status: str
    created_at: str
    updated_at: str | None
    evidence: tuple[Evidence, ...] = field(default=())

    def to_json(self, with_evidence: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "mind": self.mind,
            "proposition": self.proposition,
            "subject": self.subject,
            "kind": self.kind,
            "confidence": self.confidence,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "support": sum(1 for e in self.evidence if e.stance == "support"),
            "contradict": sum(1 for e in self.evidence if e.stance == "contradict"),
        }
        if with_evidence:
            out["evidence"] = [e.to_json() for e in self.evidence]
        return out


_BELIEF_COLUMNS = "id, mind, proposition, subject, kind, confidence, status, created_at, updated_at"


def _evidence(db: Database, belief_ids: Sequence[int]) -> dict[int, list[Evidence]]:
    out: dict[int, list[Evidence]] = {}
    if not belief_ids:
        return out
    marks = ",".join("?" * len(belief_ids))
    for row in db.execute(
        f"SELECT belief_id, id, stance, weight, credibility, source, kind, event_id, at FROM evidence"
        f" WHERE belief_id IN ({marks}) ORDER BY id",
        list(belief_ids),
    ):
        out.setdefault(row[0], []).append(Evidence(*row[1:]))
    return out


def _beliefs(db: Database, rows: list[tuple[Any, ...]]) -> list[Belief]:
    evidence = _evidence(db, [r[0] for r in rows])
    return [Belief(*r, evidence=tuple(evidence.get(r[0], ()))) for r in rows]


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


def trust(db: Database, mind: str, source: str) -> float:
    """How far `mind` trusts `source` (DEFAULT_TRUST unless told)."""
    row = db.execute("SELECT value FROM trust WHERE mind = ? AND source = ?", [mind, source]).fetchone()
    return float(row[0]) if row else DEFAULT_TRUST


def set_trust(db: Database, *, mind: str, source: str, value: float, now: float, actor: str) -> Event:
    """Set how far a mind trusts a source, recorded as `trust_changed` (a writer job)."""
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"trust is between 0 and 1, not {value}")
    if not source.strip():
        raise InvalidInput("name the source to trust")
    before = trust(db, mind, source)
    db.execute(
        "INSERT INTO trust (mind, source, value, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (mind, source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        [mind, source, value, iso(now)],
    )
    return append(
        db,
        EventDraft(mind=mind, kind="trust_changed", actor=actor, text=f"trust in {source}: {before:g} -> {value:g}",
                   data={"source": source, "from": before, "to": value}),
        now,
    )


def _recompute(status: str, items: list[Item]) -> tuple[float | None, str]:
    """The confidence and status evidence gives; None keeps an operator's pinned or rejected value."""
    if status in ("pinned", "rejected"):
        return None, status
    return confidence(items), "contested" if contested(items) else "active"


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
    items = [e.item() for e in _evidence(db, [belief_id]).get(belief_id, [])]
    new_conf, new_status = _recompute(before_status, items)
    if new_conf is not None:
        db.execute(
            "UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?",
            [new_conf, new_status, iso(now), belief_id],
        )
    after = new_conf if new_conf is not None else before_conf
    event = append(
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
            data={
                "evidence_id": evidence_id,
                "stance": stance,
                "weight": weight,
                "credibility": cred,
                "source": source,
                "confidence": {"from": before_conf, "to": after},
                "status": {"from": before_status, "to": new_status},
                **({"held": f"the belief is {before_status}; evidence is recorded but does not move it"} if new_conf is None else {}),
            },
        ),
        now,
    )
    return get_belief(db, belief_id), event


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
        new_conf, new_status = _recompute("active", [e.item() for e in belief.evidence])
        assert new_conf is not None
    else:
        new_conf = belief.confidence if confidence_value is None else confidence_value
        new_status = status
        if status == "rejected" and confidence_value is None:
            new_conf = 0.0
    db.execute("UPDATE beliefs SET confidence = ?, status = ?, updated_at = ? WHERE id = ?", [new_conf, new_status, iso(now), belief_id])
    event = append(
        db,
        EventDraft(
            mind=belief.mind,
            kind="belief_updated",
            actor=actor,
            text=reason,
            cycle_id=cycle_id,
            causation_id=brought_by,
            subject=Ref("belief", belief_id),
            data={
                "correction": True,
                "reason": reason,
                "confidence": {"from": belief.confidence, "to": new_conf},
                "status": {"from": belief.status, "to": new_status},
            },
        ),
        now,
    )
    return get_belief(db, belief_id), event
