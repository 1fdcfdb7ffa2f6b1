"""A mind in one file: exported from one store, imported into another, every link kept.

The file is a SQLite database. SQLite because the store is one: a row goes
out and comes back with the same types, the file is checked and read by the
same library (and by `sqlite3` on any host, for a look inside), a truncated or
damaged file is told apart from a whole one, and it streams: neither side
holds more than a chunk of rows in memory, whatever the mind's size.

Inside: one table per exported table of the store, with the store's columns
but `mind` (the mind's name is in the manifest, so a file can land under
another name), no constraints and no types (values come back exactly as they
went in), rows in the order of the table's key; and the manifest with the
content's checksum (`noemad.store.mindfile`), which the import checks as it
reads, before it commits.

Ids are counted from 1 within the file in each id space, and a cycle id's
leading mind name is written `{mind}` (see `noemad.store.transfer_ids`): an export of a mind imported elsewhere gives
the same file, checksum included, as the first (its time and name aside).

Which tables move is read from the schema, not listed: every table keyed by
`mind`, bar those `transfer_ids.NOT_EXPORTED` names with why. The SQL here
names tables by a variable; each table's rows are copied as they stand,
row for row, so what a row means stays its owner's (tests/test_owners.py).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from noemad import __version__
from noemad.errors import ExportFailed, ImportRefused
from noemad.store.connection import open_db
from noemad.store.guard import unrecorded
from noemad.store.migrations import newest_migration
from noemad.store.mindfile import (
    FORMAT_VERSION,
    Digest,
    Manifest,
    manifest_rows,
    open_file,
    read_manifest,
)
from noemad.store.transfer_ids import (
    COMPACT_JSON,
    ID_COLUMNS,
    JSON_COLUMNS,
    MIND,
    NAME_COLUMNS,
    NAMED_COLUMNS,
    NOT_EXPORTED,
    PATH_COLUMNS,
    TEXT_COLUMNS,
    TYPED_COLUMNS,
    paths_for,
    renamer,
    shift_json,
    shift_text,
)

CHUNK = 5000  # rows read and written at a time: memory stays flat in the mind's size
ROWS_PER_INSERT = 100  # rows an import's INSERT statement writes (fewer when the table's columns would pass SQLite's limit)


@dataclass(frozen=True)
class Move:
    """How a mind's ids move between a store and a file: per id space, a floor (a value under it is raised to it) and an offset."""

    spaces: dict[str, tuple[int, int]]
    names: tuple[str, str]
    """The mind's name in NAMED_COLUMNS' text, and the other side's for it."""
    places: dict[str, str] = field(default_factory=dict)
    """Archive files' paths (PATH_COLUMNS) as the other side writes them."""

    @cached_property
    def rename(self) -> Callable[[str], str]:
        """The mind's name in NAMED_COLUMNS' text, made the other side's."""
        return renamer(*self.names)

    def relocate(self, path: str) -> str:
        """An archive file's path as the other side names it (unchanged when its file does not travel)."""
        return self.places.get(path, path)

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
    like: str = ""
    """The store table whose declarations (transfer_ids) apply, when not `name` (an archive file's table in the file)."""

    def _ops(self, move: Move) -> _Ops:
        """Where this table's rows hold what moves, as column positions, with how each moves."""
        index = {c: i for i, c in enumerate(self.columns)}
        base = self.like or self.name
        plain = [(index[c], *move.of(s)) for (t, c), s in ID_COLUMNS.items() if t == base and c in index]
        if "id" in index and (self.space or base in move.spaces):
            plain.append((index["id"], *move.of(base)))
        return _Ops(
            plain=plain,
            typed=[
                (index[c], index[k], {kind: move.of(s) for kind, s in spaces.items()})
                for (t, c), (k, spaces) in TYPED_COLUMNS.items()
                if t == base and c in index
            ],
            json=[
                (index[c], index[k] if k else -1, patterns, (t, c) in COMPACT_JSON)
                for (t, c), (k, patterns) in JSON_COLUMNS.items()
                if t == base and c in index
            ],
            named=[index[c] for t, c in NAMED_COLUMNS | NAME_COLUMNS if t == base and c in index],
            placed=[index[c] for t, c in PATH_COLUMNS if t == base and c in index],
            texts=[index[c] for t, c in TEXT_COLUMNS if t == base and c in index],
        )

    def shifter(self, move: Move) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
        """A function giving a row of this table with its ids (columns and JSON) moved, and the mind's name in its text renamed."""
        ops = self._ops(move)
        plain, typed, named = ops.plain, ops.typed, ops.named
        rename = move.rename
        rest = ops.rewriter(move)
        if not (plain or typed or named):
            return rest or tuple

        def moved(row: Sequence[Any]) -> tuple[Any, ...]:
            out = list(row if rest is None else rest(row))
            for i, low, delta in plain:
                v = out[i]
                if type(v) is int and v > 0:
                    out[i] = (v if v > low else low) + delta
            for i, k, spaces in typed:
                v, by = out[i], spaces.get(out[k])
                if type(v) is int and v > 0 and by:
                    out[i] = (v if v > by[0] else by[0]) + by[1]
            for i in named:
                if isinstance(out[i], str):
                    out[i] = rename(out[i])
            return tuple(out)

        return moved

    def insert(self, move: Move, into: str, mind: str, rows: int) -> str:
        """An INSERT of `rows` rows of this table into store table `into` (with `mind` in its mind column, if it has one), their values the parameters in order.

        The INSERT itself moves the plain and typed ids and renames the cycle
        ids (SQL over each row's parameters: no Python per row for them); the
        rows given it have been through `rewriter` first (JSON and text that
        name rows, archive files' paths). The two together write what
        `shifter` gives. Many rows a statement, because each run of a
        statement has its own start and end (a statement savepoint, the
        full-text index's savepoint, pages copied to the statement journal,
        a reset): paid per row, that was a good part of what an import cost.
        Not too many: preparing a statement takes longer than linearly in
        its rows (250 rows of events took ~30 ms).
        """
        ops = self._ops(move)
        old, new = move.names
        width = len(self.columns)

        def row(base: int) -> str:
            values = [f"?{base + i + 1}" for i in range(width)]
            for i, low, delta in ops.plain:
                values[i] = _sql_id(base + i + 1, low, delta)
            for i, k, spaces in ops.typed:
                p = f"?{base + i + 1}"
                arms = [(kind, _sql_moved(base + i + 1, *by)) for kind, by in spaces.items()]
                when = " ".join(f"WHEN {_literal(kind)} THEN {moved}" for kind, moved in arms if moved != p)
                if when:
                    values[i] = f"CASE WHEN typeof({p}) = 'integer' AND {p} > 0 THEN CASE ?{base + k + 1} {when} ELSE {p} END ELSE {p} END"
            if old != new:
                for i in ops.named:
                    p, n = f"?{base + i + 1}", len(old)
                    values[i] = (
                        f"CASE WHEN typeof({p}) = 'text' AND (substr({p}, 1, {n + 1}) = {_literal(old + '/')} OR {p} = {_literal(old)})"
                        f" THEN {_literal(new)} || substr({p}, {n + 1}) ELSE {p} END"
                    )
            # The mind's name (checked: letters, digits, - _ .) as a literal: no value per row to carry it.
            return "(" + ", ".join([*values, *([_literal(mind)] if self.mind_column else [])]) + ")"

        names = ", ".join(map(_q, [*self.columns, *([self.mind_column] if self.mind_column else [])]))
        return f"INSERT INTO {_q(into)} ({names}) VALUES " + ", ".join(row(n * width) for n in range(rows))

    def rewriter(self, move: Move) -> Callable[[Sequence[Any]], tuple[Any, ...]] | None:
        """What `insert` leaves to Python: a row with its JSON and text ids shifted and archive paths relocated; None when the table has none."""
        return self._ops(move).rewriter(move)


