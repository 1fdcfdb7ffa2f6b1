"""A mind in one file: exported from one store, imported into another, every link kept.

The file is a SQLite database. SQLite because the store is one: a row goes
out and comes back with the same types, the file is checked and read by the
same library (and by `sqlite3` on any host, for a look inside), a truncated or
damaged file is told apart from a whole one, and it streams: neither side
holds more than a chunk of rows in memory, whatever the mind's size.

Inside: one table per exported table of the store, with the store's columns
but `mind` (the mind's name is in the manifest, so a file can land under
another name), no constraints and no types (values come back exactly as they
went in), rows in the order of the table's key; and `manifest` (key, value):
the format and its version, the noemad and schema versions that wrote it,
the mind, when, each table's columns and row count, and a SHA-256 of the
content (every table's name, columns and rows, in order), which the import
checks before it commits.

Ids are counted from 1 within the file in each id space, and a cycle id's
leading mind name is written `{mind}` (see `noemad.store.transfer_ids`): an export of a mind imported elsewhere gives
the same file, checksum included, as the first (its time and name aside).

Which tables move is read from the schema, not listed: every table keyed by
`mind`, bar those `transfer_ids.NOT_EXPORTED` names with why. The SQL here
names tables by a variable; each table's rows are copied as they stand,
row for row, so what a row means stays its owner's (tests/test_owners.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from noemad import __version__
from noemad.errors import ExportFailed, ImportRefused
from noemad.store.connection import open_db
from noemad.store.guard import unrecorded
from noemad.store.schema import newest_migration
from noemad.store.transfer_ids import (
    COMPACT_JSON, ID_COLUMNS, JSON_COLUMNS, MIND, NAMED_COLUMNS, NOT_EXPORTED, TYPED_COLUMNS, paths_for, renamer, shift_json,
)

FORMAT = "noema-mind"
FORMAT_VERSION = 1
CHUNK = 5000  # rows read and written at a time: memory stays flat in the mind's size


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

    @property
    def events(self) -> int:
        """The mind's events in the file."""
        return self.counts.get("events", 0)


@dataclass(frozen=True)
class Move:
    """How a mind's ids move between a store and a file: per id space, a floor (a value under it is raised to it) and an offset."""

    spaces: dict[str, tuple[int, int]]
    rename: Callable[[str], str]
    """The mind's name in NAMED_COLUMNS' text, made the other side's."""

    def of(self, space: str) -> tuple[int, int]:
        """The floor and offset of `space`."""
        return self.spaces.get(space, (0, 0))

    def shift(self, space: str, value: int) -> int:
        """The id `value` of `space` becomes this."""
        low, delta = self.of(space)
        return (value if value > low else low) + delta


@dataclass(frozen=True)
class Table:
    """One exported table: its columns (without its mind column), the key it is ordered by, and how its ids move."""

    name: str
    mind_column: str
    columns: tuple[str, ...]
    order: tuple[str, ...]
    space: bool
    """Whether it is an id space: keyed by an integer `id` that other rows cite."""

    def shifter(self, move: Move) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
        """A function giving a row of this table with its ids (columns and JSON) moved, and the mind's name in its text renamed."""
        index = {c: i for i, c in enumerate(self.columns)}
        plain = [(index[c], *move.of(s)) for (t, c), s in ID_COLUMNS.items() if t == self.name and c in index]
        if "id" in index and self.space:
            plain.append((index["id"], *move.of(self.name)))
        typed = [
            (index[c], index[k], {kind: move.of(s) for kind, s in spaces.items()})
            for (t, c), (k, spaces) in TYPED_COLUMNS.items()
            if t == self.name and c in index
        ]
        json_ops = [
            (index[c], index[k] if k else -1, patterns, (t, c) in COMPACT_JSON)
            for (t, c), (k, patterns) in JSON_COLUMNS.items()
            if t == self.name and c in index
        ]
        named = [index[c] for t, c in NAMED_COLUMNS if t == self.name and c in index]
        known: dict[tuple[int, Any], tuple[tuple[str, str], ...]] = {}  # (column, kind) -> its paths: a few kinds, many rows
        shift, rename = move.shift, move.rename
        if not (plain or typed or json_ops or named):
            return tuple

        def moved(row: Sequence[Any]) -> tuple[Any, ...]:
            out = list(row)
            for i, low, delta in plain:
                v = out[i]
                if type(v) is int and v > 0:
                    out[i] = (v if v > low else low) + delta
            for i, k, spaces in typed:
                v, by = out[i], spaces.get(out[k])
                if type(v) is int and v > 0 and by:
                    out[i] = (v if v > by[0] else by[0]) + by[1]
            for i, k, patterns, compact in json_ops:
                kind = out[k] if k >= 0 else "*"
                paths = known.get((i, kind))
                if paths is None:
                    paths = known[i, kind] = paths_for(patterns, kind)
                if paths and isinstance(out[i], str):
                    out[i] = shift_json(out[i], paths, shift, compact)
            for i in named:
                if isinstance(out[i], str):
                    out[i] = rename(out[i])
            return tuple(out)

        return moved


