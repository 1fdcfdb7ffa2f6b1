"""Reflection, consolidation, their jobs and schedules, and the demo, through noemactl.

noemactl's own code runs in process (`app.ctl`) against the engine; a real
noemad and noemactl stay for a terminal's progress bar and the operator a
socket peer is.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from conftest import OPERATOR, Noemad
from inprocess import InProcess, start_app

from noemactl.demo import NEEDED_CONFIG
from noemactl.demo import SCRIPT as DEMO_SCRIPT
from noemactl.demo_scenarios import DRAFT, GO_MESSAGES
from noemad.wire import dump

DAY = 86_400.0
GO = GO_MESSAGES  # five of seven about picking Go, as the demo tells them


def settle(noemad: Noemad | InProcess, mind: str, stimuli: int) -> None:
    """Follow the mind's events until its cycles have taken `stimuli` stimuli in all."""
    if isinstance(noemad, InProcess):
        settle_app(noemad, mind, stimuli)
        return
    taken = 0
    with noemad.client as c:
        with c.stream("GET", f"/api/v1/minds/{mind}/events/stream", params={"since": 0}) as resp:
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if event.get("kind") == "cycle_completed":
                        taken += event["data"]["stimuli"]
                        if taken >= stimuli:
                            return
    raise AssertionError(f"the stream of {mind} ended after {taken} of {stimuli} stimuli")


def settle_app(app: InProcess, mind: str, stimuli: int) -> None:
    """`settle` in process: follow the mind's bus as the events stream does."""

    async def follow() -> None:
        taken = 0
        following = app.sup.follow(mind, 0)
        try:
            async for event in following:
                if event.kind == "cycle_completed":
                    taken += dump(event)["data"]["stimuli"]
                    if taken >= stimuli:
                        return
        finally:
            following.close()
        raise AssertionError(f"the bus of {mind} closed after {taken} of {stimuli} stimuli")

    app.run(follow())


def looked(noemad: Noemad | InProcess, tries: int = 1000) -> None:
    """Wait until the scheduler has looked for due jobs at the daemon's current time (it runs right after the clock moves)."""
    for _ in range(tries):
        status = noemad.api("GET", "/status").json()
        if status["jobs"]["scheduler_looked_at"] == status["now"] and not status["jobs"]["running"]:
            return
    raise AssertionError(f"the scheduler did not look at {status['now']}: {status['jobs']}")


def say(engine: Noemad | InProcess, mind: str, text: str, author: str = "alice") -> dict[str, Any]:
    """Store a message through the API (the CLI's say has its own tests)."""
    resp = engine.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": author, "text": text})
    assert resp.status_code == 201, resp.text
    return resp.json()


def tell_go(noemad: Noemad | InProcess, mind: str) -> None:
    for text in GO:
        say(noemad, mind, text)
    settle(noemad, mind, len(GO))


def events(noemad: Noemad | InProcess, mind: str, *kinds: str) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"limit": 1000}
    if kinds:
        params["kind"] = list(kinds)
    return noemad.api("GET", f"/minds/{mind}/events", params=params).json()["events"]


def test_consolidate_now_makes_a_generalisation_the_timeline_walks_back(app: InProcess, mind: str) -> None:
    tell_go(app, mind)
    out = app.ctl("consolidate", mind)
    assert out.returncode == 0, out.stderr
    job_id = int(out.stdout.split("consolidation job ")[1].split()[0])
    assert f"consolidation job {job_id} for ada succeeded" in out.stdout
    assert "belief #" in out.stdout and "memory #" in out.stdout and "walk it: noemactl timeline" in out.stdout

    job = app.ctl_json("jobs", "show", str(job_id))
    # "operator": no socket peer names one in process; the daemon tier checks the peer's name (a terminal's progress bar).
    assert (job["status"], job["trigger"], job["actor"], job["progress"]) == ("succeeded", "operator", "operator", 1.0)
    [cluster] = job["outputs"]["clusters"]
    assert cluster["episodes"] == 5 and cluster["worded_by"] == "plain"

    belief = app.ctl_json("belief", str(cluster["belief"]))
    assert belief["kind"] == "inference" and len(belief["evidence"]) == 5
    assert {e["weight"] for e in belief["evidence"]} == {0.3}
    memory = app.api("GET", f"/memories/{cluster['memory']}").json()
    assert memory["kind"] == "semantic" and memory["text"] == belief["proposition"] and len(memory["derived_from"]) == 5

    # While it ran the mind was consolidating, and it is idle again.
    modes = [(e["data"]["from"], e["data"]["to"]) for e in events(app, mind, "mode_changed")]
    assert modes == [("idle", "consolidating"), ("consolidating", "idle")]
    assert app.ctl_json("mind", "show", mind)["mode"] == "idle"

    # The timeline from the belief reaches the messages the episodes record.
    [created] = [e for e in events(app, mind, "belief_created") if e["subject"] == {"type": "belief", "id": belief["id"]}]
    graph = app.ctl_json("timeline", str(created["id"]), "--forward", "0")
    reached = {n["id"] for n in graph["nodes"]}
    messages = [e for e in events(app, mind, "message") if "select" in e["text"].lower()]
    assert {m["id"] for m in messages} <= set(reached)

    # Listed, and a second run finds nothing new.
    listed = app.ctl("jobs", mind)
    assert listed.returncode == 0 and f"#{job_id}" in listed.stdout and "consolidation" in listed.stdout
    again = app.ctl_json("consolidate", mind)
    assert again["status"] == "succeeded" and again["outputs"]["clusters"] == []


