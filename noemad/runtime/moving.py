"""Moving a mind between hosts (`sup.moving`): export it to a file, import one.

An export reads one snapshot off the event loop, into a file in the data
directory that the API streams to the client and then removes (as a backup
is sent). An import runs as one writer job: the name checked free and the
rows written in the same transaction, so a refused or failed import leaves
nothing behind; the new mind's actor starts once it has committed.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from noemad.archive.cuts import archives
from noemad.background.jobs import KINDS as JOB_KINDS
from noemad.background.jobs import finish_job, running_job
from noemad.clock import Clock, iso
from noemad.errors import InvalidInput, MindExists, MindNotFound
from noemad.minds import Mind, check_name, get_mind
from noemad.paths import Paths
from noemad.store import Store
from noemad.store.mindfile import Manifest, read_manifest
from noemad.store.transfer import export_mind, import_mind
from noemad.wire import wire

log = logging.getLogger("noemad")
MOVED_WHILE_RUNNING = "the mind was exported while this job ran; run it again where the mind is now"


@wire
@dataclass(frozen=True)
class MindImported:
    """A mind file imported: the mind it became and what the file said of itself."""

    mind: str
    """The mind's name here."""
    exported_as: str
    """Its name where it was exported."""
    exported_at: str
    noemad_version: str
    """The noemad that exported it."""
    schema_version: str
    """The newest schema migration of the store it came from."""
    format_version: int
    checksum: str
    """`sha256:` and the digest of the content, checked before the import was committed."""
    rows: dict[str, int]
    """Rows imported, by table."""

    @classmethod
    def of(cls, mind: str, m: Manifest) -> MindImported:
        return cls(mind, m.mind, m.exported_at, m.noemad_version, m.schema_version, m.format_version, m.checksum, dict(m.counts))


class Moving:
    """A daemon's export and import: the store, clock and data directory, its open check, and what it does when a mind arrives."""

    def __init__(
        self, store: Store, clock: Clock, paths: Paths, check_open: Callable[[], None], arrived: Callable[[Mind], None]
    ) -> None:
        self.store = store
        self.clock = clock
        self.paths = paths
        self._check_open = check_open
        self._arrived = arrived  # the supervisor counts the mind's events, takes its settings and starts its actor

    def transfer_file(self, what: str) -> Path:
        """A new private path in the data directory for a mind file on its way out or in (the caller removes it)."""
        return self.paths.data_dir / f".{what}-{secrets.token_hex(8)}.noema"

    async def export_mind(self, mind: str, with_archives: bool = False, actor: str = "operator") -> tuple[Path, Manifest]:
        """Write mind `mind` into a new file in the data directory, from one snapshot; its path and manifest.

        `with_archives`: its archive files go in too (each once, however many runs share it).
        """
        self._check_open()
        db = self.store.reader()
        get_mind(db, mind)
        files = list(dict.fromkeys(Path(a.path) for a in archives(db, mind))) if with_archives else []
        gone = [str(f) for f in files if not f.is_file()]
        if gone:
            raise InvalidInput(f"mind {mind!r}'s archive file {gone[0]} is not there; put it back, or export without --with-archives")
        dest = self.transfer_file("export")
        manifest = await asyncio.to_thread(export_mind, self.store.path, mind, dest, iso(self.clock.now()), files)
        log.info("%s exported mind %s: %d events", actor, mind, manifest.events)
        return dest, manifest

    async def import_mind(self, path: Path, name: str | None, actor: str = "operator") -> MindImported:
        """Import the mind file at `path` as `name` (default: the name it was exported under); start its actor."""
        self._check_open()
        said = await asyncio.to_thread(read_manifest, path)  # refuse a bad file before the writer waits on it
        target = check_name(name or said.mind)

        now = self.clock.now()

        def job(db: Database) -> tuple[Mind, Manifest]:
            _check_free(db, target, name is None)
            manifest = import_mind(db, path, target, self.paths.data_dir / "archives")
            for kind in JOB_KINDS:
                running = running_job(db, target, kind)
                if running is not None:  # it ran on the host the mind left; nothing runs it here, and it would bar the next
                    finish_job(db, running.id, outputs={}, error=MOVED_WHILE_RUNNING, model_calls=[], now=now)
            return get_mind(db, target), manifest

        mind, manifest = await self.store.writer.run(job)
        self._arrived(mind)  # its connectors (named in this host's config) start as a created mind's do
        log.info("%s imported mind %s (exported as %s by noemad %s): %d events", actor, target, manifest.mind, manifest.noemad_version, manifest.events)
        return MindImported.of(target, manifest)


def _check_free(db: Database, name: str, as_exported: bool) -> None:
    try:
        get_mind(db, name)
    except MindNotFound:
        return
    hint = "import it under another name with --as NAME" if as_exported else "choose another name for --as"
    raise MindExists(f"a mind named {name!r} exists here already; {hint} (nothing was imported)")

