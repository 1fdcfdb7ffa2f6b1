"""The config a daemon runs with (`sup.running`): the file's as last loaded, each mind's stored settings over it, and what the last reload did.

Replaced whole on each change, never changed in place, so a reader holding
the config it read keeps a consistent one. Changed on the loop's thread:
when the supervisor takes a mind's stored settings, applies a reloaded file,
or refuses one (the supervisor also tells the actors and listeners).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from noemad.clock import iso
from noemad.config.files import FileStamp, LoadedConfig
from noemad.config.mind import MindSettings
from noemad.config.schema import Config, with_stored
from noemad.minds import Mind

log = logging.getLogger("noemad")


@dataclass
class ReloadState:
    """What the last config (re)load did."""

    loaded_at: str
    error: str | None = None
    error_at: str | None = None
    reloads: int = 0


class RunningConfig:
    """The running config, the file it came from, each mind's stored settings, and the reload state."""

    def __init__(self, loaded: LoadedConfig, now: float) -> None:
        self.loaded = loaded
        self.reload = ReloadState(loaded_at=iso(now))
        self.refused_stamp: FileStamp | None = None
        self._stored: dict[str, MindSettings] = {}  # each mind's stored settings, as parsed when read or changed
        self._config = loaded.config  # the file's, with `_stored` over it

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

    def take_stored(self, minds: Sequence[Mind] = (), *, forget: str | None = None) -> None:
        """Take minds' stored settings as read or changed (or forget a deleted mind's)."""
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

    def apply(self, loaded: LoadedConfig, now: float) -> None:
        """Take a reloaded, validated file as the running config (the minds' stored settings kept over it)."""
        self.loaded = loaded
        self._config = with_stored(loaded.config, self._stored)
        self.reload.loaded_at = iso(now)
        self.reload.reloads += 1
        self.reload.error = None
        self.reload.error_at = None
        self.refused_stamp = None

    def refuse(self, error: str, stamp: FileStamp | None, now: float) -> None:
        """Keep the running config and remember why the new one was refused."""
        self.reload.error = error
        self.reload.error_at = iso(now)
        self.refused_stamp = stamp

    @property
    def stamp(self) -> FileStamp | None:
        """The version of the config file last read, whether applied or refused."""
        return self.refused_stamp if self.reload.error else self.loaded.stamp
