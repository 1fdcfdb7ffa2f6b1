"""A file noemad streams to the client (a backup, a mind's export), written so its path only ever names a whole one.

The bytes go to PATH.part, private (0600) from the first byte since they hold
what the minds hold, are fsynced and checked with the client's own SQLite,
and only then renamed to PATH; on any failure the part is removed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

from noemactl.errors import BadInput, CtlError

Said = TypeVar("Said")
Checked = TypeVar("Checked")


def target_of(path: Path, example: str, force: bool) -> Path:
    """The path to write, refused with a sentence if it is a directory, exists (without `force`) or has no folder."""
    target = path.expanduser()
    if target.is_dir():
        raise BadInput(f"{target} is a directory; give a file path, e.g. {target / example}")
    if target.exists() and not force:
        raise BadInput(f"{target} exists; give another path, or --force to replace it")
    if not target.parent.is_dir():
        raise BadInput(f"{target.parent} is not a directory; create it first")
    return target


def receive(target: Path, fill: Callable[[BinaryIO], Said], check: Callable[[Path, Said], Checked]) -> Checked:
    """Write `target` with `fill` (which streams noemad's answer into it), checked by `check` before it is renamed into place."""
    part = target.with_name(target.name + ".part")
    try:
        with os.fdopen(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            said = fill(out)
            out.flush()
            os.fsync(out.fileno())
        checked = check(part, said)
        os.replace(part, target)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise CtlError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return checked


def size_text(n: int) -> str:
    """A file's size for a person: bytes, KiB, MiB or GiB."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB"):
        if size < 1024:
            return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"