def _sql_moved(param: int, low: int, delta: int) -> str:
    """SQL for the id in parameter `param` (known to be a positive integer) moved by floor `low` and `delta`."""
    p = f"?{param}"
    raised = p if low <= 0 else f"max({p}, {low})"  # over 0 already: a floor of 0 or less raises nothing
    return raised if delta == 0 else f"({raised} + {delta})"


def _sql_id(param: int, low: int, delta: int) -> str:
    """SQL for the value of parameter `param` moved as an id (a positive integer) is, left as it is otherwise."""
    p, moved = f"?{param}", _sql_moved(param, low, delta)
    return p if moved == p else f"CASE WHEN typeof({p}) = 'integer' AND {p} > 0 THEN {moved} ELSE {p} END"


@dataclass(frozen=True)
class _Ops:
    """Column positions of a table's row that move, each with how (see `Table.shifter`)."""

    plain: list[tuple[int, int, int]]
    """(column, floor, offset) of an id."""
    typed: list[tuple[int, int, dict[Any, tuple[int, int]]]]
    """(column, the column of its kind, kind -> (floor, offset))."""
    json: list[tuple[int, int, Mapping[str, tuple[tuple[str, str], ...]], bool]]
    """(column, the column of its kind or -1, kind pattern -> paths, compact)."""
    named: list[int]
    placed: list[int]
    texts: list[int]

    def rewriter(self, move: Move) -> Callable[[Sequence[Any]], tuple[Any, ...]] | None:
        """A function giving a row with its JSON and text ids shifted and its archive paths relocated (the row itself when none changes), or None when the table has none."""
        json_ops, placed, texts = self.json, self.placed, self.texts
        if not (json_ops or placed or texts):
            return None
        known: dict[tuple[int, Any], tuple[tuple[str, str], ...]] = {}  # (column, kind) -> its paths: a few kinds, many rows
        shift, rename, relocate = move.shift, move.rename, move.relocate

        def rewritten(row: Sequence[Any]) -> tuple[Any, ...]:
            out: list[Any] | None = None
            for i, k, patterns, compact in json_ops:
                kind = row[k] if k >= 0 else "*"
                paths = known.get((i, kind))
                if paths is None:
                    paths = known[i, kind] = paths_for(patterns, kind)
                v = row[i]
                if paths and isinstance(v, str):
                    new = shift_json(v, paths, shift, compact, rename)
                    if new is not v:
                        out = out or list(row)
                        out[i] = new
            for i in placed:
                if isinstance(row[i], str):
                    out = out or list(row)
                    out[i] = relocate(row[i])
            for i in texts:
                if isinstance(row[i], str):
                    out = out or list(row)
                    out[i] = shift_text(row[i], shift, rename)
            return tuple(row) if out is None else tuple(out)  # a row read is a tuple already: no copy

        return rewritten


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


