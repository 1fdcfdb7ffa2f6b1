"""The dashboard: server-rendered pages on noemad's socket, next to the API.

Pages: Minds (`/`), a mind (`/minds/{name}`), its Background tab
(`/minds/{name}/background`), a belief with its confidence over time
(`/beliefs/{id}`) and the timeline (`/events/{id}/timeline`).
Each page reads the API in process (`reads`), so it shows what the CLI
would; `noemactl ui` is how a browser reaches them. Every page answers
with a strict Content-Security-Policy: scripts and styles only from
`/static/`, nothing inline, nothing from elsewhere.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated

from fastapi import FastAPI, Path, Query, Request
from fastapi.responses import HTMLResponse, Response

from noemad.dashboard import pages
from noemad.dashboard.html import HEADERS
from noemad.dashboard.reads import ApiAnswer, Reader

STATIC = {"dashboard.css": "text/css; charset=utf-8", "dashboard.js": "text/javascript; charset=utf-8"}


def add_dashboard_routes(app: FastAPI) -> None:
    """Serve the pages on `app`, reading from its own /api/v1 routes."""
    api = Reader(app)
    router = app.router

    async def answer(render: object) -> Response:
        try:
            body = await render  # type: ignore[misc]
        except ApiAnswer as exc:
            return HTMLResponse(pages.error_page(exc.status, exc.detail), status_code=exc.status, headers=HEADERS)
        return HTMLResponse(body, headers=HEADERS)

    @router.get("/", include_in_schema=False)
    async def minds() -> Response:
        return await answer(pages.minds_page(api))

    @router.get("/minds/{mind}", include_in_schema=False)
    async def mind(mind: str, request: Request) -> Response:
        return await answer(pages.mind_page(api, mind, dict(request.query_params)))

    @router.get("/minds/{mind}/background", include_in_schema=False)
    async def background(mind: str) -> Response:
        return await answer(pages.background_page(api, mind))

    @router.get("/beliefs/{belief_id}", include_in_schema=False)
    async def belief(belief_id: Annotated[int, Path(ge=1)]) -> Response:
        return await answer(pages.belief_page(api, belief_id))

    @router.get("/events/{event_id}/timeline", include_in_schema=False)
    async def timeline(
        event_id: Annotated[int, Path(ge=1)],
        back: Annotated[int | None, Query(ge=0, le=6)] = None,
        forward: Annotated[int | None, Query(ge=0, le=6)] = None,
        limit: Annotated[int | None, Query(ge=1, le=200)] = None,
    ) -> Response:
        return await answer(pages.timeline_page(api, event_id, {"back": back, "forward": forward, "limit": limit}))

    @router.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in STATIC:
            return Response("no such file\n", status_code=404, media_type="text/plain")
        body = (files("noemad.dashboard") / "static" / name).read_bytes()
        return Response(body, media_type=STATIC[name], headers={"x-content-type-options": "nosniff", "cache-control": "no-cache"})
