"""Notifications: the rules and their thresholds, the cooldown, acknowledging; in process, then `--follow` through the daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import NOEMACTL, OPERATOR, Noemad
from inprocess import ME, InProcess

from noemad.clock import iso
from noemad.config.mind import MindSettings
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.goals import create_goal, update_goal
from noemad.cognition.notifications.rules import Candidate, evaluate
from noemad.cognition.notifications.table import NotificationAcked, NotificationNotFound, ack, get_notification, list_notifications, notify
from noemad.cognition.perceive import perceive
from noemad.cognition.predictions import make_prediction, resolve_prediction
from noemad.cognition.thoughts import Thought, evidence_thoughts
from noemad.errors import Conflict, InvalidInput, NotFound
from noemad.events import Event, EventDraft, Ref, append, get_event
from noemad.minds import create_mind, delete_mind
from noemad.stimuli import Observation
from noemad.store import Store

NOW = 1_767_225_600.0  # 2026-01-01, the test daemon's start
TIMEOUT = 30.0  # seconds: a bound on a hung process, never a wait for time to pass


# in process ---------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, NOW, "operator"))
    s.writer.run_sync(lambda db: create_mind(db, "eve", {"notify_proactively": True}, NOW, "operator"))
    yield s
    s.close()


def stimulus(store: Store, kind: str, mind: str = "ada", at: float = NOW, **data: Any) -> Event:
    return store.writer.run_sync(lambda db: append(db, EventDraft(mind, kind, "operator", text=kind, data=data), at))


def miss(store: Store, proposition: str, confidence: float, subject: str = "deploy", at: float = NOW) -> list[Event]:
    """Predict at `confidence`, then resolve it as a miss; return the resolution's events."""
    said = stimulus(store, "prediction", at=at)
    prediction, _ = store.writer.run_sync(
        lambda db: make_prediction(db, mind="ada", proposition=proposition, subject=subject, confidence=confidence,
                                   due_at=at + 3600, brought_by=said.id, now=at)
    )
    came = stimulus(store, "outcome", at=at)
    _, events = store.writer.run_sync(
        lambda db: resolve_prediction(db, prediction_id=prediction.id, result="miss", brought_by=came.id, now=at, observed="it broke")
    )
    return events


def candidates(store: Store, events: list[Event], winners: list[Thought] = (), mind: str = "ada", **settings: Any) -> list[Candidate]:
    return evaluate(store.reader(), mind=mind, settings=MindSettings.model_validate(settings), events=events, winners=list(winners))


def run_notify(store: Store, found: list[Candidate], at: float, mind: str = "ada") -> list[Event]:
    return store.writer.run_sync(lambda db: notify(db, mind=mind, candidates=found, cycle_id=f"{mind}/1", now=at))


def test_a_miss_notifies_from_a_stated_confidence_of_0_7_and_stores_the_rule_and_values(store: Store) -> None:
    assert candidates(store, miss(store, "the deploy finishes", 0.69)) == []
    events = miss(store, "the deploy lands", 0.7)
    resolved = events[0]
    # The missed hypothesis goes contested, then rejected: it ends rejected, so it is no contradiction.
    [found] = candidates(store, events)
    assert (found.rule, found.key, found.cause) == ("prediction_miss", "prediction_miss:subject:deploy", resolved.id)
    assert found.values == {
        "prediction": resolved.data["prediction"], "subject": "deploy", "proposition": "the deploy lands",
        "stated_confidence": 0.7, "threshold": 0.7, "observed": "it broke", "belief": resolved.data["belief"],
    }
    [event] = run_notify(store, [found], NOW)
    assert (event.kind, event.actor, event.causation_id, event.cycle_id) == ("notification", "process:notifications", resolved.id, "ada/1")
    assert event.text == found.title == f"prediction #{resolved.data['prediction']} missed at stated 0.70: the deploy lands"
    assert Ref("belief", resolved.data["belief"]) in event.refs
    [stored] = list_notifications(store.reader(), "ada")
    assert event.data == {"notification": stored.id, "rule": "prediction_miss", "key": found.key, "values": found.values}
    assert (stored.rule, stored.key, stored.values, stored.count, stored.status) == ("prediction_miss", found.key, found.values, 1, "open")
    assert (stored.created_at, stored.updated_at, stored.acked_at) == (iso(NOW), iso(NOW), None)
    assert stored.event_id == stored.last_event_id == event.id and stored.acked_event_id is None
    assert get_event(store.reader(), event.id) == event


