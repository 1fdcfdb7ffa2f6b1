"""What `noemactl status` and a mind's overview show: the daemon's state, and one mind's, read from what is counted.

Functions of the supervisor, as its metrics are (`noemad.runtime.metrics`):
they read its counts, actors and config without scanning the event log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from noemad import __version__
from noemad.archive.cuts import archived_total
from noemad.background.jobs import JobKind, paused_schedules
from noemad.clock import ManualClock, iso
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.events import Event, latest_events
from noemad.minds import Mind, get_mind
from noemad.models.holds import Hold
from noemad.runtime.retry import TurnRetry
from noemad.store.replica.child import ReplicaStatus
from noemad.wire import extend, wire

if TYPE_CHECKING:
    from noemad.runtime.supervisor import Supervisor

WARNINGS_SHOWN = 10  # newest metacognition warnings on a mind's overview


@wire
@dataclass(frozen=True)
class ConfigState:
    """noemad.toml: where it was read from, and what its last (re)load did."""

    source: str
    path: str
    loaded_at: str
    reloads: int
    reload_error: str | None
    reload_error_at: str | None


@wire
@dataclass(frozen=True)
class MindStatus:
    """A running mind in brief: its events, whether a turn runs, whether it is paused or waits for a retry."""

    name: str
    events: int
    turn_running: bool
    paused: bool
    retry: TurnRetry | None = None
    """Set while a failed turn's stimuli wait for their retry."""


@wire
@dataclass(frozen=True)
class Counts:
    """The daemon's counts: minds running, events stored, the newest event, the writer's commits."""

    minds: int
    events: int
    last_event_id: int
    commits: int


@wire
@dataclass(frozen=True)
class ModelsState:
    """The model provider, and the holds a provider put on models."""

    provider: Literal["none", "anthropic", "scripted"]
    holds: list[Hold]


@wire
@dataclass(frozen=True)
class JobsState:
    """Background jobs under way and schedules paused."""

    running: list[int]
    """Ids of the jobs running now."""
    paused_schedules: list[JobKind]
    scheduler_looked_at: str | None
    """When the scheduler last looked for due jobs (it looks every minute)."""


@wire
@dataclass(frozen=True)
class MindConnectors:
    """A mind's connectors in brief (`noemactl connectors MIND` has the rest)."""

    connectors: int
    up: int
    """Connectors connected or syncing."""
    pending: int
    """Deliveries waiting in its outbox."""
    given_up: int
    """Deliveries given up: `noemactl connectors retry MIND DELIVERY` sends one again."""


@wire
@dataclass(frozen=True)
class DaemonStatus:
    """The daemon's state."""

    version: str
    pid: int
    started_at: str
    uptime_s: float
    now: str
    clock: Literal["system", "manual"]
    socket: str
    database: str
    config: ConfigState
    minds: list[MindStatus]
    counts: Counts
    models: ModelsState
    jobs: JobsState
    replica: ReplicaStatus | None
    """The store's Litestream replica ([replica] in noemad.toml); null without one."""
    stopping: bool
    connectors: dict[str, MindConnectors] = field(default_factory=dict)
    """Each mind with connectors: how many, how many up, its outbox (the API adds them: the connectors run above the supervisor)."""


@wire
@dataclass(frozen=True)
class ArchivedCount:
    """How much of a mind's log has been archived (`noemactl archive`)."""

    events: int
    archives: int


@wire
@dataclass(frozen=True)
class OverviewWarning:
    """A metacognition warning: which check fired on what."""

    event: int
    at: str
    check: str
    ref: str
    text: str | None


@wire
@dataclass(frozen=True, kw_only=True)  # after the mind's own fields, some of which have defaults
class MindOverview(Mind):
    """A mind with its counts, its newest events and warnings."""

    events: int
    """Events ever written, archived ones included."""
    last_event_id: int
    archived: ArchivedCount
    turn_running: bool
    settings_problems: list[str]
    """A sentence per stored setting no longer valid (left out, its default applies) until it is set or unset."""
    settings_in_force: dict[str, Any]  # open: the settings' own JSON, whichever keys the mind sets
    """The keys the mind runs with that are not defaults: its stored settings over its [minds.NAME] table (spans as seconds)."""
    recent: list[Event]
    warnings: list[OverviewWarning]
    """The newest metacognition warnings, oldest first."""


def daemon_status(sup: Supervisor) -> DaemonStatus:
    """The daemon now: version, process, clock, config and its reloads, each running mind, counts, models, jobs, replica."""
    reload = sup.running.reload
    return DaemonStatus(
        version=__version__,
        pid=os.getpid(),
        started_at=iso(sup.started_at),
        uptime_s=sup.uptime,
        now=iso(sup.clock.now()),
        clock="manual" if isinstance(sup.clock, ManualClock) else "system",
        socket=str(sup.paths.socket),
        database=str(sup.paths.db_file),
        config=ConfigState(
            source=sup.running.loaded.source,
            path=str(sup.paths.config_file),
            loaded_at=reload.loaded_at,
            reloads=reload.reloads,
            reload_error=reload.error,
            reload_error_at=reload.error_at,
        ),
        minds=[
            MindStatus(
                name=name,
                events=sup.counts.by_mind.get(name, 0),
                turn_running=actor.turn_running,
                paused=actor.paused,
                retry=actor.retry.status() if actor.retry else None,
            )
            for name, actor in sorted(sup.actors.items())
        ],
        counts=Counts(
            minds=len(sup.actors),
            events=sum(sup.counts.by_mind.values()),
            last_event_id=sup.counts.last_event_id,
            commits=sup.store.writer.commits,
        ),
        models=ModelsState(provider=sup.config.models.provider, holds=sup.gateway.holds.in_force()),
        jobs=JobsState(
            running=sup.jobs.running,
            paused_schedules=cast(list[JobKind], sorted(paused_schedules(sup.store.reader()))),  # only a JobKind is ever paused
            scheduler_looked_at=iso(sup.scheduler.looked_at) if sup.scheduler.looked_at is not None else None,
        ),
        replica=sup.replica.view if sup.replica is not None else None,
        stopping=sup.stopping,
    )


async def mind_overview(sup: Supervisor, name: str) -> MindOverview:
    """A mind with its counts, recent events and warnings (read in a worker thread) and whether a turn runs (read here, on the loop)."""
    actor = sup.actors.get(name)
    turn_running = bool(actor and actor.turn_running)
    return await sup.store.off_loop(lambda: _overview(sup, name, turn_running))


def _overview(sup: Supervisor, name: str, turn_running: bool) -> MindOverview:
    db = sup.store.reader()
    mind = get_mind(db, name)
    (last,) = db.execute("SELECT coalesce(max(id), 0) FROM events WHERE mind = ?", [name]).fetchone()
    return extend(
        mind,
        MindOverview,
        events=sup.counts.by_mind.get(name, 0),
        last_event_id=last,
        archived=ArchivedCount(*archived_total(db, name)),
        turn_running=turn_running,
        settings_problems=list(mind.problems),
        settings_in_force=sup.settings_of(name).model_dump(mode="json", exclude_unset=True),
        recent=latest_events(db, name, limit=10),
        warnings=[_warning(e) for e in latest_events(db, name, kinds=("metacognition",), limit=WARNINGS_SHOWN)],
    )


def _warning(event: Event) -> OverviewWarning:
    """A metacognition warning as a mind's overview lists it."""
    warning = MetacognitionWarning.of(event)
    return OverviewWarning(event.id, event.at, warning.check, warning.ref, event.text)
