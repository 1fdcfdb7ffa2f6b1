"""The daemon's log level, changeable while it runs: by `noemactl log-level`, and on reload from the config.

The level applies to the root logger; the model SDK and its HTTP client stay
at WARNING or above whatever it is (at DEBUG they would log whole prompts: a
mind's content stays out of the journal). The level's source is kept so
`noemactl config show` can say where it came from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from noemad.config.daemon import LogLevelName
from noemad.wire import wire

# Never below WARNING: the SDK and its HTTP client would log whole prompts, watchfiles every write to the database.
QUIET_LOGGERS = ("anthropic", "httpx", "httpcore", "httpx2", "httpcore2", "watchfiles")
log = logging.getLogger("noemad")


@wire
@dataclass(frozen=True)
class LogLevelState:
    """The level the daemon logs at, and where it came from."""

    level: LogLevelName
    source: str
    """default, noemad.toml, command line (--log-level), or noemactl log-level (by whom)."""
    previous: LogLevelName | None = None
    """The level before this change; null when nothing changed."""


def apply_level(level: str) -> None:
    """Log at `level` from now on (the quiet loggers stay at WARNING or above)."""
    number = logging.getLevelName(level.upper())
    logging.getLogger().setLevel(number)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, number))


class LogLevel:
    """The running level and its source."""

    def __init__(self, level: str, source: str) -> None:
        self.state = LogLevelState(level=level, source=source)  # type: ignore[arg-type]

    def set(self, level: str, source: str) -> LogLevelState:
        """Change the level (applied at once); the new state, with the level it replaced."""
        previous = self.state.level
        apply_level(level)
        self.state = LogLevelState(level=level, source=source)  # type: ignore[arg-type]
        if previous != level:
            # WARNING: the change itself is seen at any level, so a log that goes quiet says why.
            log.warning("log level %s (was %s), set by %s", level, previous, source)
        return LogLevelState(level=level, source=source, previous=previous)  # type: ignore[arg-type]
