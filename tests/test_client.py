"""noemactl's client: an answer of the wrong shape is a `CtlError` with a sentence, not a traceback later."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from noemactl.client import Client
from noemactl.errors import CtlError


def client_answering(body: object) -> Client:
    """A `Client` whose every request is answered 200 with `body` as JSON (no daemon, no socket)."""
    client = Client(Path("/nonexistent/noemad.sock"))
    client._http = httpx.Client(transport=httpx.MockTransport(lambda _: httpx.Response(200, json=body)), base_url="http://noemad")
    return client


def test_an_object_answer_is_returned_unchanged() -> None:
    with client_answering({"version": "1"}) as client:
        assert client.status() == {"version": "1"}


def test_a_list_where_an_object_is_expected_is_a_clear_error() -> None:
    with client_answering([1, 2]) as client, pytest.raises(CtlError) as caught:
        client.status()
    assert str(caught.value) == (
        "noemad answered GET /api/v1/status with list, not an object; is /nonexistent/noemad.sock noemad's socket?"
    )


def test_a_list_of_archives_must_hold_objects() -> None:
    with client_answering([{"id": 1}]) as client:
        assert client.archives("ada") == [{"id": 1}]
    with client_answering({"id": 1}) as client, pytest.raises(CtlError, match="other than a list of objects"):
        client.archives("ada")
