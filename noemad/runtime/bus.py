"""The in-process bus that tells followers about committed events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from noemad.events import Event

SUBSCRIBER_BACKLOG = 10_000  # events one follower may fall behind before it is dropped
FOLLOW_PAGE = 1000  # stored events read at a time when a follower replays


class Subscription:
    """One follower's queue of a mind's new events."""

    def __init__(self, mind: str) -> None:
        self.mind = mind
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue(SUBSCRIBER_BACKLOG)
        self.lagged = False


class Following:
    """A follower of one mind: the events stored after `since` first (when given), then each one committed.

    Subscribed when made, before anything stored is read, so nothing
    committed in between is missed and nothing is given twice. Iterating
    ends when the mind is deleted or noemad stops; `close` ends the subscription.
    """

    def __init__(
        self, bus: EventBus, mind: str, since: int | None, newest: int, read_after: Callable[[int], Awaitable[list[Event]]]
    ) -> None:
        self._bus = bus
        self._sub = bus.subscribe(mind)
        self._since = since
        self._last = newest if since is None else since
        self._read_after = read_after  # a page of stored events after an id, oldest first

    async def __aiter__(self) -> AsyncIterator[Event]:
        if self._since is not None:
            while True:
                page = await self._read_after(self._last)
                for stored in page:
                    yield stored
                    self._last = stored.id
                if len(page) < FOLLOW_PAGE:
                    break
        while True:
            event = await self._sub.queue.get()
            if event is None:
                return
            if event.id > self._last:
                yield event
                self._last = event.id

    def close(self) -> None:
        self._bus.unsubscribe(self._sub)


class EventBus:
    """Delivers events, in commit order, to the subscribers of their mind."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._subs: dict[str, set[Subscription]] = {}
        self._listeners: list[Callable[[list[Event]], None]] = []

    def listen(self, callback: Callable[[list[Event]], None]) -> None:
        """Call `callback(events)` on the loop for every committed batch."""
        self._listeners.append(callback)

    def unlisten(self, callback: Callable[[list[Event]], None]) -> None:
        """Stop calling `callback` (given to `listen`)."""
        if callback in self._listeners:
            self._listeners.remove(callback)

    def subscribe(self, mind: str) -> Subscription:
        sub = Subscription(mind)
        self._subs.setdefault(mind, set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subs.get(sub.mind, set()).discard(sub)

    def close_mind(self, mind: str) -> None:
        """End every follower of a mind (it was deleted)."""
        for sub in self._subs.pop(mind, set()):
            sub.queue.put_nowait(None) if not sub.queue.full() else None

    def close(self) -> None:
        for mind in list(self._subs):
            self.close_mind(mind)

    def publish_threadsafe(self, items: list[Any]) -> None:
        """Writer-thread entry: hand committed events to the loop."""
        events = [item for item in items if isinstance(item, Event)]
        if events and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._deliver, events)

    def _deliver(self, events: list[Event]) -> None:
        for callback in self._listeners:
            callback(events)
        for event in events:
            for sub in tuple(self._subs.get(event.mind, ())):
                try:
                    sub.queue.put_nowait(event)
                except asyncio.QueueFull:
                    # A follower this far behind is cut off rather than let memory grow.
                    sub.lagged = True
                    self.unsubscribe(sub)