def test_rejecting_a_generalisation_retracts_it_and_leaves_the_episodes(app: InProcess, mind: str) -> None:
    tell_go(app, mind)
    [cluster] = app.ctl_json("consolidate", mind)["outputs"]["clusters"]
    episodes = app.api("GET", f"/memories/{cluster['memory']}").json()["derived_from"]
    out = app.ctl("consolidate", "reject", str(cluster["memory"]), "--reason", "alice only tried Go")
    assert out.returncode == 0, out.stderr
    assert f"rejected memory #{cluster['memory']} and belief #{cluster['belief']}" in out.stdout
    assert app.api("GET", f"/memories/{cluster['memory']}").json()["status"] == "retracted"
    assert app.ctl_json("belief", str(cluster["belief"]))["status"] == "rejected"
    for episode in episodes:
        assert app.api("GET", f"/memories/{episode}").json()["status"] == "active"
    # Twice is a conflict; an episode is not a generalisation.
    twice = app.ctl("consolidate", "reject", str(cluster["memory"]))
    assert twice.returncode == 5 and "noemactl:" in twice.stderr
    episode = app.ctl("consolidate", "reject", str(episodes[0]))
    assert episode.returncode == 2 and "noemactl:" in episode.stderr


def test_reflect_now_writes_a_lesson_once(app: InProcess, mind: str) -> None:
    for n in range(3):  # predictions and misses through the API: the CLI's predict and outcome have their own tests
        body = {"kind": "prediction", "proposition": f"deploy {n} finishes without a rollback", "subject": "deploy", "confidence": 0.9, "due": "1h"}
        assert app.api("POST", f"/minds/{mind}/events", json=body).status_code == 201
        settle(app, mind, 2 * n + 1)
        [prediction] = app.api("GET", f"/minds/{mind}/predictions", params={"status": "open"}).json()["predictions"]
        body = {"kind": "outcome", "prediction": prediction["id"], "result": "miss"}
        assert app.api("POST", f"/minds/{mind}/events", json=body).status_code == 201
        settle(app, mind, 2 * n + 2)
    out = app.ctl("reflect", mind)
    assert out.returncode == 0, out.stderr
    assert "reflection job" in out.stdout and "succeeded" in out.stdout
    job = app.ctl_json("jobs", "show", out.stdout.split("reflection job ")[1].split()[0])
    [lesson] = job["outputs"]["lessons"]
    memory = app.api("GET", f"/memories/{lesson}").json()
    assert memory["kind"] == "procedural" and memory["text"].startswith("Lesson:") and "deploy" in memory["text"]
    reflection = app.api("GET", f"/events/{job['outputs']['event']}").json()
    assert reflection["kind"] == "reflection"
    second = app.ctl_json("reflect", mind)
    assert second["status"] == "succeeded" and second["outputs"]["lessons"] == []
    modes = [(e["data"]["from"], e["data"]["to"]) for e in events(app, mind, "mode_changed")]
    assert modes == [("idle", "reflecting"), ("reflecting", "idle")] * 2


