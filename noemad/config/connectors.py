"""`[[minds.NAME.connectors]]`: the rooms and endpoints a mind lives in, one table per connector.

A connector is told apart by `kind` ("matrix", "webhook"). Like the wake
rules' seed, connectors are a key of the file's `[minds.NAME]` only, never a
stored setting: they name credentials on this host. A secret is never in the
file: a connector names the file that holds it (`access_token_file`,
`secret_file`), which must exist and be readable by its owner alone (0600 or
0400), checked when the config is loaded. `read_secret` reads it when the
connector starts; the value is kept by the connector alone, so no log line,
event or `config show` can carry it (`config show` says set or unset).

`key` names a connector within its mind (the outbox's deliveries and the
cursor and remote ids of what it brought in are kept by it), so it must not
change when an unrelated field does: Matrix's is its account, a webhook's its
name or else its URL.
"""

from __future__ import annotations

import math
import stat
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from noemad.clock import span_seconds

DEFAULT_GIVE_UP = "1h"  # a reply an hour late in a chat is news, not an answer: give it up visibly
MAX_GIVE_UP = 7 * 86400.0


class SecretProblem(Exception):
    """Why a connector's secret file cannot be used (a sentence that never contains the secret)."""


def _span(value: Any) -> float:
    seconds: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = span_seconds(value, fractional=True)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0 or seconds > MAX_GIVE_UP:
        raise ValueError(f"write a number of seconds or a span such as 10m, 1h or 1d (at most 7d), not {value!r}")
    return seconds


def secret_problem(path: str) -> str | None:
    """Why the secret file at `path` cannot be used (missing, not a regular file, readable by others), or None."""
    where = Path(path).expanduser()
    if not where.is_absolute():
        return f"{path!r} is not an absolute path; give the file's full path, e.g. /etc/noema/credentials/NAME.token"
    try:
        st = where.stat()
    except FileNotFoundError:
        return f"{path!r} does not exist; write the secret there (mode 0600) or fix the path"
    except OSError as exc:
        return f"cannot read {path!r} ({exc.strerror}); check the path and its directory's permissions"
    if not stat.S_ISREG(st.st_mode):
        return f"{path!r} is not a regular file; put the secret in a file of its own"
    if st.st_mode & 0o077:
        return f"{path!r} is readable or writable by group or others (mode {stat.S_IMODE(st.st_mode):04o}); chmod 600 it"
    return None


def read_secret(path: str) -> str:
    """The secret in the file at `path`, stripped; `SecretProblem` says why there is none."""
    problem = secret_problem(path)
    if problem is not None:
        raise SecretProblem(problem)
    from noemad.config.files import NotARegularFile, read_regular_file  # files imports the schema, which imports this

    try:
        text = read_regular_file(Path(path).expanduser()).strip()
    except (OSError, UnicodeDecodeError, NotARegularFile) as exc:
        raise SecretProblem(f"cannot read {path!r} ({type(exc).__name__}); check it holds the secret as UTF-8 text") from None
    if not text:
        raise SecretProblem(f"{path!r} is empty; write the secret in it")
    return text


def _secret_file(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"write the path of the file that holds the secret, not {value!r}")
    problem = secret_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


SecretFile = Annotated[str, BeforeValidator(_secret_file)]
Span = Annotated[float, BeforeValidator(_span)]


class _Connector(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    give_up_after: Span = Field(
        _span(DEFAULT_GIVE_UP),
        description="How long the outbox retries a delivery before giving it up (a notification says so; noemactl connectors retry sends it again): seconds or a span.",
    )

    @property
    def key(self) -> str:
        """The connector's name within its mind: stable while its account or endpoint stays."""
        raise NotImplementedError

    @property
    def secret_files(self) -> dict[str, str]:
        """Each secret this connector reads, by its key in the table, with the file it is read from."""
        return {}


class MatrixConnector(_Connector):
    """`kind = "matrix"`: the mind's account on a Matrix homeserver, in the rooms listed."""

    kind: Literal["matrix"]
    homeserver: str = Field(description="The homeserver's URL, e.g. https://matrix.example.org.")
    user_id: str = Field(description="The mind's Matrix account, e.g. @gardener:example.org.")
    access_token_file: SecretFile = Field(description="The file (mode 0600) holding the account's access token.")
    rooms: list[str] = Field(default_factory=list, description="Room ids or aliases to join and listen in.")
    invites_from: list[str] = Field(default_factory=list, description="Accounts whose invites are accepted; others are refused and recorded.")
    bots: list[str] = Field(default_factory=list, description="Accounts whose messages are flagged as a bot's.")

    @field_validator("homeserver")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"write the homeserver's URL, starting with https:// (or http:// on loopback), not {value!r}")
        return value.rstrip("/")

    @field_validator("user_id")
    @classmethod
    def _user(cls, value: str) -> str:
        if not value.startswith("@") or ":" not in value:
            raise ValueError(f"write a Matrix user id such as @gardener:example.org, not {value!r}")
        return value

    @property
    def key(self) -> str:
        return f"matrix:{self.user_id}"

    @property
    def secret_files(self) -> dict[str, str]:
        return {"access_token": self.access_token_file}


class WebhookConnector(_Connector):
    """`kind = "webhook"`: every reply (and, if asked, every notification) POSTed as signed JSON to a URL."""

    kind: Literal["webhook"]
    url: str = Field(description="Where each delivery is POSTed.")
    secret_file: SecretFile = Field(description="The file (mode 0600) holding the HMAC-SHA256 signing secret.")
    name: str | None = Field(None, description="The webhook's name in noemactl connectors (default: its URL).")
    notifications: bool = Field(False, description="Also POST each of the mind's notifications, not only its replies.")
    timeout: Annotated[float, Field(gt=0, le=120)] = Field(10.0, description="Seconds one POST may take.")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"write an http:// or https:// URL, not {value!r}")
        return value

    @property
    def key(self) -> str:
        return f"webhook:{self.name or self.url}"

    @property
    def secret_files(self) -> dict[str, str]:
        return {"secret": self.secret_file}


ConnectorSettings = Annotated[MatrixConnector | WebhookConnector, Field(discriminator="kind")]
"""One `[[minds.NAME.connectors]]` table, told apart by `kind`."""


def check_keys(connectors: list[MatrixConnector | WebhookConnector]) -> list[MatrixConnector | WebhookConnector]:
    """`connectors` if no two share a key (two webhooks to one URL need names), else ValueError saying which."""
    seen: set[str] = set()
    for connector in connectors:
        if connector.key in seen:
            raise ValueError(
                f"two connectors are both {connector.key!r}; give each webhook its own name, and each Matrix account one table"
            )
        seen.add(connector.key)
    return connectors
