"""The mind file's own format: its manifest, its checksum, and the checks a file passes before its rows are read.

See `noemad.store.transfer` for what the file holds and why it is SQLite.
The manifest is a table `manifest` (key, value): `format` and
`format_version`, `noemad_version` and `schema_version` (what wrote it),
`mind`, `exported_at`, `tables` (each table's columns, in the order they
were written), `counts` (rows per table), `archive_files`, and `checksum`:
SHA-256 over each table's name and columns, then its rows (one `repr` per
line), in order.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from noemad import __version__
from noemad.errors import ImportRefused

FORMAT = "noema-mind"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Manifest:
    """What a mind file says about itself."""

    format_version: int
    noemad_version: str
    schema_version: str
    """The newest schema migration of the store it was exported from."""
    mind: str
    exported_at: str
    checksum: str
    """`sha256:` and the hex digest of the content."""
    tables: dict[str, list[str]] = field(default_factory=dict)
    """Each table's columns, in the order the tables are written."""
    counts: dict[str, int] = field(default_factory=dict)
    """Rows per table."""
    archive_files: list[str] = field(default_factory=list)
    """With --with-archives: the Nth archive file's name (`{mind}` for the mind's), its tables `archiveN__TABLE`."""

    @property
    def events(self) -> int:
        """The mind's events in the file."""
        return self.counts.get("events", 0)


class Digest:
    """The content checksum: each table's name and columns, then its rows, in order."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def table(self, table: str, columns: Sequence[str]) -> None:
        """A table begins: its name and columns."""
        self._hash.update(repr((table, tuple(columns))).encode())

    def rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Some of its rows, in order."""
        # Each row's repr on a line of its own: the same digest however the rows are cut into chunks.
        if rows:
            self._hash.update(("\n".join(map(repr, rows)) + "\n").encode())

    def hexdigest(self) -> str:
        """`sha256:` and the digest so far."""
        return "sha256:" + self._hash.hexdigest()


def manifest_rows(m: Manifest) -> list[tuple[str, str]]:
    """The manifest as the file's `manifest` table holds it."""
    return [
        ("format", FORMAT),
        ("format_version", str(m.format_version)),
        ("noemad_version", m.noemad_version),
        ("schema_version", m.schema_version),
        ("mind", m.mind),
        ("exported_at", m.exported_at),
        ("checksum", m.checksum),
        ("tables", json.dumps(m.tables)),
        ("counts", json.dumps(m.counts)),
        ("archive_files", json.dumps(m.archive_files)),
    ]


def read_manifest(path: Path) -> Manifest:
    """The manifest of the mind file at `path`, once the file is whole and of a format this noemad reads.

    Raises ImportRefused saying what is wrong: not a mind file, truncated or
    damaged, or from a newer noemad.
    """
    _check_length(path)
    try:
        conn = open_file(path)
    except sqlite3.Error as exc:
        raise ImportRefused(f"the file is not a Noema mind file ({exc}); give a file `noemactl export` wrote") from None
    try:
        return _manifest(conn)
    except sqlite3.Error as exc:
        raise ImportRefused(f"the file is damaged ({exc}); export the mind again") from None
    finally:
        conn.close()


def _check_length(path: Path) -> None:
    """Refuse a file that is not SQLite, or shorter than its header says (a copy cut short)."""
    with path.open("rb") as f:
        header = f.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise ImportRefused("the file is not a Noema mind file (not even a SQLite database); give a file `noemactl export` wrote")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    size = path.stat().st_size
    if size < pages * page_size:
        raise ImportRefused(f"the file is truncated ({size} of its {pages * page_size} bytes); copy it again from where it was exported")


def open_file(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, isolation_level=None)
    conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()  # reads the header: "file is not a database" here
    return conn


def _manifest(conn: sqlite3.Connection) -> Manifest:
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'manifest'").fetchone() is None:
        raise ImportRefused("the file is a SQLite file but not a Noema mind file (it has no manifest); give a file `noemactl export` wrote")
    values = dict(conn.execute("SELECT key, value FROM manifest").fetchall())
    if values.get("format") != FORMAT:
        raise ImportRefused(f"the file is not a Noema mind file (its format is {values.get('format')!r}); give a file `noemactl export` wrote")
    try:
        version = int(values["format_version"])
        manifest = Manifest(
            format_version=version,
            noemad_version=values["noemad_version"],
            schema_version=values["schema_version"],
            mind=values["mind"],
            exported_at=values["exported_at"],
            checksum=values["checksum"],
            tables=json.loads(values["tables"]),
            counts=json.loads(values["counts"]),
            archive_files=json.loads(values.get("archive_files", "[]")),
        )
    except (KeyError, ValueError) as exc:
        raise ImportRefused(f"the file's manifest is damaged ({exc}); export the mind again") from None
    if version > FORMAT_VERSION:
        raise ImportRefused(
            f"the file was written by noemad {manifest.noemad_version} in mind-file format {version}; this noemad"
            f" ({__version__}) reads format {FORMAT_VERSION} and older: upgrade noemad here, then import it"
        )
    return manifest
