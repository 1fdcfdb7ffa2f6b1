"""The backup route: a verified snapshot of the store, streamed to the client.

The daemon writes the snapshot into its own data directory and streams it
over the socket; the client writes the file where it likes, as its own user.
So a member of the socket's group never makes the daemon's user write to a
path of their choosing. The snapshot file is removed once sent (or failed).
"""

from __future__ import annotations

from fastapi.responses import FileResponse
from fastapi.routing import APIRouter
from starlette.background import BackgroundTask

from noemad.runtime.supervisor import Supervisor

V1 = "/api/v1"
MEDIA_TYPE = "application/vnd.sqlite3"


def add_backup_routes(api: APIRouter, sup: Supervisor) -> None:
    """Add GET /api/v1/backup."""

    @api.get(
        V1 + "/backup",
        response_class=FileResponse,
        summary="A consistent, verified copy of the store",
        responses={200: {"content": {MEDIA_TYPE: {}}, "description": "The SQLite database file."}},
    )
    async def backup() -> FileResponse:
        """The whole store as one SQLite file, made with `VACUUM INTO` while the daemon goes on writing.

        It passed `PRAGMA integrity_check` before it was sent. Headers say what
        it holds: `X-Noema-Events`, `X-Noema-Minds`, `X-Noema-Migration` (the
        newest schema migration in it). One backup at a time (409 while one
        is made); 507 when it cannot be written, with the store untouched.
        To restore, see noemactl backup in the README.
        """
        made = await sup.backup()
        return FileResponse(
            made.path,
            media_type=MEDIA_TYPE,
            headers={
                "X-Noema-Events": str(made.events),
                "X-Noema-Minds": str(made.minds),
                "X-Noema-Migration": made.migration,
                "Cache-Control": "no-store",
            },
            background=BackgroundTask(made.path.unlink, missing_ok=True),
        )
