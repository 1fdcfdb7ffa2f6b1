"""A mind's actor: it offers each stored stimulus to the mind's gate and runs the turns the gate wakes it for.

Stimuli are stored before they reach the actor: they are in the mind's
context whatever the gate decides, and a turn takes every stimulus no turn
has taken yet (deferred, denied, still in a batch alike). The gate
(`noemad.gate.engine`) decides only when a turn runs and why; its answer for
a stimulus that woke nothing is written on the `cycle_started` of the turn
that takes it (`held_back`), not as an event of its own, so ingest writes one
event per stimulus.

Deliveries (a wake now, a batch whose quiet period ended, the mind's
self-wake) that come while a turn runs or the mind is paused are held by the
gate (at most 100 stimuli, oldest dropped and counted) and go as one turn
when the turn ends or the mind resumes. One timer task waits on the
injectable clock for the gate's next due time. Nothing is delivered once
shutdown has begun. The actor holds no step of the turn itself: only when
turns run, one at a time.

Judge rules: the actor asks the judge (`noemad.gate.judge.port.Judge`) about a
judge rule's due batch only while the mind is free (no turn running or
about to, not paused, not asleep, not shutting down), one call per rule at a
time. A turn that starts, a pause or a sleep stops every call in flight:
no verdict, not a failure, and the batch is judged once after. While the
mind sleeps no delivery starts a turn (a judge's verdict, what was held for
a turn, a retry): they are held and go with the sleep's end as one turn. Each verdict is
a `judge_verdict` event (`noemad.gate.judge.verdicts`); a REPLY wakes the mind for
its batch even if another turn took those stimuli meanwhile (it answers the
batch's newest message). A turn's outcome is told to the gate: a failed one
leaves a REPLY's batch unanswered for the next judged batch (R1-2). Without
`[gate.judge] enabled`, a judge, or a judge model, judge rules run as a
debounce and gate-status says why.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from sqlite_utils import Database

from noemad.clock import Clock
from noemad.cognition.memory.reads import without_episode
from noemad.config.mind import MindSettings
from noemad.events import Event, count_events, get_event, get_events
from noemad.gate import sleep as gate_sleep
from noemad.gate.judge import verdicts
from noemad.gate.engine import Decision, Delivery, Gate
from noemad.gate.judge.slot import JudgeStart
from noemad.gate.judge.port import Judge, JudgeOutcome, JudgeRequest
from noemad.models import ModelGateway
from noemad.ledger import ON_BEHALF_OF
from noemad.models.ratios import calibrated
from noemad.rules.match import Facts
from noemad.rules.table import StoredRules, stored_rules
from noemad.runtime.stats import MindStats
from noemad.runtime.retry import RETRY_REASON, TurnFailed, backoff, record_turn_failed
from noemad.stimuli import STIMULUS_KINDS, operator_of
from noemad.store import Store
from noemad.wake import HeldBack, Wake
from noemad.turn.context import answered
from noemad.turn.run import Turn, TurnResult, run_turn

log = logging.getLogger("noemad.actor")
BACKLOG = "stimuli stored before noemad restarted"
GATE_FAILED = "the gate failed on this stimulus"
CATCH_UPS = 6  # rounds a turn waits for the writer at most before it takes its stimuli (`MindActor._catch_up`)


def pending_stimuli(db: Database, mind: str) -> tuple[int, list[int]]:
    """How many cycles a mind has run, and its stored stimuli no cycle has taken yet (oldest first)."""
    return count_events(db, mind, "cycle_started"), without_episode(db, mind, STIMULUS_KINDS)


def mind_gate(db: Database, mind: str, privileged: frozenset[str], now: float, judge_model: str | None = None) -> Gate:
    """A mind's gate as stored: its rules, its sleep and self-wake if they are still to come, its judge's calibrated ratio."""
    gate = Gate(mind, stored_rules(db, mind), privileged=privileged, since=now)
    if judge_model:
        gate.judge_ratio = calibrated(db, mind, judge_model)  # stored per mind and model: it survives a restart
    state = gate_sleep.sleep_state(db, mind)
    if state is not None:
        if state.until is not None and state.until > now:
            gate.sleep(state.until, state.note)
        if state.self_wake_at is not None and state.self_wake_cause is not None:
            gate.set_self_wake(state.self_wake_at, state.self_wake_cause)  # one already due fires at once
    return gate


class MindActor:
    """Runs one mind's turns, one at a time, when its gate says so."""

    def __init__(
        self,
        name: str,
        store: Store,
        clock: Clock,
        gateway: ModelGateway,
        settings: Callable[[], MindSettings],  # the mind's running settings, read at each turn
        gate: Gate,
        cycles_done: int = 0,
        paused: bool = False,
        judge: Judge | None = None,
    ) -> None:
        self.name = name
        self.gate = gate
        self.judge = judge  # the reply judge's call (None: judge rules run as a debounce)
        self._judge_tasks: dict[str, asyncio.Task[None]] = {}  # a call in flight per judge rule
        self._budget_logged = False
        self._completed = False  # the running (or last) turn answered: set when it ends
        self.paused = paused  # an operator pause: stimuli are stored and offered, deliveries held until resume
        self._store = store
        self._clock = clock
        self._gateway = gateway
        self._settings = settings
        # Every stored stimulus no turn has taken yet, in id order, with what the gate said of
        # those that did not wake the mind (None: it woke it, or the gate has not said).
        self._untaken: dict[int, HeldBack | None] = {}
        # The operator behind each stimulus offered and not yet taken (`operator_of` its event, None: nobody's),
        # so the turn it wakes knows on whose behalf it runs without reading the stimuli back.
        self._operators: dict[int, str | None] = {}
        self._ready: Delivery | None = None  # a delivery the loop takes next (others are held by the gate)
        self._wake = asyncio.Event()
        self._cycles = cycles_done
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._armed: float | None = None  # when the timer fires
        self._writes: set[asyncio.Task[Any]] = set()  # sleep bookkeeping written off the offer path
        self._closed = False  # shutdown has begun: nothing more is delivered
        self.turn_running = False
        self.stats = MindStats()  # counted for GET /api/v1/metrics
        self._turn_over = asyncio.Event()
        self.on_turn_done: Callable[[str], None] | None = None
        self.on_turn: Callable[[str, bool], None] | None = None  # told (name, True) as a turn starts, (name, False) as it ends
        self.retry: TurnFailed | None = None  # the last turn failed: when its stimuli are tried again
        self._retry_timer: asyncio.Task[None] | None = None

    def start(self, backlog: list[int] | None = None) -> None:
        """Start the turn loop and the timer; `backlog` holds stimuli stored but never taken before a restart.

        The backlog is one turn, as before wake rules (the gate's batches
        lived in memory and are gone), unless the mind sleeps: then it waits,
        in context, for the next turn.
        """
        if backlog:
            asleep = self.gate.sleeping(self._clock.now())
            for stimulus in sorted(backlog):
                self._untaken[stimulus] = HeldBack(stimulus, "asleep", None) if asleep else None
            if not asleep:
                self._deliver(Delivery(rule=None, stimuli=tuple(sorted(backlog)), addressed=(), reason=BACKLOG))
        self._task = asyncio.create_task(self._loop(), name=f"mind:{self.name}")
        self._wire_judge()
        self._arm()

    # the seam the supervisor calls ------------------------------------------------

    def offer(self, stimulus: Event, facts: Facts) -> Decision:
        """A stimulus was stored: the gate decides whether it wakes the mind, now or later."""
        now = self._clock.now()
        was_asleep = self.gate.sleeping(now)
        decision, delivery = self.gate.offer(stimulus.id, facts, now)
        self.stats.decided(decision.verdict.word)
        held = decision.verdict.held
        self._untaken[stimulus.id] = None if held is None else HeldBack(stimulus.id, held, decision.rule)
        self._operators[stimulus.id] = operator_of(stimulus)
        if was_asleep and not self.gate.sleeping(now):
            # A privileged author ended the sleep: stored, so it does not come back at a restart.
            self._write(lambda db: gate_sleep.record_woke(db, self.name, actor=facts.author, cause=stimulus.id, now=now))
        if delivery is not None:
            self._deliver(delivery)
        self._arm()
        return decision

    def untaken(self, stimulus: int) -> tuple[bool, HeldBack | None]:
        """Whether no turn has taken `stimulus` yet, and what the gate said if it did not wake the mind."""
        return stimulus in self._untaken, self._untaken.get(stimulus)

    def offer_failed(self, stimulus: Event) -> None:
        """The gate raised on a stored stimulus: it wakes the mind now (failing open), so it is never left unperceived."""
        self._untaken[stimulus.id] = None
        self._operators[stimulus.id] = operator_of(stimulus)
        self._deliver(Delivery(rule=None, stimuli=(stimulus.id,), addressed=(), reason=GATE_FAILED))

    def rules_changed(self, stored: StoredRules) -> None:
        """The mind's rules were written (API, config or its own tools): the next stimulus meets them."""
        self.gate.set_rules(stored)
        self._arm()
        self._maybe_judge()

    def config_changed(self) -> None:
        """The config was reloaded: judging is wired again as it says, so gate-status shows it at once.

        Batches held for a judge that is now off go as a debounce would, now rather than at the next timer.
        """
        if not self._closed:
            self._fire()

    def slept(self, until: float, note: str | None) -> None:
        """The mind was put to sleep (stored by `noemad.gate.sleep`): stimuli are stored and reach no rule.

        Judge calls in flight stop, as at a pause: a verdict must not wake a
        sleeping mind, and one reached before the sleep is stale after it.
        Their batches are held and judged once the mind wakes.
        """
        self.gate.sleep(until, note)
        self._stop_judging()
        self._arm()

    def woke(self) -> None:
        """The mind's sleep was ended (stored by `noemad.gate.sleep`): what it stored meanwhile is delivered at once."""
        self.gate.wake_up(self._clock.now())
        self._arm()

    def pause(self) -> None:
        """Take no new turns (a running one finishes); stimuli keep being stored and offered; judge calls stop."""
        self.paused = True
        self._stop_judging()

    def resume(self) -> None:
        """Take turns again, starting with whatever the gate delivered during the pause."""
        self.paused = False
        self._wake.set()
        self._maybe_judge()

    @property
    def idle(self) -> bool:
        """No turn runs, none is about to, and no delivery of the gate is due."""
        due = self.gate.next_due()
        waiting = self._wake.is_set() and not self.paused
        judging = bool(self._judge_tasks) and not self._closed
        writing = bool(self._writes)  # a judge_verdict (or sleep bookkeeping) not yet committed
        return not self.turn_running and not waiting and not judging and not writing and not (
            due is not None and due <= self._clock.now() and not self._closed
        )

    def close(self) -> None:
        """Shutdown has begun: deliver nothing more (a running turn may finish)."""
        self._closed = True
        self._stop_judging()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._retry_timer is not None:
            self._retry_timer.cancel()  # a restart finds the stimuli pending
            self._retry_timer = None

    async def stop(self, timeout: float) -> None:
        """Let a running turn finish within `timeout` seconds of the clock, then cancel the loop."""
        self.close()
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
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

    # delivery -----------------------------------------------------------------------

    def _deliver(self, delivery: Delivery) -> None:
        """Hand a delivery to the loop, or to the gate to hold while a turn runs, the mind is paused or it sleeps.

        A delivery that finds others held goes with them as one turn: the
        sleep's end takes what waited through the sleep.
        """
        if self._closed:
            return
        if self.turn_running or self.paused or self._ready is not None or self.gate.sleeping(self._clock.now()):
            self.gate.hold(delivery)
        elif self.gate.holding:
            self.gate.hold(delivery)
            self._ready = self.gate.release()
        else:
            self._ready = delivery
        self._wake.set()

    def _arm(self) -> None:
        """Have the timer fire at the gate's next due time.

        Re-armed only when that time comes sooner: a debounce pushed back by
        each stimulus would otherwise cost a task per stimulus. A timer that
        fires early finds nothing due and arms for the new time.
        """
        due = self.gate.next_due()
        if due is None or self._closed or (self._armed is not None and self._armed <= due):
            return
        if self._timer is not None:
            self._timer.cancel()
        self._armed = due
        self._timer = asyncio.get_running_loop().create_task(self._fire_at(due), name=f"gate:{self.name}")

    async def _fire_at(self, due: float) -> None:
        await self._clock.sleep(due - self._clock.now())
        self._timer = None
        self._armed = None
        self._fire()

    def _fire(self) -> None:
        """Deliver what is due now, judging wired as the config says, and arm for what comes next."""
        self._wire_judge()
        for delivery in self.gate.due(self._clock.now()):
            self._deliver(delivery)
        self._arm()
        self._maybe_judge()

    def _write(self, job: Callable[[Database], Any]) -> None:
        """Run a writer job off the caller's path (the offer is synchronous); its failure is logged."""

        async def run() -> None:
            try:
                await self._store.writer.run(job)
            except Exception:
                log.exception("mind %s: could not record its gate state", self.name)

        self._spawn(run())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        self._spawned(asyncio.get_running_loop().create_task(coro))

    def _spawned(self, task: asyncio.Task[Any]) -> None:
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    # turns ----------------------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.paused or self._closed:
                continue  # resume() wakes the loop again; after close nothing starts
            if self.gate.sleeping(self._clock.now()):
                # Nothing starts a turn while the mind sleeps (what was held for a turn that ran into the sleep,
                # too): its end, or a privileged author, delivers what waits.
                if self._ready is not None:
                    self.gate.hold(self._ready)
                    self._ready = None
                continue
            delivery, self._ready = self._ready, None
            if delivery is None:
                delivery = self.gate.release()
            if delivery is None:
                continue
            if not delivery.self_wake and not delivery.judged and not (
                any(s in self._untaken for s in delivery.stimuli) if delivery.stimuli else self._untaken
            ):
                self._maybe_judge()
                continue  # a turn took its stimuli meanwhile (or a sleep ended with nothing stored): it wakes nothing
            self.turn_running = True
            self._turn_over.clear()
            self._stop_judging()  # no verdict is reached across the mind's own turn
            self._completed = False
            self.stats.wakes += 1
            if self.on_turn:
                self.on_turn(self.name, True)
            began = time.perf_counter()  # a duration for the metrics, never a timer: the clock is not needed
            try:
                await self._turn(delivery)
            except asyncio.CancelledError:
                raise
            except Exception:
                self.stats.turned("failed", time.perf_counter() - began)
                log.exception("turn of mind %s failed; its stimuli stay stored and are retried", self.name)
            else:
                self.stats.turned("ok", time.perf_counter() - began)
            finally:
                self.turn_running = False
                if self.on_turn:
                    self.on_turn(self.name, False)
                self.gate.turn_ended(self._completed)
                self._turn_over.set()
                self._wake.set()  # what the gate held during the turn goes next
                if self.on_turn_done:
                    self.on_turn_done(self.name)
                self._maybe_judge()

    def _with_held(self, delivery: Delivery) -> Delivery:
        """`delivery` with the wakes the gate held while its turn waited for the writer: this turn wakes for them too.

        Merged, what is held is released as one after the turn anyway; a judge's
        REPLY or a self-wake among it stays held for that turn of its own.
        """
        held = self.gate.release()
        if held is None:
            return delivery
        if held.judged or held.self_wake:
            self.gate.hold(held)
            return delivery
        return delivery.joined(held)

    async def _turn(self, delivery: Delivery) -> None:
        """Hand the next turn, over every stimulus not yet taken, to `noemad.turn`.

        The turn first lets the writer commit what was asked of it before the
        turn began: stimuli stored meanwhile are in this turn rather than each
        waking one of their own (a burst is answered once). While a catch-up
        brings the mind more stimuli (it is under load), the turn catches up
        again, `CATCH_UPS` times at most; an idle writer answers the first at once.
        """
        await self._catch_up()
        delivery = self._with_held(delivery)
        now = self._clock.now()
        stimuli = sorted(self._untaken)
        held = tuple(h for h in self._untaken.values() if h is not None)
        taken, self._untaken = self._untaken, {}
        cancelled = self.gate.turn_started(now)
        self.gate.taken(stimuli)
        self._arm()
        cause: int | None = None
        answer: int | None = None
        if delivery.self_wake:
            cause, answer = self._self_wake(delivery, now)
        elif cancelled:
            self._write(lambda db: gate_sleep.record_self_wake_cancelled(db, self.name, now=now))
        if delivery.judged and answer is None:
            # The judge said REPLY: the turn answers its batch, even when an earlier turn took those stimuli.
            message = answered(self._store.reader(), list(delivery.stimuli))
            answer = message.id if message is not None else None
        self._cycles += 1
        wake = Wake(
            reason=delivery.reason,
            rule=delivery.rule,
            delivered=tuple(delivery.stimuli),
            addressed=tuple(delivery.addressed),
            cause=cause,
            held_back=held,
        )
        # The settings are read now: a change made since the last turn applies from this one.
        turn = Turn(mind=self.name, number=self._cycles, stimuli=stimuli, wake=wake, settings=self._settings(), answer=answer)
        # The calls of a turn an operator's stimulus woke are recorded as theirs, as a job's are.
        behalf = ON_BEHALF_OF.set(self._operator_of(delivery))
        for stimulus in stimuli:
            self._operators.pop(stimulus, None)
        try:
            result = await run_turn(self._store, self._clock, self._gateway, turn)
        except Exception as exc:
            self._failed(taken, exc)
            raise
        finally:
            ON_BEHALF_OF.reset(behalf)
        if self.retry is not None:
            log.info("mind %s: a turn succeeded after %d failed", self.name, self.retry.attempt)
            self.retry = None
        await self._after(result)

    async def _catch_up(self) -> None:
        """Let the writer commit what was asked of it; again while that brings the mind stimuli, `CATCH_UPS` rounds at most.

        Under load each round is one turn of the writer (its stimuli go first), and
        a turn's work is much the same for 13 stimuli as for 23: in the ingest
        bench (a full cycle per stimulus) a turn took 13-16 stimuli with one round,
        17-20 with three and 21-25 with six, each step a fifth less CPU per stimulus.
        Without load nothing arrives during the first round, and the turn starts.
        """
        for _ in range(CATCH_UPS):
            untaken = len(self._untaken)
            await self._store.writer.caught_up()
            await asyncio.sleep(0)  # the stimuli committed with it are offered (their callers resume) before they are counted
            if len(self._untaken) == untaken:
                return

    def _operator_of(self, delivery: Delivery) -> str | None:
        """The operator whose stimulus woke this turn (the newest, if several did), or None.

        An operator's own stimulus is theirs; a message they stored (`say --from alice`) is too.

        Only the stimuli that asked for the wake count: an operator's goal
        held by a rule and taken along by someone else's message caused nothing.
        """
        if delivery.self_wake or not delivery.stimuli:
            return None
        newest_first = sorted(delivery.stimuli, reverse=True)
        if all(s in self._operators for s in newest_first):  # offered since this actor started: known without a read
            return next((op for s in newest_first if (op := self._operators[s]) is not None), None)
        woke = get_events(self._store.reader(), delivery.stimuli)  # a backlog from before a restart, or a retried turn's
        return next((op for _, e in sorted(woke.items(), reverse=True) if (op := operator_of(e)) is not None), None)

    def _failed(self, taken: dict[int, HeldBack | None], exc: Exception) -> None:
        """A turn failed: what it took and did not perceive is untaken again, and retried after a backoff."""
        reader = self._store.reader()
        self._cycles = count_events(reader, self.name, "cycle_started")  # the failed turn's number is free again, unless it was written
        unperceived = set(without_episode(reader, self.name, STIMULUS_KINDS)).intersection(taken)
        for stimulus in sorted(unperceived):
            self._untaken.setdefault(stimulus, taken[stimulus])
        self._untaken = dict(sorted(self._untaken.items()))
        if not unperceived or self._closed:
            return
        now = self._clock.now()
        attempt = (self.retry.attempt if self.retry else 0) + 1
        failed = TurnFailed(tuple(sorted(unperceived)), attempt, now + backoff(attempt), str(exc) or type(exc).__name__)
        self.retry = failed
        self.gate.set_retry(failed.retry_at, len(failed.stimuli))
        if self._retry_timer is not None:
            self._retry_timer.cancel()
        self._retry_timer = asyncio.get_running_loop().create_task(self._retry_at(failed), name=f"retry:{self.name}")

        async def record() -> None:
            try:
                await self._store.writer.run(lambda db: record_turn_failed(db, self.name, failed, now))
            except Exception as why:  # a full disk fails this write too: the log and `status` still say it
                log.warning("mind %s: could not record its failed turn: %s", self.name, why)

        self._spawn(record())

    async def _retry_at(self, failed: TurnFailed) -> None:
        await self._clock.sleep(failed.retry_at - self._clock.now())
        self._retry_timer = None
        self.gate.set_retry(None)  # delivered now: held or run, it is no longer to come
        self._deliver(Delivery(rule=None, stimuli=failed.stimuli, addressed=(), reason=RETRY_REASON))

    def _self_wake(self, delivery: Delivery, now: float) -> tuple[int | None, int | None]:
        """The self_wake_set event that caused a self-wake turn, and the message it skipped (to answer now)."""
        cause = delivery.cause
        self._write(lambda db: gate_sleep.record_self_wake_fired(db, self.name, now=now))
        if cause is None:
            return None, None
        return cause, gate_sleep.SelfWakeSet.of(get_event(self._store.reader(), cause)).message

    async def _after(self, result: TurnResult) -> None:
        """What the turn's tools changed: the rules the gate reads, the self-wake it sets; whether it answered."""
        # A reply_failed turn did not answer: a judge's REPLY it carried stays unanswered (R1-2).
        self._completed = result.reply is None or result.reply.kind != "reply_failed"
        if result.rules_changed:
            self.rules_changed(stored_rules(self._store.reader(), self.name))
        skipped = result.skipped
        if skipped is not None and skipped.wake_in is not None:
            now = self._clock.now()
            at = now + skipped.wake_in
            event = await self._store.writer.run(
                lambda db: gate_sleep.set_self_wake(db, self.name, at=at, message=skipped.cause, now=now)
            )
            self.gate.set_self_wake(at, event.id)
            self._arm()

    # judging ------------------------------------------------------------------------

    def _wire_judge(self) -> None:
        """Tell the gate whether judge rules are judged now, and if not, why (the config may have been reloaded)."""
        settings = self._gateway.config().gate.judge
        notes: list[str] = []
        if settings.budget_note is not None:
            notes.append(settings.budget_note)
            if not self._budget_logged:
                self._budget_logged = True
                log.warning("mind %s: %s", self.name, notes[-1])
        if not settings.enabled:
            self.gate.set_judging(False, "judging is off on this host ([gate.judge] enabled = false)", notes)
        elif self.judge is None or not self._gateway.configured(self.name, "judge"):
            self.gate.set_judging(False, "no judge model is configured (the judge role in [models] has none)", notes)
        else:
            self.gate.set_judging(True, None, notes)

    def _maybe_judge(self) -> None:
        """Start the judge calls whose batches wait, if the mind is free: no turn running or about to, not paused, not closing."""
        if self._closed or self.paused or self.turn_running or self._ready is not None or self.gate.holding:
            return
        self._wire_judge()
        if self.judge is None:
            return
        now = self._clock.now()
        for start in self.gate.to_judge(now):
            request = self._request(start, now)
            task = asyncio.get_running_loop().create_task(self._ask(start, request), name=f"judge:{self.name}:{start.rule}")
            self._judge_tasks[start.rule] = task
        self._arm()

    def _request(self, start: JudgeStart, now: float) -> JudgeRequest:
        return JudgeRequest(
            mind=self.name,
            rule=start.rule,
            instructions=start.instructions,
            batch=start.batch,
            addressed=start.addressed,
            unanswered=start.unanswered,
            last_turn_failed=start.last_turn_failed,
            upcoming=tuple(self.gate.upcoming_wakes(now, exclude=start.rule)),
        )

    async def _ask(self, start: JudgeStart, request: JudgeRequest) -> None:
        """One judge call; its verdict goes to the gate (a stopped call's is told apart by its token)."""
        assert self.judge is not None
        try:
            outcome = await self.judge.decide(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the seam says it never raises; a judge that does fails open like any failure
            log.exception("mind %s: the judge of rule %s raised", self.name, start.rule)
            outcome = JudgeOutcome(None, f"the judge raised {type(exc).__name__}", failed=True)
        finally:
            if self._judge_tasks.get(start.rule) is asyncio.current_task():
                del self._judge_tasks[start.rule]
        self._settle(start.rule, start.token, outcome)

    def _settle(self, rule: str, token: int, outcome: JudgeOutcome) -> None:
        now = self._clock.now()
        delivery, record = self.gate.verdict(rule, token, outcome, now, self._gateway.config().gate.judge.on_error)
        if record is not None:
            self._write(lambda db: verdicts.record_verdict(db, self.name, record, now))
        if delivery is not None:
            self._deliver(delivery)
        self._arm()
        self._maybe_judge()

    def _stop_judging(self) -> None:
        """A turn starts, the mind is paused or shutdown begins: stop every judge call; their batches are held."""
        self.gate.stop_judging()
        for task in self._judge_tasks.values():
            task.cancel()
            self._spawned(task)  # awaited at stop, so none outlives the loop
        self._judge_tasks.clear()
