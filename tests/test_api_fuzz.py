"""A short fuzz of the API from its own OpenAPI document: no request is answered 5xx.

Schemathesis would do this; it is not a dependency, so this is the same idea
in a page of hypothesis: every operation of `/api/v1/openapi.json` gets
requests whose path, query and body are drawn from the document's schemas,
bent at the edges (a bound and one past it, ids past SQLite's range, bools
where numbers go, any JSON where a field's shape is expected, unknown keys).
Whatever the request, the answer is a 2xx or a 4xx with a problem+json
body: a 5xx means a bug. The in-process tier keeps it to seconds; the
examples are derandomized so CI sees the same requests every run.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inprocess import InProcess

SKIP = {
    ("get", "/api/v1/minds/{mind}/events/stream"),  # follows the mind until it ends: not a request-answer
    ("post", "/api/v1/clock/advance"),  # test daemons only; years of manual time run every schedule
}
EDGE_INTS = [0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def value(schema: dict[str, Any], doc: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values a schema admits, and some at or past its edges; sometimes any JSON at all."""
    schema = _resolve(schema, doc)
    hostile = JSON if depth else st.nothing()
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return st.one_of(*[value(s, doc, depth + 1) for s in schema[key]], hostile)
    if "const" in schema:
        return st.just(schema["const"]) | hostile
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | hostile
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        edges = [x for x in (low, high, None if low is None else low - 1, None if high is None else high + 1) if x is not None]
        return st.integers(min_value=low, max_value=high) | st.sampled_from(EDGE_INTS + edges) | st.booleans() | hostile
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers() | st.booleans() | st.sampled_from([1e308, -0.0]) | hostile
    if kind == "boolean":
        return st.booleans() | st.sampled_from([0, 1, "true"]) | hostile
    if kind == "string":
        examples = [str(x) for x in schema.get("examples", [])]
        spans = ["30m", "2h", "7d", "99999999d", "2026-01-01T00:00:00Z", "0001-01-01", "9999-12-31T23:59:59Z", ""]
        return st.text(max_size=30) | st.sampled_from(examples + spans + ["ada", "\x00", "é" * 300]) | hostile
    if kind == "array":
        return st.lists(value(schema.get("items", {}), doc, depth + 1), max_size=3) | hostile
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        body = st.fixed_dictionaries(
            {k: value(v, doc, depth + 1) for k, v in props.items() if k in required},
            optional={k: value(v, doc, depth + 1) for k, v in props.items() if k not in required} | {"unknown": JSON},
        )
        return body | hostile
    return JSON


def _param(param: dict[str, Any], doc: dict[str, Any]) -> st.SearchStrategy[Any]:
    if param["name"] == "mind":
        return st.sampled_from(["ada", "nobody"]) | st.text(min_size=1, max_size=10)
    return value(param.get("schema", {}), doc)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from inprocess import start_app

    app = start_app(tmp_path_factory.mktemp("fuzz"))
    assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    yield app
    app.stop()


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_no_request_drawn_from_the_openapi_document_is_answered_5xx(engine: InProcess, data: st.DataObject) -> None:
    doc = _document(engine)
    operations = sorted((method, path) for path, ops in doc["paths"].items() for method in ops if (method, path) not in SKIP)
    method, path = data.draw(st.sampled_from(operations), label="operation")
    op = doc["paths"][path][method]
    url = path
    query: dict[str, Any] = {}
    for param in op.get("parameters", []):
        if param["in"] == "path":
            drawn = data.draw(_param(param, doc), label=param["name"])
            url = url.replace("{" + param["name"] + "}", urllib.parse.quote(str(drawn), safe="") or "x")
        elif param["in"] == "query" and data.draw(st.booleans(), label=f"send {param['name']}"):
            drawn = data.draw(_param(param, doc), label=param["name"])
            query[param["name"]] = drawn if isinstance(drawn, (str, int, float)) else str(drawn)
    kwargs: dict[str, Any] = {"params": query}
    body = op.get("requestBody")
    if body is not None:
        schema = body["content"]["application/json"]["schema"]
        kwargs["json"] = data.draw(value(schema, doc), label="body")
    answer = engine.api(method.upper(), url.removeprefix("/api/v1"), **kwargs)
    assert answer.status_code < 500, f"{method.upper()} {url} {kwargs} -> {answer.status_code} {answer.text}"
    if answer.status_code >= 400:
        assert answer.headers["content-type"] == "application/problem+json", answer.text


_DOC: dict[str, Any] = {}


def _document(engine: InProcess) -> dict[str, Any]:
    if not _DOC:
        _DOC.update(engine.api("GET", "/openapi.json").json())
    return _DOC
