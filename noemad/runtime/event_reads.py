"""What the API reads of the event log (`sup.event_reads`): a mind's events listed or queried, one event, the timeline walk around one.

An event that was archived is found where it went: `event` says which
archive holds it, and `chain` walks inside that archive.
"""

from __future__ import annotations

from collections.abc import Sequence

from noemad.errors import EventNotFound
from noemad.events import Event, EventQuery, check_kinds, get_event, list_events, query_events
from noemad.minds import get_mind
from noemad.runtime.archiving import Archiving
from noemad.runtime.running_config import RunningConfig
from noemad.store import Store
from noemad.timeline import Timeline, WalkLimits, walk


class EventReads:
    """Reads of the event log: the store, the archives an event may have gone to, and the running config (the walk's bounds)."""

    def __init__(self, store: Store, archiving: Archiving, running: RunningConfig) -> None:
        self.store = store
        self.archiving = archiving
        self.running = running

    def events(self, mind: str, kinds: Sequence[str], since: int, limit: int) -> list[Event]:
        """A mind's events after id `since`, oldest first, of `kinds` (all when empty)."""
        db = self.store.reader()
        get_mind(db, mind)
        return list_events(db, mind, kinds=kinds, since=since, limit=limit)

    def check_kinds(self, kinds: Sequence[str]) -> tuple[str, ...]:
        """`kinds` each once, or `InvalidInput` naming one that is no event kind."""
        return check_kinds(self.store.reader(), kinds)

    def query_events(self, mind: str, query: EventQuery) -> tuple[list[Event], int]:
        """A mind's events matching `query` (kinds checked, text searched) and its newest event id then."""
        db = self.store.reader()
        get_mind(db, mind)
        return query_events(db, mind, query)

    def event(self, event_id: int) -> Event:
        """One event; `EventNotFound` saying which archive holds it when it was archived."""
        try:
            return get_event(self.store.reader(), event_id)
        except EventNotFound as missing:
            raise self.archiving.not_found(event_id, missing) from None

    def chain(self, event_id: int, back: int | None, forward: int | None, limit: int | None) -> Timeline:
        """The walk around `event_id` (bounds default to, and are capped by, [timeline]), inside its archive if it was archived."""
        bounds = self.running.config.timeline
        limits = WalkLimits(
            back=bounds.max_hops if back is None else back,
            forward=bounds.max_hops if forward is None else forward,
            limit=bounds.max_events if limit is None else limit,
            max_hops=bounds.max_hops,
            max_events=bounds.max_events,
        )
        try:
            return walk(self.store.reader(), event_id, limits)
        except EventNotFound as missing:
            return self.archiving.archived_walk(event_id, limits, missing)
