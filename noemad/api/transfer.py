"""The routes that move a mind between hosts: its export as one file, and the import of one.

As with a backup, files cross the socket rather than naming paths: the
daemon writes an export into its own data directory and streams it; an
import's body is the file, written to the data directory, imported and
removed. So a member of the socket's group never makes the daemon's user
read or write a path of their choosing.
"""

from __future__ import annotations

import os
from typing import Annotated

from fastapi import Path, Query, Request
from fastapi.responses import FileResponse
from fastapi.routing import APIRouter
from starlette.background import BackgroundTask

from noemad.api.operator import Op
from noemad.runtime.moving import MindImported
from noemad.runtime.supervisor import Supervisor

V1 = "/api/v1"
IMPORT_PATH = V1 + "/minds/import"  # its body is a whole mind: the body limit does not apply (see BodyLimit)
MEDIA_TYPE = "application/vnd.sqlite3"
MindName = Annotated[str, Path(description="The mind's name.")]


def add_transfer_routes(api: APIRouter, sup: Supervisor) -> None:
    """Add GET /api/v1/minds/{mind}/export and POST /api/v1/minds/import."""

    @api.get(
        V1 + "/minds/{mind}/export",
        response_class=FileResponse,
        summary="A mind as one file, to import on another noemad",
        responses={200: {"content": {MEDIA_TYPE: {}}, "description": "The mind file (SQLite)."}},
    )
    async def export(
        mind: MindName,
        op: Op,
        archives: Annotated[bool, Query(description="Carry the mind's archive files too (its archived events, made anew where it is imported).")] = False,
    ) -> FileResponse:
        """Everything the mind is, read from one snapshot while the daemon goes on writing, as one SQLite file
        with a manifest (format, versions, row counts, a checksum of the content; see the README's "Moving a
        mind"). Headers say what it holds: `X-Noema-Mind`, `X-Noema-Events`, `X-Noema-Checksum`,
        `X-Noema-Format-Version`. 507 when it cannot be written, with the store untouched."""
        path, manifest = await sup.moving.export_mind(mind, with_archives=archives, actor=op.actor)
        return FileResponse(
            path,
            media_type=MEDIA_TYPE,
            headers={
                "X-Noema-Mind": manifest.mind,
                "X-Noema-Events": str(manifest.events),
                "X-Noema-Checksum": manifest.checksum,
                "X-Noema-Format-Version": str(manifest.format_version),
                "Cache-Control": "no-store",
            },
            background=BackgroundTask(path.unlink, missing_ok=True),
        )

    @api.post(IMPORT_PATH, response_model=MindImported, status_code=201, summary="Import a mind from its file")
    async def import_(
        request: Request,
        op: Op,
        as_: Annotated[str | None, Query(alias="as", max_length=64, description="The mind's name here (default: its name in the file).")] = None,
    ) -> MindImported:
        """The body is a file `GET /minds/{mind}/export` made (`application/vnd.sqlite3`). Its rows get new ids
        here, every link and citation kept, and its checksum is checked before anything is committed. Refused
        with nothing left behind: 422 for a file that is damaged, truncated, altered or from a newer noemad; 409
        when a mind of that name exists (give `as`); 507 when the disk is full."""
        path = sup.moving.transfer_file("import")
        try:
            # 0600 from the first byte: the file holds everything the mind holds.
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                async for chunk in request.stream():
                    out.write(chunk)
            return await sup.moving.import_mind(path, as_, actor=op.actor)
        finally:
            path.unlink(missing_ok=True)
