"""What `noemactl status` and a mind's overview show: the daemon's state, and one mind's, read from what is counted.

Functions of the supervisor, as its metrics are (`noemad.runtime.metrics`):
they read its counts, actors and config without scanning the event log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import TYPE_CHECKING, Any

from noemad import __version__
from noemad.archive.cuts import archived_total
from noemad.background.jobs import paused_schedules
from noemad.clock import ManualClock, iso
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.events import Event, latest_events
from noemad.minds import get_mind

if TYPE_CHECKING:
    from noemad.runtime.supervisor import Supervisor

WARNINGS_SHOWN = 10  # newest metacognition warnings on a mind's overview


def daemon_status(sup: Supervisor) -> dict[str, Any]:
    """The daemon now: version, process, clock, config and its reloads, each running mind, counts, models, jobs, replica."""
    reload = sup.running.reload
    return {
        "version": __version__,
        "pid": os.getpid(),
        "started_at": iso(sup.started_at),
        "uptime_s": sup.uptime,
        "now": iso(sup.clock.now()),
        "clock": "manual" if isinstance(sup.clock, ManualClock) else "system",
        "socket": str(sup.paths.socket),
        "database": str(sup.paths.db_file),
        "config": {
            "source": sup.running.loaded.source,
            "path": str(sup.paths.config_file),
            "loaded_at": reload.loaded_at,
            "reloads": reload.reloads,
            "reload_error": reload.error,
            "reload_error_at": reload.error_at,
        },
        "minds": [
            {
                "name": name,
                "events": sup.counts.by_mind.get(name, 0),
                "turn_running": actor.turn_running,
                "paused": actor.paused,
                "retry": actor.retry.status() if actor.retry else None,
            }
            for name, actor in sorted(sup.actors.items())
        ],
        "counts": {
            "minds": len(sup.actors),
            "events": sum(sup.counts.by_mind.values()),
            "last_event_id": sup.counts.last_event_id,
            "commits": sup.store.writer.commits,
        },
        "models": {
            "provider": sup.config.models.provider,
            "holds": sup.gateway.holds.in_force(),
        },
        "jobs": {
            "running": sup.jobs.running,
            "paused_schedules": sorted(paused_schedules(sup.store.reader())),
            "scheduler_looked_at": iso(sup.scheduler.looked_at) if sup.scheduler.looked_at is not None else None,
        },
        "replica": dataclasses.asdict(sup.replica.view) if sup.replica is not None else None,
        "stopping": sup.stopping,
    }


async def mind_overview(sup: Supervisor, name: str) -> dict[str, Any]:
    """A mind with its counts, recent events and warnings (read in a worker thread) and whether a turn runs (read here, on the loop)."""
    actor = sup.actors.get(name)
    return await asyncio.to_thread(_overview, sup, name, bool(actor and actor.turn_running))


def _overview(sup: Supervisor, name: str, turn_running: bool) -> dict[str, Any]:
    db = sup.store.reader()
    mind = get_mind(db, name)
    (last,) = db.execute("SELECT coalesce(max(id), 0) FROM events WHERE mind = ?", [name]).fetchone()
    return {
        **vars(mind),  # the API shows the overview as the mind with these added
        "events": sup.counts.by_mind.get(name, 0),
        "last_event_id": last,
        "archived": dict(zip(("events", "archives"), archived_total(db, name))),
        "turn_running": turn_running,
        "settings_problems": list(mind.problems),
        "settings_in_force": sup.settings_of(name).model_dump(mode="json", exclude_unset=True),
        "recent": latest_events(db, name, limit=10),
        "warnings": [_warning(e) for e in latest_events(db, name, kinds=("metacognition",), limit=WARNINGS_SHOWN)],
    }


def _warning(event: Event) -> dict[str, Any]:
    """A metacognition warning as a mind's overview lists it."""
    warning = MetacognitionWarning.of(event)
    return {"event": event.id, "at": event.at, "check": warning.check, "ref": warning.ref, "text": event.text}