def test_a_running_job_is_named_and_a_paused_mind_waits(app: InProcess, mind: str) -> None:
    # A job row left running (as a job under way would be) makes a second request a conflict that names it.
    db = sqlite3.connect(app.home / "noema.db")
    with db:
        db.execute(
            "INSERT INTO jobs (mind, kind, trigger, actor, status, started_at) VALUES ('ada', 'consolidation', 'schedule', 'schedule', 'running', '2026-01-01T00:00:00Z')"
        )
    job_id = db.execute("SELECT max(id) FROM jobs").fetchone()[0]
    db.close()
    out = app.ctl("consolidate", mind)
    assert out.returncode == 5
    assert f"consolidation job {job_id} is already running for mind 'ada'" in out.stderr
    assert f"noemactl jobs show {job_id}" in out.stderr
    # Reflection is another kind: it runs.
    assert app.ctl("reflect", mind).returncode == 0

    assert app.ctl("pause", mind).returncode == 0
    paused = app.ctl("reflect", mind)
    assert paused.returncode == 5 and "paused" in paused.stderr and "noemactl resume ada" in paused.stderr


def test_bad_command_lines_send_nothing(app: InProcess, mind: str) -> None:
    both = app.ctl("reflect", "--pause", "--resume")
    assert both.returncode == 2 and "contradict" in both.stderr
    with_mind = app.ctl("consolidate", mind, "--pause")
    assert with_mind.returncode == 2 and "every mind" in with_mind.stderr
    kind = app.ctl("jobs", "--kind", "dreaming")
    assert kind.returncode == 2 and "reflection or consolidation" in kind.stderr
    missing = app.ctl("jobs", "show", "999")
    assert missing.returncode == 4 and "job 999 does not exist" in missing.stderr
    nobody = app.ctl("reflect", "nobody")
    assert nobody.returncode == 4 and "no mind is named 'nobody'" in nobody.stderr
    assert app.api("GET", "/jobs").json()["jobs"] == []


def test_schedules_run_on_the_clock_and_a_pause_survives_a_restart(tmp_path: Path) -> None:
    config = '[schedules.reflection]\nevery = "1d"\n[schedules.consolidation]\nevery = "1d"\n'
    engine = start_app(tmp_path, config)
    try:
        assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        assert engine.api("PUT", "/schedules/consolidation", json={"paused": True}).status_code == 200
    finally:
        engine.stop()

    engine = start_app(tmp_path)
    try:
        assert engine.api("GET", "/status").json()["jobs"]["paused_schedules"] == ["consolidation"]
        engine.advance(DAY + 60)
        reflection = engine.wait_for("ada", "reflection")
        jobs = engine.api("GET", "/jobs").json()["jobs"]
        assert [(j["kind"], j["trigger"]) for j in jobs] == [("reflection", "schedule")]
        assert reflection["data"]["job"] == jobs[0]["id"]
        engine.wait_job(jobs[0]["id"])

        # A paused schedule never blocks a run-now.
        job = engine.api("POST", "/minds/ada/jobs", json={"kind": "consolidation"}).json()
        assert job["trigger"] == "operator"
        engine.wait_job(job["id"])

        assert engine.api("PUT", "/schedules/consolidation", json={"paused": False}).status_code == 200
        # A dormant mind is skipped: a day later nothing new happened, so nothing is scheduled.
        engine.advance(DAY + 60)
        looked(engine)
        assert len(engine.api("GET", "/jobs", params={"mind": "ada"}).json()["jobs"]) == 2
        # News makes it due again, for both kinds.
        said = say(engine, "ada", "the release moved to Thursday")
        engine.advance(DAY + 60)
        engine.wait_for("ada", "consolidation", since=said["id"])
        engine.wait_for("ada", "reflection", since=said["id"])
        kinds = [(j["kind"], j["trigger"]) for j in engine.api("GET", "/jobs", params={"mind": "ada"}).json()["jobs"]]
        assert kinds[:2] in ([("consolidation", "schedule"), ("reflection", "schedule")], [("reflection", "schedule"), ("consolidation", "schedule")])
    finally:
        engine.stop()


def test_schedules_pause_and_resume_through_the_cli(app: InProcess, mind: str) -> None:
    paused = app.ctl("consolidate", "--pause")
    assert paused.returncode == 0 and "scheduled consolidation paused for every mind" in paused.stdout
    assert app.ctl_json("status")["jobs"]["paused_schedules"] == ["consolidation"]
    note = app.ctl("jobs")
    assert "scheduled runs paused: consolidation" in note.stderr
    # A paused schedule never blocks a run-now.
    assert app.ctl_json("consolidate", mind)["trigger"] == "operator"
    resumed = app.ctl("consolidate", "--resume")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout
    assert app.api("GET", "/status").json()["jobs"]["paused_schedules"] == []


