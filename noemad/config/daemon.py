"""`[daemon]` and `[timeline]`: how the daemon serves and stops, and the bounds of the causal walk."""

from __future__ import annotations

import grp
from typing import Literal, get_args

from pydantic import Field, field_validator

from noemad.config.section import Section


MiB = 1024 * 1024


LogLevelName = Literal["debug", "info", "warning", "error"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevelName)


class DaemonSettings(Section):
    """`[daemon]`: how the daemon serves and stops."""

    socket_group: str | None = Field(
        None, description="Give the socket mode 0660 and this group, as docker does; unset means 0600."
    )
    log_level: LogLevelName = Field(
        "info",
        description="Least severe log level written; when set here, applied again on every reload (noemactl log-level changes it until then).",
    )
    max_body_bytes: int = Field(
        MiB, ge=1024, le=64 * MiB, description="Largest request body the API accepts, in bytes."
    )
    shutdown_timeout: float = Field(
        10.0, ge=0, le=600, description="Seconds a stopping daemon waits for running turns before aborting them."
    )

    @field_validator("socket_group")
    @classmethod
    def _group_exists(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                grp.getgrnam(value)
            except KeyError:
                raise ValueError(f"group {value!r} does not exist on this machine; create it or unset socket_group")
        return value


class TimelineSettings(Section):
    """`[timeline]`: the bounds of the causal walk (they may only be lowered)."""

    max_hops: int = Field(6, ge=1, le=6, description="Most hops walked from the event, each way.")
    max_events: int = Field(200, ge=1, le=200, description="Most events one walk returns.")
