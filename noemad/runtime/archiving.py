"""The supervisor's archiving (`sup.archiving`): archive a mind's old events, daily or asked, list its archives, walk inside one.

How far back a mind still reads bounds what may go: never events younger
than a day, nor than the mind's consolidation window (consolidation reads
every episode in it, and each episode's stimulus for its speaker).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from noemad.archive import cuts, file
from noemad.archive.run import ArchiveOutcome, archive_events
from noemad.clock import Clock, span_seconds
from noemad.config.schema import archive_older_than, schedule
from noemad.errors import EventNotFound, InvalidInput, NoemaError
from noemad.minds import get_mind, list_minds
from noemad.paths import Paths
from noemad.runtime.running_config import RunningConfig
from noemad.store import Store
from noemad.timeline import Timeline, WalkLimits, walk

DAY = 86400.0
LOOK_EVERY = 3600.0  # seconds of the daemon's clock between looks for minds due a daily archive
SCHEDULE_ACTOR = "schedule"
log = logging.getLogger("noemad.archive")


class Archiving:
    """A daemon's archiving: what it reads and writes (store, clock, data directory), its running config, and its open check."""

    def __init__(
        self, store: Store, clock: Clock, paths: Paths, running: RunningConfig, check_open: Callable[[], None]
    ) -> None:
        self.store = store
        self.clock = clock
        self.paths = paths
        self.running = running
        self._check_open = check_open
        self._archived_at: dict[str, float] = {}  # mind -> when its daily archive last ran (in this process)

    def archive_floor(self, mind: str) -> tuple[float, str]:
        """The youngest age (seconds) an archive of `mind` may take, and why."""
        window = schedule(self.running.config, mind, "consolidation").window
        span = span_seconds(window) or 0.0
        if span > DAY:
            return span, f"its consolidation window ([schedules.consolidation] window) is {window}, and consolidation reads every episode in it"
        return DAY, "the mind reads its recent past (its turns, reflection) for a day at least"

    async def archive(self, mind: str, older_than: str, *, dry_run: bool, actor: str) -> ArchiveOutcome:
        """Archive (or, dry, count) the mind's events older than the span `older_than`."""
        self._check_open()
        get_mind(self.store.reader(), mind)
        age = span_seconds(older_than)
        if age is None:
            raise InvalidInput(f"older_than={older_than[:40]!r} is not a span; write a number and a unit such as 90d or 26w")
        floor, why = self.archive_floor(mind)
        if age < floor:
            raise InvalidInput(
                f"archive only events older than {_days(floor)}, not {older_than}: {why}; ask for {_days(floor)} or more"
            )
        cutoff = self.clock.now() - age
        return await archive_events(self.store, self.clock, mind, cutoff, self.paths.data_dir / "archives", actor, dry_run=dry_run)

    async def archive_due(self) -> list[ArchiveOutcome]:
        """Run the daily archive of every mind that has one (`[archive]`, `[minds.NAME.archive]`) and has not run it for a day."""
        done: list[ArchiveOutcome] = []
        now = self.clock.now()
        for mind in list_minds(self.store.reader()):
            span = archive_older_than(self.running.config, self.running.settings_of(mind.name))
            if span == "off" or now - self._archived_at.get(mind.name, -DAY) < DAY:
                continue
            self._archived_at[mind.name] = now  # once a day, whatever the outcome: a refusal is logged, not retried in a loop
            try:
                outcome = await self.archive(mind.name, span, dry_run=False, actor=SCHEDULE_ACTOR)
            except NoemaError as exc:
                log.warning("the daily archive of mind %s did not run: %s", mind.name, exc.detail)
                continue
            if outcome.events:
                log.info("archived %d events of mind %s older than %s", outcome.events, mind.name, span)
            done.append(outcome)
        return done

    async def daily(self) -> None:
        """Look for minds due their daily archive every `LOOK_EVERY` until cancelled."""
        while True:
            try:
                await self.archive_due()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the look for minds due an archive failed; it looks again in an hour")
            await self.clock.sleep(LOOK_EVERY)

    def archives(self, mind: str) -> list[cuts.Archive]:
        """The mind's archive runs, oldest first."""
        db = self.store.reader()
        get_mind(db, mind)
        return cuts.archives(db, mind)

    def not_found(self, event_id: int, missing: EventNotFound) -> EventNotFound:
        """`missing`, or, when an archive holds the event, the same error saying which and how to walk it."""
        held = [a for a in cuts.holding(self.store.reader(), event_id) if file.holds(a.path, event_id)]
        if not held:
            return missing
        archive = held[0]
        return EventNotFound(
            f"event {event_id} is archived (archive {archive.id} of mind {archive.mind}, in {archive.path});"
            f" `noemactl timeline {event_id}` walks it there"
        )

    def archived_walk(self, event_id: int, limits: WalkLimits, missing: EventNotFound) -> Timeline:
        """The walk around `event_id` inside the archive that holds it; `missing` (re-raised with where it went) if none does."""
        held = cuts.holding(self.store.reader(), event_id)
        gone: list[str] = []
        for archive in held:
            try:
                db = file.open_readonly(archive.path)
            except FileNotFoundError:
                gone.append(archive.path)
                continue
            try:
                return walk(db, event_id, limits, archive=archive.path)
            except EventNotFound:
                continue
            finally:
                db.close()
        if gone:
            raise EventNotFound(
                f"event {event_id} is not in the store, and the archive that may hold it, {gone[0]}, is no longer there;"
                " put the file back to walk it"
            ) from None
        raise missing


def _days(seconds: float) -> str:
    days = seconds / DAY
    return f"{days:g}d" if days >= 1 else f"{seconds / 3600:g}h"
