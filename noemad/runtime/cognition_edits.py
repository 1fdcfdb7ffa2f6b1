"""An operator's direct edits of a mind's cognition (`sup.edits`): trust, memories, notifications, generalisations.

Each is one writer job, written by the module that owns its table with the
event that records it; a stopping daemon takes none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.cognition.memory.model import Memory
from noemad.cognition.memory.reads import get_memory
from noemad.cognition.memory.writing import retract, write_memory
from noemad.cognition.notifications.table import Notification, ack, get_notification
from noemad.cognition.trust import set_trust
from noemad.events import Event
from noemad.minds import get_mind
from noemad.store import Store
from noemad.wire import wire


@wire
@dataclass(frozen=True)
class Rejected:
    """The rejected generalisation: its memory (retracted) and its belief (rejected)."""

    memory: Memory
    belief: int | None
    """The belief consolidation formed with it (null: it formed none)."""
    event: Event
    """The `generalisation_rejected` event recording it."""


class CognitionEdits:
    """An operator's edits of a mind's trust, memories, notifications and generalisations: the store, clock and open check."""

    def __init__(self, store: Store, clock: Clock, check_open: Callable[[], None]) -> None:
        self.store = store
        self.clock = clock
        self._check_open = check_open

    async def set_trust(self, mind: str, source: str, value: float, actor: str = "operator") -> Event:
        """Set how far `mind` trusts `source`; recorded as `trust_changed`."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        now = self.clock.now()
        return await self.store.writer.run(lambda db: set_trust(db, mind=mind, source=source, value=value, now=now, actor=actor))

    async def retract_memory(self, memory_id: int, reason: str, actor: str = "operator") -> tuple[Memory, Event]:
        """Retract a memory (`memory_retracted`): no longer recalled, still listed; twice is a conflict."""
        self._check_open()
        now = self.clock.now()
        event = await self.store.writer.run(lambda db: retract(db, memory_id=memory_id, reason=reason, now=now, actor=actor))
        return get_memory(self.store.reader(), memory_id), event

    async def remember(
        self, mind: str, kind: str, text: str, derived_from: list[int], importance: float | None, actor: str = "operator",
        tags: list[str] | None = None,
    ) -> Memory:
        """Store an operator's memory with its memory_created event."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        now = self.clock.now()
        memory, _ = await self.store.writer.run(
            lambda db: write_memory(
                db, mind=mind, kind=kind, text=text, now=now, actor=actor, cause=None, cycle_id=None,
                derived_from=derived_from, importance=importance, tags=tags or (),
            )
        )
        return memory

    async def ack(self, notification_id: int, actor: str = "operator") -> Notification:
        """Acknowledge a notification (`notification_acked`); acking one twice is a conflict."""
        self._check_open()
        now = self.clock.now()

        def job(db: Database) -> Notification:
            ack(db, notification_id=notification_id, now=now, actor=actor)
            return get_notification(db, notification_id)

        return await self.store.writer.run(job)

    async def reject_generalisation(self, memory_id: int, reason: str, actor: str = "operator") -> Rejected:
        """Reject what consolidation generalised: memory retracted, belief rejected, episodes untouched."""
        from noemad.background.consolidation import reject  # the stemmer and the clustering load on first use

        self._check_open()
        now = self.clock.now()
        event = await self.store.writer.run(lambda db: reject(db, memory_id=memory_id, reason=reason, now=now, actor=actor))
        belief = next((r.id for r in event.refs if r.type == "belief"), None)
        return Rejected(get_memory(self.store.reader(), memory_id), belief, event)
