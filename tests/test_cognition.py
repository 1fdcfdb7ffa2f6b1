"""The cycle in process: episodes, evidence, beliefs, retrieval, corrections, replay (the real noemactl: test_cli_over_the_socket)."""

from __future__ import annotations

import json

from conftest import OPERATOR, Noemad
from inprocess import ME, InProcess


def post(noemad: Noemad | InProcess, mind: str, body: dict) -> dict:
    resp = noemad.api("POST", f"/minds/{mind}/events", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def turn(noemad: Noemad | InProcess, mind: str, body: dict) -> tuple[dict, dict]:
    """Post a stimulus and wait for the cycle that takes it; return (stimulus, cycle_completed)."""
    stimulus = post(noemad, mind, body)
    done = noemad.wait_for(mind, "cycle_completed", since=stimulus["id"])
    return stimulus, done


def observation(text: str, proposition: str | None = None, stance: str = "supports", source: str = "ci") -> dict:
    body: dict = {"kind": "observation", "source": source, "text": text}
    if proposition:
        body["claim"] = {"proposition": proposition, "subject": "build", "stance": stance}
    return body


def test_an_observation_becomes_an_episode_and_evidence_for_a_belief(app: InProcess, mind: str) -> None:
    out = app.ctl("observe", mind, "build 412 passed", "--source", "ci", "--supports", "The build is green", "--subject", "Build")
    assert out.returncode == 0, out.stderr
    app.wait_for(mind, "cycle_completed")
    [belief] = app.ctl_json("beliefs", mind)["beliefs"]
    assert (belief["proposition"], belief["subject"], belief["kind"], belief["status"]) == ("The build is green", "build", "observation", "active")
    # 0.6 from one source: metacognition's single_source check won attention and added counter-evidence.
    assert belief["confidence"] == 0.45 and (belief["support"], belief["contradict"]) == (1, 1)
    shown = app.ctl_json("belief", str(belief["id"]))
    item, counter = shown["evidence"]
    assert (item["stance"], item["weight"], item["credibility"], item["source"]) == ("support", 1.0, 0.6, "ci")
    assert (counter["stance"], counter["weight"], counter["credibility"], counter["source"]) == ("contradict", 0.25, 1.0, "metacognition")
    written, checked = shown["events"]
    warning = app.api("GET", f"/events/{counter['event_id']}").json()
    assert warning["kind"] == "metacognition" and warning["data"]["check"] == "single_source"
    assert warning["data"]["ref"] == f"belief:{belief['id']}"
    assert app.api("GET", f"/events/{checked}").json()["causation_id"] == warning["id"]
    human = app.ctl("belief", str(belief["id"]))
    assert f"noemactl timeline {checked}" in human.stdout and "support" in human.stdout
    # Why does this belief exist? Back to the observation, through the episode it cites.
    chain = app.api("GET", f"/events/{written}/chain").json()
    kinds = {n["kind"] for n in chain["nodes"]}
    assert {"observation", "memory_created", "belief_created"} <= kinds
    observed = next(n for n in chain["nodes"] if n["kind"] == "observation")
    assert (observed["id"], written, "caused") in {(e["from"], e["to"], e["kind"]) for e in chain["edges"]}
    memories = app.ctl_json("memories", mind, "--search", "passed")["memories"]
    assert [m["text"] for m in memories] == ["observed from ci: build 412 passed"]


def test_trust_sets_how_much_an_assertion_counts(app: InProcess, mind: str) -> None:
    assert app.ctl("trust", mind, "alice", "0.9").stdout == "ada trusts alice 0.9\n"
    out = app.ctl("assert", mind, "the deploy is frozen", "--subject", "deploy", "--from", "alice")
    assert out.returncode == 0, out.stderr
    app.wait_for(mind, "cycle_completed")
    [belief] = app.ctl_json("beliefs", mind, "--subject", "Deploy")["beliefs"]
    # weight 0.8 x trust 0.9 = 0.72 on one item from one source: insufficient_evidence and
    # single_source both fire, each adding 0.25 against from metacognition (one source, discounted).
    assert belief["kind"] == "assertion" and belief["confidence"] == 0.4725
    warnings = app.api("GET", f"/minds/{mind}/events", params={"kind": "metacognition"}).json()["events"]
    assert sorted(w["data"]["check"] for w in warnings) == ["insufficient_evidence", "single_source"]
    assert app.ctl("trust", mind, "alice", "2").returncode == 2


def test_contested_then_corrected_by_an_operator(app: InProcess, mind: str) -> None:
    turn(app, mind, observation("green", "build is green"))
    _, done = turn(app, mind, observation("red on qa", "build is green", stance="contradicts", source="qa"))
    [belief] = app.api("GET", f"/minds/{mind}/beliefs").json()["beliefs"]
    assert belief["status"] == "contested" and done["data"]["beliefs"] == [belief["id"]]
    correction = {"kind": "correction", "belief": belief["id"], "confidence": 0.9, "reason": "I looked at the dashboard"}
    assert app.api("POST", f"/minds/{mind}/events", json=correction).status_code == 201
    app.wait_for(mind, "cycle_completed", since=done["id"])
    shown = app.api("GET", f"/beliefs/{belief['id']}").json()
    assert (shown["status"], shown["confidence"]) == ("pinned", 0.9)
    corrected = app.api("GET", f"/events/{shown['events'][-1]}").json()
    assert corrected["actor"] == "operator" and corrected["data"]["reason"] == "I looked at the dashboard"
    # Pinned: later evidence is recorded but does not move it.
    turn(app, mind, observation("still red", "build is green", stance="contradicts", source="qa"))
    again = app.api("GET", f"/beliefs/{belief['id']}").json()
    assert (again["status"], again["confidence"]) == ("pinned", 0.9)
    against = [e["source"] for e in again["evidence"] if e["stance"] == "contradict"]
    assert against == ["metacognition", "qa", "qa"]  # recorded, but the pin holds


def test_correct_through_the_cli_sends_the_correction(app: InProcess, mind: str) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    _, done = turn(app, mind, observation("green", "build is green"))
    [belief] = app.api("GET", f"/minds/{mind}/beliefs").json()["beliefs"]
    # The statuses a correction takes are app's to say (the CLI does not restate them).
    bogus = app.ctl("correct", str(belief["id"]), "--status", "bogus", "--reason", "r")
    assert bogus.returncode == 2 and bogus.stderr.startswith("noemactl: status must be 'active', 'pinned' or 'rejected', not 'bogus'")
    out = app.ctl("correct", str(belief["id"]), "--confidence", "0.9", "--reason", "I looked at the dashboard")
    assert out.returncode == 0, out.stderr
    [sent] = app.api("GET", f"/minds/{mind}/events", params={"kind": "correction"}).json()["events"]
    assert sent["actor"] == OPERATOR and sent["data"]["belief"] == belief["id"] and sent["data"]["confidence"] == 0.9
    app.wait_for(mind, "cycle_completed", since=done["id"])
    assert app.api("GET", f"/beliefs/{belief['id']}").json()["status"] == "pinned"


def test_retrieval_recalls_related_episodes_and_cites_them(app: InProcess, mind: str) -> None:
    turn(app, mind, {"kind": "message", "author": "alice", "text": "the parser tests keep failing on unicode input"})
    turn(app, mind, {"kind": "message", "author": "bob", "text": "lunch at noon?"})
    _, done = turn(app, mind, {"kind": "message", "author": "alice", "text": "unicode parser failure again"})
    events = app.api("GET", f"/minds/{mind}/events", params={"kind": "memory_retrieved", "limit": 10}).json()["events"]
    recalled = events[-1]
    assert recalled["cycle_id"] == done["cycle_id"]
    memory_ids = [r["id"] for r in recalled["refs"] if r["type"] == "memory"]
    first = app.api("GET", f"/memories/{memory_ids[0]}").json()
    assert "parser tests keep failing" in first["text"] and first["access_count"] >= 1


def test_bad_cognitive_stimuli_are_refused(app: InProcess, mind: str) -> None:
    cases = [
        ({"kind": "assertion", "source": "a"}, 422, "claim is missing"),
        ({"kind": "assertion", "source": "a", "claim": {"proposition": "x", "subject": "y", "stance": "maybe"}}, 422, "stance"),
        ({"kind": "correction", "belief": 999, "reason": "no", "status": "rejected"}, 404, "belief 999 does not exist"),
        ({"kind": "correction", "belief": 1, "reason": "nothing to do"}, 422, "a correction sets a status"),
        ({"kind": "correction", "belief": 1, "reason": "x", "confidence": 1.5}, 422, "confidence"),
    ]
    for body, status, words in cases:
        resp = app.api("POST", f"/minds/{mind}/events", json=body)
        assert resp.status_code == status, (body, resp.text)
        assert words in resp.json()["detail"], (body, resp.json())
    assert app.api("PUT", f"/minds/{mind}/trust/alice", json={"value": 2}).status_code == 422


def test_replaying_the_same_stimuli_gives_the_same_beliefs_warnings_and_winners(app: InProcess) -> None:
    script = [
        observation("green", "build is green"),
        {"kind": "assertion", "source": "alice", "claim": {"proposition": "deploys are frozen", "subject": "deploy"}},
        observation("red", "build is green", stance="contradicts", source="qa"),
        {"kind": "message", "author": "alice", "text": "is the build green?"},
    ]

    def play(name: str) -> list[tuple]:
        app.api("POST", "/minds", json={"name": name})
        app.api("PUT", f"/minds/{name}/trust/alice", json={"value": 0.8})
        cycles = []
        for body in script:
            _, done = turn(app, name, body)
            cycles.append((done["data"]["winners"], done["data"]["warnings"], done["data"]["retrieved"]))
        beliefs = app.api("GET", f"/minds/{name}/beliefs").json()["beliefs"]
        held = [(b["proposition"], b["subject"], b["confidence"], b["status"], b["support"], b["contradict"]) for b in beliefs]
        # Ids differ between minds; the keys of winners name them, so compare their shapes.
        shapes = [([w.split(":")[0] for w in winners], warnings, retrieved) for winners, warnings, retrieved in cycles]
        return [held, shapes]

    first = play("first")
    assert first == play("second")
    assert any(warnings for _, warnings, _ in first[1])  # the script does draw warnings
    assert json.dumps(play("third")) == json.dumps(first)


def test_a_stimulus_at_the_text_limit_is_still_remembered(app: InProcess, mind: str) -> None:
    _, done = turn(app, mind, {"kind": "message", "author": "alice", "text": "z" * 100_000})
    assert done["data"]["episodes"] == 1
    [memory] = app.api("GET", f"/minds/{mind}/memories").json()["memories"]
    assert len(memory["text"]) == 100_000 and memory["text"].startswith("alice said on cli: zzz")


def test_operators_give_semantic_and_procedural_memories(app: InProcess, mind: str) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    _, done = turn(app, mind, {"kind": "message", "author": "alice", "text": "alice prefers Go for services"})
    [episode] = app.api("GET", f"/minds/{mind}/memories").json()["memories"]
    out = app.ctl("remember", mind, "Alice prefers Go", "--from-memory", str(episode["id"]))
    assert out.returncode == 0 and out.stdout.startswith("remembered #")
    fact = app.ctl_json("memories", mind, "--kind", "semantic")["memories"][0]
    assert (fact["kind"], fact["text"], fact["derived_from"]) == ("semantic", "Alice prefers Go", [episode["id"]])
    created = app.api("GET", f"/minds/{mind}/events", params={"kind": "memory_created"}).json()["events"][-1]
    assert created["actor"] == OPERATOR and {"type": "memory", "id": episode["id"]} in created["refs"]
    assert app.ctl("remember", mind, "x", "--kind", "episodic").returncode == 2
    bad = app.api("POST", f"/minds/{mind}/memories", json={"text": "y", "derived_from": [9999]})
    assert bad.status_code in (404, 422) and "9999" in bad.json()["detail"]
