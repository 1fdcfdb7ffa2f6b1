"""`noemactl export MIND FILE` and `noemactl import FILE [--as NAME]`: move a mind to another noemad.

noemad writes the export from one snapshot and streams it; this side writes
it to FILE.part, checks it with its own SQLite (whole, and carrying the
checksum noemad announced), fsyncs and renames it into place, so FILE only
ever names a whole export. An import sends the file; noemad checks it
(format, checksum) and writes it in one transaction, or refuses it and
stores nothing. With --socket or NOEMA_SOCKET either side may be another
host's noemad (its socket forwarded, e.g. `ssh -L`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated, Any

import typer

from noemactl.errors import BadInput, CtlError
from noemactl.params import PlainCommand
from noemactl.received import receive, size_text, target_of
from noemactl.shared import JsonFlag, MindArg, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command("export", cls=PlainCommand)
def export(
    ctx: typer.Context,
    mind: MindArg,
    path: Annotated[Path, typer.Argument(metavar="FILE", help="Where to write the mind (a new SQLite file).", show_default=False)],
    with_archives: Annotated[bool, typer.Option("--with-archives", help="Carry the mind's archive files too: its archived events, walkable where it is imported.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
    json: JsonFlag = False,
) -> None:
    """Write everything a mind is into one file, to import on another noemad (`noemactl import`).

    Its events with their links, beliefs and evidence, memories and their links, goals, predictions, notifications,
    wake rules and sleep, settings, trust, jobs and their findings and the model-call ledger, read from one snapshot
    while noemad goes on writing, with a manifest (versions, row counts, a checksum of the content). The file is
    private to you (mode 0600): it holds everything the mind holds. The mind stays here; remove it with `mind rm`.
    """
    target = target_of(path, mind + ".noema", force)
    s = session(ctx)
    manifest = receive(target, lambda out: s.client.export_mind(mind, out, with_archives), lambda part, said: _verify(part, said.get("checksum", "")))
    size = target.stat().st_size
    counts = manifest["counts"]
    data = {"mind": mind, "path": str(target), "bytes": size, "events": counts.get("events", 0), "checksum": manifest["checksum"], "rows": counts}
    s.present(
        data,
        json,
        lambda: f"exported mind {mind}: {_held(counts)} ({size_text(size)}) to {target}; {manifest['checksum'][:19]}…",
    )


def _verify(path: Path, announced: str) -> dict[str, Any]:
    """Check the received file is whole and carries the checksum noemad announced; its manifest."""
    import json

    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check(20)")]
            if problems != ["ok"]:
                raise CtlError(f"the export arrived damaged ({'; '.join(problems)[:200]}); nothing was kept, try again")
            values = dict(conn.execute("SELECT key, value FROM manifest").fetchall())
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise CtlError(f"the export arrived damaged ({exc}); nothing was kept, try again") from None
    if values.get("checksum") != announced:
        raise CtlError("the export arrived with another checksum than noemad announced; nothing was kept, try again")
    return {"checksum": values["checksum"], "counts": json.loads(values.get("counts", "{}"))}


@commands.command("import", cls=PlainCommand)
def import_(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(metavar="FILE", help="A file `noemactl export` wrote.", show_default=False)],
    as_name: Annotated[str | None, typer.Option("--as", metavar="NAME", help="The mind's name here (default: its name in the file).", show_default=False)] = None,
    json: JsonFlag = False,
) -> None:
    """Import a mind from a file `noemactl export` wrote, on this or another noemad of the same or a newer version.

    Its rows get new ids here, every link and citation kept, so `timeline`, `beliefs` and the dashboard answer as they
    did where it was exported. The file's checksum is checked before anything is kept: a damaged, truncated or altered
    file, one from a newer noemad, a name that exists here (use --as) or a full disk is refused with nothing stored.
    The mind starts running once imported.
    """
    source = path.expanduser()
    if not source.is_file():
        raise BadInput(f"{source} is not a file; give the path of a file `noemactl export` wrote")
    s = session(ctx)
    try:
        with source.open("rb") as handle:
            done = s.client.import_mind(handle, as_name)
    except OSError as exc:
        raise CtlError(f"cannot read {source}: {exc.strerror or exc}") from None
    rows = done.get("rows", {})
    renamed = f" (exported as {done['exported_as']})" if done.get("exported_as") != done.get("mind") else ""
    s.present(
        done,
        json,
        lambda: f"imported mind {done['mind']}{renamed}: {_held(rows)}, from noemad {done.get('noemad_version')} at {done.get('exported_at')}; checksum ok",
    )


def _held(rows: dict[str, int]) -> str:
    """What a mind file holds, in a few words: its events, beliefs and memories."""
    parts = []
    for table, one in (("events", "event"), ("beliefs", "belief"), ("memories", "memory")):
        n = rows.get(table, 0)
        parts.append(f"{n} {one if n == 1 else table}")
    return ", ".join(parts)
