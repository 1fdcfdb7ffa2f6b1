"""Operating the daemon through its socket: reload the config, show it with its sources, change the log level."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter

from noemad.api.operator import Op
from noemad.api.schemas import BodyIn
from noemad.config.daemon import LogLevelName
from noemad.errors import Conflict
from noemad.runtime.config_view import ConfigView, config_view
from noemad.runtime.loglevel import LogLevelState
from noemad.runtime.supervisor import Supervisor
from noemad.wire import wire

V1 = "/api/v1"


class LogLevelIn(BodyIn):
    level: LogLevelName


class NoReload(Conflict):
    """This noemad cannot reload (it runs in process, with no config watch)."""

    title = "No reload"


@wire
@dataclass(frozen=True)
class ReloadOutcome:
    """What a reload asked through the API did."""

    taken: bool
    """Whether the file was read, valid, and is now the running config."""
    source: str
    """What the running config was read from."""
    error: str | None
    """Why the file was refused (the running config is kept), when it was."""
    reloads: int
    """Reloads taken since the daemon started."""


def add_operations_routes(api: APIRouter, sup: Supervisor) -> None:
    """Register the routes on the app's router (see `create_app` for why not an included router)."""

    @api.post(V1 + "/reload", response_model=ReloadOutcome, summary="Reload noemad.toml now, as SIGHUP does")
    async def reload() -> ReloadOutcome:
        """Answered once the reload is over: taken, or refused with the sentence that says why (the running config is kept either way)."""
        if sup.reloader is None:
            raise NoReload("this noemad has no config reload (it runs in process); restart it to read the config again")
        taken = await sup.reloader()
        return ReloadOutcome(taken=taken, source=sup.running.loaded.source, error=sup.running.reload.error, reloads=sup.running.reload.reloads)

    # A coroutine: it lists the running minds, which change on the loop.
    @api.get(V1 + "/config", response_model=ConfigView, summary="The effective config, each value with its source")
    async def config() -> ConfigView:
        """Sources: default, noemad.toml, stored (a mind's own), the command line or `noemactl log-level` for the log level. Secrets show only whether they are set and from where."""
        return config_view(sup)

    @api.get(V1 + "/log-level", response_model=LogLevelState, summary="The level the daemon logs at")
    def log_level() -> LogLevelState:
        return sup.log_level.state

    @api.put(V1 + "/log-level", response_model=LogLevelState, summary="Change the log level now")
    def set_log_level(body: LogLevelIn, op: Op) -> LogLevelState:
        """Applies at once, until the next change or a reload of a config that sets [daemon] log_level. Not stored: a restart starts at the config's level."""
        return sup.log_level.set(body.level, f"noemactl log-level ({op.actor})")
