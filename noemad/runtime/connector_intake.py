"""What a mind's connectors bring in and take back (`sup.connector_intake`): stimuli with their remote ids and cursor, redactions, notes.

Each is one writer job. A stimulus brought in is then offered to its mind's
gate as one an operator stored is (the supervisor's `offer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlite_utils import Database

from noemad import inbox
from noemad.clock import Clock
from noemad.cognition import intake
from noemad.cognition.memory.reads import episodes_of, get_memory
from noemad.cognition.memory.writing import retract
from noemad.errors import MindNotFound
from noemad.events import Event, EventDraft, append, redact
from noemad.inbox import Inbound
from noemad.minds import get_mind
from noemad.rules.match import Facts, facts_of
from noemad.runtime.actor import MindActor
from noemad.runtime.ingested import Ingested
from noemad.store import Store


class ConnectorIntake:
    """Connectors' writes: the store and clock, the running actors (the supervisor's dict, shared), its gate offer and open check."""

    def __init__(
        self, store: Store, clock: Clock, actors: dict[str, MindActor], offer: Callable[[MindActor, Event, Facts], Ingested],
        check_open: Callable[[], None],
    ) -> None:
        self.store = store
        self.clock = clock
        self.actors = actors  # the supervisor adds and removes actors in this dict: never replaced
        self._offer = offer
        self._check_open = check_open

    async def ingest_from(
        self, mind: str, connector: str, items: Sequence[Inbound], cursor: str | None, *, move_cursor: bool = True
    ) -> list[Ingested]:
        """Store what a connector brought, and its cursor after it, in one writer job; then offer each to the gate.

        A crash leaves the whole batch and the cursor, or neither. An item
        whose remote id the connector stored before is left out (a source that
        sends it again stores it once). The answers are in the items' order,
        those left out missing.
        """
        self._check_open()
        actor = self.actors.get(mind)
        if actor is None:
            get_mind(self.store.reader(), mind)
            raise MindNotFound(f"mind {mind!r} is not running")
        now = self.clock.now()

        def store(db: Database) -> list[tuple[Event, Facts]]:
            seen = inbox.known(db, mind, connector, [i.remote_id for i in items if i.remote_id is not None])
            stored: list[tuple[Event, Facts]] = []
            for item in items:
                if item.remote_id is not None:
                    if item.remote_id in seen:
                        continue
                    seen.add(item.remote_id)  # twice in one batch is once too
                intake.check(db, mind, item.stimulus)
                event = append(db, item.stimulus.draft(mind), now)
                inbox.record_remote(db, mind, connector, item, event.id)
                stored.append((event, facts_of(db, event, mind, item.stimulus)))
            if move_cursor:
                inbox.set_cursor(db, mind, connector, cursor, now)
            return stored

        stored = await self.store.writer.run(store, first=True)  # ahead of turns, as a client's stimulus is
        return [self._offer(actor, event, facts) for event, facts in stored]

    async def redact_from(self, mind: str, connector: str, remote_id: str, draft: EventDraft) -> Event | None:
        """Take back what the stimulus a connector stored for `remote_id` said (`events.redact`), recording `draft`;
        the episodes that remember it are retracted, so no turn retrieves it again.

        None when the connector stored nothing for it, or it was redacted before.
        """
        self._check_open()
        now = self.clock.now()

        def job(db: Database) -> Event | None:
            target = inbox.find_stimulus(db, mind, connector, remote_id)
            redaction = None if target is None else redact(db, target, draft, now)
            if redaction is not None and target is not None:
                # What a turn already remembered of it is retracted with it: never retrieved into a turn again.
                for memory_id in episodes_of(db, mind, [target]):
                    if get_memory(db, memory_id).status == "active":
                        retract(db, memory_id=memory_id, reason="the message it records was redacted", now=now,
                                actor="process:runtime", cause=redaction.id)
            return redaction

        return await self.store.writer.run(job)

    async def note_from(self, draft: EventDraft) -> Event:
        """Record what a connector did that is no stimulus (an invite it refused): an event on the mind's timeline."""
        self._check_open()
        now = self.clock.now()
        return await self.store.writer.run(lambda db: append(db, draft, now))