# --- export ----------------------------------------------------------------------------------------------------------


def export_mind(store_path: Path, mind: str, dest: Path, exported_at: str, archives: Sequence[Path] = ()) -> Manifest:
    """Write mind `mind` of the store at `store_path` into the new file `dest`, from one snapshot; blocking.

    The daemon goes on writing meanwhile (WAL: this reads one snapshot).
    `archives`: the mind's archive files, to carry too (`--with-archives`).
    Raises ExportFailed, with `dest` removed, when the file cannot be written
    (or an archive file cannot be read).
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
            manifest = _write(source, out, mind, exported_at, archives)
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


def _write(source: sqlite3.Connection, out: sqlite3.Connection, mind: str, exported_at: str, archives: Sequence[Path]) -> Manifest:
    tables = exported_tables(source)
    # Each space counts from 1. Below the mind's first id a value names no row of the mind; it is a bound (a
    # reflection's lookback from event 1): raised to the mind's first, "from the first" keeps its meaning.
    lowest = {space: _lowest(source, space, mind) for space in _spaces(tables)}
    places = {str(path): f"{{archive:{n}}}" for n, path in enumerate(archives, 1)}
    move = Move({space: (low, 1 - low) for space, low in lowest.items()}, (mind, MIND), places)

    digest = Digest()
    counts: dict[str, int] = {}
    columns: dict[str, list[str]] = {}
    out.execute("BEGIN")
    for table in tables:
        order = f" ORDER BY {', '.join(map(_q, table.order))}" if table.order else ""
        cursor = source.execute(f"SELECT {', '.join(map(_q, table.columns))} FROM {_q(table.name)} WHERE {_q(table.mind_column)} = ?{order}", [mind])
        counts[table.name] = _copy_out(cursor, out, table, move, digest)
        columns[table.name] = list(table.columns)
    for n, path in enumerate(archives, 1):
        try:
            archive = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise OSError(f"the archive file {path} cannot be read ({exc}); put it back, or export without --with-archives") from None
        try:
            schema = Table(f"{ARCHIVE_PREFIX}{n}_schema", "", ("type", "name", "sql"), (), False)
            cursor = archive.execute("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, rowid")
            counts[schema.name] = _copy_out(cursor, out, schema, move, digest)
            columns[schema.name] = list(schema.columns)
            for table in _archive_tables(archive, n):
                cursor = archive.execute(f"SELECT {', '.join(map(_q, (table.mind_column, *table.columns) if table.mind_column else table.columns))} FROM {_q(table.like)}{_ordered(table)}")
                counts[table.name] = _copy_out(cursor, out, table, move, digest, skip_first=bool(table.mind_column))
                columns[table.name] = list(table.columns)
        finally:
            archive.close()
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        noemad_version=__version__,
        schema_version=newest_migration(source),
        mind=mind,
        exported_at=exported_at,
        checksum=digest.hexdigest(),
        tables=columns,
        counts=counts,
        archive_files=[MIND + Path(path).name[len(mind):] if Path(path).name.startswith(mind + "-") else Path(path).name for path in archives],
    )
    out.execute("CREATE TABLE manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    out.executemany("INSERT INTO manifest VALUES (?, ?)", manifest_rows(manifest))
    out.execute("COMMIT")
    return manifest


def _copy_out(cursor: sqlite3.Cursor, out: sqlite3.Connection, table: Table, move: Move, digest: Digest, skip_first: bool = False) -> int:
    """Write the rows `cursor` reads (a leading mind column dropped when `skip_first`) into the file as `table`; how many."""
    out.execute(f"CREATE TABLE {_q(table.name)} ({', '.join(map(_q, table.columns))})")
    digest.table(table.name, table.columns)
    moved = table.shifter(move)
    insert = f"INSERT INTO {_q(table.name)} VALUES ({', '.join('?' * len(table.columns))})"
    count = 0
    while rows := cursor.fetchmany(CHUNK):
        shifted = [moved(row[1:] if skip_first else row) for row in rows]
        digest.rows(shifted)
        out.executemany(insert, shifted)
        count += len(shifted)
    return count


# The Nth carried archive file's table T is `archiveN__T` in a mind file, and its schema (the SQL of its tables,
# then its indexes) `archiveN_schema`, to make the file anew where the mind is imported.
ARCHIVE_PREFIX = "archive"


def _archive_tables(archive: sqlite3.Connection, n: int) -> list[Table]:
    """The tables of an archive file, as the Nth archive file's tables of a mind file (its mind column, if any, kept aside)."""
    found = []
    for (name,) in archive.execute("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"):
        info = archive.execute(f'PRAGMA table_info("{name}")').fetchall()
        columns = [row[1] for row in info]
        mind_column = "mind" if "mind" in columns else ""
        key = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5] > 0 and row[1] != mind_column]
        found.append(Table(f"{ARCHIVE_PREFIX}{n}__{name}", mind_column, tuple(c for c in columns if c != mind_column), tuple(key), False, name))
    return found