def test_evaluate_is_pure_and_deterministic(store: Store) -> None:
    events = miss(store, "a", 0.9, subject="x") + miss(store, "b", 0.8, subject="y")
    (before,) = store.reader().execute("SELECT count(*) FROM events").fetchone()
    first = candidates(store, events)
    assert first == candidates(store, list(reversed(events))) and [c.key for c in first] == ["prediction_miss:subject:x", "prediction_miss:subject:y"]
    assert store.reader().execute("SELECT count(*) FROM events").fetchone() == (before,)


def test_a_repeat_within_the_cooldown_is_counted_until_exactly_the_cooldown_has_passed(store: Store) -> None:
    [first] = candidates(store, miss(store, "one", 0.9), notify_cooldown="10m")
    assert first.cooldown == 600
    [created] = run_notify(store, [first], NOW)
    [again] = candidates(store, miss(store, "two", 0.8), notify_cooldown="10m")
    [suppressed] = run_notify(store, [again], NOW + 599.5)
    assert (suppressed.kind, suppressed.actor, suppressed.causation_id) == ("notification_suppressed", "process:notifications", again.cause)
    assert Ref("event", created.id) in suppressed.refs  # cites the notification it counted against
    assert suppressed.data["notification"] == created.data["notification"] and suppressed.data["count"] == 2
    assert suppressed.data["values"] == again.values and suppressed.data["rule"] == "prediction_miss"
    held = get_notification(store.reader(), created.data["notification"])
    assert (held.count, held.updated_at, held.last_event_id, held.event_id, held.values) == (2, iso(NOW + 599.5), suppressed.id, created.id, first.values)
    # The cooldown runs from the last repeat; exactly 600 s after it, the key notifies anew.
    [third] = candidates(store, miss(store, "three", 0.8), notify_cooldown=600)
    [anew] = run_notify(store, [third], NOW + 599.5 + 600)
    assert anew.kind == "notification" and anew.data["notification"] != held.id
    assert [(n.count, n.status) for n in list_notifications(store.reader(), "ada")] == [(1, "open"), (2, "open")]


def test_an_acked_notification_is_not_counted_and_a_zero_cooldown_counts_nothing(store: Store) -> None:
    [found] = candidates(store, miss(store, "one", 0.9))
    [created] = run_notify(store, [found], NOW)
    store.writer.run_sync(lambda db: ack(db, notification_id=created.data["notification"], now=NOW + 1, actor="operator"))
    [repeat] = run_notify(store, [found], NOW + 2)
    assert repeat.kind == "notification"
    [nocool] = candidates(store, miss(store, "two", 0.9), notify_cooldown=0)
    assert [e.kind for e in run_notify(store, [nocool, nocool], NOW + 3)] == ["notification", "notification"]
    # Two candidates with one key in one batch: the second is a repeat of the first.
    [a] = candidates(store, miss(store, "three", 0.9, subject="z"))
    [b] = candidates(store, miss(store, "four", 0.9, subject="z"))
    assert [e.kind for e in run_notify(store, [a, b], NOW + 4)] == ["notification", "notification_suppressed"]


def test_ack_records_it_once(store: Store) -> None:
    [found] = candidates(store, miss(store, "one", 0.9))
    [created] = run_notify(store, [found], NOW)
    nid = created.data["notification"]
    acked = store.writer.run_sync(lambda db: ack(db, notification_id=nid, now=NOW + 60, actor="operator"))
    assert (acked.kind, acked.actor, acked.data["notification"]) == ("notification_acked", "operator", nid)
    assert Ref("event", created.id) in acked.refs
    held = get_notification(store.reader(), nid)
    assert (held.status, held.acked_at, held.acked_event_id) == ("acked", iso(NOW + 60), acked.id)
    assert list_notifications(store.reader(), "ada", status="open") == [] and list_notifications(store.reader(), "ada", status="acked") == [held]
    with pytest.raises(NotificationAcked, match=f"notification {nid} was already acknowledged at {iso(NOW + 60)}") as twice:
        store.writer.run_sync(lambda db: ack(db, notification_id=nid, now=NOW + 61, actor="operator"))
    assert isinstance(twice.value, Conflict) and twice.value.status == 409
    with pytest.raises(NotificationNotFound, match="notification 999 does not exist") as missing:
        store.writer.run_sync(lambda db: ack(db, notification_id=999, now=NOW, actor="operator"))
    assert isinstance(missing.value, NotFound) and missing.value.status == 404
    with pytest.raises(InvalidInput, match="open or acked"):
        list_notifications(store.reader(), "ada", status="closed")


