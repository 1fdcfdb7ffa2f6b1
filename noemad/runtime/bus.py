"""The in-process bus that tells followers about committed events."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from noemad.events import Event

SUBSCRIBER_BACKLOG = 10_000  # events one follower may fall behind before it is dropped


class Subscription:
    """One follower's queue of a mind's new events."""

    def __init__(self, mind: str) -> None:
        self.mind = mind
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue(SUBSCRIBER_BACKLOG)
        self.lagged = False


class EventBus:
    """Delivers events, in commit order, to the subscribers of their mind."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._subs: dict[str, set[Subscription]] = {}
        self._listeners: list[Callable[[list[Event]], None]] = []

    def listen(self, callback: Callable[[list[Event]], None]) -> None:
        """Call `callback(events)` on the loop for every committed batch."""
        self._listeners.append(callback)

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
