"""Predictions, outcomes and calibration: in process, noemactl included (its real run over a socket: test_cli_over_the_socket)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Noemad
from inprocess import ME, InProcess

from noemad.clock import iso
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.calibration import OVERCONFIDENT_GAP, OVERCONFIDENT_MIN, bin_index, calibrate, calibration
from noemad.cognition.predictions import (
    PredictionResolved,
    due_predictions,
    get_prediction,
    make_prediction,
    resolve_prediction,
)
from noemad.errors import InvalidInput
from noemad.events import EventDraft, append
from noemad.minds import create_mind
from noemad.store import Store
from noemad.stimuli import parse_due
from noemad.timeline import walk

NOW = 1_767_225_600.0  # the test daemon's start, 2026-01-01


# in process ---------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    yield s
    s.close()


def stimulus(store: Store, kind: str, at: float = NOW) -> int:
    return store.writer.run_sync(lambda db: append(db, EventDraft("ada", kind, "operator", text=kind), at)).id


def predict(store: Store, proposition: str, confidence: float, due_in: float = 3600, subject: str = "deploy"):
    cause = stimulus(store, "prediction")
    return store.writer.run_sync(
        lambda db: make_prediction(
            db, mind="ada", proposition=proposition, subject=subject, confidence=confidence,
            due_at=NOW + due_in, brought_by=cause, now=NOW,
        )
    )


def resolve(store: Store, prediction_id: int, result: str, at: float = NOW + 10, observed: str | None = None):
    cause = stimulus(store, "outcome", at)
    return store.writer.run_sync(
        lambda db: resolve_prediction(db, prediction_id=prediction_id, result=result, brought_by=cause, now=at, observed=observed)
    )


def test_a_prediction_rests_on_a_hypothesis_at_its_stated_confidence(store: Store) -> None:
    prediction, (belief_event, made) = predict(store, "The deploy finishes cleanly.", 0.8)
    assert (prediction.status, prediction.stated_confidence, prediction.subject) == ("open", 0.8, "deploy")
    assert prediction.due_at == iso(NOW + 3600) and prediction.event_id == made.id
    belief = get_belief(store.reader(), prediction.belief_id)
    assert (belief.kind, belief.confidence, belief.status) == ("hypothesis", 0.8, "active")
    [item] = belief.evidence
    assert (item.stance, item.weight, item.credibility, item.source, item.kind) == ("support", 1.0, 0.8, "prediction", "hypothesis")
    assert belief_event.kind == "belief_created" and belief_event.causation_id == made.causation_id
    assert made.kind == "prediction_made" and made.data["prediction"] == prediction.id and made.data["belief"] == belief.id
    assert ("belief", belief.id) in {(r.type, r.id) for r in made.refs}


def test_a_hit_supports_and_a_miss_rejects_the_hypothesis_downstream_of_the_resolution(store: Store) -> None:
    hit, _ = predict(store, "the deploy finishes", 0.7)
    miss, _ = predict(store, "the cache stays warm", 0.9, subject="cache")
    resolved, [event, updated] = resolve(store, hit.id, "hit", observed="took 4 minutes")
    assert (resolved.status, resolved.observed, resolved.resolved_event_id) == ("hit", "took 4 minutes", event.id)
    assert event.kind == "prediction_resolved" and event.data["result"] == "hit" and event.data["squared_error"] == 0.09
    assert ("event", hit.event_id) in {(r.type, r.id) for r in event.refs}
    assert updated.kind == "belief_updated" and updated.causation_id == event.id and updated.data["source"] == "outcome"
    assert get_belief(store.reader(), hit.belief_id).confidence == 1.0  # an outcome is decisive
    resolved, [event, contradicted, rejected] = resolve(store, miss.id, "miss")
    assert resolved.status == "miss" and event.data["squared_error"] == 0.81
    assert contradicted.causation_id == event.id and contradicted.data["stance"] == "contradict"
    assert rejected.kind == "belief_updated" and rejected.causation_id == event.id and rejected.actor == "process:predictions"
    assert rejected.data["status"] == {"from": "contested", "to": "rejected"} and rejected.data["rejected_by"] == "outcome"
    belief = get_belief(store.reader(), miss.belief_id)
    assert (belief.status, belief.confidence) == ("rejected", 0.0)
    # The walk from the rejection reaches the outcome and the prediction it resolved.
    graph = walk(store.reader(), rejected.id)
    kinds = {n.kind for n in graph.nodes}
    assert {"outcome", "prediction_resolved", "prediction_made", "prediction"} <= kinds
    with pytest.raises(PredictionResolved):
        resolve(store, miss.id, "hit")


def test_a_miss_contradicts_but_does_not_reject_what_is_not_a_hypothesis(store: Store) -> None:
    cause = stimulus(store, "observation")
    from noemad.cognition.beliefs.evidence import add_evidence

    store.writer.run_sync(
        lambda db: add_evidence(
            db, mind="ada", proposition="the queue drains", subject="queue", kind="observation", stance="support",
            weight=1.0, source="ci", brought_by=cause, now=NOW, actor="test",
        )
    )
    prediction, _ = predict(store, "the queue drains", 0.6, subject="queue")
    _, events = resolve(store, prediction.id, "miss")
    assert [e.kind for e in events] == ["prediction_resolved", "belief_updated"]  # contradicted, not rejected
    belief = get_belief(store.reader(), prediction.belief_id)
    assert belief.kind == "observation" and belief.status == "contested"


def test_due_predictions_are_the_open_ones_whose_time_has_come(store: Store) -> None:
    soon, _ = predict(store, "the build passes", 0.6, due_in=60)
    later, _ = predict(store, "the release ships", 0.7, due_in=7200)
    done, _ = predict(store, "the docs build", 0.5, due_in=30)
    resolve(store, done.id, "hit", at=NOW + 5)
    db = store.reader()
    assert due_predictions(db, "ada", NOW + 59) == []
    assert [p.id for p in due_predictions(db, "ada", NOW + 60)] == [soon.id]
    assert [p.id for p in due_predictions(db, "ada", NOW + 9000)] == [soon.id, later.id]
    assert get_prediction(db, soon.id).is_overdue(NOW + 61) and not get_prediction(db, later.id).is_overdue(NOW + 61)


def test_parse_due_takes_spans_and_iso_times_in_the_future_only() -> None:
    assert parse_due("2h", NOW) == NOW + 7200
    assert parse_due(" 3d ", NOW) == NOW + 3 * 86400
    assert parse_due("2026-01-02T00:00:00Z", NOW) == NOW + 86400
    for text, words in (
        ("2025-12-31T00:00:00Z", "is not in the future"),
        ("0m", "is not in the future"),
        ("soon", "is neither an ISO time"),
        ("-2h", "is neither an ISO time"),
        ("99999999999d", "more than 100 years ahead"),
        ("9999-12-31T23:59:59Z", "more than 100 years ahead"),
    ):
        with pytest.raises(InvalidInput, match=words):
            parse_due(text, NOW)


def test_calibration_bins_and_brier_are_exact() -> None:
    result = calibrate("ada", [(0.9, True), (0.9, False), (0.6, True), (0.3, False), (1.0, True)], open_count=2)
    assert (result.resolved, result.hits, result.misses, result.open) == (5, 3, 2, 2)
    assert (result.mean_stated, result.hit_rate, result.gap) == (0.74, 0.6, 0.14)
    assert result.brier == 0.214  # (0.01 + 0.81 + 0.16 + 0.09 + 0) / 5
    assert not result.overconfident  # a gap of 0.14 is under 0.15
    filled = {(b.low, b.high): (b.count, b.hits, b.mean_stated, b.hit_rate) for b in result.bins if b.count}
    assert filled == {(0.3, 0.4): (1, 0, 0.3, 0.0), (0.6, 0.7): (1, 1, 0.6, 1.0), (0.9, 1.0): (3, 2, 0.933333, 0.666667)}
    assert len(result.bins) == 10 and result.bins[0].mean_stated is None and result.bins[0].hit_rate is None
    assert [bin_index(p) for p in (0.0, 0.0999, 0.1, 0.3, 0.7, 0.95, 1.0)] == [0, 0, 1, 3, 7, 9, 9]
    empty = calibrate("ada", [])
    assert (empty.resolved, empty.brier, empty.overconfident) == (0, None, False)


def test_overconfidence_needs_enough_outcomes_and_a_wide_enough_gap() -> None:
    assert (OVERCONFIDENT_MIN, OVERCONFIDENT_GAP) == (5, 0.15)
    assert calibrate("ada", [(0.9, True)] * 3 + [(0.9, False)] * 2).overconfident  # 0.9 stated, 0.6 hit
    assert not calibrate("ada", [(0.9, False)] * 4).overconfident  # too few to judge
    assert calibrate("ada", [(0.75, True)] * 3 + [(0.75, False)] * 2).overconfident  # a gap of exactly 0.15
    assert not calibrate("ada", [(0.74, True)] * 3 + [(0.74, False)] * 2).overconfident
    assert not calibrate("ada", [(0.3, True)] * 5).overconfident  # underconfident is not overconfident


def test_calibration_reads_the_minds_resolved_predictions(store: Store) -> None:
    a, _ = predict(store, "one", 0.8)
    b, _ = predict(store, "two", 0.4)
    predict(store, "three", 0.5)
    resolve(store, a.id, "miss")
    resolve(store, b.id, "hit")
    result = calibration(store.reader(), "ada")
    assert (result.resolved, result.hits, result.open, result.brier) == (2, 1, 1, 0.5)  # (0.64 + 0.36) / 2


# through the API and noemactl, in process (the real noemactl over a socket: test_cli_over_the_socket) ---


def stored(noemad: Noemad | InProcess, *args: str) -> dict[str, Any]:
    """Run a noemactl stimulus command with --json; return the stored event."""
    return noemad.ctl_json(*args)


def post(engine: Noemad | InProcess, mind: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = engine.api("POST", f"/minds/{mind}/events", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def post_prediction(engine: Noemad | InProcess, mind: str, proposition: str, subject: str, confidence: float, due: str) -> dict[str, Any]:
    """Store a prediction through the API; return the stored event."""
    return post(engine, mind, {"kind": "prediction", "proposition": proposition, "subject": subject, "confidence": confidence, "due": due})


def post_outcome(engine: Noemad | InProcess, mind: str, prediction: int, result: str, observed: str | None = None) -> dict[str, Any]:
    return post(engine, mind, {"kind": "outcome", "prediction": prediction, "result": result, **({"observed": observed} if observed else {})})


def listed_predictions(engine: Noemad | InProcess, mind: str, **params: str) -> list[dict[str, Any]]:
    return engine.api("GET", f"/minds/{mind}/predictions", params=params).json()["predictions"]


def taken(noemad: Noemad | InProcess, mind: str, event: dict[str, Any]) -> dict[str, Any]:
    """Wait for the cycle that takes a stored stimulus; return its cycle_completed."""
    return noemad.wait_for(mind, "cycle_completed", since=event["id"])


def events_of(noemad: Noemad | InProcess, mind: str, kind: str) -> list[dict[str, Any]]:
    return noemad.api("GET", f"/minds/{mind}/events", params={"kind": kind, "limit": 1000}).json()["events"]


def test_predict_then_hit_walks_outcome_to_resolution_to_belief(app: InProcess, mind: str) -> None:
    said = post_prediction(app, mind, "The deploy finishes cleanly", "Deploy", 0.8, "2h")
    assert said["kind"] == "prediction" and said["data"]["due_at"] == "2026-01-01T02:00:00.000Z"
    taken(app, mind, said)
    [prediction] = listed_predictions(app, mind)
    assert (prediction["status"], prediction["stated_confidence"], prediction["subject"], prediction["overdue"]) == ("open", 0.8, "deploy", False)
    made = app.api("GET", f"/events/{prediction['event_id']}").json()
    assert made["kind"] == "prediction_made" and made["causation_id"] == said["id"]
    belief = app.api("GET", f"/beliefs/{prediction['belief_id']}").json()
    assert belief["kind"] == "hypothesis"
    created = app.api("GET", f"/events/{belief['events'][0]}").json()
    assert created["kind"] == "belief_created" and created["data"]["confidence"]["to"] == 0.8  # at the stated confidence
    stated = next(e for e in belief["evidence"] if e["source"] == "prediction")
    assert (stated["kind"], stated["weight"], stated["credibility"], stated["event_id"]) == ("hypothesis", 1.0, 0.8, said["id"])

    came = post_outcome(app, mind, prediction["id"], "hit", "took 4 minutes")
    assert came["kind"] == "outcome" and came["data"] == {"prediction": prediction["id"], "result": "hit", "observed": "took 4 minutes"}
    taken(app, mind, came)
    shown = app.api("GET", f"/predictions/{prediction['id']}").json()
    assert (shown["status"], shown["observed"], shown["resolved_at"]) == ("hit", "took 4 minutes", "2026-01-01T00:00:00.000Z")
    resolved = app.api("GET", f"/events/{shown['resolved_event_id']}").json()
    assert resolved["kind"] == "prediction_resolved" and resolved["causation_id"] == came["id"]
    assert {"type": "event", "id": made["id"]} in resolved["refs"]
    [updated] = [e for e in events_of(app, mind, "belief_updated") if e["causation_id"] == resolved["id"]]
    assert updated["subject"] == {"type": "belief", "id": belief["id"]} and updated["data"]["stance"] == "support"
    # Why did the belief change? Back through the resolution to the outcome and the prediction.
    chain = app.api("GET", f"/events/{updated['id']}/chain", params={"forward": 0}).json()
    ids = {n["id"] for n in chain["nodes"]}
    assert {came["id"], resolved["id"], made["id"], said["id"]} <= ids
    edges = {(e["from"], e["to"], e["kind"]) for e in chain["edges"]}
    assert {(came["id"], resolved["id"], "caused"), (resolved["id"], updated["id"], "caused"), (made["id"], resolved["id"], "cited")} <= edges


def test_predict_and_outcome_through_the_cli(app: InProcess, mind: str) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    said = stored(app, "predict", mind, "The deploy finishes cleanly", "--subject", "Deploy", "--confidence", "0.8", "--due", "2h")
    assert said["kind"] == "prediction" and said["text"] == "The deploy finishes cleanly"
    assert said["data"]["due_at"] == "2026-01-01T02:00:00.000Z" and said["data"]["confidence"] == 0.8
    taken(app, mind, said)
    [prediction] = app.ctl_json("predictions", mind)["predictions"]
    assert prediction == listed_predictions(app, mind)[0]  # the API's answer
    assert (prediction["status"], prediction["subject"], prediction["event_id"] > said["id"]) == ("open", "deploy", True)
    came = stored(app, "outcome", str(prediction["id"]), "--hit", "--observed", "took 4 minutes")
    assert came["kind"] == "outcome" and came["data"] == {"prediction": prediction["id"], "result": "hit", "observed": "took 4 minutes"}
    taken(app, mind, came)
    human = app.ctl("predictions", mind)
    assert human.returncode == 0 and f"#{prediction['id']}" in human.stdout and "hit" in human.stdout and "took 4 minutes" in human.stdout


def test_a_miss_rejects_the_hypothesis(app: InProcess, mind: str) -> None:
    said = post_prediction(app, mind, "the cache stays warm", "cache", 0.9, "1d")
    taken(app, mind, said)
    [prediction] = listed_predictions(app, mind, status="open")
    came = post_outcome(app, mind, prediction["id"], "miss")
    taken(app, mind, came)
    belief = app.api("GET", f"/beliefs/{prediction['belief_id']}").json()
    assert (belief["status"], belief["confidence"]) == ("rejected", 0.0)
    resolved = app.api("GET", f"/predictions/{prediction['id']}").json()["resolved_event_id"]
    rejection = app.api("GET", f"/events/{belief['events'][-1]}").json()
    assert rejection["causation_id"] == resolved and rejection["data"]["status"]["to"] == "rejected"
    assert listed_predictions(app, mind, status="open") == []
    assert [p["status"] for p in listed_predictions(app, mind, status="miss")] == ["miss"]


def test_overdue_predictions_come_due_as_the_clock_moves(app: InProcess, mind: str) -> None:
    for proposition, due in (("the backup completes", "30m"), ("the migration lands", "2h")):
        taken(app, mind, post_prediction(app, mind, proposition, "ops", 0.6, due))
    db = app.sup.store.reader()

    def due_now() -> list[str]:
        return [p.proposition for p in due_predictions(db, mind, app.clock.now())]

    assert due_now() == []
    app.advance(1800)
    assert due_now() == ["the backup completes"]
    listed = listed_predictions(app, mind)
    assert [(p["proposition"], p["overdue"]) for p in listed] == [("the backup completes", True), ("the migration lands", False)]
    app.advance(7200)
    assert due_now() == ["the backup completes", "the migration lands"]


def test_overdue_shows_in_the_cli(app: InProcess, mind: str) -> None:
    taken(app, mind, post_prediction(app, mind, "the backup completes", "ops", 0.6, "30m"))
    app.advance(1800)
    [listed] = app.ctl_json("predictions", mind)["predictions"]
    assert (listed["proposition"], listed["overdue"]) == ("the backup completes", True)
    assert "overdue" in app.ctl("predictions", mind).stdout


def test_calibration_through_the_cli(app: InProcess, mind: str) -> None:
    empty = app.ctl("calibration", mind)
    assert empty.returncode == 0 and "nothing to score" in empty.stdout
    plan = [("a", 0.9, "--hit"), ("b", 0.9, "--miss"), ("c", 0.9, "--miss"), ("d", 0.8, "--miss"), ("e", 0.8, "--hit"), ("f", 0.5, None)]
    for name, confidence, _ in plan:  # made through the API: the CLI's predict and outcome have their own test
        taken(app, mind, post_prediction(app, mind, f"event {name} happens", name, confidence, "1h"))
    ids = {p["proposition"]: p["id"] for p in listed_predictions(app, mind)}
    for name, _, result in plan:
        if result:
            taken(app, mind, post_outcome(app, mind, ids[f"event {name} happens"], result.removeprefix("--")))
    data = app.ctl_json("calibration", mind)
    assert (data["resolved"], data["hits"], data["misses"], data["open"]) == (5, 2, 3, 1)
    assert (data["mean_stated"], data["hit_rate"], data["gap"]) == (0.86, 0.4, 0.46)
    assert data["brier"] == pytest.approx((0.01 + 0.81 + 0.81 + 0.64 + 0.04) / 5)
    assert data["overconfident"] is True
    assert [(b["low"], b["count"], b["hits"]) for b in data["bins"] if b["count"]] == [(0.8, 2, 1), (0.9, 3, 1)]
    human = app.ctl("calibration", mind)
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert lines[0] == "calibration of ada  5 resolved predictions (2 hit, 3 missed), 1 open"
    assert "0.8-0.9      2         0.80      0.50" in lines and "0.9-1.0      3         0.90      0.33" in lines
    assert "Brier score 0.462 (0 is perfect; always stating 0.5 scores 0.250)" in lines
    assert lines[-2].startswith("overconfident: stated confidence runs ahead of outcomes (mean stated 0.86, hit rate 0.40, gap +0.46)")


def test_bad_predictions_and_outcomes_are_refused_and_nothing_is_stored(app: InProcess, mind: str) -> None:
    app.api("POST", "/minds", json={"name": "bob"})
    taken(app, mind, post_prediction(app, mind, "the build passes", "build", 0.7, "1h"))
    [prediction] = listed_predictions(app, mind)
    pid = prediction["id"]
    first = app.api("POST", f"/minds/{mind}/events", json={"kind": "outcome", "prediction": pid, "result": "hit"})
    assert first.status_code == 201
    # A second outcome is refused whether or not the first has been perceived yet.
    again = app.api("POST", f"/minds/{mind}/events", json={"kind": "outcome", "prediction": pid, "result": "miss"})
    assert again.status_code == 409 and "an outcome is final" in again.json()["detail"], again.text
    taken(app, mind, first.json())
    app.settle(mind)  # the turn may write its narrative after cycle_completed
    before = app.api("GET", "/status").json()["counts"]["events"]
    predict_body = {"kind": "prediction", "proposition": "x happens", "subject": "x", "confidence": 0.5, "due": "1h"}
    cases = [
        ({"kind": "outcome", "prediction": 999, "result": "hit"}, 404, "prediction 999 does not exist"),
        ({"kind": "outcome", "prediction": pid, "result": "miss"}, 409, f"prediction {pid} was already resolved as a hit"),
        ({"kind": "outcome", "prediction": pid, "result": "maybe"}, 422, "result"),
        ({"kind": "outcome", "result": "hit"}, 422, "prediction is missing"),
        ({**predict_body, "due": "2025-12-31T00:00:00Z"}, 422, "is not in the future"),
        ({**predict_body, "due": "whenever"}, 422, "is neither an ISO time"),
        ({**predict_body, "confidence": 1.5}, 422, "confidence"),
        ({**predict_body, "subject": " "}, 422, "subject"),
        ({**predict_body, "extra": 1}, 422, "extra is not a field here"),
    ]
    for body, status, words in cases:
        resp = app.api("POST", f"/minds/{mind}/events", json=body)
        assert resp.status_code == status, (body, resp.text)
        assert words in resp.json()["detail"], (body, resp.json())
    other = app.api("POST", "/minds/bob/events", json={"kind": "outcome", "prediction": pid, "result": "hit"})
    assert other.status_code == 422 and f"prediction {pid} belongs to mind 'ada', not 'bob'" in other.json()["detail"]
    unknown = app.api("POST", f"/minds/{mind}/events", json={"kind": "forecast"})
    assert "'goal', 'prediction' or 'outcome'" in unknown.json()["detail"]
    assert app.api("GET", "/status").json()["counts"]["events"] == before
    assert app.api("GET", "/predictions/999").status_code == 404


def test_the_cli_refuses_bad_predictions_and_outcomes_and_sends_nothing(app: InProcess, mind: str) -> None:
    said = post_prediction(app, mind, "the build passes", "build", 0.7, "1h")
    app.wait_for(mind, "narrative_updated", since=said["id"])  # a first turn ends with the mind's first narrative
    [prediction] = listed_predictions(app, mind)
    pid = prediction["id"]
    before = app.api("GET", "/status").json()["counts"]["events"]
    # The CLI refuses what it can see is wrong before sending anything.
    for args, sentence in {
        ("outcome", str(pid)): "noemactl: say what came of it: --hit or --miss",
        ("outcome", str(pid), "--hit", "--miss"): "noemactl: say what came of it: --hit or --miss",
        ("predict", mind, "x", "--subject", "x", "--confidence", "1.5", "--due", "1h"): "noemactl: --confidence must be from 0 to 1",
        ("predictions", mind, "--open", "--status", "hit"): "noemactl: --open and --status hit contradict each other",
    }.items():
        out = app.ctl(*args)
        assert (out.returncode, out.stdout) == (2, ""), (args, out.stderr)
        assert out.stderr.startswith(sentence), (args, out.stderr)
    refused = app.ctl("outcome", "999", "--hit")
    assert refused.returncode == 4 and refused.stderr.startswith("noemactl: prediction 999 does not exist")
    past = app.ctl("predict", mind, "x", "--subject", "x", "--confidence", "0.5", "--due", "2025-01-01T00:00:00Z")
    assert past.returncode == 2 and "is not in the future" in past.stderr
    # What a due time may be is noemad's to say (the CLI does not restate it).
    soon = app.ctl("predict", mind, "x", "--subject", "x", "--confidence", "0.5", "--due", "soon")
    assert soon.returncode == 2 and soon.stderr.startswith(
        "noemactl: due='soon' is neither an ISO time (2026-01-31T12:00:00Z) nor a span ahead of now (30m, 2h, 3d)"
    )
    assert app.api("GET", "/status").json()["counts"]["events"] == before


def test_prediction_answers_match_the_openapi_document(app: InProcess, mind: str) -> None:
    from test_openapi import check

    doc = app.api("GET", "/openapi.json").json()
    said = app.api("POST", f"/minds/{mind}/events", json={"kind": "prediction", "proposition": "p", "subject": "s", "confidence": 0.6, "due": "1h"})
    check(doc, "POST", "/minds/{mind}/events", 201, "application/json", said.json())
    taken(app, mind, said.json())
    for template, path in (
        ("/minds/{mind}/predictions", f"/minds/{mind}/predictions"),
        ("/predictions/{prediction_id}", "/predictions/1"),
        ("/minds/{mind}/calibration", f"/minds/{mind}/calibration"),
    ):
        resp = app.api("GET", path)
        assert resp.status_code == 200, resp.text
        check(doc, "GET", template, 200, "application/json", resp.json())
    missing = app.api("GET", "/predictions/99")
    check(doc, "GET", "/predictions/{prediction_id}", 404, "application/problem+json", missing.json())
