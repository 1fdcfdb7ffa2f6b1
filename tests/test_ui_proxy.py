"""`noemactl ui`: the loopback proxy in front of noemad's socket, run for real.

It listens on 127.0.0.1 only; a request without its token (in the address or
as the cookie the address sets) is refused; a change needs the same origin;
only the dashboard and /api/v1 reach noemad; the event stream flows through.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import NOEMACTL, Noemad, own_noemad


@dataclass
class Ui:
    proc: subprocess.Popen[str]
    url: str  # as printed, with the token
    base: str
    token: str
    port: int

    session: str = ""

    def client(self, cookie: bool = True) -> httpx.Client:
        """A client with the session cookie (the token spent on the first call) or with none."""
        if cookie and not self.session:
            with httpx.Client(timeout=30) as first:
                self.session = first.get(self.url).cookies["noema_ui"]
        cookies = {"noema_ui": self.session} if cookie else {}
        return httpx.Client(base_url=self.base, cookies=cookies, timeout=30, follow_redirects=False)


def start_ui(daemon: Noemad, *args: str) -> Ui:
    env = {**os.environ, "NOEMA_SOCKET": str(daemon.socket), "NO_COLOR": "1"}
    proc = subprocess.Popen([NOEMACTL, "ui", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url, proc.stderr.read() if proc.stderr else ""
    parts = urlsplit(url)
    return Ui(proc, url, f"{parts.scheme}://{parts.netloc}", parts.query.removeprefix("token="), parts.port or 0)


@pytest.fixture(scope="module")
def noemad() -> Iterator[Noemad]:
    """One daemon for the module: each test starts its own proxy (a token works once) in front of it.

    The tests read through the proxy and change only what they name (a mind
    each), so they share the daemon rather than each starting one.
    """
    with own_noemad() as running:
        yield running


@pytest.fixture
def ui(noemad: Noemad) -> Iterator[Ui]:
    running = start_ui(noemad)
    yield running
    running.proc.terminate()
    running.proc.wait(timeout=30)


def test_the_address_is_loopback_with_a_token(ui: Ui) -> None:
    assert ui.base == f"http://127.0.0.1:{ui.port}" and len(ui.token) >= 32
    # Bound to 127.0.0.1 alone: another address of this machine finds nothing on the port.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", ui.port), timeout=5).close()


def test_a_request_without_the_token_is_refused(ui: Ui) -> None:
    with ui.client(cookie=False) as c:
        for path in ("/", "/api/v1/status", "/api/v1/minds"):
            answer = c.get(path)
            assert answer.status_code == 401 and "token" in answer.text
        assert c.get("/api/v1/status", params={"token": "not-it"}).status_code == 401
        assert c.get("/", headers={"cookie": "noema_ui=not-it"}).status_code == 401


def test_the_token_works_once_and_becomes_an_httponly_strict_cookie(ui: Ui) -> None:
    with ui.client(cookie=False) as c:
        answer = c.get(ui.url)
        assert answer.status_code == 303 and answer.headers["location"] == "/"
        cookie = answer.headers["set-cookie"]
        session = answer.cookies["noema_ui"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and session != ui.token
        assert c.get("/api/v1/status", headers={"cookie": f"noema_ui={session}"}).json()["version"]
    with ui.client(cookie=False) as c:
        # Spent: the address opens nothing a second time, and the token is no cookie.
        again = c.get(ui.url)
        assert again.status_code == 401 and "already used" in again.text
        assert c.get("/api/v1/status", headers={"cookie": f"noema_ui={ui.token}"}).status_code == 401


def test_only_the_dashboard_and_the_api_are_forwarded(ui: Ui) -> None:
    with ui.client() as c:
        assert c.get("/").status_code == 200
        assert c.get("/static/dashboard.css").status_code == 200
        assert c.get("/api/v1/status").status_code == 200
        for path in ("/api/v2/status", "/docs", "/openapi.json", "/minds/a/b/c", "/favicon.ico", "/events/1/chain"):
            answer = c.get(path)
            assert answer.status_code == 404 and "forwards nothing else" in answer.text, path
    # Sent as written (an HTTP client would resolve the dots first).
    for path in ("/static/../api/v1/status", "/api/v1/../../etc/passwd", "/minds/./x"):
        assert raw_get(ui, path).startswith("HTTP/1.1 404"), path


def raw_get(ui: Ui, path: str) -> str:
    with socket.create_connection(("127.0.0.1", ui.port), timeout=30) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{ui.port}\r\nCookie: noema_ui={ui.session}\r\nConnection: close\r\n\r\n".encode())
        return conn.recv(4096).decode("latin-1")


def test_a_change_needs_the_same_origin(ui: Ui, noemad: Noemad) -> None:
    body = {"name": "cleo"}
    before = [m["name"] for m in noemad.api("GET", "/minds").json()["minds"]]  # the minds other tests made
    assert "cleo" not in before
    with ui.client() as c:
        assert c.post("/api/v1/minds", json=body).status_code == 403  # no Origin at all
        assert c.post("/api/v1/minds", json=body, headers={"origin": "http://evil.example"}).status_code == 403
        cross = {"origin": ui.base, "sec-fetch-site": "cross-site"}
        assert c.post("/api/v1/minds", json=body, headers=cross).status_code == 403
        assert [m["name"] for m in noemad.api("GET", "/minds").json()["minds"]] == before
        same = {"origin": ui.base, "sec-fetch-site": "same-origin"}
        assert c.post("/api/v1/minds", json=body, headers=same).status_code == 201
        assert sorted(m["name"] for m in noemad.api("GET", "/minds").json()["minds"]) == sorted([*before, "cleo"])
    with ui.client(cookie=False) as c:  # the origin alone is not enough
        assert c.post("/api/v1/minds", json={"name": "bob"}, headers=same).status_code == 401


def test_another_host_name_is_refused(ui: Ui) -> None:
    with ui.client() as c:
        assert c.get("/api/v1/status", headers={"host": f"attacker.example:{ui.port}"}).status_code == 421


def test_the_event_stream_flows_through(ui: Ui, noemad: Noemad, mind: str) -> None:
    with ui.client() as c, c.stream("GET", f"/api/v1/minds/{mind}/events/stream") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines) == ": following"  # flushed before any event: nothing is buffered
        sent = noemad.api("POST", f"/minds/{mind}/events", json={"kind": "message", "text": "through the proxy", "author": "eve"}).json()
        for line in lines:
            if line.startswith("data: "):
                assert json.loads(line[6:])["id"] == sent["id"]
                break


def test_a_taken_port_is_a_clear_error(ui: Ui, noemad: Noemad) -> None:
    out = noemad.ctl("ui", "--port", str(ui.port))
    assert out.returncode == 2 and f"cannot listen on 127.0.0.1:{ui.port}" in out.stderr and "Traceback" not in out.stderr


def test_no_daemon_no_address(place) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "NOEMA_SOCKET": str(place / "none.sock")}
    out = subprocess.run([NOEMACTL, "ui"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 3 and "not running" in out.stderr and out.stdout == ""
