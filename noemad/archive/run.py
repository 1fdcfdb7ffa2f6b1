"""An archive run: chunk by chunk, newest first, each chunk one writer job.

Newest first because links only point to older events (an event can link
only to what was stored before it): a chunk's own links into older events
stay whole in the file, and by the time an older chunk goes, what linked to
it from newer chunks has gone before it. Each job takes its chunk afresh
inside its transaction (what is pinned may have changed since the last),
finds the cuts, writes and syncs the file, then records the cuts, deletes
the events and appends an `events_archived` event.

A dry run reads the same chunks on a reader and writes nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sqlite3
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated

from sqlite_utils import Database

from noemad.archive import cuts, file, select
from noemad.archive.cuts import Archive
from noemad.clock import Clock, iso
from noemad.errors import ArchiveFailed, ArchiveRunning
from noemad.events import EventDraft, append, remove_archived
from noemad.store import Store
from noemad.wire import OMIT_NONE, wire

CHUNK_IDS = 500  # ids per chunk: one writer job, holding the writer some tens of milliseconds (bench/archive.py)
_running: set[str] = set()  # minds with a run going in this process


@wire
@dataclass
class ArchiveOutcome:
    """What an archive run took (or, dry, would take) and what it left of the old events and why."""

    mind: str
    before: str
    """Events older than this were considered."""
    dry_run: bool
    events: int = 0
    """Events archived (or that a run would archive)."""
    pinned: int = 0
    """Old events kept: a live row (a belief's evidence, a goal, a prediction, a notification, a sleep, a window) or a belief's or generalisation's history holds them, or no cycle has taken them yet."""
    in_kept_cycles: int = 0
    """Old events kept because another event of their cycle stays."""
    cuts: int = 0
    """Links between a kept event and an archived one, each recorded where the walk will stop."""
    by_kind: dict[str, int] = field(default_factory=dict)
    """Archived events by kind (empty on a dry run)."""
    archive: Annotated[Archive | None, OMIT_NONE] = None
    """The archive written (absent on a dry run, and when nothing was old enough to go)."""


def _chunk_event(archive: Archive, ids: list[int], found: int, actor: str) -> EventDraft:
    return EventDraft(
        mind=archive.mind,
        kind="events_archived",
        actor=actor,
        text=f"archived {len(ids):,} events (#{min(ids)} to #{max(ids)}) older than {archive.before} into {Path(archive.path).name}",
        data={"archive": archive.id, "path": archive.path, "events": len(ids), "first_id": min(ids), "last_id": max(ids), "cuts": found, "finished": False},
    )


def _finish(db: Database, archive_id: int, outcome: ArchiveOutcome, actor: str, now: float) -> Archive:
    archive = cuts.finish(db, archive_id, now)
    left = outcome.pinned + outcome.in_kept_cycles
    append(
        db,
        EventDraft(
            mind=archive.mind,
            kind="events_archived",
            actor=actor,
            text=f"archive {archive.id} finished: {archive.events:,} events older than {archive.before} are in {Path(archive.path).name},"
            f" {archive.cuts:,} links cut; {left:,} old events kept",
            data={**_data(archive), "finished": True, "kept": left},
        ),
        now,
    )
    return archive


def _data(archive: Archive) -> dict[str, object]:
    return {"archive": archive.id, "path": archive.path, "events": archive.events, "first_id": archive.first_id, "last_id": archive.last_id, "cuts": archive.cuts}


def _count(store: Store, outcome: ArchiveOutcome, span: tuple[int, int], cutoff: float) -> None:
    """What a run would take and leave (a dry run), on this thread's reader."""
    reader = store.reader()
    for low, high in select.chunks(*span, CHUNK_IDS):
        taken = select.take(reader, outcome.mind, low, high, cutoff)
        outcome.events += len(taken.ids)
        outcome.pinned += taken.pinned
        outcome.in_kept_cycles += taken.in_kept_cycles
        outcome.cuts += len(cuts.find(reader, taken.ids))


async def archive_events(
    store: Store, clock: Clock, mind: str, cutoff: float, directory: Path, actor: str, *, dry_run: bool = False
) -> ArchiveOutcome:
    """Archive the mind's events older than `cutoff` into a new file under `directory` (see the module docstring)."""
    if mind in _running:
        raise ArchiveRunning(f"an archive of mind {mind!r} is already running; wait for it to finish (`noemactl archives {mind}`)")
    _running.add(mind)
    try:
        return await _run(store, clock, mind, cutoff, directory, actor, dry_run)
    finally:
        _running.discard(mind)


async def _run(store: Store, clock: Clock, mind: str, cutoff: float, directory: Path, actor: str, dry_run: bool) -> ArchiveOutcome:
    outcome = ArchiveOutcome(mind=mind, before=iso(cutoff), dry_run=dry_run)
    span = select.bounds(store.reader(), mind, cutoff)
    if span is None:
        return outcome
    if dry_run:
        await store.off_loop(lambda: _count(store, outcome, span, cutoff))  # reads a chunk at a time, off the loop
        return outcome

    conn: sqlite3.Connection | None = None
    archive: Archive | None = None

    def chunk(db: Database, low: int, high: int) -> None:
        nonlocal conn, archive
        taken = select.take(db, mind, low, high, cutoff)
        outcome.pinned += taken.pinned
        outcome.in_kept_cycles += taken.in_kept_cycles
        if not taken.ids:
            return
        now = clock.now()
        if archive is None:
            archive = cuts.begin(db, mind, directory, cutoff, actor, now)
        found = cuts.find(db, taken.ids)
        try:
            if conn is None:
                conn = file.open_file(Path(archive.path), db, archive)
            file.write_chunk(db, conn, archive, taken.ids)
        except (OSError, sqlite3.Error) as exc:
            raise ArchiveFailed(
                f"the archive file {archive.path} could not be written ({exc}); those events stay in the store."
                f" Free space in {directory} (or fix its permissions), then run the archive again"
            ) from None
        archive = cuts.record(db, archive.id, taken.ids, found)
        for kind, n in remove_archived(db, mind, taken.ids).items():
            outcome.by_kind[kind] = outcome.by_kind.get(kind, 0) + n
        append(db, _chunk_event(archive, taken.ids, len(found), actor), now)
        outcome.events += len(taken.ids)
        outcome.cuts += len(found)

    try:
        for low, high in select.chunks(*span, CHUNK_IDS):
            before = archive
            job = store.writer.submit(partial(chunk, low=low, high=high))
            try:
                await asyncio.wrap_future(job)
            except asyncio.CancelledError:
                # noemad is stopping: the chunk's job (if it began) runs to its end before its file is closed.
                await asyncio.to_thread(concurrent.futures.wait, [job])
                raise
            except BaseException:
                archive = before  # the job rolled back: its row (if it made it) is not stored
                raise
        if archive is not None:
            done = archive.id
            archive = await store.writer.run(lambda db: _finish(db, done, outcome, actor, clock.now()))
    finally:
        if conn is not None:
            await asyncio.to_thread(file.close_file, conn)
    outcome.archive = archive
    return outcome