def _ordered(table: Table) -> str:
    return f" ORDER BY {', '.join(map(_q, table.order))}" if table.order else " ORDER BY rowid"


def _lowest(source: sqlite3.Connection, space: str, mind: str) -> int:
    """The smallest id of the mind in `space` (for events, archived ones too), or 1 when it has none."""
    (low,) = source.execute(f"SELECT min(id) FROM {_q(space)} WHERE mind = ?", [mind]).fetchone()
    if space == "events":  # events moved to an archive file are still cited (cuts, archive runs): they count from 1 too
        (archived,) = source.execute(f"SELECT min(first_id) FROM {_q('archives')} WHERE mind = ?", [mind]).fetchone()
        low = min(x for x in (low, archived) if x is not None) if (low, archived) != (None, None) else None
    return int(low) if low is not None else 1


# --- import ----------------------------------------------------------------------------------------------------------


def import_mind(db: Database, path: Path, name: str, archive_dir: Path | None = None) -> Manifest:
    """Write the mind of the file at `path` into the store as mind `name`; run it as a writer job.

    Archive files it carries (`--with-archives`) are written anew in
    `archive_dir`, and the mind's archive runs name them there.

    Every row gets new ids after the store's largest (links and citations
    move with them). The checksum is checked as the rows are read; a file
    that does not match, cannot be read to its end or names a column this
    store does not have raises ImportRefused, and the job (so the whole
    import) is rolled back: nothing of it is left behind. That the name is
    free is the caller's to check, in the same job.
    """
    manifest = read_manifest(path)
    conn = open_file(path)
    written: list[Path] = []
    try:
        return _import(db, conn, manifest, name, archive_dir, written)
    except BaseException:
        for made in written:  # nothing of a refused import is left behind, archive files neither
            made.unlink(missing_ok=True)
        raise
    finally:
        conn.close()


