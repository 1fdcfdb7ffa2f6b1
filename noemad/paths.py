"""Where noemad keeps its config, data and socket.

Precedence, highest first: command-line flags, `NOEMA_SOCKET` / `NOEMA_HOME`,
systemd's `CONFIGURATION_DIRECTORY` / `STATE_DIRECTORY` / `RUNTIME_DIRECTORY`,
then platformdirs' per-user defaults. noemactl resolves the socket the same
way in `noemactl/client.py`; keep the two in step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP = "noema"
CONFIG_NAME = "noemad.toml"
DB_NAME = "noema.db"
SOCKET_NAME = "noemad.sock"


@dataclass(frozen=True)
class Paths:
    """The resolved locations of one daemon."""

    config_file: Path
    data_dir: Path
    socket: Path

    @property
    def db_file(self) -> Path:
        return self.data_dir / DB_NAME


def _first(value: str | None) -> Path | None:
    # systemd passes several directories colon-separated; the first is ours.
    if not value:
        return None
    return Path(value.split(":")[0])


def resolve_paths(
    env: Mapping[str, str] | None = None,
    home: str | Path | None = None,
    socket: str | Path | None = None,
    config: str | Path | None = None,
) -> Paths:
    """Resolve the daemon's paths from flags and the environment."""
    env = os.environ if env is None else env
    home_dir = Path(home) if home else _first(env.get("NOEMA_HOME"))
    if home_dir is not None:
        config_dir, data_dir, run_dir = home_dir, home_dir, home_dir / "run"
    else:
        config_dir = _first(env.get("CONFIGURATION_DIRECTORY")) or Path(platformdirs.user_config_dir(APP))
        data_dir = _first(env.get("STATE_DIRECTORY")) or Path(platformdirs.user_data_dir(APP))
        run_dir = _first(env.get("RUNTIME_DIRECTORY")) or Path(platformdirs.user_runtime_dir(APP))
    sock = Path(socket) if socket else (Path(env["NOEMA_SOCKET"]) if env.get("NOEMA_SOCKET") else run_dir / SOCKET_NAME)
    return Paths(
        config_file=Path(config) if config else config_dir / CONFIG_NAME,
        data_dir=data_dir,
        socket=sock,
    )
