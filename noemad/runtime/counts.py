"""The daemon's event counts, kept in memory so `status` and the metrics never scan the event log.

Counted from the store (archived events included) when the daemon starts or
a mind is imported, then as each event commits (the bus's listener), and
forgotten with a deleted mind.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlite_utils import Database

from noemad.events import Event, archived_counts
from noemad.turn.govern import GovernanceRecord


@dataclass
class Counts:
    """Event counts by mind, by (mind, kind) and governance passes by (mind, status); the newest event id."""

    by_mind: dict[str, int] = field(default_factory=dict)
    by_kind: dict[tuple[str, str], int] = field(default_factory=dict)
    """Events written, by (mind, kind): every event in the store or archived from it, counted at start and as each commits."""
    governance: dict[tuple[str, str], int] = field(default_factory=dict)
    """Governance passes since the daemon started, by (mind, status): the metrics read these, not the log."""
    last_event_id: int = 0

    def load(self, db: Database) -> None:
        """Count every mind's events in the store and its archives (at start)."""
        # Archived events count too: the counts are of events ever written, so the metrics' counters never go back.
        stored = db.execute("SELECT mind, kind, count(*) FROM events GROUP BY mind, kind").fetchall()
        self._add(db, [*stored, *archived_counts(db)])

    def load_mind(self, db: Database, mind: str) -> None:
        """Count the events of a mind that just arrived (an import), in the store and its archives."""
        stored = db.execute("SELECT kind, count(*) FROM events WHERE mind = ? GROUP BY kind", [mind]).fetchall()
        self._add(db, [(mind, kind, n) for kind, n in stored] + [(m, k, n) for m, k, n in archived_counts(db) if m == mind])

    def _add(self, db: Database, rows: Iterable[tuple[str, str, int]]) -> None:
        for mind, kind, count in rows:
            self.by_mind[mind] = self.by_mind.get(mind, 0) + count
            self.by_kind[mind, kind] = self.by_kind.get((mind, kind), 0) + count
        (self.last_event_id,) = db.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()

    def committed(self, events: list[Event]) -> None:
        """Count events as they commit (the bus calls it on the loop)."""
        by_kind = self.by_kind
        for event in events:
            self.by_mind[event.mind] = self.by_mind.get(event.mind, 0) + 1
            by_kind[event.mind, event.kind] = by_kind.get((event.mind, event.kind), 0) + 1
            if event.kind == "governance":
                key = (event.mind, GovernanceRecord.of(event).status)
                self.governance[key] = self.governance.get(key, 0) + 1
            self.last_event_id = max(self.last_event_id, event.id)

    def forget(self, mind: str) -> None:
        """Drop a deleted mind's counts."""
        self.by_mind.pop(mind, None)
        self.by_kind = {k: n for k, n in self.by_kind.items() if k[0] != mind}
        self.governance = {k: n for k, n in self.governance.items() if k[0] != mind}
