"""The dashboard reads what it shows from noemad's own API, in process.

Pages ask the same routes the CLI asks (`/api/v1/...`) through an ASGI
transport, so each page shows exactly what the API answers: one engine,
two views, and no second path to the store to keep in step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


class ApiAnswer(Exception):
    """The API refused what a page asked; the page shows its sentence with its status."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class Reader:
    """GETs on the app's own API, without a socket."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._client: httpx.AsyncClient | None = None

    async def get(self, path: str, **params: Any) -> Any:
        if self._client is None:
            # Made when a page is first asked for: httpx (and the CLI it pulls in) is
            # a tenth of a second of every daemon start, spent for no page at all.
            import httpx

            self._client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self._app), base_url="http://noemad")
        query = {k: v for k, v in params.items() if v is not None}
        answer = await self._client.get("/api/v1" + path, params=query)
        if answer.status_code != 200:
            try:
                detail = answer.json().get("detail") or answer.reason_phrase
            except ValueError:
                detail = answer.reason_phrase
            raise ApiAnswer(answer.status_code, str(detail))
        return answer.json()