def claim(store: Store, proposition: str, stance: str, source: str, credibility: float, mind: str = "ada") -> Event:
    cause = stimulus(store, "observation", mind=mind)
    _, event = store.writer.run_sync(
        lambda db: add_evidence(db, mind=mind, proposition=proposition, subject="build", kind="observation", stance=stance,
                                weight=1.0, source=source, credibility=credibility, brought_by=cause.id, now=NOW, actor="test")
    )
    return event


def test_a_belief_that_goes_contested_is_a_contradiction(store: Store) -> None:
    created = claim(store, "the build is green", "support", "ci", 0.9)
    assert candidates(store, [created]) == []
    contested = claim(store, "the build is green", "contradict", "qa", 0.9)
    [found] = candidates(store, [created, contested])
    belief = contested.subject.id
    assert (found.rule, found.key, found.cause, found.refs) == ("contradiction", f"contradiction:belief:{belief}", contested.id, (Ref("belief", belief),))
    assert found.values == {
        "belief": belief, "proposition": "the build is green", "confidence": pytest.approx(0.09), "status": {"from": "active", "to": "contested"},
        "support": 1, "contradict": 1, "source": "qa",
    }
    # Still contested after more contradiction: no new transition, no new candidate.
    assert candidates(store, [claim(store, "the build is green", "contradict", "ops", 0.9)]) == []


def test_strong_beliefs_notify_only_proactive_minds_at_their_thresholds(store: Store) -> None:
    made = claim(store, "the build is green", "support", "ci", 0.9, mind="eve")
    [thought] = evidence_thoughts([made])
    assert thought.salience == 1.0
    assert candidates(store, [made], [thought], mind="ada") == []  # not that mind's event
    [found] = candidates(store, [made], [thought], mind="eve", notify_proactively=True, notify_min_confidence=0.9)
    belief = made.subject.id
    assert (found.rule, found.key, found.cause) == ("strong_belief", f"strong_belief:belief:{belief}", made.id)
    assert found.values == {"belief": belief, "proposition": "the build is green", "kind": "observation", "confidence": 0.9,
                            "min_confidence": 0.9, "salience": 1.0, "min_salience": 0.7}
    assert candidates(store, [made], [thought], mind="eve", notify_proactively=True, notify_min_confidence=0.91) == []
    assert candidates(store, [made], [thought], mind="eve") == []  # not proactive
    assert candidates(store, [made], [], mind="eve", notify_proactively=True) == []  # not admitted
    for salience, fires in ((0.69, False), (0.7, True)):
        quiet = Thought("evidence", "belief_created", salience, "s", f"belief:{belief}", (Ref("belief", belief), Ref("event", made.id)))
        assert bool(candidates(store, [made], [quiet], mind="eve", notify_proactively=True)) is fires


