"""Every route noemactl's client builds from what an operator typed sends that text as one exact path segment.

Each `Client` method is called twice on a transport that only records the
request: once with a plain word for every text argument, once with a text that
a URL would otherwise bend ("..", ".", "a/b", "?#% "). The second request must
have the same segments as the first, the odd text in each place the word was,
so no input can reach another route (`rules rm dot ..` once sent
`DELETE /minds/dot`, the delete-mind route).
"""

from __future__ import annotations

import inspect
import io
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from noemactl.client import Client
from noemactl.errors import BadInput

ODD = ("..", ".", "a/b", "?#% x", "%2E%2E")
WORD = "plain"


def _recorder(seen: list[httpx.Request]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.headers.get("accept") == "text/event-stream":
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")
        if request.method == "GET" and request.url.path.endswith("/archives"):
            return httpx.Response(200, json=[])  # the one route that answers a list: the client checks the shape
        return httpx.Response(200, json={})

    return httpx.MockTransport(answer)


def _client(seen: list[httpx.Request]) -> Client:
    client = Client.__new__(Client)  # no socket transport to build: the recorder stands in for it
    client.socket = Path("/nonexistent/noemad.sock")
    client._http = httpx.Client(transport=_recorder(seen), base_url="http://noemad", headers={"accept": "application/json"})
    return client


def _arguments(method: Any, text: str) -> dict[str, Any]:
    """An argument for each parameter: `text` for every str, something harmless for the rest."""
    args: dict[str, Any] = {}
    for name, param in inspect.signature(method).parameters.items():
        annotation = str(param.annotation)
        if annotation == "str" or annotation.startswith("str |"):
            args[name] = text
        elif "BinaryIO" in annotation:
            args[name] = io.BytesIO()
        elif param.default is not inspect.Parameter.empty:
            continue
        elif "int" in annotation or "float" in annotation:
            args[name] = 1
        elif "bool" in annotation:
            args[name] = False
        else:
            args[name] = {}
    return args


def _send(client: Client, name: str, text: str) -> None:
    method = getattr(client, name)
    result = method(**_arguments(method, text))
    if name == "stream":
        with result as messages:
            list(messages)


def _segments(request: httpx.Request) -> list[str]:
    return [unquote(part) for part in request.url.raw_path.split(b"?")[0].decode().split("/")]


METHODS = sorted(
    name
    for name, member in inspect.getmembers(Client, inspect.isfunction)
    if not name.startswith("_") and name not in ("close", "request")
    and any(str(p.annotation).startswith("str") for p in inspect.signature(member).parameters.values())
)


def test_the_audit_covers_the_routes_built_from_names() -> None:
    for name in ("rule", "remove_rule", "move_rule", "mind", "delete_mind", "set_trust", "stream", "set_schedule", "ingest"):
        assert name in METHODS


@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("odd", ODD)
def test_every_text_argument_is_one_exact_path_segment(name: str, odd: str) -> None:
    plain: list[httpx.Request] = []
    bent: list[httpx.Request] = []
    _send(_client(plain), name, WORD)
    _send(_client(bent), name, odd)
    [want], [got] = plain, bent
    assert got.method == want.method
    expected = [odd if part == WORD else part for part in _segments(want)]
    assert _segments(got) == expected, f"{name}({odd!r}) sent {got.url.raw_path!r}"


def test_an_empty_name_is_refused_before_anything_is_sent() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(BadInput, match="empty"):
        _client(seen).remove_rule("ada", "")
    assert seen == []


def test_a_name_holding_a_slash_or_dots_reaches_its_route_as_the_client_sends_it(app: Any, mind: str) -> None:
    """Names may hold "/" (sensor/3) and be all dots: the daemon routes what the client encodes to the right place."""
    from noemactl.client import _segment

    for source in ("sensor/3", "..", "user:alice"):
        resp = app.api("PUT", f"/minds/{mind}/trust/{_segment(source)}", json={"value": 0.5})
        assert resp.status_code == 200, resp.text
        assert resp.json()["source"] == source
    listed = {t["source"] for t in app.api("GET", f"/minds/{mind}/trust").json()["trust"]}
    assert listed >= {"sensor/3", "..", "user:alice"}
    assert app.api("GET", f"/minds/{mind}").status_code == 200