def _archive_places(manifest: Manifest, name: str, archive_dir: Path | None) -> dict[str, str]:
    """Where each archive file the mind file carries is written here: `{archive:N}` -> a new path in `archive_dir`."""
    if manifest.archive_files and archive_dir is None:
        raise ImportRefused("the file carries archive files, and this noemad has no archive directory to put them in")
    places: dict[str, str] = {}
    for n, file_name in enumerate(manifest.archive_files, 1):
        assert archive_dir is not None
        base = Path(file_name.replace(MIND, name)).name  # a name, never a path elsewhere
        target, k = archive_dir / base, 1
        while target.exists() or str(target) in places.values():  # an old file of another mind of that name stays as it is
            target, k = archive_dir / f"{Path(base).stem}-imported{k}{Path(base).suffix}", k + 1
        places[f"{{archive:{n}}}"] = str(target)
    return places


def _import(db: Database, conn: sqlite3.Connection, manifest: Manifest, name: str, archive_dir: Path | None, written: list[Path]) -> Manifest:
    try:
        return _import_rows(db, conn, manifest, name, archive_dir, written)
    except sqlite3.IntegrityError as exc:
        raise ImportRefused(f"the file's rows do not hold together here ({exc}); nothing was imported: export the mind again") from None
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc):
            raise  # the store is full (the file is only read): the writer reports it as it does for any write
        raise ImportRefused(f"the file could not be read to its end ({exc}); nothing was imported: copy it again and retry") from None


_ARCHIVE_TABLE = re.compile(rf"^{ARCHIVE_PREFIX}(\d+)(?:__(\w+)|_schema)$")