def test_the_demo_plays_four_scenarios_with_no_model_and_names_what_the_others_need(app: InProcess) -> None:
    out = app.ctl("demo")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "== 1." in text and "== 2." in text and "== 3." in text and "== 4." in text
    assert "insufficient_evidence" in text and "single_source" in text
    assert "Notification #" in text and "prediction_miss" in text
    assert "lesson, procedural memory #" in text
    assert "Consolidation (job" in text and "Semantic memory #" in text
    assert "The timeline walks from the belief back to the episodes" in text and "message" in text
    assert "woke: rule dms: always wakes the mind; also took 1 batch by rule ambient" in text
    # The judge's and the critic's make model calls: skipped, each with the config that plays it.
    for n, name in ((5, "judge"), (6, "critic")):
        assert f"== {n}. " in out.stderr and f"scenario {name} makes model calls" in out.stderr
    assert f'file = "{DEMO_SCRIPT}"' in out.stderr and "[gate.judge]\nenabled = true" in out.stderr
    minds = {m["name"] for m in app.ctl_json("mind", "list")["minds"]}
    assert minds == {"demo-single-source", "demo-prediction-miss", "demo-go", "demo-gate"}

    again = app.ctl("demo", "go")
    assert again.returncode == 5 and "--replace" in again.stderr
    replay = app.ctl("--json", "demo", "go", "--replace")
    assert replay.returncode == 0, replay.stderr
    [scenario] = json.loads(replay.stdout)["scenarios"]
    assert scenario["mind"] == "demo-go" and scenario["found"]["clusters"]
    unknown = app.ctl("demo", "chess")
    assert unknown.returncode == 2 and "single-source, prediction-miss, go, gate, judge, critic (or 1-6, or all)" in unknown.stderr
    refused = app.ctl("demo", "judge")
    assert refused.returncode == 5 and "the scripted provider (this noemad's is none) and [gate.judge] enabled = true" in refused.stderr
    assert "demo-judge" not in {m["name"] for m in app.ctl_json("mind", "list")["minds"]}


def test_the_gate_judge_and_critic_scenarios_play_offline_on_the_demo_script(tmp_path: Path) -> None:
    engine = start_app(tmp_path, NEEDED_CONFIG)  # a manual clock: the demo moves it past each quiet period
    try:
        gate = engine.ctl("demo", "gate")
        assert gate.returncode == 0, gate.stderr
        assert "alice's DM (event #" in gate.stdout and 'says "woke: rule dms: always wakes the mind"' in gate.stdout
        assert "gate-status shows rule ambient holding 2, due at 2026-01-01 00:00:02" in gate.stdout
        assert '"woke: rule ambient: debounce 2000 ms, a batch of 2 stimuli after 2000 ms quiet"' in gate.stdout
        assert "the mention cut through at once and took bob's line along" in gate.stdout
        assert '"woke: rule dms: always wakes the mind; also took 1 batch by rule ambient"' in gate.stdout
        assert "$ noemactl gate-status demo-gate" in gate.stdout

        judged = engine.ctl("--json", "demo", "judge")
        assert judged.returncode == 0, judged.stderr
        [scenario] = json.loads(judged.stdout)["scenarios"]
        assert scenario["found"]["verdicts"] == ["wait", "reply"]
        told = "\n".join(scenario["narration"])
        assert "WAIT: the talk is between others and asks nothing of the mind." in told
        assert "REPLY: bob asks about the build, which the instructions name, and nobody has answered him." in told
        assert '"No build report has reached me since this morning; I\'ll say so here when one does."' in told
        shown = engine.ctl("gate-status", "demo-judge").stdout
        assert "judge room: reply 1, wait 1, failed 0" in shown

        reviewed = engine.ctl("demo", "critic")
        assert reviewed.returncode == 0, reviewed.stderr
        text = reviewed.stdout
        assert f'the first draft: "{DRAFT}"' in text and DRAFT in DEMO_SCRIPT.read_text()
        assert "the gate sent the draft to the critic (fabrication_finding: " in text and "the critic said REVISE" in text
        assert "the gate sent the redraft to the critic" in text and "the critic said APPROVE" in text
        assert "\"I don't know when the migration is: nobody has told me. I'll ask the ops team and tell you.\"" in text
        assert "the draft is a short acknowledgment with no claim; the gate skipped the critic" in text
        assert '"Got it, thanks!"' in text
        assert "governance: 3 drafts, critic fired 2 (67%), skipped 1, revised 1" in text
        replies = [e["text"] for e in engine.ctl_json("events", "demo-critic", "--kind", "reply")["events"]]
        assert DRAFT not in replies  # the reviewed draft never went out
        # Time was driven, never waited for: 2 s of debounce and two 1.5 s quiet periods on the manual clock.
        assert engine.ctl_json("status")["now"] == "2026-01-01T00:00:05.000Z"
    finally:
        engine.stop()