def test_completed_goals_warnings_and_denied_actions(store: Store) -> None:
    cause = stimulus(store, "goal")
    goal, _ = store.writer.run_sync(lambda db: create_goal(db, mind="ada", title="ship it", origin="operator", cause=cause.id, cycle_id=None, now=NOW))
    _, done = store.writer.run_sync(lambda db: update_goal(db, goal_id=goal.id, status="completed", cause=cause.id, cycle_id=None, now=NOW, actor="operator"))
    over = stimulus(store, "metacognition", check="overconfidence", ref="mind:ada", effect="warning", brier=0.46, salience=0.9)
    loop = stimulus(store, "metacognition", check="repeated_failure", ref="subject:deploy", effect="warning", subject="deploy", rejected=3)
    other = stimulus(store, "metacognition", check="single_source", ref="belief:1", effect="counter_evidence")
    denied = stimulus(store, "action_denied", action="shell", reason="not allowed by policy")
    found = candidates(store, [done, over, loop, other, denied])
    assert [(c.rule, c.key, c.cause) for c in found] == [
        ("goal_completed", f"goal_completed:goal:{goal.id}", done.id),
        ("warning", "warning:overconfidence:mind:ada", over.id),
        ("warning", "warning:repeated_failure:subject:deploy", loop.id),
        ("denied_action", "denied_action:action:shell", denied.id),
    ]
    assert found[0].values["title"] == "ship it" and found[0].title == f"goal #{goal.id} completed: ship it"
    assert found[1].values == {"check": "overconfidence", "ref": "mind:ada", "brier": 0.46, "salience": 0.9}
    assert found[3].title == "action denied: shell (not allowed by policy)"


def test_very_salient_observations_notify_per_source(store: Store) -> None:
    def observe(source: str, salience: float | None) -> tuple[Event, list[Event]]:
        obs = Observation(source=source, text=f"{source} says so", data={} if salience is None else {"salience": salience})
        event = store.writer.run_sync(lambda db: append(db, obs.draft("ada"), NOW))
        perception = store.writer.run_sync(lambda db: perceive(db, "ada", [event], "ada/1", NOW))
        return event, perception.events

    _, low = observe("seismo", 0.89)
    loud, high = observe("seismo", 0.9)
    quiet, plain = observe("radar", None)
    [found] = candidates(store, low + high + plain)
    assert (found.rule, found.key, found.cause) == ("salient_observation", "salient_observation:source:seismo", loud.id)
    assert found.values == {"source": "seismo", "salience": 0.9, "stated_salience": 0.9, "attention_salience": None,
                            "threshold": 0.9, "text": "seismo says so"}
    # Attention can make one salient too, when it admits its thought that high.
    admitted = Thought("perception", "observation", 0.95, "r", f"event:{quiet.id:012d}", (Ref("event", quiet.id),))
    [found] = candidates(store, plain, [admitted])
    assert found.key == "salient_observation:source:radar" and found.values["attention_salience"] == 0.95


def test_deleting_a_mind_removes_its_notifications(store: Store) -> None:
    [found] = candidates(store, miss(store, "one", 0.9))
    run_notify(store, [found], NOW)
    store.writer.run_sync(lambda db: delete_mind(db, "ada", "ada"))
    assert store.reader().execute("SELECT count(*) FROM notifications").fetchone() == (0,)


# through the daemon -------------------------------------------------------------------

def taken(engine: Noemad | InProcess, mind: str, event: dict[str, Any]) -> dict[str, Any]:
    return engine.wait_for(mind, "cycle_completed", since=event["id"])


