"""A mind's actor: a queue of stored stimuli that asks the gate, and runs the turns it wakes for.

Stimuli are stored before they reach the actor (they are in the mind's
context whatever the gate decides). The gate decides per stimulus; a wake
runs one turn (`noemad.turn`) over everything new since the last turn, and
stimuli that arrive during a turn wait for the next one. The actor holds no
step of the turn itself: only when turns run, one at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.config import MindSettings
from noemad.events import Event
from noemad.gate import Action, decide
from noemad.models import ModelGateway
from noemad.stimuli import STIMULUS_KINDS
from noemad.store import Store
from noemad.turn.run import Turn, run_turn

log = logging.getLogger("noemad.actor")


def pending_stimuli(db: Database, mind: str) -> tuple[int, list[int]]:
    """How many cycles a mind has run, and its stored stimuli no cycle has taken yet."""
    (last_taken,) = db.execute(
        "SELECT coalesce(max(p.parent_id), 0) FROM events e"
        " JOIN event_parents p ON p.event_id = e.id WHERE e.mind = ? AND e.kind = 'cycle_started'",
        [mind],
    ).fetchone()
    (cycles,) = db.execute(
        "SELECT count(*) FROM events WHERE mind = ? AND kind = 'cycle_started'", [mind]
    ).fetchone()
    marks = ",".join("?" * len(STIMULUS_KINDS))
    rows = db.execute(
        f"SELECT id FROM events WHERE mind = ? AND kind IN ({marks}) AND id > ? ORDER BY id",
        [mind, *STIMULUS_KINDS, last_taken],
    ).fetchall()
    return int(cycles), [r[0] for r in rows]


class MindActor:
    """Runs one mind's turns, one at a time."""

    def __init__(
        self,
        name: str,
        store: Store,
        clock: Clock,
        gateway: ModelGateway,
        settings: Callable[[], MindSettings],  # the mind's running settings, read at each turn
        cycles_done: int = 0,
        paused: bool = False,
    ) -> None:
        self.name = name
        self.paused = paused  # an operator pause: stimuli are stored and wait for resume
        self._store = store
        self._clock = clock
        self._gateway = gateway
        self._settings = settings
        self._pending: list[int] = []  # stored stimuli not yet taken by a turn
        self._wake_reason = ""  # why the next turn runs, as the gate said
        self._wake = asyncio.Event()
        self._cycles = cycles_done
        self._task: asyncio.Task[None] | None = None
        self.turn_running = False
        self._turn_over = asyncio.Event()
        self.on_turn_done: Callable[[str], None] | None = None

    def start(self, backlog: list[int] | None = None) -> None:
        """Start the turn loop; `backlog` holds stimuli stored before a restart."""
        if backlog:
            self._pending.extend(backlog)
            self._wake_reason = "stimuli stored before noemad restarted"
            self._wake.set()
        self._task = asyncio.create_task(self._loop(), name=f"mind:{self.name}")

    def pause(self) -> None:
        """Take no new turns (a running one finishes); stimuli keep being stored."""
        self.paused = True

    def resume(self) -> None:
        """Take turns again, starting with whatever arrived during the pause."""
        self.paused = False
        if self._pending:
            self._wake_reason = "resumed with stimuli that arrived while paused"
            self._wake.set()

    def offer(self, stimulus: Event) -> None:
        """A stimulus was stored: let the gate decide what it does."""
        self._pending.append(stimulus.id)
        decision = decide(stimulus)
        if decision.action is Action.WAKE:
            self._wake_reason = decision.reason
            self._wake.set()

    @property
    def idle(self) -> bool:
        return not self.turn_running and not self._wake.is_set()

    async def stop(self, timeout: float) -> None:
        """Let a running turn finish within `timeout` seconds of the clock, then cancel the loop."""
        if self._task is None:
            return
        if self.turn_running and timeout > 0:
            waiter = asyncio.ensure_future(self._turn_over.wait())
            sleeper = asyncio.ensure_future(self._clock.sleep(timeout))
            await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            sleeper.cancel()
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._task = None

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.paused:
                continue  # resume() wakes the loop again
            batch, self._pending = self._pending, []
            if not batch:
                continue
            self.turn_running = True
            self._turn_over.clear()
            try:
                await self._turn(batch)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("turn of mind %s failed; its stimuli stay stored", self.name)
            finally:
                self.turn_running = False
                self._turn_over.set()
                if self.on_turn_done:
                    self.on_turn_done(self.name)

    async def _turn(self, stimuli: list[int]) -> None:
        """Hand the next turn, over `stimuli`, to `noemad.turn`."""
        self._cycles += 1
        # The settings are read now: a change made since the last turn applies from this one.
        turn = Turn(mind=self.name, number=self._cycles, stimuli=stimuli, wake=self._wake_reason, settings=self._settings())
        await run_turn(self._store, self._clock, self._gateway, turn)
