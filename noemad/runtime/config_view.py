"""`noemactl config show`: the effective config, each value with where it came from, secrets never shown.

Sources: `default` (nothing set it), `noemad.toml` (the file set it),
`environment` and `file` (for a secret: the variable or file it is read
from), `stored` (a mind's settings stored with it: `mind create --settings`,
`minds set`, PATCH), `noemad.toml [minds.NAME]`, and for the log level also
`command line (--log-level)` or who changed it with `noemactl log-level`.
A secret (the Anthropic API key) shows only whether it is set and from
where; its value never leaves the daemon.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from noemad.config.connectors import secret_problem
from noemad.config.schema import Config
from noemad.models.apikey import resolve_api_key
from noemad.store.replica.litestream import CredentialsProblem, credentials
from noemad.wire import wire

if TYPE_CHECKING:
    from noemad.runtime.supervisor import Supervisor

DEFAULT = "default"
FILE = "noemad.toml"
STORED = "stored"


@wire
@dataclass(frozen=True)
class ConfigValue:
    """One setting: its dotted key as the file writes it, its value in force, and where the value came from."""

    key: str
    value: Any
    source: str


@wire
@dataclass(frozen=True)
class SecretState:
    """A secret: whether it is set and where it is read from; never its value."""

    key: str
    set: bool
    source: str
    """environment (VARIABLE), or file (PATH)."""
    problem: str | None = None
    """Why it cannot be read, when it cannot."""


@wire
@dataclass(frozen=True)
class MindConfig:
    """The settings one mind runs with that are not the defaults: stored with it or from its [minds.NAME] table."""

    mind: str
    values: list[ConfigValue]


@wire
@dataclass(frozen=True)
class ConfigView:
    """The effective config."""

    file: str
    """The config file's path."""
    loaded_from: str
    """What the running config was read from: the file, or embedded defaults when there is none."""
    values: list[ConfigValue]
    secrets: list[SecretState]
    minds: list[MindConfig]
    reload_error: str | None
    """Why the newest file on disk was refused (the values above are the running ones), if it was."""


def leaves(model: BaseModel, prefix: str = "", set_here: bool = True) -> Iterator[tuple[str, Any, bool]]:
    """Every setting under `model` as (dotted key, value, whether the file set it); sections recurse."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        key = f"{prefix}.{name}" if prefix else name
        is_set = set_here and name in model.model_fields_set
        if isinstance(value, BaseModel):
            yield from leaves(value, key, is_set)
        elif isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
            for sub, item in sorted(value.items()):
                yield from leaves(item, f"{key}.{sub}", is_set)
        else:
            yield key, _plain(value), is_set


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]  # a list of tables ([[minds.NAME.connectors]]) as tables
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _connector_secrets(sup: Supervisor) -> list[SecretState]:
    """Each connector's secret: set (its file is there, 0600) or not, and which file; never its value."""
    states = []
    for name in sorted(sup.actors):
        for index, connector in enumerate(sup.settings_of(name).connectors, 1):
            for secret, path in connector.secret_files.items():
                problem = secret_problem(path)
                states.append(SecretState(f"minds.{name}.connectors[{index}].{secret}", problem is None, f"file ({path})", problem))
    return states


def _api_key(config: Config) -> SecretState:
    settings = config.models.anthropic
    source = f"file ({settings.api_key_file})" if settings.api_key_file else f"environment ({settings.api_key_env})"
    try:
        resolve_api_key(settings)
    except Exception as exc:  # noqa: BLE001 - a key that cannot be read: say why, never what it is
        return SecretState("models.anthropic.api_key", False, source, getattr(exc, "detail", None) or str(exc))
    return SecretState("models.anthropic.api_key", True, source)


def _replica_keys(config: Config) -> list[SecretState]:
    """The S3 key pair of [replica], when it names an S3 replica: set or not and from where, never the keys."""
    settings = config.replica
    if settings is None or not settings.is_s3:
        return []
    source = (
        f"file ({settings.credentials_file})" if settings.credentials_file
        else f"environment ({settings.access_key_id_env}, {settings.secret_access_key_env})"
    )
    try:
        found = credentials(settings)
    except CredentialsProblem as exc:
        return [SecretState("replica.credentials", False, source, str(exc))]
    if found is None:
        return [SecretState("replica.credentials", False, source, "none set: Litestream looks for AWS credentials itself (an instance role, ~/.aws)")]
    return [SecretState("replica.credentials", True, source)]


def config_view(sup: Supervisor) -> ConfigView:
    """The running config with each value's source, the secrets' states, and each mind's own settings."""
    config = sup.running.loaded.config
    values: list[ConfigValue] = []
    for key, value, is_set in leaves(config):
        if key == "minds" or key.startswith("minds."):
            continue  # each mind's own settings are listed under it, below
        if key == "daemon.log_level":
            state = sup.log_level.state
            values.append(ConfigValue(key, state.level, state.source))
        else:
            values.append(ConfigValue(key, value, FILE if is_set else DEFAULT))
    minds = []
    for name in sorted(sup.actors):
        stored = sup.running.stored_settings(name)
        in_file = config.minds.get(name)
        running = sup.settings_of(name)
        from_stored = {k for k, _, s in leaves(stored) if s} if stored is not None else set()
        from_file = {k for k, _, s in leaves(in_file) if s} if in_file is not None else set()
        mind_values = [
            ConfigValue(key, value, STORED if key in from_stored else f"{FILE} [minds.{name}]")
            for key, value, _ in leaves(running)
            if key in from_stored or key in from_file
        ]
        minds.append(MindConfig(name, mind_values))
    return ConfigView(
        file=str(sup.paths.config_file),
        loaded_from=sup.running.loaded.source,
        values=values,
        secrets=[_api_key(config), *_replica_keys(config), *_connector_secrets(sup)],
        minds=minds,
        reload_error=sup.running.reload.error,
    )
