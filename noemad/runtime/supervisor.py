"""The supervisor: the daemon's engine, between the API and the store.

It owns the store, the clock, the live config, the event bus and one actor
per mind. API routes call it; it never knows about HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from noemad import __version__
from noemad.clock import Clock, ManualClock, iso
from noemad.config.files import FileStamp, LoadedConfig
from noemad.config.schema import Config, MindSettings, with_stored
from noemad.errors import Conflict, EventNotFound, MindNotFound, ShuttingDown
from noemad.events import Event, EventDraft, EventQuery, append, redact, archived_counts, check_kinds, get_event, latest_events, list_events, query_events
from noemad.operator import ACTOR as OPERATOR, Operator
from noemad.minds import Mind, change_settings, check_name, create_mind, delete_mind, get_mind, list_minds, set_mode
from noemad.cognition import intake
from noemad.cognition.trust import set_trust
from noemad.cognition.memory.model import Memory
from noemad.cognition.memory.reads import episodes_of, get_memory
from noemad.cognition.memory.writing import retract, write_memory
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.narrative.stored import narrative_json
from noemad.cognition.notifications import Notification, ack, daemon_notice, get_notification
from noemad.background.jobs import Job, pause_schedule, paused_schedules, running_job
from noemad.background.runner import JobRunner
from noemad.background.scheduler import MindNews, Scheduler, news
from noemad.models import ModelGateway
from noemad.ledger import usage
from noemad.paths import Paths
from noemad.rules.match import Facts, facts_of
from noemad.rules.table import seed_from_config
from noemad.gate.judge.port import Judge
from noemad.gate.judge.call import ReplyJudge
from noemad.runtime.actor import GATE_FAILED, MindActor, mind_gate, pending_stimuli
from noemad.runtime.bus import FOLLOW_PAGE, EventBus, Following
from noemad.archive.cuts import archived_total
from noemad.runtime.archiving import Archiving
from noemad.runtime.moving import Moving
from noemad.runtime.gating import Gating
from noemad.runtime.ingested import GateDecision, Ingested, StimulusTurn
from noemad.runtime.loglevel import LogLevel
from noemad.runtime.asof_reads import AsOfReads
from noemad.runtime.reads import Reads
from noemad import inbox
from noemad.inbox import Inbound
from noemad.stimuli import Stimulus, stored_by
from noemad.store import Store
from noemad.store.backup import Snapshot, snapshot
from noemad.store.replica.child import Replicator, ReplicaStatus
from noemad.turn.govern import GovernanceRecord
from noemad.timeline import Timeline, WalkLimits, walk
from noemad.wire import extend

log = logging.getLogger("noemad")
WARNINGS_SHOWN = 10  # newest metacognition warnings on a mind's overview


@dataclass
class ReloadState:
    """What the last config (re)load did."""

    loaded_at: str
    error: str | None = None
    error_at: str | None = None
    reloads: int = 0


@dataclass
class Counts:
    """Event counts kept in memory so `status` never scans the log."""

    by_mind: dict[str, int] = field(default_factory=dict)
    by_kind: dict[tuple[str, str], int] = field(default_factory=dict)
    """Events written, by (mind, kind): every event in the store or archived from it, counted at start and as each commits."""
    governance: dict[tuple[str, str], int] = field(default_factory=dict)
    """Governance passes since the daemon started, by (mind, status): the metrics read these, not the log."""
    last_event_id: int = 0


def _warning(event: Event) -> dict[str, Any]:
    """A metacognition warning as a mind's overview lists it."""
    warning = MetacognitionWarning.of(event)
    return {"event": event.id, "at": event.at, "check": warning.check, "ref": warning.ref, "text": event.text}