def test_with_the_scripted_provider_the_demo_shows_model_wording(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parent.parent / "examples" / "scripted-demo.toml"
    engine = start_app(tmp_path, f'[models]\nprovider = "scripted"\n[models.scripted]\nfile = "{script}"\n')
    try:
        out = engine.ctl("--json", "demo", "go")
        assert out.returncode == 0, out.stderr
        [scenario] = json.loads(out.stdout)["scenarios"]
        [cluster] = scenario["found"]["clusters"]
        assert (cluster["worded_by"], cluster["proposition"]) == ("model", "alice repeatedly selects Go for new services.")
        job = engine.ctl_json("jobs", "--kind", "consolidation")["jobs"][0]
        assert job["model_calls"] == [cluster["model_call"]]
        usage = engine.ctl_json("usage", "demo-go")
        assert [row["role"] for row in usage["rows"]] == ["summarise"]

        text = engine.ctl("demo", "prediction-miss").stdout
        assert "what it wrote (model):" in text and "I reflected, and I learnt a lesson." in text
    finally:
        engine.stop()


def test_a_mind_with_a_running_job_is_not_removed(app: InProcess, mind: str) -> None:
    db = sqlite3.connect(app.home / "noema.db")
    with db:
        db.execute(
            "INSERT INTO jobs (mind, kind, trigger, actor, status, started_at) VALUES ('ada', 'reflection', 'operator', 'operator', 'running', '2026-01-01T00:00:00Z')"
        )
    db.close()
    out = app.ctl("mind", "rm", mind, "--yes")
    assert out.returncode == 5 and "reflection job 1 running" in out.stderr and "noemactl jobs show 1" in out.stderr
    assert app.ctl_json("mind", "show", mind)["name"] == mind


def test_a_terminal_gets_a_progress_bar_and_a_pipe_does_not(noemad: Noemad, mind: str) -> None:
    import os
    import pty
    import subprocess

    from conftest import NOEMACTL

    piped = noemad.ctl("reflect", mind)
    assert piped.returncode == 0 and piped.stderr == "" and "reflection job 1 for ada succeeded" in piped.stdout
    # A job started over the socket names the operator its peer is (in process there is no peer).
    assert noemad.ctl_json("jobs", "show", "1")["actor"] == OPERATOR

    master, slave = pty.openpty()
    env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run([NOEMACTL, "consolidate", mind], stdout=subprocess.PIPE, stderr=slave, env=env, timeout=60)
    os.close(slave)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side is closed: all was read
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    assert proc.returncode == 0 and b"consolidation job 2 for ada succeeded" in proc.stdout
    text = drawn.decode(errors="replace")
    assert "consolidation of ada (job 2)" in text and "%" in text and "\x1b[" in text  # drawn, then cleared


def test_a_job_started_without_waiting_can_be_followed(app: InProcess, mind: str) -> None:
    tell_go(app, mind)
    started = app.ctl("consolidate", mind, "--no-wait")
    assert started.returncode == 0 and started.stdout == ""
    assert "consolidation job 1 started for ada; follow it with `noemactl jobs show 1 --follow`" in started.stderr
    followed = app.ctl_json("jobs", "show", "1", "--follow")
    assert followed["status"] == "succeeded" and len(followed["outputs"]["clusters"]) == 1
    shown = app.ctl("jobs", "show", "1", "-f")
    assert shown.returncode == 0 and "status       succeeded" in shown.stdout and "walk it: noemactl timeline" in shown.stdout
