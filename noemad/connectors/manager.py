"""The connectors manager: one task per configured connector, restarted with a backoff when it fails.

Whoever builds the engine (the daemon in noemad/process/, the in-process
harness of the tests) starts a `Connectors` after the supervisor has
started and stops it before the supervisor stops: the supervisor never
knows about connectors. It tells the manager, through its listeners, when
the minds or their config change (a reload applied, a mind created or
deleted: `reconcile` starts new connectors, stops removed ones and restarts
changed ones) and when a mind's turn starts and ends (the connectors' turn
hooks).

A connector whose `run` raises (or returns) is run again after 2 s, then 4,
8 … at most 5 minutes; one that ran a good while before failing starts again
from 2 s. Every wait is on the injectable clock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlite_utils import Database

from noemad import inbox, outbox
from noemad.clock import iso
from noemad.errors import Conflict, ShuttingDown
from noemad.events import Event, EventDraft
from noemad.minds import get_mind
from noemad.outbox import DeliveryRow
from noemad.connectors.sender import Sender, give_up
from noemad.config.connectors import SecretProblem, read_secret
from noemad.connectors import kinds
from noemad.connectors.port import Connector, ConnectorSettings, ConnectorState, Delivery, DeliveryFailed, Sent, TurnHook
from noemad.inbox import Inbound
from noemad.runtime.ingested import Ingested
from noemad.runtime.supervisor import Supervisor
from noemad.stimuli import Stimulus

log = logging.getLogger("noemad.connectors")

RESTART_FIRST = 2.0  # seconds before the first restart of a failed connector
RESTART_MOST = 300.0  # the backoff stops doubling here
STEADY = 600.0  # a connector that ran this long before failing starts its backoff again from the first delay


def restart_delay(attempt: int) -> float:
    """Seconds before restart `attempt` (1: the first after a failure)."""
    return min(RESTART_FIRST * 2.0 ** min(attempt - 1, 16), RESTART_MOST)


class Unavailable:
    """What stands for a connector this noemad cannot build: every send fails, saying why, until it is given up."""

    def __init__(self, key: str, why: str) -> None:
        self.key = key
        self.why = why

    async def run(self) -> None:
        await asyncio.Event().wait()

    async def send(self, delivery: Delivery) -> Sent:
        raise DeliveryFailed(f"the connector is not running: {self.why}", transient=True)

    def state(self) -> ConnectorState:
        return ConnectorState(phase="stopped", why=self.why)


class Context:
    """A connector's way into the daemon (`ConnectorContext`), for one mind and one connector key."""

    def __init__(self, manager: Connectors, mind: str, settings: ConnectorSettings) -> None:
        self._manager = manager
        self._sup = manager.sup
        self.mind = mind
        self.key = settings.key
        self.settings = settings
        self.clock = manager.sup.clock

    async def ingest(self, stimuli: Sequence[Inbound | Stimulus], cursor: str | None) -> list[Ingested]:
        items = [s if isinstance(s, Inbound) else Inbound(s) for s in stimuli]
        return await self._sup.connector_intake.ingest_from(self.mind, self.key, items, cursor)

    async def redact(self, remote_id: str, author: str, channel: str, reason: str | None) -> Event | None:
        draft = EventDraft(
            mind=self.mind, kind="message_redacted", actor=f"user:{author}", channel=channel,
            text=f"redacted by {author}" + (f": {reason}" if reason else ""), data={"connector": self.key, "remote_id": remote_id},
        )
        return await self._sup.connector_intake.redact_from(self.mind, self.key, remote_id, draft)

    async def note(self, kind: str, text: str, data: dict[str, str]) -> Event:
        return await self._sup.connector_intake.note_from(EventDraft(mind=self.mind, kind=kind, actor=f"connector:{self.key}", text=text, data=data))

    def cursor(self) -> str | None:
        return inbox.cursor(self._sup.store.reader(), self.mind, self.key)

    def find_stimulus(self, remote_id: str) -> int | None:
        db = self._sup.store.reader()
        return inbox.find_stimulus(db, self.mind, self.key, remote_id) or outbox.delivered_as(db, self.mind, self.key, remote_id)

    def on_turn(self, hook: TurnHook) -> Callable[[], None]:
        hooks = self._manager.turn_hooks.setdefault((self.mind, self.key), [])
        hooks.append(hook)
        return lambda: hooks.remove(hook) if hook in hooks else None

    def secret(self, name: str) -> str:
        path = self.settings.secret_files.get(name)
        if path is None:
            raise SecretProblem(f"a {self.settings.kind} connector has no secret named {name!r}")
        return read_secret(path)