class Supervisor(Reads, AsOfReads, Gating, Archiving, Moving):
    """Holds the minds of one daemon and everything they run on."""

    def __init__(self, paths: Paths, loaded: LoadedConfig, clock: Clock, store: Store) -> None:
        self.paths = paths
        self.loaded = loaded
        self.clock = clock
        self.store = store
        self.started_at = clock.now()
        self._started_mono = clock.monotonic()
        self.reload = ReloadState(loaded_at=iso(self.started_at))
        self.actors: dict[str, MindActor] = {}
        self.counts = Counts()
        self.stopping = False
        self.bus: EventBus | None = None
        self.refused_stamp: FileStamp | None = None
        self._stored: dict[str, MindSettings] = {}  # each mind's stored settings, as parsed when read or changed
        self._config = loaded.config  # the file's, with `_stored` over it: replaced whole, never changed in place
        # Raises ConfigError for a provider that cannot be built (e.g. an unreadable script).
        self.gateway = ModelGateway(
            lambda: self.config, clock, store.writer, paused=self._is_paused, stopping=lambda: self.stopping
        )
        self._reply_judge: ReplyJudge | None = None
        self.jobs = JobRunner(store, clock, self.gateway, lambda: self.config)
        self.scheduler = Scheduler(self.jobs, store, clock, lambda: self.config)
        self._scheduler_task: asyncio.Task[None] | None = None
        self._archive_task: asyncio.Task[None] | None = None
        self._archived_at: dict[str, float] = {}
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
        """The running config: the file's, with each mind's stored settings over its [minds.NAME] table."""
        return self._config

    def stored_settings(self, mind: str) -> MindSettings | None:
        """The settings stored with `mind` (create --settings, `minds set`), as parsed; None if it has none."""
        return self._stored.get(mind)

    def settings_of(self, mind: str) -> MindSettings:
        """The settings `mind` runs with now (read at each turn: a change applies from the next one)."""
        return self._config.minds.get(mind) or MindSettings()

    def _settings_stored(self, minds: Sequence[Mind] = (), *, forget: str | None = None) -> None:
        """Take minds' stored settings as read or changed (or forget a deleted mind's); on the loop's thread."""
        stored = dict(self._stored)
        for mind in minds:
            stored[mind.name] = mind.parsed
            if mind.problems:
                log.warning("mind %s: stored settings no longer valid, left out until set or unset: %s", mind.name, "; ".join(mind.problems))
        if forget is not None:
            stored.pop(forget, None)
        names = [m.name for m in minds] + ([forget] if forget is not None else [])
        self._stored = stored
        self._config = with_stored(self.loaded.config, stored, names, self._config)

    # life cycle -------------------------------------------------------

    async def start(self) -> None:
        """Start the bus and an actor per stored mind, resuming untaken stimuli."""
        self.bus = EventBus(asyncio.get_running_loop())
        self.bus.listen(self._count)
        self.store.writer.on_commit(self.bus.publish_threadsafe)
        db = self.store.reader()
        # Archived events count too: the counts are of events ever written, so the metrics' counters never go back.
        stored = db.execute("SELECT mind, kind, count(*) FROM events GROUP BY mind, kind").fetchall()
        for mind, kind, count in [*stored, *archived_counts(db)]:
            self.counts.by_mind[mind] = self.counts.by_mind.get(mind, 0) + count
            self.counts.by_kind[mind, kind] = self.counts.by_kind.get((mind, kind), 0) + count
        (self.counts.last_event_id,) = db.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()
        await self.jobs.recover()  # before the actors: a mind left `consolidating` by a crash is idle again
        minds = list_minds(db)
        self._settings_stored(minds)
        await self._seed_rules([m.name for m in minds])
        for mind in minds:
            cycles, backlog = pending_stimuli(db, mind.name)
            self._start_actor(mind, cycles, backlog, db)
        self._scheduler_task = asyncio.get_running_loop().create_task(self.scheduler.run(), name="scheduler")
        self._archive_task = asyncio.get_running_loop().create_task(self.archive_daily(), name="archive")
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
        gates = {n: g for n in names if (g := self.loaded.config.minds.get(n, MindSettings()).gate) is not None}
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

    def _count(self, events: list[Event]) -> None:
        by_kind = self.counts.by_kind
        for event in events:
            self.counts.by_mind[event.mind] = self.counts.by_mind.get(event.mind, 0) + 1
            by_kind[event.mind, event.kind] = by_kind.get((event.mind, event.kind), 0) + 1
            if event.kind == "governance":
                key = (event.mind, GovernanceRecord.of(event).status)
                self.counts.governance[key] = self.counts.governance.get(key, 0) + 1
            self.counts.last_event_id = max(self.counts.last_event_id, event.id)

    def _check_open(self) -> None:
        if self.stopping:
            raise ShuttingDown("noemad is stopping and takes no new work; retry once it is back up")

    # minds --------------------------------------------------------------

    async def create_mind(self, name: str, settings: dict[str, Any], actor: str = "operator") -> Mind:
        self._check_open()
        check_name(name)
        now = self.clock.now()
        gate = self.loaded.config.minds.get(name, MindSettings()).gate

        def create(db: Database) -> Mind:
            created = create_mind(db, name, settings, now, actor)
            seed_from_config(db, name, gate, now=now)  # in the same job: the mind never runs without its seeded rules
            return created

        mind = await self.store.writer.run(create)
        self._settings_stored([mind])
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
        self._settings_stored([mind])
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
        self.counts.by_mind.pop(name, None)
        self.counts.by_kind = {k: n for k, n in self.counts.by_kind.items() if k[0] != name}
        self.counts.governance = {k: n for k, n in self.counts.governance.items() if k[0] != name}
        self._settings_stored(forget=name)
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

    def narrative(self, mind: str) -> dict[str, Any]:
        """The mind's newest narrative as the API shows it, judged against its running settings."""
        db = self.store.reader()
        get_mind(db, mind)
        return narrative_json(db, mind, self.settings_of(mind))

    async def ack(self, notification_id: int, actor: str = "operator") -> Notification:
        """Acknowledge a notification (`notification_acked`); acking one twice is a conflict."""
        self._check_open()
        now = self.clock.now()

        def job(db: Database) -> Notification:
            ack(db, notification_id=notification_id, now=now, actor=actor)
            return get_notification(db, notification_id)

        return await self.store.writer.run(job)

    async def mind_overview(self, name: str) -> dict[str, Any]:
        """A mind with its counts, recent events and warnings (read in a worker thread) and whether a turn runs (read here, on the loop)."""
        actor = self.actors.get(name)
        return await asyncio.to_thread(self._overview, name, bool(actor and actor.turn_running))

    def _overview(self, name: str, turn_running: bool) -> dict[str, Any]:
        db = self.store.reader()
        mind = get_mind(db, name)
        (last,) = db.execute("SELECT coalesce(max(id), 0) FROM events WHERE mind = ?", [name]).fetchone()
        return {
            **vars(mind),  # the API shows the overview as the mind with these added
            "events": self.counts.by_mind.get(name, 0),
            "last_event_id": last,
            "archived": dict(zip(("events", "archives"), archived_total(db, name))),
            "turn_running": turn_running,
            "settings_problems": list(mind.problems),
            "settings_in_force": self.settings_of(name).model_dump(mode="json", exclude_unset=True),
            "recent": latest_events(db, name, limit=10),
            "warnings": [_warning(e) for e in latest_events(db, name, kinds=("metacognition",), limit=WARNINGS_SHOWN)],
        }

    # background jobs ----------------------------------------------------

    async def run_job(self, mind: str, kind: str, actor: str = "operator") -> Job:
        """Start reflection or consolidation for `mind` now; the running job."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        return await self.jobs.start(mind, kind, trigger="operator", actor=actor)

    def schedules(self) -> list[dict[str, Any]]:
        """Each kind's global pause and default period."""
        paused = paused_schedules(self.store.reader())
        return [
            {
                "kind": kind,
                "paused": kind in paused,
                "paused_at": paused.get(kind, {}).get("paused_at"),
                "actor": paused.get(kind, {}).get("actor"),
                "every": getattr(self.config.schedules, kind).every,
            }
            for kind in ("reflection", "consolidation")
        ]

    def news(self, kind: str) -> list[MindNews]:
        """Which minds have had news since their last job of `kind`: a run for every mind skips the rest."""
        return news(self.store, kind)

    async def pause_schedule(self, kind: str, paused: bool, actor: str = "operator") -> dict[str, Any]:
        """Pause or resume the scheduled runs of `kind` for every mind; stored, so it survives a restart."""
        self._check_open()
        now = self.clock.now()
        if await self.store.writer.run(lambda db: pause_schedule(db, kind, paused=paused, actor=actor, now=now)):
            log.info("scheduled %s runs %s by %s", kind, "paused" if paused else "resumed", actor)
        return next(s for s in self.schedules() if s["kind"] == kind)

    async def reject_generalisation(self, memory_id: int, reason: str, actor: str = "operator") -> dict[str, Any]:
        """Reject what consolidation generalised: memory retracted, belief rejected, episodes untouched."""
        from noemad.background.consolidation import reject  # the stemmer and the clustering load on first use

        self._check_open()
        now = self.clock.now()
        event = await self.store.writer.run(lambda db: reject(db, memory_id=memory_id, reason=reason, now=now, actor=actor))
        belief = next((r.id for r in event.refs if r.type == "belief"), None)
        return {"memory": get_memory(self.store.reader(), memory_id), "belief": belief, "event": event}

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

        event, facts = await self.store.writer.run(store)
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

        stored = await self.store.writer.run(store)
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

    async def stimulus_turn(self, event_id: int) -> StimulusTurn:
        """Where a stimulus is on its way to a turn: waiting (and what the gate said), or taken; and whether its mind drafts replies.

        The event is read in a worker thread; the actor's state only here, on the loop that changes it.
        """
        event = await asyncio.to_thread(self.event, event_id)
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
            lambda after: asyncio.to_thread(self.events, mind, [], after, FOLLOW_PAGE),
        )

    def events(self, mind: str, kinds: Sequence[str], since: int, limit: int) -> list[Event]:
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
        try:
            return get_event(self.store.reader(), event_id)
        except EventNotFound as missing:
            raise self.not_found(event_id, missing) from None

    def chain(self, event_id: int, back: int | None, forward: int | None, limit: int | None) -> Timeline:
        bounds = self.config.timeline
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
            return self.archived_walk(event_id, limits, missing)

    # status ----------------------------------------------------------------

    @property
    def uptime(self) -> float:
        """Seconds since the daemon started, on its clock."""
        return round(self.clock.monotonic() - self._started_mono, 3)

    def status(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "pid": os.getpid(),
            "started_at": iso(self.started_at),
            "uptime_s": self.uptime,
            "now": iso(self.clock.now()),
            "clock": "manual" if isinstance(self.clock, ManualClock) else "system",
            "socket": str(self.paths.socket),
            "database": str(self.paths.db_file),
            "config": {
                "source": self.loaded.source,
                "path": str(self.paths.config_file),
                "loaded_at": self.reload.loaded_at,
                "reloads": self.reload.reloads,
                "reload_error": self.reload.error,
                "reload_error_at": self.reload.error_at,
            },
            "minds": [
                {
                    "name": name,
                    "events": self.counts.by_mind.get(name, 0),
                    "turn_running": actor.turn_running,
                    "paused": actor.paused,
                    "retry": actor.retry.status() if actor.retry else None,
                }
                for name, actor in sorted(self.actors.items())
            ],
            "counts": {
                "minds": len(self.actors),
                "events": sum(self.counts.by_mind.values()),
                "last_event_id": self.counts.last_event_id,
                "commits": self.store.writer.commits,
            },
            "models": {
                "provider": self.config.models.provider,
                "holds": self.gateway.holds.in_force(),
            },
            "jobs": {
                "running": self.jobs.running,
                "paused_schedules": sorted(paused_schedules(self.store.reader())),
                "scheduler_looked_at": iso(self.scheduler.looked_at) if self.scheduler.looked_at is not None else None,
            },
            "replica": dataclasses.asdict(self.replica.view) if self.replica is not None else None,
            "stopping": self.stopping,
        }

    def usage(self, mind: str | None, by: str, since: float | None) -> list[dict[str, Any]]:
        """Model spend grouped `by` role, model, day or mind."""
        db = self.store.reader()
        if mind is not None:
            get_mind(db, mind)
        return usage(db, mind, by, since)

    def apply_config(self, loaded: LoadedConfig) -> None:
        """Take a validated config as the running one; `ConfigError` if its provider cannot be built."""
        if loaded.config.replica != self.loaded.config.replica:
            # Litestream runs with the settings it was started with: a store's replica does not move under it.
            log.warning("[replica] changed in %s: it takes effect when noemad restarts", loaded.source)
        provider = self.gateway.prepare(loaded.config)
        if provider is not False:
            swap = asyncio.get_running_loop().create_task(self.gateway.swap(loaded.config, provider))
            swap.add_done_callback(lambda _: self._config_changed())  # a judge model comes or goes with the provider
        self.loaded = loaded
        self._config = with_stored(loaded.config, self._stored)
        self._config_changed()
        self._minds_changed()
        self.reload.loaded_at = iso(self.clock.now())
        self.reload.reloads += 1
        self.reload.error = None
        self.reload.error_at = None
        self.refused_stamp = None

    def _config_changed(self) -> None:
        """Tell every actor the config changed: what gate-status says of judging follows a reload at once."""
        for actor in list(self.actors.values()):
            actor.config_changed()

    def refuse_config(self, error: str, stamp: FileStamp | None) -> None:
        """Keep the running config and remember why the new one was refused."""
        self.reload.error = error
        self.reload.error_at = iso(self.clock.now())
        self.refused_stamp = stamp

    @property
    def config_stamp(self) -> FileStamp | None:
        """The version of the config file last read, whether applied or refused."""
        return self.refused_stamp if self.reload.error else self.loaded.stamp
