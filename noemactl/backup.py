"""`noemactl backup PATH`, a verified copy of noemad's store written by the client; `noemactl replica`, its Litestream replica.

noemad makes the snapshot (`VACUUM INTO`, consistent while it writes, checked
with `integrity_check`) and streams it over the socket; this side writes it
to PATH.part, checks it again with its own SQLite, fsyncs and renames it into
place, so PATH only ever names a whole, verified backup.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated

import typer

from noemactl.shared import JsonFlag, daemon_views, session
from noemactl.errors import CtlError
from noemactl.params import PlainCommand
from noemactl.received import receive, size_text, target_of


# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()

@commands.command("backup", cls=PlainCommand)
def backup(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(metavar="PATH", help="Where to write the backup (a new SQLite file).", show_default=False)],
    force: Annotated[bool, typer.Option("--force", help="Replace PATH if it exists.")] = False,
    json: JsonFlag = False,
) -> None:
    """Copy the whole store, consistent while noemad writes, verified before it is kept.

    The file is private to you (mode 0600): it holds everything the minds hold. To restore: stop noemad, put the backup in
    place of the database (`noemactl status` shows its path), remove the -wal and -shm files beside it, and start noemad.
    """
    target = target_of(path, "noema-backup.sqlite", force)
    s = session(ctx)
    said, (events, minds) = receive(target, s.client.backup, lambda part, said: (said, _verify(part)))
    size = target.stat().st_size
    data = {"path": str(target), "bytes": size, "events": events, "minds": minds, "migration": said.get("migration", ""), "integrity": "ok"}
    s.present(data, json, lambda: f"backed up {events} events of {minds} mind{'' if minds == 1 else 's'} ({size_text(size)}) to {target}; integrity ok")


def _verify(path: Path) -> tuple[int, int]:
    """Check the received file the way noemad checked the sent one; return its event and mind counts."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check(20)")]
            if problems != ["ok"]:
                raise CtlError(f"the backup arrived damaged ({'; '.join(problems)[:200]}); nothing was kept, try again")
            return conn.execute("SELECT count(*) FROM events").fetchone()[0], conn.execute("SELECT count(*) FROM minds").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise CtlError(f"the backup arrived damaged ({exc}); nothing was kept, try again") from None


@commands.command("replica", cls=PlainCommand)
def replica(ctx: typer.Context, json: JsonFlag = False) -> None:
    """Show the store's Litestream replica: replicating or not, how far behind, its last sync and position, its errors.

    [replica] in noemad.toml sets it up; `noemad restore --from-replica` brings the store back from it on a new host.
    Exits 1 when the replica is in trouble (failing, restarting, missing), so a check can run it.
    """
    s = session(ctx)
    data = s.client.replica()
    s.present(data, json, lambda: daemon_views().replica(data))
    if data["state"] in ("failing", "restarting", "missing"):
        raise typer.Exit(1)
