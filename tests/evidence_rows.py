"""Tests' shorthand for `add_evidence_bulk`: a test's few items written as rows, for one proposition.

The product takes items only as columns (`EvidenceColumns`: consolidation
holds them so); tests state a handful of items more readably as rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from sqlite_utils import Database

from noemad.cognition.beliefs.bulk import EvidenceAdded, EvidenceColumns, Evidenced, add_evidence_bulk
from noemad.events import Ref


class Row(NamedTuple):
    """One item of evidence: `brought_by` the event that brought it; `credibility` None for the mind's trust in `source`."""

    stance: Literal["support", "contradict"]
    weight: float
    source: str
    brought_by: int
    credibility: float | None = None


def columns(rows: Sequence[Row]) -> EvidenceColumns:
    """The rows as the columns `add_evidence_bulk` takes."""
    return EvidenceColumns(
        tuple(r.stance for r in rows), tuple(r.weight for r in rows), tuple(r.source for r in rows),
        tuple(r.brought_by for r in rows), tuple(r.credibility for r in rows),
    )


def add_one(
    db: Database,
    *,
    mind: str,
    proposition: str,
    subject: str,
    kind: str,
    items: Sequence[Row] | EvidenceColumns,
    now: float,
    actor: str,
    cause: int | None,
    cycle_id: str | None = None,
    cites: Sequence[Ref] = (),
) -> EvidenceAdded:
    """`add_evidence_bulk` for one proposition (a writer job)."""
    given = items if isinstance(items, EvidenceColumns) else columns(items)
    batch = Evidenced(proposition, subject, given, cites)
    return add_evidence_bulk(db, mind=mind, kind=kind, batches=[batch], now=now, actor=actor, cause=cause, cycle_id=cycle_id)[0]