def exported_tables(db: sqlite3.Connection) -> list[Table]:
    """The tables a mind's export holds, parents before children (foreign keys), from the schema of `db`."""
    listed = db.execute("PRAGMA table_list").fetchall()
    names = sorted(name for schema_name, name, kind, *_ in listed if schema_name == "main" and kind == "table" and name not in NOT_EXPORTED)
    tables: dict[str, Table] = {}
    parents: dict[str, set[str]] = {}
    for name in names:
        info = db.execute(f'PRAGMA table_info("{name}")').fetchall()
        columns = [row[1] for row in info]
        mind_column = "name" if name == "minds" else "mind"
        if mind_column not in columns:
            continue
        key = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5] > 0 and row[1] != mind_column]
        tables[name] = Table(name, mind_column, tuple(c for c in columns if c != mind_column), tuple(key), key == ["id"])
        parents[name] = {row[2] for row in db.execute(f'PRAGMA foreign_key_list("{name}")')} - {name}
    ordered: list[Table] = []
    done: set[str] = set()
    while len(ordered) < len(tables):
        ready = [n for n in tables if n not in done and parents[n] & set(tables) <= done]
        if not ready:
            raise RuntimeError(f"the foreign keys among {sorted(set(tables) - done)} form a cycle")
        for n in ready:
            ordered.append(tables[n])
            done.add(n)
    return ordered


