"""The dashboard's pages in process: what they show, that stored text stays text, the CSP, and the graph layout."""

from __future__ import annotations

import re
from typing import Any

from noemad.dashboard.layout import lay_out, overlaps
from noemad.dashboard.svg import CALL_CHARS, _call_line
from noemad.dashboard.svg import timeline as draw
from tests.inprocess import InProcess

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="alert(1)">'


def page(app: InProcess, path: str) -> tuple[int, str, Any]:
    answer = app.run(app.client.get(path))
    return answer.status_code, answer.text, answer.headers


def say(app: InProcess, mind: str, text: str) -> int:
    answer = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "text": text, "author": "eve", "channel": "cli"})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def test_pages_answer_html_under_a_strict_policy(app: InProcess, mind: str) -> None:
    event = say(app, mind, "hello")
    for path in ("/", f"/minds/{mind}", f"/minds/{mind}/background", f"/events/{event}/timeline"):
        status, body, headers = page(app, path)
        assert status == 200, (path, body)
        assert headers["content-type"].startswith("text/html")
        policy = headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy and "unsafe-inline" not in policy
        assert "<main" in body and "<nav" in body and "<title>" in body
        # No inline script or style: only the files noemad serves itself.
        assert re.findall(r"<script[^>]*>", body) == ['<script src="/static/dashboard.js" defer>']
        assert " style=" not in body


def test_stored_text_is_shown_as_text_not_markup(app: InProcess, mind: str) -> None:
    event = say(app, mind, HOSTILE)
    for path in (f"/minds/{mind}", f"/events/{event}/timeline"):
        _, body, _ = page(app, path)
        assert "<script>window.pwned" not in body and "<img src=x" not in body
        assert "&lt;script&gt;window.pwned" in body


def test_an_unknown_mind_or_event_is_a_page_saying_so(app: InProcess) -> None:
    status, body, _ = page(app, "/minds/nobody")
    assert status == 404 and "nobody" in body and "<main" in body
    status, body, _ = page(app, "/events/999999/timeline")
    assert status == 404
    status, _, _ = page(app, "/events/1/timeline?back=7")
    assert status == 422


def test_the_minds_page_lists_each_mind_with_its_mode_and_counts(app: InProcess, mind: str) -> None:
    say(app, mind, "first")
    app.settle(mind)  # the turn it wakes has written its events
    _, body, _ = page(app, "/")
    assert f'href="/minds/{mind}"' in body
    events = app.api("GET", f"/minds/{mind}").json()["events"]
    row = re.search(rf'<tr><td data-label="Mind"><a href="/minds/{mind}">{mind}</a></td>(.*?)</tr>', body)
    assert row is not None
    cells = dict(re.findall(r'<td data-label="([^"]+)">(.*?)</td>', row.group(1)))
    assert cells["Events"] == str(events)
    turns = app.api("GET", f"/minds/{mind}/events", params={"kind": "cycle_completed"}).json()["events"]
    at = turns[-1]["at"]
    assert turns and cells["Last turn"] == f'<time datetime="{at}" title="{at[:10]} {at[11:19]} UTC">{at[:10]} {at[11:16]} UTC</time>'


# Issue 22 item 11: the mind page shows what the API gives, in words a person reads.


def goal(app: InProcess, mind: str, **body: Any) -> None:
    answer = app.api("POST", f"/minds/{mind}/events", json={"kind": "goal", **body})
    assert answer.status_code == 201, answer.text
    app.settle(mind)


def test_the_goals_table_shows_each_goals_title_status_and_progress(app: InProcess, mind: str) -> None:
    goal(app, mind, title="ship the parser rewrite")
    goal(app, mind, title="write the release notes")
    goal(app, mind, goal=1, progress=0.4)
    _, body, _ = page(app, f"/minds/{mind}")
    table = body[body.index('id="goals"'):body.index('id="predictions"')]
    rows = [dict(re.findall(r'<td data-label="([^"]+)">(.*?)</td>', row)) for row in re.findall(r"<tr><td.*?</tr>", table)]
    assert [(r["Goal"], r["Status"], r["Progress"], r["Set by"]) for r in rows] == [
        ("ship the parser rewrite", "active", "40%", "an operator"),
        ("write the release notes", "active", "0%", "an operator"),
    ]
    assert all(r["Updated"].startswith("<time datetime=") for r in rows) and "Priority" not in table


def test_times_are_marked_for_the_reader_with_the_exact_time_on_hover(app: InProcess, mind: str) -> None:
    say(app, mind, "hello")
    app.settle(mind)
    goal(app, mind, title="tidy the wiki")
    for path in ("/", f"/minds/{mind}"):
        _, body, _ = page(app, path)
        shown = re.findall(r'<time datetime="([^"]+)" title="([^"]+)">([^<]+)</time>', body)
        assert shown, path
        for at, exact, text in shown:
            assert (exact, text) == (f"{at[:10]} {at[11:19]} UTC", f"{at[:10]} {at[11:16]} UTC")
        # No raw stored time is left in a cell.
        assert not re.search(r">\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z<", body), path
    _, body, _ = page(app, "/")
    assert 'id="daemon-status" data-now="2026-01-01T00:00:' in body  # what the script counts "5 minutes ago" from


def test_the_minds_page_names_itself_once(app: InProcess, mind: str) -> None:
    _, body, _ = page(app, "/")
    main = body[body.index("<main"):]
    assert re.findall(r">Minds<", main) == [">Minds<"]  # the page heading; the table's caption says "Every mind"


