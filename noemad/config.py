"""noemad.toml: the daemon's settings, validated whole.

A file is read with tomllib and validated into `Config`; anything wrong (a
syntax error, an unknown key, a value out of range) raises one `ConfigError`
whose sentence names each problem and, for unknown keys, the nearest valid
one. A missing file means the embedded defaults.
"""

from __future__ import annotations

import difflib
import grp
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from noemad.errors import ConfigError

MiB = 1024 * 1024


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DaemonSettings(_Section):
    """`[daemon]`: how the daemon serves and stops."""

    socket_group: str | None = Field(
        None, description="Give the socket mode 0660 and this group, as docker does; unset means 0600."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="Least severe log level written.")
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


class TimelineSettings(_Section):
    """`[timeline]`: the bounds of the causal walk (they may only be lowered)."""

    max_hops: int = Field(6, ge=1, le=6, description="Most hops walked from the event, each way.")
    max_events: int = Field(200, ge=1, le=200, description="Most events one walk returns.")


class Config(_Section):
    """The whole of noemad.toml."""

    daemon: DaemonSettings = DaemonSettings()
    timeline: TimelineSettings = TimelineSettings()


FileStamp = tuple[int, int, int]  # inode, size, mtime in ns


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config and where it came from."""

    config: Config
    source: str  # a path, or "embedded defaults"
    stamp: FileStamp | None = None  # the file as read, to notice a change made before the watch began


def file_stamp(path: Path) -> FileStamp | None:
    """What identifies one version of a file on disk, or None if it is missing."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """The valid keys of the section that `loc` (minus its last part) points into."""
    model: Any = Config
    for part in loc[:-1]:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None or not isinstance(field.annotation, type) or not issubclass(field.annotation, BaseModel):
            return []
        model = field.annotation
    return list(model.model_fields)


def describe_validation_error(exc: ValidationError) -> str:
    """One sentence per problem, keys dotted the way they appear in the file."""
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        key = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            near = difflib.get_close_matches(str(loc[-1]), _fields_at(loc), n=1)
            hint = f"; did you mean '{'.'.join([*map(str, loc[:-1]), near[0]])}'?" if near else ""
            valid = ", ".join(_fields_at(loc))
            problems.append(f"{key}: unknown key{hint} (valid here: {valid})")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"{key}: {msg}")
    return "; ".join(problems)


def parse_config(text: str, source: str) -> LoadedConfig:
    """Validate TOML text into a config, or raise `ConfigError`."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}.") from None
    try:
        return LoadedConfig(Config.model_validate(raw), source)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {describe_validation_error(exc)}.") from None


def load_config(path: Path) -> LoadedConfig:
    """Read and validate `path`; a missing file gives the embedded defaults."""
    stamp = file_stamp(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LoadedConfig(Config(), "embedded defaults")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}. Check its permissions and encoding (UTF-8).") from None
    loaded = parse_config(text, str(path))
    return LoadedConfig(loaded.config, loaded.source, stamp)


def render_config(config: Config) -> str:
    """The effective config as TOML text (for `noemad --check-config`)."""
    lines: list[str] = []
    for section, model in config:
        lines.append(f"[{section}]")
        for key, value in model:
            if value is None:
                lines.append(f"# {key} is unset")
            elif isinstance(value, bool):
                lines.append(f"{key} = {'true' if value else 'false'}")
            elif isinstance(value, (int, float)):
                lines.append(f"{key} = {value}")
            else:
                lines.append(f'{key} = "{value}"')
        lines.append("")
    return "\n".join(lines)