@dataclass
class Running:
    """One connector under the manager: its settings, the connector built from them, its task and its failures."""

    mind: str
    settings: ConnectorSettings
    connector: Connector | None
    task: asyncio.Task[None] | None = None
    sender: Sender | None = None  # the outbox's worker for this connector
    sender_task: asyncio.Task[None] | None = None
    failures: int = 0  # in a row: the backoff's attempt
    restarts: int = 0
    backing_off: str | None = None  # why, while waiting to restart
    retry_at: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    unavailable: str | None = None  # why it could not be built at all (stopped)

    @property
    def key(self) -> str:
        return self.settings.key

    def state(self) -> ConnectorState:
        """The connector's own state, with what the manager knows over it (backing off, restarts, its last failure)."""
        if self.connector is None:
            return ConnectorState(phase="stopped", why=self.unavailable, last_error=self.unavailable)
        own = self.connector.state()
        state = replace(own, restarts=self.restarts)
        if self.last_error is not None and (own.last_error_at is None or (self.last_error_at or 0) >= own.last_error_at):
            state = replace(state, last_error=self.last_error, last_error_at=self.last_error_at)
        if self.backing_off is not None:
            state = replace(state, phase="backing_off", why=self.backing_off, retry_at=self.retry_at)
        return state


class Connectors:
    """Runs every mind's configured connectors (`[[minds.NAME.connectors]]`) beside the supervisor."""

    def __init__(self, sup: Supervisor) -> None:
        self.sup = sup
        self.running: dict[tuple[str, str], Running] = {}  # by (mind, connector key)
        self.turn_hooks: dict[tuple[str, str], list[TurnHook]] = {}  # by (mind, connector key): dropped when it stops
        self._stopping: set[asyncio.Task[None]] = set()
        self._started = False

    async def start(self) -> None:
        """Start the connectors the running config names, and follow its changes and the minds' turns."""
        self._started = True
        self.sup.minds_listeners.append(self.reconcile)
        self.sup.turn_listeners.append(self._turn)
        if self.sup.bus is not None:
            self.sup.bus.listen(self._committed)
        self.reconcile()

    async def stop(self) -> None:
        """Stop every connector (before the supervisor stops)."""
        self._started = False
        if self.reconcile in self.sup.minds_listeners:
            self.sup.minds_listeners.remove(self.reconcile)
        if self._turn in self.sup.turn_listeners:
            self.sup.turn_listeners.remove(self._turn)
        if self.sup.bus is not None:
            self.sup.bus.unlisten(self._committed)
        await asyncio.gather(*(self._stop(r) for r in list(self.running.values())), *self._stopping)
        self.running.clear()

    def wanted(self) -> dict[tuple[str, str], ConnectorSettings]:
        """Every connector the running config names for a running mind, by (mind, key)."""
        return {
            (mind, settings.key): settings
            for mind in sorted(self.sup.actors)
            for settings in self.sup.settings_of(mind).connectors
        }

    def reconcile(self) -> None:
        """Start the connectors newly named, stop those no longer named, restart those whose settings changed."""
        if not self._started or self.sup.stopping:
            return
        wanted = self.wanted()
        for at, running in list(self.running.items()):
            if wanted.get(at) != running.settings:
                del self.running[at]
                log.info("mind %s: connector %s %s", at[0], at[1], "removed" if at not in wanted else "changed: restarting it")
                self._spawn_stop(running, removed=at not in wanted and at[0] in self.sup.actors)
        for at, settings in wanted.items():
            if at not in self.running:
                self.running[at] = self._start(at[0], settings)

    def get(self, mind: str, key: str) -> Running | None:
        return self.running.get((mind, key))

    def of(self, mind: str) -> list[Running]:
        """A mind's connectors, in the order its config lists them."""
        return [r for (m, _), r in self.running.items() if m == mind]

    # one connector -------------------------------------------------------------

    def _start(self, mind: str, settings: ConnectorSettings) -> Running:
        loop = asyncio.get_running_loop()
        cooldown = self.sup.settings_of(mind).notify_cooldown
        try:
            connector = kinds.build(settings, Context(self, mind, settings))
        except Exception as exc:  # noqa: BLE001 - a kind this noemad lacks, a secret it cannot read: shown, not fatal
            why = getattr(exc, "detail", None) or str(exc) or type(exc).__name__
            log.warning("mind %s: connector %s cannot start: %s", mind, settings.key, why)
            running = Running(mind, settings, None, unavailable=why)
            # Its deliveries still fail (saying why) and are given up in time, visibly, as any other's.
            running.sender = Sender(self.sup.store, self.sup.clock, mind, Unavailable(settings.key, why), cooldown)
            running.sender_task = loop.create_task(self._send(running.sender), name=f"outbox:{mind}:{settings.key}")
            return running
        running = Running(mind, settings, connector)
        running.task = loop.create_task(self._run(running), name=f"connector:{mind}:{settings.key}")
        running.sender = Sender(self.sup.store, self.sup.clock, mind, connector, cooldown)
        running.sender_task = loop.create_task(self._send(running.sender), name=f"outbox:{mind}:{settings.key}")
        log.info("mind %s: connector %s started", mind, settings.key)
        return running

    async def _run(self, running: Running) -> None:
        clock = self.sup.clock
        assert running.connector is not None
        while True:
            began = clock.monotonic()
            try:
                await running.connector.run()
                raise RuntimeError("its run ended by itself")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a connector's failure is its own: restart it
                now = clock.now()
                if clock.monotonic() - began >= STEADY:
                    running.failures = 0
                running.failures += 1
                delay = restart_delay(running.failures)
                why = str(exc) or type(exc).__name__
                running.last_error, running.last_error_at = why, now
                running.backing_off, running.retry_at = why, now + delay
                log.warning("mind %s: connector %s failed (%s); restarting it at %s", running.mind, running.key, why, iso(now + delay))
            await clock.sleep(delay)
            running.backing_off, running.retry_at = None, None
            running.restarts += 1

    async def _send(self, sender: Sender) -> None:
        """Run the connector's outbox worker; a bug in it is logged and it starts again after a backoff."""
        failures = 0
        while True:
            try:
                await sender.run()
            except asyncio.CancelledError:
                raise
            except Exception:
                failures += 1
                log.exception("mind %s: the outbox worker of %s failed; restarting it", sender.mind, sender.key)
                await self.sup.clock.sleep(restart_delay(failures))

    async def _stop(self, running: Running) -> None:
        self.turn_hooks.pop((running.mind, running.key), None)
        tasks = [t for t in (running.sender_task, running.task) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _remove(self, running: Running) -> None:
        """Stop a connector the config no longer names, and give up what waits in its outbox: nothing would send it."""
        await self._stop(running)
        now = self.sup.clock.now()
        why = "its connector was removed from the config"
        cooldown = self.sup.settings_of(running.mind).notify_cooldown

        def job(db: Database) -> int:
            rows = outbox.pending(db, running.mind, running.key)
            for row in rows:
                give_up(db, row, row.attempts, why, now, f"connector:{running.key}", cooldown)
            return len(rows)

        try:
            given_up = await self.sup.store.writer.run(job)
        except Exception as exc:  # a full disk, a mind deleted meanwhile: the rows stay pending, shown nowhere until it is back
            log.warning("mind %s: could not give up the deliveries of removed connector %s: %s", running.mind, running.key, exc)
            return
        if given_up:
            log.warning("mind %s: gave up %d deliveries of removed connector %s", running.mind, given_up, running.key)

    def _spawn_stop(self, running: Running, removed: bool = False) -> None:
        stop = self._remove(running) if removed else self._stop(running)
        task = asyncio.get_running_loop().create_task(stop, name=f"stop:{running.mind}:{running.key}")
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def _committed(self, events: list[Event]) -> None:
        """New replies or notifications: their minds' outbox workers look again now."""
        minds = {e.mind for e in events if e.kind in ("reply", "notification")}
        for running in self.running.values():
            if running.mind in minds and running.sender is not None:
                running.sender.nudge()

    async def retry(self, mind: str, delivery_id: int, actor: str) -> tuple[DeliveryRow, Event]:
        """Put a given-up delivery back in the outbox, due now (`noemactl connectors retry`)."""
        if self.sup.stopping:
            raise ShuttingDown("noemad is stopping and takes no new work; retry once it is back up")
        db = self.sup.store.reader()
        get_mind(db, mind)
        row = outbox.get_delivery(db, mind, delivery_id)
        settings = next((c for c in self.sup.settings_of(mind).connectors if c.key == row.connector), None)
        if settings is None:
            raise Conflict(
                f"delivery {delivery_id} goes to {row.connector}, which mind {mind!r} no longer has;"
                f" add it back to [[minds.{mind}.connectors]] and reload, then retry"
            )
        now = self.sup.clock.now()
        retried = await self.sup.store.writer.run(lambda db: outbox.retry(db, mind, delivery_id, settings.give_up_after, now, actor))
        running = self.get(mind, row.connector)
        if running is not None and running.sender is not None:
            running.sender.nudge()
        return retried

    def _turn(self, mind: str, started: bool) -> None:
        for hook in [h for (m, _), hooks in self.turn_hooks.items() if m == mind for h in hooks]:
            try:
                hook(started)
            except Exception:  # a connector's hook must not end the mind's turn
                log.exception("mind %s: a connector's turn hook failed", mind)