def test_the_rules_box_words_behaviours_as_the_cli_does(app: InProcess, mind: str) -> None:
    rule = {"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*"}, "behaviour": {"debounce": {"ms": 2000}}}
    assert app.api("POST", f"/minds/{mind}/rules", json={"rule": rule}).status_code == 201
    _, body, _ = page(app, f"/minds/{mind}")
    box = body[body.index('id="gate"'):body.index('id="live"')]
    assert "<strong>default: </strong>always (for stimuli no rule matches)" in box
    assert '<td data-label="Matches">kinds message; channel discord:*</td><td data-label="Behaviour">debounce 2000 ms</td>' in box
    assert "{&quot;" not in box and '{"' not in box  # no JSON


def test_the_timeline_page_draws_exactly_the_stored_edges(app: InProcess, mind: str) -> None:
    first = say(app, mind, "one")
    app.settle(mind)
    chain = app.api("GET", f"/events/{first}/chain").json()
    _, body, _ = page(app, f"/events/{first}/timeline")
    drawn = re.findall(r'<g class="link"><title>#(\d+) (\w+) #(\d+)', body)
    stored = sorted((str(e["from"]), e["kind"], str(e["to"])) for e in chain["edges"])
    assert sorted(drawn) == stored and stored
    nodes = re.findall(r'data-event="(\d+)"', body)
    assert sorted(map(int, nodes)) == sorted(n["id"] for n in chain["nodes"])
    # Each node links to the walk re-centred on it, with the controls kept.
    assert f'href="/events/{chain["nodes"][-1]["id"]}/timeline?back=6&amp;forward=6&amp;limit=200"' in body


def test_a_cut_walk_says_where_and_how_much(app: InProcess, mind: str) -> None:
    first = say(app, mind, "one")
    app.settle(mind)
    chain = app.api("GET", f"/events/{first}/chain", params={"forward": 1, "back": 0}).json()
    assert chain["truncation"]["truncated"]
    _, body, _ = page(app, f"/events/{first}/timeline?forward=1&back=0")
    assert f"{chain['truncation']['omitted_forward']} more consequences" in body
    assert 'class="cut"' in body


def test_a_long_model_call_line_is_cut_on_its_node_and_whole_in_its_tooltip() -> None:
    chain = synthetic_chain(3)
    node = next(n for n in chain["nodes"] if n["model_calls"])
    node["model_calls"][0]["model"] = "claude-sonnet-4-5-20250929"
    svg = draw(lay_out(chain), chain, {"back": 6, "forward": 6, "limit": 200})
    assert "\n◆ turn · claude-sonnet-4-5-20250929 · 10→5 tok · $0.0010</title>" in svg  # whole in the tooltip, under the label
    drawn = re.findall(r'class="node-call"[^>]*>([^<]*)</text>', svg)
    assert "◆ turn · claude… · 10→5 · $0.0010" in drawn and all(len(line) <= CALL_CHARS for line in drawn)
    big = {"role": "summarise", "model": "claude-haiku-4-5", "input_tokens": 123_456, "output_tokens": 789, "cost_usd": 0.1234}
    assert _call_line(big, CALL_CHARS) == "◆ summarise · 123k→789 · $0.1234"  # no room for the model: left out


def test_the_layout_is_deterministic_and_nothing_overlaps() -> None:
    chain = synthetic_chain(200)
    one, two = lay_out(chain), lay_out(chain)
    assert [(b.id, b.x, b.y) for b in one.boxes.values()] == [(b.id, b.x, b.y) for b in two.boxes.values()]
    assert len(one.boxes) == 200 and overlaps(one) == 0
    # Model calls are drawn on their event: role, model, tokens, cost.
    svg = draw(one, chain, {"back": 6, "forward": 6, "limit": 200})
    assert svg.count(">◆ turn · m · 10→5 · $0.0010</text>") == sum(1 for n in chain["nodes"] if n["model_calls"])
    assert svg.count('class="frame"') == len(one.frames) and "correlation" in svg
    # Causes sit left of the root, consequences right.
    root = one.boxes[chain["root"]]
    for box in one.boxes.values():
        hop = box.node["hop"]
        assert (box.x < root.x) == (hop < 0) and (box.x > root.x) == (hop > 0)


def synthetic_chain(size: int) -> dict[str, Any]:
    """A walk of `size` events over hops -6..6 with cycles and model calls, shaped like GET /events/{id}/chain."""
    nodes, edges, groups = [], [], {}
    root = 1000
    for n in range(size):
        hop = 0 if n == 0 else ((n % 12) - 5 if (n % 12) - 5 != 0 else 6)
        node_id = root + n
        cycle = f"m/{n // 7}" if n % 3 else None
        nodes.append({"id": node_id, "kind": "message", "actor": "user:a", "text": f"event {n}", "hop": hop, "cycle_id": cycle,
                      "model_calls": [{"id": n, "role": "turn", "model": "m", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.001}] if n % 5 == 0 else []})
        if cycle:
            groups.setdefault(cycle, []).append(node_id)
    by_hop: dict[int, list[int]] = {}
    for node in nodes:
        by_hop.setdefault(node["hop"], []).append(node["id"])
    for node in nodes:
        hop = node["hop"]
        nearer = hop - 1 if hop > 0 else hop + 1
        if hop != 0 and nearer in by_hop:
            other = by_hop[nearer][node["id"] % len(by_hop[nearer])]
            src, dst = (node["id"], other) if hop < 0 else (other, node["id"])
            edges.append({"from": src, "to": dst, "kind": ("caused", "parent", "cited")[node["id"] % 3]})
    return {
        "root": root, "nodes": nodes, "edges": edges,
        "groups": [{"cycle_id": c, "label": "correlation", "events": ids} for c, ids in sorted(groups.items()) if len(ids) > 1],
        "truncation": {"truncated": True, "by": ["limit"], "omitted_back": 3, "omitted_forward": 4},
        "limits": {"back": 6, "forward": 6, "limit": 200},
    }
