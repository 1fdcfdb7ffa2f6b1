"""noemad.toml on disk: read (a regular file only), validated whole into `Config`, and written back as TOML.

A missing file means the embedded defaults; anything wrong (a syntax error,
an unknown key, a value out of range) raises one `ConfigError` whose sentence
names each problem (`noemad.config.problems`).
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from noemad.config.problems import validation_problems
from noemad.config.schema import Config
from noemad.config.toml import toml_key, toml_value
from noemad.errors import ConfigError


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


def parse_config(text: str, source: str) -> LoadedConfig:
    """Validate TOML text into a config, or raise `ConfigError`."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}.") from None
    try:
        return LoadedConfig(Config.model_validate(raw), source)
    except ValidationError as exc:
        problems = validation_problems(exc, Config)
        head = f"{source}: " if len(problems) == 1 else f"{source} has {len(problems)} problems: "
        raise ConfigError(f"{head}{'. '.join(problems)}.") from None


_NOT_REGULAR = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


class NotARegularFile(OSError):
    """A file meant to be read whole (config, script, key) is a FIFO, a device or a directory."""


def credential_path(key: str, name: str, environ: Mapping[str, str]) -> Path:
    """Where the credential file `name` (the value of `key`, e.g. "[replica] credentials_file") is: a path as given, or
    a bare name in $CREDENTIALS_DIRECTORY (systemd's LoadCredential=); `NoCredentialsDirectory` when that is not set."""
    if "/" in name:
        return Path(name).expanduser()
    creds = environ.get("CREDENTIALS_DIRECTORY")
    if not creds:
        raise NoCredentialsDirectory(
            f"{key} = {name!r} is a bare name, looked up in $CREDENTIALS_DIRECTORY, which is not set;"
            " give a path, or start noemad with LoadCredential="
        )
    return Path(creds) / name


class NoCredentialsDirectory(ValueError):
    """A credential named by a bare name, with no $CREDENTIALS_DIRECTORY to find it in."""


def read_regular_file(path: Path) -> str:
    """The UTF-8 text of `path`, or `NotARegularFile` if it is not a regular file.

    Opened non-blocking and checked on the open descriptor: a FIFO would
    otherwise block the reader until some writer came along, and a device
    such as /dev/zero would never end.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        kind = stat.S_IFMT(os.fstat(fd).st_mode)
        if kind != stat.S_IFREG:
            raise NotARegularFile(f"{path} is {_NOT_REGULAR.get(kind, 'a special file')}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as file:
        return file.read().decode("utf-8")


def load_config(path: Path) -> LoadedConfig:
    """Read and validate `path`; a missing file gives the embedded defaults."""
    stamp = file_stamp(path)
    try:
        text = read_regular_file(path)
    except FileNotFoundError:
        return LoadedConfig(Config(), "embedded defaults")
    except NotARegularFile as exc:
        raise ConfigError(f"{exc}; noemad reads its config from a regular file only.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}. Check its permissions and encoding (UTF-8).") from None
    loaded = parse_config(text, str(path))
    return LoadedConfig(loaded.config, loaded.source, stamp)


def config_notes(config: Config) -> list[str]:
    """Values the file gives that are read as another (a bound at its nearest value), each as a sentence.

    `noemad --check-config` prints them, so a clamp is seen before the daemon runs.
    """
    notes = [n for n in (config.gate.judge.budget_note,) if n is not None]
    for name, mind in sorted(config.minds.items()):
        if mind.gate is not None:
            reads, _, default_notes = mind.gate.read()
            notes += [f"[minds.{name}.gate] {note}" for read in reads for note in read.notes]
            notes += [f"[minds.{name}.gate] default: {note}" for note in default_notes]
    return notes


def render_config(config: BaseModel, prefix: str = "") -> str:
    """The effective config as TOML text (for `noemad --check-config`); secrets are never in it."""
    scalars: list[str] = []
    tables: list[str] = []
    for key, value in config:
        name = f"{prefix}.{toml_key(key)}" if prefix else toml_key(key)
        if isinstance(value, BaseModel):
            tables.append(render_config(value, name))
        elif isinstance(value, dict) and all(isinstance(item, BaseModel) for item in value.values()):
            tables.extend(render_config(item, f"{name}.{toml_key(k)}") for k, item in sorted(value.items()))
        elif value is None:
            scalars.append(f"# {key} is unset")
        else:
            scalars.append(f"{toml_key(key)} = {toml_value(value)}")
    head = [f"[{prefix}]", *scalars, ""] if prefix and scalars else scalars
    return "\n".join(head + tables)