def post(engine: Noemad | InProcess, mind: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = engine.api("POST", f"/minds/{mind}/events", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def predict_and_miss(engine: Noemad | InProcess, mind: str, proposition: str, confidence: float, subject: str = "cache") -> dict[str, Any]:
    """Predict, let the mind take it, then store a miss for it; return the stored outcome."""
    said = post(engine, mind, {"kind": "prediction", "proposition": proposition, "subject": subject, "confidence": confidence, "due": "1d"})
    taken(engine, mind, said)
    listed = engine.api("GET", f"/minds/{mind}/predictions", params={"status": "open"}).json()["predictions"]
    prediction = next(p for p in listed if p["proposition"] == proposition)
    return post(engine, mind, {"kind": "outcome", "prediction": prediction["id"], "result": "miss", "observed": "cold"})


def notifications_of(engine: Noemad | InProcess, mind: str, **params: str) -> list[dict[str, Any]]:
    return engine.api("GET", f"/minds/{mind}/notifications", params=params).json()["notifications"]


def wait_notification(
    engine: Noemad | InProcess, mind: str, since: int, kind: str = "notification", rule: str = "prediction_miss"
) -> dict[str, Any]:
    """Follow the mind's events until a `kind` event of `rule` after `since` is committed; return it."""
    while True:
        event = engine.wait_for(mind, kind, since=since)
        if event["data"].get("rule") == rule:
            return event
        since = event["id"]


def test_a_confident_miss_notifies_and_a_repeat_within_the_cooldown_is_counted(app: InProcess, mind: str) -> None:
    came = predict_and_miss(app, mind, "the cache stays warm", 0.9)
    event = wait_notification(app, mind, came["id"])
    resolved = app.api("GET", f"/events/{event['causation_id']}").json()
    assert (resolved["kind"], resolved["causation_id"]) == ("prediction_resolved", came["id"])
    assert (event["actor"], event["data"]["rule"], event["data"]["key"]) == ("process:notifications", "prediction_miss", "prediction_miss:subject:cache")
    [shown] = notifications_of(app, mind)
    assert (shown["id"], shown["rule"], shown["count"], shown["status"], shown["event_id"]) == (event["data"]["notification"], "prediction_miss", 1, "open", event["id"])
    assert shown["values"]["stated_confidence"] == 0.9 and shown["values"]["threshold"] == 0.7 and shown["values"]["observed"] == "cold"

    again = predict_and_miss(app, mind, "the cache warms by noon", 0.8)
    repeat = wait_notification(app, mind, again["id"], kind="notification_suppressed")
    assert repeat["data"]["notification"] == shown["id"] and repeat["data"]["count"] == 2
    assert {"type": "event", "id": event["id"]} in repeat["refs"]
    [counted] = notifications_of(app, mind, status="open")
    assert (counted["count"], counted["last_event_id"]) == (2, repeat["id"])

    # An hour later on the engine's clock, the same key notifies anew.
    app.advance(3600)
    third = predict_and_miss(app, mind, "the cache is warm at dusk", 0.7)
    fresh = wait_notification(app, mind, third["id"])  # the third rejection on cache also raises a repeated_failure warning
    assert fresh["data"]["key"] == "prediction_miss:subject:cache" and fresh["data"]["notification"] != shown["id"]


def test_notifications_through_the_cli_show_each_with_its_count(app: InProcess, mind: str) -> None:
    came = predict_and_miss(app, mind, "the cache stays warm", 0.9)
    wait_notification(app, mind, came["id"])
    again = predict_and_miss(app, mind, "the cache warms by noon", 0.8)
    repeat = wait_notification(app, mind, again["id"], kind="notification_suppressed")
    [shown] = app.ctl_json("notifications", mind)["notifications"]
    assert shown == notifications_of(app, mind)[0]  # the API's answer
    [counted] = app.ctl_json("notifications", mind, "--open")["notifications"]
    assert (counted["count"], counted["last_event_id"]) == (2, repeat["id"])
    human = app.ctl("notifications", mind)
    assert human.returncode == 0, human.stderr
    assert human.stdout.splitlines()[0].split() == ["ID", "STATUS", "RULE", "COUNT", "LAST", "TITLE"]
    assert f"#{shown['id']}  open    prediction_miss      2" in human.stdout and "missed at stated 0.90: the cache stays warm" in human.stdout


def test_ack_through_the_cli_and_its_errors(app: InProcess, mind: str) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    came = predict_and_miss(app, mind, "the cache stays warm", 0.9)
    from test_openapi import check

    doc = app.api("GET", "/openapi.json").json()
    nid = wait_notification(app, mind, came["id"])["data"]["notification"]
    check(doc, "GET", "/minds/{mind}/notifications", 200, "application/json", app.api("GET", f"/minds/{mind}/notifications").json())
    out = app.ctl("ack", str(nid))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"acknowledged notification #{nid} (prediction_miss): prediction #")
    [acked] = app.ctl_json("notifications", mind, "--status", "acked")["notifications"]
    assert acked["status"] == "acked" and acked["acked_at"] == "2026-01-01T00:00:00.000Z"
    recorded = app.api("GET", f"/events/{acked['acked_event_id']}").json()
    assert (recorded["kind"], recorded["actor"]) == ("notification_acked", OPERATOR)
    assert app.ctl_json("notifications", mind, "--open")["notifications"] == []
    assert "ada has no open notifications" in app.ctl("notifications", mind, "--open").stdout
    twice = app.ctl("ack", str(nid))
    assert twice.returncode == 5 and twice.stderr.startswith(f"noemactl: notification {nid} was already acknowledged at")
    again = app.api("POST", f"/notifications/{nid}/ack")
    assert again.status_code == 409 and "already acknowledged" in again.json()["detail"]
    check(doc, "POST", "/notifications/{notification_id}/ack", 409, "application/problem+json", again.json())
    unknown = app.api("POST", "/notifications/999/ack")
    assert unknown.status_code == 404 and "notification 999 does not exist" in unknown.json()["detail"]
    assert app.ctl("ack", "999").stderr.startswith("noemactl: notification 999 does not exist")
    other = predict_and_miss(app, mind, "the queue drains", 0.75, subject="queue")
    second = wait_notification(app, mind, other["id"])["data"]["notification"]
    answered = app.ctl_json("ack", str(second))
    assert (answered["id"], answered["status"], answered["values"]["stated_confidence"]) == (second, "acked", 0.75)
    check(doc, "POST", "/notifications/{notification_id}/ack", 200, "application/json", answered)


def test_notifications_follow_json_prints_new_notifications(noemad: Noemad, mind: str) -> None:
    from test_cli import Lines

    env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1"}
    proc = subprocess.Popen([NOEMACTL, "--json", "notifications", mind, "--follow"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = Lines(proc.stdout), Lines(proc.stderr)
        err.until(lambda line: line.startswith("following ada's notifications"))
        came = predict_and_miss(noemad, mind, "the cache stays warm", 0.9)
        [line] = out.until(lambda line: True, timeout=TIMEOUT)
        event = json.loads(line)
        assert (event["kind"], event["data"]["rule"]) == ("notification", "prediction_miss") and event["id"] > came["id"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=TIMEOUT) == 130
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=TIMEOUT)


# not depending on the cycle ------------------------------------------------------------


def test_bad_personality_settings_and_bad_listings_are_refused(app: InProcess, mind: str) -> None:
    bad = app.api("POST", "/minds", json={"name": "zed", "settings": {"notify_min_confidence": 2}})
    assert bad.status_code == 422 and bad.json()["detail"] == "settings.notify_min_confidence: write a number from 0 to 1, not 2"
    assert app.api("GET", "/minds/zed").status_code == 404
    out = app.ctl("mind", "create", "zed", "--settings", '{"notify_cooldown": "soon"}')
    assert out.returncode == 2 and "settings.notify_cooldown: write a number of seconds" in out.stderr
    good = app.api("POST", "/minds", json={"name": "eve", "settings": {"notify_proactively": True, "notify_cooldown": "15m"}})
    assert good.status_code == 201
    assert app.api("GET", "/minds/zed/notifications").status_code == 404
    assert app.api("GET", f"/minds/{mind}/notifications", params={"status": "closed"}).status_code == 422
    assert app.api("POST", "/notifications/0/ack").status_code == 422
    assert app.api("POST", "/notifications/5/ack").status_code == 404
    assert app.ctl_json("notifications", mind) == {"notifications": []}
    assert app.ctl("notifications", mind).stdout == "ada has no notifications\n"
    for args, sentence in {
        ("notifications", mind, "--status", "closed"): "noemactl: --status 'closed' is not one of open, acked",
        ("notifications", mind, "--open", "--status", "acked"): "noemactl: --open and --status acked contradict each other",
        ("notifications", mind, "--follow", "--open"): "noemactl: --follow prints every new notification as it happens",
        ("ack", "0"): "",
    }.items():
        out = app.ctl(*args)
        assert (out.returncode, out.stdout) == (2, ""), (args, out.stderr)
        assert out.stderr.startswith(sentence), (args, out.stderr)


def test_notification_answers_match_the_openapi_document(app: InProcess, mind: str) -> None:
    from test_openapi import check

    doc = app.api("GET", "/openapi.json").json()
    listed = app.api("GET", f"/minds/{mind}/notifications", params={"status": "open"})
    check(doc, "GET", "/minds/{mind}/notifications", 200, "application/json", listed.json())
    missing = app.api("POST", "/notifications/7/ack")
    check(doc, "POST", "/notifications/{notification_id}/ack", 404, "application/problem+json", missing.json())
