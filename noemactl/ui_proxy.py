"""The loopback proxy `noemactl ui` serves: it lets a browser reach noemad's dashboard.

Browsers cannot open a Unix socket, so this serves 127.0.0.1 (never another
address) and forwards to the socket, as the user who ran it: whoever may use
the socket may use the dashboard, and nobody else on the machine can. It
forwards only the dashboard's pages and `/api/v1/...`; anything else is 404
here and never reaches noemad.

Access takes a one-time token, printed in the URL (`?token=...`, as Jupyter
does). The first request with it answers with a redirect that sets a session
secret as an HttpOnly, SameSite=Strict cookie and drops the token from the
address; the token then works no more (an address seen later in a terminal's
scrollback opens nothing), and a request with neither is 401. A request that changes state (not
GET/HEAD) also needs a same-origin check: its Origin must be this proxy and
Sec-Fetch-Site, when sent, `same-origin`; so another site open in the same
browser cannot make it act (no CSRF). The Host header must name this proxy,
so a DNS-rebinding page cannot reach it under another name.
"""

from __future__ import annotations

import asyncio
import hmac
import re
import secrets
import socket as sockets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

COOKIE = "noema_ui"
LOOPBACK = "127.0.0.1"
# What is forwarded: the dashboard's pages and files, and the API. Nothing else.
FORWARDED = re.compile(
    r"^(/|/minds/[^/]+(/background)?|/beliefs/[0-9]+|/events/[0-9]+/timeline|/static/[A-Za-z0-9_.-]+|/api/v1/[^?#]*)$"
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
# Hop-by-hop headers (RFC 9110 7.6.1) and what the proxy owns: never passed on.
_DROP_REQUEST = frozenset({b"host", b"cookie", b"connection", b"keep-alive", b"te", b"upgrade", b"proxy-authorization", b"transfer-encoding"})
_DROP_RESPONSE = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "set-cookie"})


def forwarded(path: str) -> bool:
    """Whether `path` is one the proxy passes to noemad (the dashboard or the API)."""
    if any(part in (".", "..") for part in path.split("/")) or "//" in path:
        return False
    return FORWARDED.match(path) is not None


@dataclass
class Proxy:
    """The ASGI app: checks the token, the origin and the path, then forwards to noemad's socket."""

    socket: Path
    token: str
    port: int

    def __post_init__(self) -> None:
        self._client: httpx.AsyncClient | None = None
        self.session: str | None = None  # the cookie's value, made when the token is spent

    def _spend(self, given: str) -> bool:
        """Whether `given` is the token, not yet used; using it makes the session."""
        if self.session is not None or not _same(given, self.token):
            return False
        self.session = secrets.token_urlsafe(32)
        return True

    @property
    def origins(self) -> frozenset[str]:
        return frozenset({f"http://{LOOPBACK}:{self.port}", f"http://localhost:{self.port}"})

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            # No read timeout: the event stream stays open as long as the page does.
            self._client = httpx.AsyncClient(
                transport=httpx.AsyncHTTPTransport(uds=str(self.socket)),
                base_url="http://noemad",
                timeout=httpx.Timeout(30.0, read=None),
            )
        return self._client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method: str = scope["method"]
        path: str = scope["path"]
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        if headers.get("host") not in {o.removeprefix("http://") for o in self.origins}:
            await _plain(send, 421, "this proxy answers only to its own address (127.0.0.1 or localhost with its port)")
            return
        given = dict(query).get("token")
        if given is not None and method in SAFE_METHODS and self._spend(given):
            # Trade the one-time token in the address for a session cookie, and drop it from the address.
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            await send({
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", (path + ("?" + rest if rest else "")).encode("latin-1")),
                    (b"set-cookie", f"{COOKIE}={self.session}; HttpOnly; SameSite=Strict; Path=/".encode()),
                    (b"cache-control", b"no-store"),
                    (b"content-length", b"0"),
                ],
            })
            await send({"type": "http.response.body", "body": b""})
            return
        if self.session is None or not _same(_cookie(headers.get("cookie", "")), self.session):
            if given is not None and self.session is not None:
                await _plain(send, 401, "this address was already used (its token works once); stop `noemactl ui` and run it again for a new one")
            else:
                await _plain(send, 401, "open the address `noemactl ui` printed (it carries the token); this request has no valid token")
            return
        if method not in SAFE_METHODS and not self._same_origin(headers):
            await _plain(send, 403, "a request that changes state must come from the dashboard's own pages (same origin)")
            return
        if not forwarded(path):
            await _plain(send, 404, "not a dashboard page or an /api/v1 path; the proxy forwards nothing else")
            return
        await self._forward(scope, receive, send, method, [(k, v) for k, v in scope["headers"] if k.lower() not in _DROP_REQUEST])

    def _same_origin(self, headers: dict[str, str]) -> bool:
        site = headers.get("sec-fetch-site")
        if site is not None and site != "same-origin":
            return False
        return headers.get("origin") in self.origins

    async def _forward(self, scope: Scope, receive: Receive, send: Send, method: str, headers: list[tuple[bytes, bytes]]) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        request = self.client().build_request(method, target.decode("latin-1"), headers=headers, content=body)
        try:
            response = await self.client().send(request, stream=True)
        except httpx.TransportError:
            await _plain(send, 502, f"noemad does not answer on {self.socket}; start it with `noemad` and reload")
            return
        # Pump the answer while watching for the browser to leave: uvicorn drops writes to a
        # closed connection silently, so without the watch a finished page's event stream
        # would be read from noemad for ever (and hold up the proxy's shutdown).
        pump = asyncio.ensure_future(self._pump(response, send))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({pump, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, gone):
                task.cancel()
            await asyncio.gather(pump, gone, return_exceptions=True)
            await response.aclose()

    async def _pump(self, response: httpx.Response, send: Send) -> None:
        try:
            out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.multi_items() if k.lower() not in _DROP_RESPONSE]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            # Chunk by chunk, so the event stream (SSE) reaches the page as it is written.
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except (httpx.TransportError, OSError):
            pass  # noemad stopped or the browser left: the response just ends


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _cookie(header: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


async def _plain(send: Send, status: int, sentence: str) -> None:
    body = (sentence + "\n").encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store")],
    })
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def bind(port: int) -> sockets.socket:
    """A listening TCP socket on 127.0.0.1 (`port` 0: one the system picks); OSError if taken."""
    sock = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
    sock.setsockopt(sockets.SOL_SOCKET, sockets.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve(socket_path: Path, port: int, open_browser: bool, announce: Callable[[str], None]) -> None:
    """Run the proxy until interrupted; `announce` is given the URL to open once it listens."""
    import uvicorn

    listener = bind(port)
    port = listener.getsockname()[1]
    proxy = Proxy(socket_path, secrets.token_urlsafe(32), port)
    url = f"http://{LOOPBACK}:{port}/?token={proxy.token}"
    announce(url)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(proxy, log_level="warning", lifespan="off", access_log=False, timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[listener])
