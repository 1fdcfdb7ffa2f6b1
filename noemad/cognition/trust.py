"""How far a mind trusts each source: the credibility a source's evidence gets unless it states its own.

Owns the `trust` table. A source no one set a level for counts at
DEFAULT_TRUST. Each change is a `trust_changed` event written in the same
transaction (`noemactl trust`, `PUT /api/v1/minds/{mind}/trust/{source}`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import iso
from noemad.errors import InvalidInput
from noemad.events import Event, EventDraft, append
from noemad.wire import wire

DEFAULT_TRUST = 0.6  # how far a mind trusts a source it has not been told about


def trust(db: Database, mind: str, source: str) -> float:
    """How far `mind` trusts `source` (DEFAULT_TRUST unless told)."""
    row = db.execute("SELECT value FROM trust WHERE mind = ? AND source = ?", [mind, source]).fetchone()
    return float(row[0]) if row else DEFAULT_TRUST


@wire
@dataclass(frozen=True)
class TrustLevel:
    """How far a mind was told to trust one source, and when."""

    source: str
    value: float
    updated_at: str


def list_trust(db: Database, mind: str) -> list[TrustLevel]:
    """The trust levels a mind was told, by source; any other source counts at DEFAULT_TRUST."""
    rows = db.execute("SELECT source, value, updated_at FROM trust WHERE mind = ? ORDER BY source", [mind]).fetchall()
    return [TrustLevel(source, float(value), at) for source, value, at in rows]


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