def _spaces(tables: Sequence[Table]) -> list[str]:
    """The id spaces: tables keyed by an integer `id`."""
    return [t.name for t in tables if t.space]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _Digest:
    """The content checksum: each table's name and columns, then its rows, in order."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def table(self, table: str, columns: Sequence[str]) -> None:
        self._hash.update(repr((table, tuple(columns))).encode())

    def rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        # Each row's repr on a line of its own: the same digest however the rows are cut into chunks.
        if rows:
            self._hash.update(("\n".join(map(repr, rows)) + "\n").encode())

    def hexdigest(self) -> str:
        return "sha256:" + self._hash.hexdigest()


# --- export ----------------------------------------------------------------------------------------------------------


def export_mind(store_path: Path, mind: str, dest: Path, exported_at: str) -> Manifest:
    """Write mind `mind` of the store at `store_path` into the new file `dest`, from one snapshot; blocking.

    The daemon goes on writing meanwhile (WAL: this reads one snapshot).
    Raises ExportFailed, with `dest` removed, when the file cannot be written.
    """
    dest.unlink(missing_ok=True)
    source = open_db(store_path, readonly=True).conn
    try:
        # 0600 from the first byte: the file holds everything the mind holds.
        os.close(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        out = sqlite3.connect(str(dest), isolation_level=None)
        try:
            out.execute("PRAGMA journal_mode=OFF")  # a file nobody has yet: a failed export is deleted, not recovered
            out.execute("PRAGMA synchronous=OFF")
            source.execute("BEGIN")  # one snapshot for every table
            manifest = _write(source, out, mind, exported_at)
            source.execute("COMMIT")
        finally:
            out.close()
        fd = os.open(dest, os.O_RDONLY)
        try:
            os.fsync(fd)  # on disk before it is handed to anyone
        finally:
            os.close(fd)
        return manifest
    except (sqlite3.Error, OSError) as exc:
        dest.unlink(missing_ok=True)
        full = "full" in str(exc) or getattr(exc, "errno", None) == 28
        hint = f"free space in {dest.parent}, then retry" if full else "the daemon's log may say more; the store itself is untouched"
        raise ExportFailed(f"the export of mind {mind!r} could not be written: {exc}; {hint}") from None
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    finally:
        source.close()


def _write(source: sqlite3.Connection, out: sqlite3.Connection, mind: str, exported_at: str) -> Manifest:
    tables = exported_tables(source)
    # Each space counts from 1. Below the mind's first id a value names no row of the mind; it is a bound (a
    # reflection's lookback from event 1): raised to the mind's first, "from the first" keeps its meaning.
    lowest = {space: _lowest(source, space, mind) for space in _spaces(tables)}
    move = Move({space: (low, 1 - low) for space, low in lowest.items()}, renamer(mind, MIND))

    digest = _Digest()
    counts: dict[str, int] = {}
    out.execute("BEGIN")
    for table in tables:
        out.execute(f"CREATE TABLE {_q(table.name)} ({', '.join(map(_q, table.columns))})")
        digest.table(table.name, table.columns)
        moved = table.shifter(move)
        insert = f"INSERT INTO {_q(table.name)} VALUES ({', '.join('?' * len(table.columns))})"
        order = f" ORDER BY {', '.join(map(_q, table.order))}" if table.order else ""
        cursor = source.execute(f"SELECT {', '.join(map(_q, table.columns))} FROM {_q(table.name)} WHERE {_q(table.mind_column)} = ?{order}", [mind])
        count = 0
        while rows := cursor.fetchmany(CHUNK):
            shifted = [moved(row) for row in rows]
            digest.rows(shifted)
            out.executemany(insert, shifted)
            count += len(shifted)
        counts[table.name] = count
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        noemad_version=__version__,
        schema_version=newest_migration(source),
        mind=mind,
        exported_at=exported_at,
        checksum=digest.hexdigest(),
        tables={t.name: list(t.columns) for t in tables},
        counts=counts,
    )
    out.execute("CREATE TABLE manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    out.executemany("INSERT INTO manifest VALUES (?, ?)", _manifest_rows(manifest))
    out.execute("COMMIT")
    return manifest


def _lowest(source: sqlite3.Connection, space: str, mind: str) -> int:
    """The smallest id of the mind in `space` (for events, archived ones too), or 1 when it has none."""
    (low,) = source.execute(f"SELECT min(id) FROM {_q(space)} WHERE mind = ?", [mind]).fetchone()
    if space == "events":  # events moved to an archive file are still cited (cuts, archive runs): they count from 1 too
        (archived,) = source.execute(f"SELECT min(first_id) FROM {_q('archives')} WHERE mind = ?", [mind]).fetchone()
        low = min(x for x in (low, archived) if x is not None) if (low, archived) != (None, None) else None
    return int(low) if low is not None else 1


def _manifest_rows(m: Manifest) -> list[tuple[str, str]]:
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
    ]


# --- reading a file --------------------------------------------------------------------------------------------------


def read_manifest(path: Path) -> Manifest:
    """The manifest of the mind file at `path`, once the file is whole and of a format this noemad reads.

    Raises ImportRefused saying what is wrong: not a mind file, truncated or
    damaged, or from a newer noemad.
    """
    _check_length(path)
    try:
        conn = _open_file(path)
    except sqlite3.Error as exc:
        raise ImportRefused(f"the file is not a Noema mind file ({exc}); give a file `noemactl export` wrote") from None
    try:
        return _manifest(conn, path)
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


def _open_file(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, isolation_level=None)
    conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()  # reads the header: "file is not a database" here
    return conn


def _manifest(conn: sqlite3.Connection, path: Path) -> Manifest:
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'manifest'").fetchone() is None:
        raise ImportRefused(f"the file is a SQLite file but not a Noema mind file (it has no manifest); give a file `noemactl export` wrote")
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
        )
    except (KeyError, ValueError) as exc:
        raise ImportRefused(f"the file's manifest is damaged ({exc}); export the mind again") from None
    if version > FORMAT_VERSION:
        raise ImportRefused(
            f"the file was written by noemad {manifest.noemad_version} in mind-file format {version}; this noemad"
            f" ({__version__}) reads format {FORMAT_VERSION} and older: upgrade noemad here, then import it"
        )
    return manifest


# --- import ----------------------------------------------------------------------------------------------------------


def import_mind(db: Database, path: Path, name: str) -> Manifest:
    """Write the mind of the file at `path` into the store as mind `name`; run it as a writer job.

    Every row gets new ids after the store's largest (links and citations
    move with them). The checksum is checked as the rows are read; a file
    that does not match, cannot be read to its end or names a column this
    store does not have raises ImportRefused, and the job (so the whole
    import) is rolled back: nothing of it is left behind. That the name is
    free is the caller's to check, in the same job.
    """
    manifest = read_manifest(path)
    conn = _open_file(path)
    try:
        return _import(db, conn, manifest, path, name)
    except sqlite3.IntegrityError as exc:
        raise ImportRefused(f"the file's rows do not hold together here ({exc}); nothing was imported: export the mind again") from None
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc):
            raise  # the store is full (the file is only read): the writer reports it as it does for any write
        raise ImportRefused(f"the file could not be read to its end ({exc}); nothing was imported: copy it again and retry") from None
    finally:
        conn.close()


def _import(db: Database, conn: sqlite3.Connection, manifest: Manifest, path: Path, name: str) -> Manifest:
    tables = {t.name: t for t in exported_tables(db.conn)}
    for listed, columns in manifest.tables.items():
        here = tables.get(listed)
        unknown = [c for c in columns if here is None or c not in here.columns]
        if unknown:
            raise ImportRefused(
                f"the file holds {'table ' + listed if here is None else 'columns ' + ', '.join(unknown) + ' of ' + listed}, which this"
                f" noemad ({__version__}) does not know: it came from a newer noemad (schema {manifest.schema_version}); upgrade noemad here, then import it"
            )
    # The file counts each space from 1: its ids go after the largest this store has handed out.
    move = Move({space: (0, _highest(db, space)) for space in _spaces(list(tables.values()))}, renamer(MIND, name))

    unrecorded("an imported mind arrives with its own events, as it recorded them; the daemon's log says who imported it")
    digest = _Digest()
    for table_name, columns in manifest.tables.items():
        known = tables[table_name]
        table = Table(table_name, known.mind_column, tuple(columns), known.order, known.space)
        moved = table.shifter(move)
        digest.table(table_name, columns)
        # The mind's name (checked: letters, digits, - _ .) as a literal: no tuple per row to carry it.
        named = ", ".join(map(_q, [*columns, table.mind_column]))
        insert = f"INSERT INTO {_q(table_name)} ({named}) VALUES ({', '.join('?' * len(columns))}, {_literal(name)})"
        cursor = conn.execute(f"SELECT {', '.join(map(_q, columns))} FROM {_q(table_name)} ORDER BY rowid")
        count = 0
        while rows := cursor.fetchmany(CHUNK):
            digest.rows(rows)
            db.conn.executemany(insert, map(moved, rows))
            count += len(rows)
        if count != manifest.counts.get(table_name):
            raise ImportRefused(f"the file holds {count} rows of {table_name} where its manifest says {manifest.counts.get(table_name)}; nothing was imported: export the mind again")
    if digest.hexdigest() != manifest.checksum:
        raise ImportRefused(f"the file does not match its checksum: it was changed or damaged since it was exported; nothing was imported: export the mind again")
    return manifest


def _highest(db: Database, space: str) -> int:
    """The largest id `space` has handed out in this store (its AUTOINCREMENT counter, or its largest row)."""
    (seq,) = db.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = ?", [space]).fetchone()
    (top,) = db.execute(f"SELECT coalesce(max(id), 0) FROM {_q(space)}").fetchone()
    return max(int(seq), int(top))

