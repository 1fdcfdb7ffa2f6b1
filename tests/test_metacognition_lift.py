"""A warning lifts when its cause is gone: its counter-evidence is withdrawn, linked to the warning and to what lifted it.

A belief that drew `insufficient_evidence` and `single_source` from one
source was held down by their counter-evidence for good (confidence =
S x (1 - C), C about 0.34): eight sensors at trust 0.95 left "the reactor is
hot" at 0.66 and the strong-belief notification never fired. Now a second
independent source lifts both warnings; the property says it for any
history: with enough independent credible support, a belief ends at the
confidence its support alone gives.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inprocess import InProcess
from rich.console import Console

from noemactl import mind_view
from noemad.cognition.cycle import deliberate
from noemad.cognition.perceive import Perception
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.beliefs.model import FLUENT_KINDS
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.confidence import Item, side
from noemad.config.mind import MAX_ATTENTION_CAPACITY
from noemad.events import EventDraft, append
from noemad.minds import create_mind
from noemad.stimuli import as_stimulus
from noemad.store import Store

DAY = 86_400.0


# the property ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as place:
        s = Store(Path(place) / "n.db")
        s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 0.0, "operator"))
        yield s
        s.close()


_beliefs = count(1)
_clock = [0.0]  # one clock for every history in the store: the once-a-day rule looks back a day

Arriving = tuple[str, str, float, float]  # source, kind, weight, credibility
item = st.tuples(
    st.sampled_from(["s1", "s2", "s3"]),
    st.sampled_from(["observation", "assertion", "model_output"]),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
# Each step is one cycle: the items that arrive in it, then how long until the next (none, an hour, a day and more).
history = st.lists(st.tuples(st.lists(item, min_size=1, max_size=3), st.sampled_from([0.0, 3600.0, DAY + 1])), min_size=1, max_size=6)


def cycle(s: Store, proposition: str, items: list[Arriving], now: float) -> int:
    """As a cycle does: perceive the items (each brought by an observation), then deliberate with room for every thought."""

    def job(db: Any) -> int:
        seen = Perception()
        stimuli = []
        for source, kind, weight, credibility in items:
            cause = append(db, EventDraft("ada", "observation", f"source:{source}", text=proposition), now)
            held, changed = add_evidence(db, mind="ada", proposition=proposition, subject="reactor", kind=kind, stance="support",
                                         weight=weight, credibility=credibility, source=source, brought_by=cause.id, now=now, actor="test")
            stimuli.append(cause)
            seen.payloads.append(as_stimulus(cause))
            seen.beliefs.append(held.id)
            seen.events.append(changed)
        deliberate(db, mind="ada", stimuli=stimuli, perception=seen, size=MAX_ATTENTION_CAPACITY, cause=stimuli[-1].id, cycle_id="ada/1", now=now)
        return seen.beliefs[-1]

    return s.writer.run_sync(job)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history)
def test_with_enough_independent_credible_support_a_belief_reaches_the_confidence_its_support_alone_gives(
    store: Store, steps: list[tuple[list[Arriving], float]]
) -> None:
    proposition = f"the reactor is hot {next(_beliefs)}"
    _clock[0] += 10 * DAY
    belief = 0
    for items, wait in steps:
        belief = cycle(store, proposition, items, _clock[0])
        _clock[0] += wait
    held = get_belief(store.reader(), belief)
    support = [e for e in held.evidence if e.stance == "support"]
    alone = round(side(e.item() for e in support), 6)
    assert held.confidence <= alone  # counter-evidence never raises it
    credible = [e for e in support if e.item().strength > 0]
    enough = len({e.source for e in credible}) >= 2 and any(e.kind not in FLUENT_KINDS for e in credible)
    if enough:
        assert held.confidence == alone
        assert all(not e.standing for e in held.evidence if e.stance == "contradict")


# eight sensors, through the engine ------------------------------------------------------


def observe(app: InProcess, mind: str, source: str) -> dict[str, Any]:
    body = {
        "kind": "observation",
        "source": source,
        "text": "the reactor is hot",
        "claim": {"proposition": "the reactor is hot", "subject": "reactor", "stance": "supports"},
    }
    resp = app.api("POST", f"/minds/{mind}/events", json=body)
    assert resp.status_code == 201, resp.text
    stored = resp.json()
    app.wait_for(mind, "cycle_completed", since=stored["id"])
    return stored


def test_eight_sensors_lift_the_warnings_and_a_strong_belief_notifies(app: InProcess) -> None:
    assert app.api("POST", "/minds", json={"name": "ada", "settings": {"notify_proactively": True}}).status_code == 201
    sensors = [f"sensor-{n}" for n in range(1, 9)]
    for sensor in sensors:
        assert app.api("PUT", f"/minds/ada/trust/{sensor}", json={"value": 0.95}).status_code == 200
    first = observe(app, "ada", sensors[0])
    [listed] = app.api("GET", "/minds/ada/beliefs").json()["beliefs"]
    warnings = app.api("GET", "/minds/ada/events", params={"kind": "metacognition"}).json()["events"]
    assert sorted(w["data"]["check"] for w in warnings) == ["insufficient_evidence", "single_source"]
    assert listed["confidence"] < 0.8  # one sensor, held down by the two warnings
    second = observe(app, "ada", sensors[1])
    for sensor in sensors[2:]:
        observe(app, "ada", sensor)

    belief = app.api("GET", f"/beliefs/{listed['id']}").json()
    support = [e for e in belief["evidence"] if e["stance"] == "support"]
    alone = round(side(Item("support", e["weight"], e["credibility"], e["source"]) for e in support), 6)
    assert belief["confidence"] == alone >= 0.8
    assert (belief["support"], belief["contradict"]) == (8, 0)
    counters = [e for e in belief["evidence"] if e["source"] == "metacognition"]
    assert len(counters) == 2 and all(e.get("withdrawn_by") for e in counters)

    # Each warning's withdrawal: caused by the second sensor's observation, the warning its parent, the confidence in its text.
    lifts = [e for e in app.api("GET", "/minds/ada/events", params={"kind": "belief_updated"}).json()["events"] if "withdrawn" in e["data"]]
    assert [(e["data"]["check"], e["causation_id"], e["parents"]) for e in lifts] == [
        (w["data"]["check"], second["id"], [w["id"]]) for w in sorted(warnings, key=lambda w: w["id"])
    ]
    assert {c["withdrawn_by"] for c in counters} == {e["id"] for e in lifts}
    assert lifts[-1]["data"]["confidence"]["to"] >= 0.8 and lifts[0]["text"].startswith(f"{lifts[0]['data']['confidence']['from']:.2f} -> ")
    assert "insufficient_evidence lifted: sensor-2 supports “the reactor is hot” too" in lifts[0]["text"]
    # The timeline walked back from a withdrawal reaches the warning (parent) and the observation that lifted it (caused).
    walk = app.api("GET", f"/events/{lifts[-1]['id']}/chain", params={"back": 1, "forward": 1}).json()
    edges = {(e["from"], e["to"], e["kind"]) for e in walk["edges"]}
    assert (second["id"], lifts[-1]["id"], "caused") in edges and (lifts[-1]["parents"][0], lifts[-1]["id"], "parent") in edges
    assert first["id"] < second["id"]

    # The strong-belief notification fires once the belief is past 0.8.
    strong = [n for n in app.api("GET", "/minds/ada/notifications").json()["notifications"] if n["rule"] == "strong_belief"]
    assert [(n["values"]["belief"], n["count"]) for n in strong] == [(belief["id"], 1)] and strong[0]["values"]["confidence"] >= 0.8

    # `noemactl belief ID` shows what was withdrawn and by which event.
    console = Console(width=160, record=True, color_system=None)
    for part in mind_view.belief(belief):
        console.print(part)
    shown = console.export_text()
    assert "evidence (10, 2 withdrawn: no longer counted)" in shown
    assert f"by #{lifts[0]['id']}" in shown and f"by #{lifts[1]['id']}" in shown

    # The dashboard's beliefs table says the same, each withdrawn item linked to the event that withdrew it.
    html = app.run(app.client.get("/minds/ada")).text
    assert f'withdrawn (no longer counted) by <a href="/events/{lifts[0]["id"]}/timeline">event #{lifts[0]["id"]}</a>' in html
