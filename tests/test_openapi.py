"""The OpenAPI document is accurate: real answers validate against it."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from conftest import Noemad


def check(doc: dict[str, Any], method: str, template: str, status: int, media: str, body: Any) -> None:
    op = doc["paths"][f"/api/v1{template}"][method.lower()]
    responses = op["responses"]
    assert str(status) in responses, f"{method} {template} answered {status}, which is not documented"
    content = responses[str(status)]["content"]
    assert media in content, f"{method} {template} {status} answered {media}, documented: {list(content)}"
    schema = content[media]["schema"]
    # Resolve $refs against the whole document.
    jsonschema.validate(body, {**schema, "components": doc["components"]})


@pytest.fixture
def doc(noemad: Noemad) -> dict[str, Any]:
    return noemad.api("GET", "/openapi.json").json()


def test_answers_match_the_document(noemad: Noemad, doc: dict[str, Any]) -> None:
    def call(method: str, template: str, path: str, expect: int, **kwargs: Any) -> Any:
        resp = noemad.api(method, path, **kwargs)
        assert resp.status_code == expect, resp.text
        check(doc, method, template, expect, resp.headers["content-type"], resp.json())
        return resp.json()

    call("POST", "/minds", "/minds", 201, json={"name": "ada", "settings": {"persona": "You are Ada."}})
    message = call(
        "POST", "/minds/{mind}/events", "/minds/ada/events", 201, json={"kind": "message", "author": "a", "text": "hi"}
    )
    call("POST", "/minds/{mind}/events", "/minds/ada/events", 201, json={"kind": "observation", "source": "s", "text": "t"})
    started = noemad.wait_for("ada", "cycle_completed")
    call("GET", "/status", "/status", 200)
    call("GET", "/minds", "/minds", 200)
    call("GET", "/minds/{mind}", "/minds/ada", 200)
    call("PATCH", "/minds/{mind}", "/minds/ada", 200, json={"settings": {"attention_capacity": 3}})
    call("PATCH", "/minds/{mind}", "/minds/ada", 422, json={"settings": {"attention_capacity": "x"}})
    call("GET", "/minds/{mind}/events", "/minds/ada/events", 200, params={"kind": "message"})
    call("GET", "/events/{event_id}", f"/events/{message['id']}", 200)
    call("GET", "/events/{event_id}/chain", f"/events/{started['causation_id']}/chain", 200)
    call("GET", "/events/{event_id}/chain", f"/events/{message['id']}/chain", 200, params={"back": 0, "limit": 2})
    # Errors are documented problem+json too.
    call("GET", "/minds/{mind}", "/minds/zed", 404)
    call("POST", "/minds", "/minds", 409, json={"name": "ada"})
    call("POST", "/minds", "/minds", 422, json={"name": "ada", "extra": 1})
    call("POST", "/minds/{mind}/events", "/minds/ada/events", 400, content=b"{", headers={"content-type": "application/json"})
    # Background jobs, schedules and rejection, with their errors.
    job = call("POST", "/minds/{mind}/jobs", "/minds/ada/jobs", 202, json={"kind": "consolidation"})
    noemad.wait_for("ada", "consolidation")
    done = call("GET", "/jobs/{job_id}", f"/jobs/{job['id']}", 200)
    assert done["status"] == "succeeded"
    call("GET", "/jobs", "/jobs", 200, params={"mind": "ada", "kind": "consolidation"})
    call("GET", "/schedules", "/schedules", 200)
    call("PUT", "/schedules/{kind}", "/schedules/reflection", 200, json={"paused": True})
    call("POST", "/minds/{mind}/jobs", "/minds/ada/jobs", 422, json={"kind": "dreaming"})
    call("PUT", "/schedules/{kind}", "/schedules/dreaming", 422, json={"paused": True})
    call("GET", "/jobs/{job_id}", "/jobs/999", 404)
    call("POST", "/memories/{memory_id}/reject", "/memories/1/reject", 422, json={"reason": "not a generalisation"})
    call("POST", "/memories/{memory_id}/reject", "/memories/999/reject", 404, json={})
    call("DELETE", "/minds/{mind}", "/minds/ada", 200, json={"confirm": "ada"})


def test_every_route_documents_its_errors(doc: dict[str, Any]) -> None:
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert op.get("summary"), f"{method.upper()} {path} has no summary"
            for code in ("404", "422"):
                assert code in op["responses"], f"{method.upper()} {path} does not document {code}"
