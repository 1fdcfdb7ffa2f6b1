"""The archive routes: archive a mind's old events (or count what would go), list its archives."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from fastapi.routing import APIRouter
from pydantic import Field

from noemad.api.operator import Op
from noemad.api.schemas import BodyIn
from noemad.archive.cuts import Archive
from noemad.archive.run import ArchiveOutcome
from noemad.runtime.supervisor import Supervisor

MindName = Annotated[str, Path(description="The mind's name.")]
V1 = "/api/v1"


class ArchiveIn(BodyIn):
    """Which events to archive."""

    older_than: str = Field(
        min_length=1, max_length=40, description="A span such as 180d or 26w: events older than this go (at least the mind's consolidation window, and a day)."
    )
    dry_run: bool = Field(False, description="Count what would go and stay, and write nothing.")


def add_archive_routes(api: APIRouter, sup: Supervisor) -> None:
    """Register the routes on the app's router (see `create_app` for why not an included router)."""

    @api.post(V1 + "/minds/{mind}/archive", response_model=ArchiveOutcome, summary="Archive a mind's old events into a file")
    async def archive(mind: MindName, body: ArchiveIn, op: Op) -> ArchiveOutcome:
        """Events older than `older_than` move into a new SQLite file under the data directory's `archives/`, chunk by
        chunk (each an `events_archived` event), except what the mind still stands on: a belief's evidence and history,
        goals', predictions' and notifications' events, a pending self-wake's, window anchors, generalisations' history,
        stimuli no cycle has taken, and every event of a cycle that keeps one. Where a kept event linked to an archived
        one the link is cut and the cut recorded: the timeline stops there and names the file. Answered when the run is
        over; 409 while another run of the mind goes on; 422 for a span younger than the mind still reads."""
        return await sup.archiving.archive(mind, body.older_than, dry_run=body.dry_run, actor=op.actor)

    @api.get(V1 + "/minds/{mind}/archives", response_model=list[Archive], summary="A mind's archives")
    def archives(mind: MindName) -> list[Archive]:
        """Each archive run, oldest first: its file, the cut-off, who ran it, when, how many events went and how many links were cut."""
        return sup.archiving.archives(mind)
