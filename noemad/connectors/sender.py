"""The outbox's worker for one connector: sends its pending deliveries, retries, gives up visibly.

One task per running connector, beside its `run`. It takes the connector's
pending rows (`noemad.outbox.pending`) in the order they were made, one at a
time (a reply never overtakes an earlier one in a room: while the oldest is
retried, the others wait), and hands each to the connector's `send`, with the delivered event's id as the
idempotency key on every attempt (a send in flight when noemad died is sent
again after the restart with the same key: the remote side keeps one).

Each outcome is a `delivery` event caused by the delivered reply, written
with the row's change. A transient failure is tried again after what the
remote side asked (a 429's `Retry-After` / `retry_after_ms`) or else a
backoff: 5 s, doubling, at most 5 minutes. A permanent failure, or one after
the connector's `give_up_after`, gives the delivery up: its status says so,
`noemactl connectors` and the metrics count it, and a `delivery_given_up`
notification tells the operator, who can send it again with `noemactl
connectors retry MIND DELIVERY`.

Every wait is a clock wait, cut short when a new delivery for the mind is
committed (the event bus says so) or a retry is asked for.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from sqlite_utils import Database

from noemad import outbox
from noemad.clock import Clock, iso, parse_iso
from noemad.cognition.notifications.rules import Candidate
from noemad.cognition.notifications.table import notify
from noemad.connectors.port import Connector, Delivery, DeliveryFailed
from noemad.events import Event, get_event
from noemad.outbox import DeliveryRecord, DeliveryRow
from noemad.store import Store

log = logging.getLogger("noemad.connectors")

SEND_FIRST = 5.0  # seconds before the first retry of a failed send
SEND_MOST = 300.0  # the backoff stops doubling here
IDLE = 3600.0  # with nothing pending, look again this often even if no event said so
GIVEN_UP = "delivery_given_up"  # the notification's rule


def send_delay(attempt: int) -> float:
    """Seconds before the next try after failed attempt `attempt` (1: the first)."""
    return min(SEND_FIRST * 2.0 ** min(attempt - 1, 16), SEND_MOST)


class Sender:
    """Sends one connector's deliveries."""

    def __init__(self, store: Store, clock: Clock, mind: str, connector: Connector, cooldown: float) -> None:
        self.store = store
        self.clock = clock
        self.mind = mind
        self.connector = connector
        self.key = connector.key
        self.actor = f"connector:{connector.key}"
        self._nudged = asyncio.Event()
        self.sending: int | None = None  # the delivery in flight
        self.cooldown = cooldown  # the mind's notify_cooldown: give-ups within it are counted on one notification

    def nudge(self) -> None:
        """Look at the outbox again now (a delivery was added, or put back by hand)."""
        self._nudged.set()

    async def run(self) -> None:
        """Send what is due, wait for what is next, until cancelled."""
        while True:
            self._nudged.clear()
            rows = await self.store.off_loop(lambda: outbox.pending(self.store.reader(), self.mind, self.key))
            now = self.clock.now()
            # In order: a reply never arrives before one the mind said earlier; the oldest pending one goes first,
            # and those after it wait while it is retried (until it is sent or given up).
            head = rows[0] if rows else None
            if head is not None and head.next_at <= now:
                await self._attempt(head)
                continue
            await self._wait(head.next_at if head is not None else now + IDLE)

    async def _wait(self, until: float) -> None:
        """Wait until the clock reaches `until`, or a nudge."""

        async def sleep_until() -> None:
            # Measured from the clock when the task starts, not when it was made: time moved in between is not waited twice.
            await self.clock.sleep(until - self.clock.now())

        sleep = asyncio.ensure_future(sleep_until())
        nudged = asyncio.ensure_future(self._nudged.wait())
        try:
            await asyncio.wait({sleep, nudged}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleep.cancel()
            nudged.cancel()

    async def _attempt(self, row: DeliveryRow) -> None:
        event = await self.store.off_loop(lambda: get_event(self.store.reader(), row.event_id))
        attempt = row.attempts + 1
        delivery = Delivery(
            id=row.id, mind=row.mind, event_id=row.event_id, what=row.what, text=event.text or "", at=parse_iso(event.at), attempt=attempt,
            room=row.room, thread=row.thread, in_reply_to=row.in_reply_to, answers=event.causation_id, channel=event.channel,
        )
        self.sending = row.id
        try:
            sent = await self.connector.send(delivery)
        except asyncio.CancelledError:
            raise  # stopping: the row stays pending and is sent again (same key) after the restart
        except DeliveryFailed as failed:
            await self._failed(row, attempt, failed.reason, failed.transient, failed.retry_after)
        except Exception as exc:  # noqa: BLE001 - a connector's bug or an unexpected error: transient, and said
            await self._failed(row, attempt, str(exc) or type(exc).__name__, True, None)
        else:
            record = DeliveryRecord(row.id, self.key, "sent", attempt, remote_id=sent.remote_id, detail=sent.detail)
            await self._write(lambda db: outbox.record(db, row, record, self.clock.now(), self.actor))
        finally:
            self.sending = None

    async def _failed(self, row: DeliveryRow, attempt: int, reason: str, transient: bool, retry_after: float | None) -> None:
        now = self.clock.now()
        if not transient or now >= row.give_up_at:
            why = reason if transient else f"{reason} (not worth retrying)"
            log.warning("mind %s: gave up delivery %d to %s: %s", self.mind, row.id, self.key, why)
            await self._write(lambda db: self._give_up(db, row, attempt, why, now))
            return
        retry_at = min(now + (retry_after if retry_after is not None and retry_after >= 0 else send_delay(attempt)), row.give_up_at)
        log.info("mind %s: delivery %d to %s failed (%s); retrying at %s", self.mind, row.id, self.key, reason, iso(retry_at))
        record = DeliveryRecord(row.id, self.key, "failed", attempt, error=reason, retry_at=retry_at)
        await self._write(lambda db: outbox.record(db, row, record, now, self.actor))

    def _give_up(self, db: Database, row: DeliveryRow, attempt: int, why: str, now: float) -> Event:
        return give_up(db, row, attempt, why, now, self.actor, self.cooldown)

    async def _write(self, job: Callable[[Database], Any]) -> None:
        try:
            await self.store.writer.run(job)
        except Exception as exc:  # a full disk: the row stays as it was, and is tried again
            log.warning("mind %s: could not record delivery outcome for %s: %s", self.mind, self.key, exc)
            await self.clock.sleep(send_delay(1))


def give_up(db: Database, row: DeliveryRow, attempt: int, why: str, now: float, actor: str, cooldown: float) -> Event:
    """Give a delivery up (a writer job): its `delivery` event, and the operator's `delivery_given_up` notification."""
    event = outbox.record(db, row, DeliveryRecord(row.id, row.connector, "given_up", attempt, error=why), now, actor)
    candidate = Candidate(
        rule=GIVEN_UP,
        key=f"{GIVEN_UP}:connector:{row.connector}",  # repeats within the mind's notify_cooldown are counted on one
        title=f"{row.what} {row.event_id} was not delivered to {row.connector}: {why}; `noemactl connectors retry {row.mind} {row.id}` sends it again",
        values={"delivery": row.id, "connector": row.connector, "attempts": attempt, "error": why},
        cause=event.id,
        cooldown=cooldown,
    )
    notify(db, mind=row.mind, candidates=[candidate], cycle_id=None, now=now)
    return event
