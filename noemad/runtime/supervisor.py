"""The supervisor: the daemon's engine, between the API and the store.

It owns the store, the clock, the live config, the event bus and one actor
per mind. API routes call it; it never knows about HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlite_utils import Database

from noemad.background.jobs import running_job
from noemad.background.runner import JobRunner
from noemad.background.scheduler import Scheduler
from noemad.clock import Clock
from noemad.cognition import intake
from noemad.cognition.notifications.table import daemon_notice
from noemad.config.files import FileStamp, LoadedConfig
from noemad.config.mind import MindSettings
from noemad.config.schema import Config
from noemad.errors import Conflict, MindNotFound, ShuttingDown
from noemad.events import Event, append
from noemad.gate.judge.call import ReplyJudge
from noemad.gate.judge.port import Judge
from noemad.minds import Mind, change_settings, check_name, create_mind, delete_mind, get_mind, list_minds, set_mode
from noemad.models import ModelGateway
from noemad.operator import ACTOR as OPERATOR, Operator
from noemad.paths import Paths
from noemad.rules.match import Facts, facts_of
from noemad.rules.table import seed_from_config
from noemad.runtime.actor import GATE_FAILED, MindActor, mind_gate, pending_stimuli
from noemad.runtime.archiving import Archiving
from noemad.runtime.asof_reads import AsOfReads
from noemad.runtime.bus import FOLLOW_PAGE, EventBus, Following
from noemad.runtime.cognition_edits import CognitionEdits
from noemad.runtime.connector_intake import ConnectorIntake
from noemad.runtime.counts import Counts
from noemad.runtime.event_reads import EventReads
from noemad.runtime.gating import Gating
from noemad.runtime.ingested import GateDecision, Ingested, StimulusTurn
from noemad.runtime.job_control import JobControl
from noemad.runtime.loglevel import LogLevel
from noemad.runtime.moving import Moving
from noemad.runtime.reads import Reads
from noemad.runtime.running_config import RunningConfig
from noemad.stimuli import Stimulus, stored_by
from noemad.store import Store
from noemad.store.backup import Snapshot, snapshot
from noemad.store.replica.child import Replicator, ReplicaStatus
from noemad.wire import extend

log = logging.getLogger("noemad")


class Supervisor:
    """Holds the minds of one daemon and everything they run on.

    Its parts, each in its own module: `running` (the config, each mind's
    stored settings, the reload state), `reads`, `asof` and `event_reads`
    (what the API reads), `gating` (wake rules, gate state, sleep),
    `archiving`, `moving` (export and import), `connector_intake` (what
    connectors bring in and take back), `edits` (an operator's edits of a
    mind's cognition), `job_control`; `counts` (events counted as they
    commit). The status views are `noemad.runtime.status`'s.
    """

    def __init__(self, paths: Paths, loaded: LoadedConfig, clock: Clock, store: Store) -> None:
        self.paths = paths
        self.clock = clock
        self.store = store
        self.started_at = clock.now()
        self._started_mono = clock.monotonic()
        self.running = RunningConfig(loaded, self.started_at)
        self.actors: dict[str, MindActor] = {}
        self.counts = Counts()
        self.stopping = False
        self.bus: EventBus | None = None
        # Raises ConfigError for a provider that cannot be built (e.g. an unreadable script).
        self.gateway = ModelGateway(
            lambda: self.config, clock, store.writer, paused=self._is_paused, stopping=lambda: self.stopping
        )
        self._reply_judge: ReplyJudge | None = None
        self.jobs = JobRunner(store, clock, self.gateway, lambda: self.config)
        self.scheduler = Scheduler(self.jobs, store, clock, lambda: self.config)
        self._scheduler_task: asyncio.Task[None] | None = None
        self._archive_task: asyncio.Task[None] | None = None
        running = self.running  # the parts read the config from it at each call: a reload replaces it
        self.reads = Reads(store, running)
        self.asof = AsOfReads(store, clock, running)
        self.gating = Gating(store, clock, self.actors, self.gateway, running, self._check_open)
        self.archiving = Archiving(store, clock, paths, running, self._check_open)
        self.event_reads = EventReads(store, self.archiving, running)
        self.moving = Moving(store, clock, paths, self._check_open, self._arrived)
        self.connector_intake = ConnectorIntake(store, clock, self.actors, self._offer, self._check_open)
        self.edits = CognitionEdits(store, clock, self._check_open)
        self.job_control = JobControl(store, clock, self.jobs, running, self._check_open)
        level = loaded.config.daemon.log_level
        self.log_level = LogLevel(level, "noemad.toml" if "log_level" in loaded.config.daemon.model_fields_set else "default")
        self.reloader: Callable[[], Awaitable[bool]] | None = None  # the daemon's config reload (None in process: no file watch)
        # What the edges above (the connectors) listen for, without this layer knowing them: the minds or the
        # config they run with changed (a reload applied, a mind created or deleted), a mind's turn starting
        # (True) or ending (False). Called on the loop; a listener must not block.
        self.minds_listeners: list[Callable[[], None]] = []
        self.turn_listeners: list[Callable[[str, bool], None]] = []
        self.replica: Replicator | None = None  # Litestream, when [replica] is set (the daemon makes it before the store opens)

    @property
    def stopping(self) -> bool:
        """Whether shutdown has begun: no new work is taken."""
        return self._stopping

    @stopping.setter
    def stopping(self, value: bool) -> None:
        # Set on the loop when shutdown begins, before the HTTP server drains: from then on the
        # gates deliver nothing (a batch whose time comes meanwhile stays stored for the next start).
        self._stopping = value
        if value:
            for actor in self.actors.values():
                actor.close()

    @property
    def config(self) -> Config:
        """The running config (`running.config`): the file's, with each mind's stored settings over its [minds.NAME] table."""
        return self.running.config

    def settings_of(self, mind: str) -> MindSettings:
        """The settings `mind` runs with now (`running.settings_of`; read at each turn: a change applies from the next one)."""
        return self.running.settings_of(mind)

    # life cycle -------------------------------------------------------

    async def start(self) -> None:
        """Start the bus and an actor per stored mind, resuming untaken stimuli."""
        self.bus = EventBus(asyncio.get_running_loop())
        self.bus.listen(self.counts.committed)
        self.store.writer.on_commit(self.bus.publish_threadsafe)
        db = self.store.reader()
        self.counts.load(db)
        await self.jobs.recover()  # before the actors: a mind left `consolidating` by a crash is idle again
        minds = list_minds(db)
        self.running.take_stored(minds)
        await self._seed_rules([m.name for m in minds])
        for mind in minds:
            cycles, backlog = pending_stimuli(db, mind.name)
            self._start_actor(mind, cycles, backlog, db)
        self._scheduler_task = asyncio.get_running_loop().create_task(self.scheduler.run(), name="scheduler")
        self._archive_task = asyncio.get_running_loop().create_task(self.archiving.daily(), name="archive")
        if self.replica is not None:  # the store is open and migrated: Litestream may read it now
            self.store.writer.on_commit(self.replica.committed)
            await self.replica.start()

    async def stop(self) -> None:
        """Finish or abort running turns, then flush and close the store."""
        self.stopping = True  # the gates deliver nothing more
        for task in (self._scheduler_task, self._archive_task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self.jobs.stop()
        timeout = self.config.daemon.shutdown_timeout
        await asyncio.gather(*(actor.stop(timeout) for actor in self.actors.values()))
        if self.bus:
            self.bus.close()
        await self.gateway.aclose()
        await asyncio.to_thread(self.store.close)
        if self.replica is not None:  # after the last commit: Litestream's own stop syncs it to the replica
            await self.replica.stop()

    async def _seed_rules(self, names: Sequence[str]) -> None:
        """Seed the wake rules of minds never seeded from their [minds.NAME.gate] (before their actors read them)."""
        gates = {n: g for n in names if (g := self.running.loaded.config.minds.get(n, MindSettings()).gate) is not None}
        if gates:
            now = self.clock.now()
            await self.store.writer.run(lambda db: [seed_from_config(db, n, g, now=now) for n, g in gates.items()])

    def _is_paused(self, mind: str) -> bool:
        actor = self.actors.get(mind)
        return bool(actor and actor.paused)

    def judge_for(self, mind: str) -> Judge | None:
        """The reply judge a mind's actor calls about its judge rules' batches: one for every mind.

        It calls the `judge` role through the gateway; whether judge rules are
        judged at all ([gate.judge] enabled, a judge model) the actor asks at
        each batch, so a reload needs no new judge.
        """
        if self._reply_judge is None:
            self._reply_judge = ReplyJudge(self.store, self.clock, self.gateway, self.settings_of)
        return self._reply_judge

    def _start_actor(self, mind: Mind, cycles: int = 0, backlog: list[int] | None = None, db: Database | None = None) -> None:
        settings = functools.partial(self.settings_of, mind.name)
        privileged = frozenset(self.config.gate.privileged)
        judge_model = self.gateway.model_for(mind.name, "judge")
        gate = mind_gate(db or self.store.reader(), mind.name, privileged, self.clock.now(), judge_model)
        actor = MindActor(
            mind.name, self.store, self.clock, self.gateway, settings, gate, cycles, paused=mind.mode == "paused",
            judge=self.judge_for(mind.name),
        )
        actor.on_turn = self._turn_changed
        self.actors[mind.name] = actor
        actor.start(backlog)

    def _arrived(self, mind: Mind) -> None:
        """Take a mind imported into the store: count its events, take its settings, start its actor, tell the listeners."""
        db = self.store.reader()
        self.counts.load_mind(db, mind.name)
        self.running.take_stored([mind])
        cycles, backlog = pending_stimuli(db, mind.name)
        self._start_actor(mind, cycles, backlog, db)
        self._minds_changed()

    def _minds_changed(self) -> None:
        for listener in list(self.minds_listeners):
            try:
                listener()
            except Exception:  # a listener's bug must not fail the reload or the request that changed the minds
                log.exception("a listener of the minds' changes failed")

    def _turn_changed(self, mind: str, running: bool) -> None:
        for listener in list(self.turn_listeners):
            try:
                listener(mind, running)
            except Exception:  # a listener's bug must not end the mind's turn loop
                log.exception("mind %s: a turn listener failed", mind)

    def _check_open(self) -> None:
        if self.stopping:
            raise ShuttingDown("noemad is stopping and takes no new work; retry once it is back up")

    # minds --------------------------------------------------------------

    async def create_mind(self, name: str, settings: dict[str, Any], actor: str = "operator") -> Mind:
        self._check_open()
        check_name(name)
        now = self.clock.now()
        gate = self.running.loaded.config.minds.get(name, MindSettings()).gate

        def create(db: Database) -> Mind:
            created = create_mind(db, name, settings, now, actor)
            seed_from_config(db, name, gate, now=now)  # in the same job: the mind never runs without its seeded rules
            return created

        mind = await self.store.writer.run(create)
        self.running.take_stored([mind])
        self._start_actor(mind)
        self._minds_changed()
        return mind

    async def change_settings(self, name: str, patch: dict[str, Any], actor: str = "operator") -> Mind:
        """Merge `patch` into a mind's stored settings (null unsets a key), recorded as `settings_changed`.

        The mind keeps its history; its next turn runs with the new settings.
        """
        self._check_open()
        get_mind(self.store.reader(), name)
        now = self.clock.now()
        mind = await self.store.writer.run(lambda db: change_settings(db, name, patch, now, actor))
        self.running.take_stored([mind])
        return mind

    async def delete_mind(self, name: str, confirm: str) -> int:
        self._check_open()
        db = self.store.reader()
        get_mind(db, name)
        for kind in ("reflection", "consolidation"):
            job = running_job(db, name, kind)
            if job is not None:
                raise Conflict(
                    f"mind {name!r} has {kind} job {job.id} running; wait for it to end (`noemactl jobs show {job.id}`) and remove the mind then"
                )
        removed = await self.store.writer.run(lambda db: delete_mind(db, name, confirm))
        actor = self.actors.pop(name, None)
        if actor:
            await actor.stop(0)
        self.counts.forget(name)
        self.running.take_stored(forget=name)
        self._minds_changed()
        if self.bus:
            self.bus.close_mind(name)
        log.info("deleted mind %s and its %d events", name, removed)
        return removed

    async def set_paused(self, name: str, paused: bool, actor: str = "operator") -> Mind:
        """Pause a mind (no turns, no auxiliary model calls; stimuli still stored) or resume it."""
        self._check_open()
        mind_actor = self.actors.get(name)
        if mind_actor is None:
            get_mind(self.store.reader(), name)
        mode, reason = ("paused", "paused by an operator") if paused else ("idle", "resumed by an operator")
        now = self.clock.now()

        def job(db: Database) -> Mind:
            if not paused and get_mind(db, name).mode != "paused":
                return get_mind(db, name)  # resuming a mind that is not paused (e.g. consolidating) changes nothing
            return set_mode(db, name, mode, now, actor, reason)

        mind = await self.store.writer.run(job)
        if mind_actor is not None:
            mind_actor.pause() if paused else mind_actor.resume()
        return mind

    # replica ------------------------------------------------------------

    def replica_trouble(self, key: str, sentence: str) -> None:
        """Raise the replica's trouble as a notification of every mind (each mind's store is at stake); called on the loop."""
        if self.stopping or self.replica is None:
            return
        now = self.clock.now()
        url = self.replica.settings.url
        cooldowns = {name: self.settings_of(name).notify_cooldown for name in self.actors}

        def job(db: Database) -> None:
            for name, cooldown in cooldowns.items():
                daemon_notice(
                    db, mind=name, rule="replica", key=f"replica:{key}", title=f"replica {key}: {sentence}",
                    values={"state": key, "url": url}, cooldown=cooldown, now=now,
                )

        if cooldowns:
            self.store.writer.submit(job).add_done_callback(
                lambda done: log.error("replica: could not store its notification: %s", done.exception()) if done.exception() else None
            )

    async def replica_status(self) -> ReplicaStatus | None:
        """How the replica is doing now (Litestream asked through its control socket); None without [replica]."""
        return None if self.replica is None else await self.replica.refresh()

    # backup -------------------------------------------------------------

    async def backup(self) -> Snapshot:
        """A verified snapshot of the store in the data directory (the caller sends, then removes it); none while stopping."""
        self._check_open()  # a stopping daemon takes no new work
        dest = self.paths.data_dir / f".backup-{secrets.token_hex(8)}.sqlite"
        return await asyncio.to_thread(snapshot, self.store.path, dest)

    # stimuli and events --------------------------------------------------

    async def ingest(self, mind: str, stimulus: Stimulus, operator: Operator | None = None) -> Ingested:
        """Store a stimulus (answered once committed), then offer it to the mind's gate; the answer carries its decision.

        An operator's stimulus (a correction, a goal, a prediction, an outcome)
        names `operator` as its actor; a message, observation or assertion names its author or
        source, and keeps the operator whose connection stored it (when the socket told who) beside.
        """
        self._check_open()
        actor = self.actors.get(mind)
        if actor is None:
            get_mind(self.store.reader(), mind)  # raises MindNotFound with its hint
            raise MindNotFound(f"mind {mind!r} is not running")
        if operator is not None and operator.user is not None:
            stimulus = stored_by(stimulus, operator.actor)  # a message keeps its author and who stored it
        draft = stimulus.draft(mind)
        if operator is not None and draft.actor == OPERATOR:
            draft = dataclasses.replace(draft, actor=operator.actor)
        now = self.clock.now()

        def store(db: Database) -> tuple[Event, Facts]:
            intake.check(db, mind, stimulus)
            event = append(db, draft, now)
            return event, facts_of(db, event, mind, stimulus)  # what the rules ask, read while the writer has the rows at hand

        event, facts = await self.store.writer.run(store, first=True)  # ahead of turns: a client waits on it
        return self._offer(actor, event, facts)

    def _offer(self, actor: MindActor, event: Event, facts: Facts) -> Ingested:
        """Offer a committed stimulus to its mind's gate; the event with what the gate said."""
        try:
            decision = actor.offer(event, facts)
            verdict, rule, reason, due = decision.verdict.value, decision.rule, decision.reason, decision.due
        except Exception:
            # Committed: the answer is 201 whatever the gate does (a 500 would make the client store it twice),
            # and a stimulus the gate could not judge wakes the mind rather than wait unperceived.
            log.exception("mind %s: the gate failed on stimulus %d; it wakes the mind", event.mind, event.id)
            actor.offer_failed(event)
            verdict, rule, reason, due = "wake", None, GATE_FAILED, None
        gate = GateDecision(verdict, rule, reason, due, actor.paused, self.gateway.configured(event.mind, "respond"))  # type: ignore[arg-type]
        return extend(event, Ingested, gate=gate)

    async def stimulus_turn(self, event_id: int) -> StimulusTurn:
        """Where a stimulus is on its way to a turn: waiting (and what the gate said), or taken; and whether its mind drafts replies.

        The event is read in a worker thread; the actor's state only here, on the loop that changes it.
        """
        event = await self.store.off_loop(lambda: self.event_reads.event(event_id))
        actor = self.actors.get(event.mind)
        waiting, held = actor.untaken(event.id) if actor is not None else (False, None)
        return StimulusTurn(
            event=event.id,
            mind=event.mind,
            waiting=waiting,
            verdict=held.verdict if held is not None else None,
            rule=held.rule if held is not None else None,
            paused=bool(actor is not None and actor.paused),
            respond_model=self.gateway.configured(event.mind, "respond"),
        )

    def follow(self, mind: str, since: int | None = None) -> Following:
        """Follow a mind's events: those after id `since` first (none when None), then each new one.

        Call it on the loop, after checking the mind exists (`mind`), and
        `close()` the follower when done.
        """
        assert self.bus is not None
        return Following(
            self.bus, mind, since, self.counts.last_event_id,
            lambda after: self.store.off_loop(lambda: self.event_reads.events(mind, [], after, FOLLOW_PAGE)),
        )

    @property
    def uptime(self) -> float:
        """Seconds since the daemon started, on its clock."""
        return round(self.clock.monotonic() - self._started_mono, 3)

    # config reload ---------------------------------------------------------

    def apply_config(self, loaded: LoadedConfig) -> None:
        """Take a validated config as the running one; `ConfigError` if its provider cannot be built."""
        if loaded.config.replica != self.running.loaded.config.replica:
            # Litestream runs with the settings it was started with: a store's replica does not move under it.
            log.warning("[replica] changed in %s: it takes effect when noemad restarts", loaded.source)
        provider = self.gateway.prepare(loaded.config)
        if provider is not False:
            swap = asyncio.get_running_loop().create_task(self.gateway.swap(loaded.config, provider))
            swap.add_done_callback(lambda _: self._config_changed())  # a judge model comes or goes with the provider
        self.running.apply(loaded, self.clock.now())
        self._config_changed()
        self._minds_changed()

    def _config_changed(self) -> None:
        """Tell every actor the config changed: what gate-status says of judging follows a reload at once."""
        for actor in list(self.actors.values()):
            actor.config_changed()

    def refuse_config(self, error: str, stamp: FileStamp | None) -> None:
        """Keep the running config and remember why the new one was refused."""
        self.running.refuse(error, stamp, self.clock.now())