def _import_rows(db: Database, conn: sqlite3.Connection, manifest: Manifest, name: str, archive_dir: Path | None, written: list[Path]) -> Manifest:
    tables = {t.name: t for t in exported_tables(db.conn)}
    for listed, columns in manifest.tables.items():
        if _ARCHIVE_TABLE.match(listed):
            continue  # an archive file's table: written to its file, in its own shape
        here = tables.get(listed)
        unknown = [c for c in columns if here is None or c not in here.columns]
        if unknown:
            raise ImportRefused(
                f"the file holds {'table ' + listed if here is None else 'columns ' + ', '.join(unknown) + ' of ' + listed}, which this"
                f" noemad ({__version__}) does not know: it came from a newer noemad (schema {manifest.schema_version}); upgrade noemad here, then import it"
            )
    # The file counts each space from 1: its ids go after the largest this store has handed out.
    places = _archive_places(manifest, name, archive_dir)
    move = Move({space: (0, _highest(db, space)) for space in _spaces(list(tables.values()))}, (MIND, name), places)

    unrecorded("an imported mind arrives with its own events, as it recorded them; the daemon's log says who imported it")
    digest = Digest()
    archives: dict[str, sqlite3.Connection] = {}
    try:
        for table_name, columns in manifest.tables.items():
            carried = _ARCHIVE_TABLE.match(table_name)
            if carried is None:
                known = tables[table_name]
                table = Table(table_name, known.mind_column, tuple(columns), known.order, known.space)
                target = db.conn
            else:
                n, like = carried.group(1), carried.group(2)
                if like is None:  # the file's schema: the file is made here
                    target = archives[n] = _new_archive(Path(places[f"{{archive:{n}}}"]), written)
                    table = Table(table_name, "", tuple(columns), (), False)
                else:
                    target = archives[n]
                    has_mind = any(row[1] == "mind" for row in target.execute(f"PRAGMA table_info({_q(like)})"))
                    table = Table(table_name, "mind" if has_mind else "", tuple(columns), (), False, like)
            count = _copy_in(conn, target, table, move, digest, name, schema=carried is not None and carried.group(2) is None)
            if count != manifest.counts.get(table_name):
                raise ImportRefused(
                    f"the file holds {count} rows of {table_name} where its manifest says {manifest.counts.get(table_name)};"
                    " nothing was imported: export the mind again"
                )
        if digest.hexdigest() != manifest.checksum:
            raise ImportRefused("the file does not match its checksum: it was changed or damaged since it was exported; nothing was imported: export the mind again")
    finally:
        for archive in archives.values():
            _close_archive(archive)
    return manifest


def _copy_in(conn: sqlite3.Connection, target: sqlite3.Connection, table: Table, move: Move, digest: Digest, name: str, schema: bool) -> int:
    """Write the file's rows of `table` (checksummed as read) into `target`: the store, or an archive file made anew; how many."""
    digest.table(table.name, table.columns)
    cursor = conn.execute(f"SELECT {', '.join(map(_q, table.columns))} FROM {_q(table.name)} ORDER BY rowid")
    count = 0
    if schema:  # an archive file's tables, then its indexes
        for row in cursor.fetchall():
            digest.rows([row])
            target.execute(row[2])
            count += 1
        return count
    into, width = table.like or table.name, len(table.columns)
    per = max(1, min(ROWS_PER_INSERT, target.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // max(width, 1)))
    rewritten = table.rewriter(move)
    inserts: dict[int, str] = {}  # rows -> the INSERT of that many, made when first needed (most tables are empty)
    while rows := cursor.fetchmany(CHUNK):
        digest.rows(rows)
        values = list(chain.from_iterable(rows if rewritten is None else map(rewritten, rows)))  # every row's, one after another
        for start in range(0, len(rows), per):
            n = min(per, len(rows) - start)
            insert = inserts.get(n) or inserts.setdefault(n, table.insert(move, into, name, n))
            target.execute(insert, values[start * width : (start + n) * width])
        count += len(rows)
    return count


def _new_archive(path: Path, written: list[Path]) -> sqlite3.Connection:
    """A new, private archive file at `path` (removed again if the import fails)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    written.append(path)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=OFF")  # a file nobody reads yet: a failed import deletes it
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    return conn


def _close_archive(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("COMMIT")
        (path,) = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
    finally:
        conn.close()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # on disk before the store names it
    finally:
        os.close(fd)


def _highest(db: Database, space: str) -> int:
    """The largest id `space` has handed out in this store (its AUTOINCREMENT counter, or its largest row)."""
    (seq,) = db.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = ?", [space]).fetchone()
    (top,) = db.execute(f"SELECT coalesce(max(id), 0) FROM {_q(space)}").fetchone()
    return max(int(seq), int(top))

