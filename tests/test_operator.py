"""Who did what: an operator's actions are recorded as `operator:<user>`, the user the socket's peer runs as.

Only a real noemad proves this: the uid comes from the Unix socket
(SO_PEERCRED). In process, with no socket, the actor is the bare `operator`.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

import pytest

from conftest import NOEMACTL, OPERATOR, Noemad, start_noemad
from inprocess import InProcess
from noemad.operator import Operator, is_operator, user_name

ME = OPERATOR

SCRIPT = '[narrate]\ndefault = "I reflected."\n'
CONFIG = '[models]\nprovider = "scripted"\n\n[models.scripted]\nfile = "{script}"\n\n[models.narrate]\nmodel = "claude-haiku-5-5"\n'


def events(noemad: Noemad, mind: str) -> list[dict]:
    return noemad.ctl_json("events", mind)["events"]


def test_operator_actions_over_the_socket_name_the_peer_user(noemad: Noemad) -> None:
    assert noemad.ctl("mind", "create", "ada").returncode == 0
    assert noemad.ctl("trust", "ada", "alice", "0.4").returncode == 0
    assert noemad.ctl("goal", "ada", "ship the release").returncode == 0
    noemad.wait_for("ada", "goal_created")
    assert noemad.ctl("pause", "ada").returncode == 0
    by_kind = {e["kind"]: e["actor"] for e in events(noemad, "ada")}
    # The operator's own events, and what the mind's turn made of the operator's goal.
    assert by_kind["mind_created"] == by_kind["trust_changed"] == by_kind["goal"] == ME
    assert by_kind["goal_created"] == ME
    assert by_kind["mode_changed"] == ME
    # The timeline shows who: the events line carries the actor.
    out = noemad.ctl("events", "ada")
    assert out.returncode == 0 and ME in out.stdout
    # A message keeps the author it claims and the operator whose connection stored it.
    assert noemad.ctl("say", "ada", "hi", "--from", "alice").returncode == 0
    [said] = [e for e in events(noemad, "ada") if e["kind"] == "message"]
    assert (said["actor"], said["data"]["author"], said["data"]["operator"]) == ("user:alice", "alice", ME)
    line = noemad.ctl("events", "ada", "--kind", "message").stdout
    assert "user:alice" in line and f"(stored by {ME})" in line


def test_a_job_an_operator_runs_names_them_in_jobs_and_mode_changed(noemad: Noemad) -> None:
    assert noemad.ctl("mind", "create", "ada").returncode == 0
    assert noemad.ctl("reflect", "ada").returncode == 0
    listed = noemad.ctl("jobs")
    assert listed.returncode == 0
    header, row = listed.stdout.splitlines()[:2]
    assert header.split()[3] == "BY" and row.split()[3] == ME
    shown = noemad.ctl("jobs", "show", "1").stdout
    assert f"started by  {ME}" in shown or f"started by {ME}" in " ".join(shown.split())
    started = next(e for e in events(noemad, "ada") if e["kind"] == "mode_changed")
    assert started["text"] == f"reflection job 1 started by {ME}"  # not "(operator, operator)"
    assert noemad.ctl_json("jobs", "show", "1")["actor"] == ME


def test_the_model_calls_of_an_operators_job_name_the_operator(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    (home / "script.toml").write_text(SCRIPT)
    (home / "noemad.toml").write_text(CONFIG.format(script=home / "script.toml"))
    daemon = start_noemad(home, place / "s.sock")
    try:
        assert daemon.ctl("mind", "create", "ada").returncode == 0
        assert daemon.ctl("predict", "ada", "the deploy lands", "--subject", "deploy", "--confidence", "0.9", "--due", "1h").returncode == 0
        daemon.wait_for("ada", "prediction_made")
        [prediction] = daemon.ctl_json("predictions", "ada")["predictions"]
        assert daemon.ctl("outcome", str(prediction["id"]), "--miss").returncode == 0
        daemon.wait_for("ada", "prediction_resolved")
        assert daemon.ctl("reflect", "ada").returncode == 0
        job = daemon.ctl_json("jobs", "show", "1")
        assert job["status"] == "succeeded" and job["model_calls"], job
        reflected = next(e for e in events(daemon, "ada") if e["kind"] == "reflection")
        chain = daemon.ctl_json("timeline", str(reflected["id"]), "--back", "0", "--forward", "0")
        [node] = [n for n in chain["nodes"] if n["id"] == reflected["id"]]
        assert [c["actor"] for c in node["model_calls"]] == [ME] * len(job["model_calls"])
    finally:
        daemon.stop()
        daemon.notify.close()


def test_in_process_with_no_socket_the_operator_is_the_bare_operator(app: InProcess, mind: str) -> None:
    assert app.api("POST", f"/minds/{mind}/pause").status_code == 200
    found = app.api("GET", f"/minds/{mind}/events").json()["events"]
    assert {e["kind"]: e["actor"] for e in found}["mode_changed"] == "operator"


def test_a_uid_the_system_cannot_name_reads_as_the_number() -> None:
    unknown = next(uid for uid in range(3_999_000, 4_000_000) if not _named(uid))
    assert user_name(unknown) == f"uid:{unknown}"
    assert Operator.of_uid(unknown).actor == f"operator:uid:{unknown}"
    assert Operator().actor == "operator" and is_operator(ME) and is_operator("operator") and not is_operator("operators")


def _named(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


@pytest.mark.parametrize("path", ["/run/noema/noemad.sock"])
def test_the_not_running_hint_names_the_system_service_for_the_system_socket(path: str) -> None:
    # No daemon is needed to hear that none is running: noemactl alone, as Noemad.ctl runs it.
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("NOEMA_HOME", None)
    out = subprocess.run([NOEMACTL, "--socket", path, "status"], capture_output=True, text=True, env=env, timeout=60)
    if Path(path).exists():
        pytest.skip("a system noemad socket exists on this machine")
    assert out.returncode == 3
    assert "`sudo systemctl start noemad`" in out.stderr and "--user" not in out.stderr


SAY_SCRIPT = '[respond]\ndefault = "Hello."\n'


def test_a_message_an_operator_stored_keeps_both_and_its_turn_names_the_operator(tmp_path: Path) -> None:
    from conftest import SCRIPTED_RESPOND
    from inprocess import start_app
    from noemactl.render import event_line
    from noemactl.timeline_view import node_label
    from noemad.events import get_event
    from noemad.stimuli import Message, operator_of

    (tmp_path / "script.toml").write_text(SAY_SCRIPT)
    app = start_app(tmp_path, SCRIPTED_RESPOND.format(script=tmp_path / "script.toml"))
    try:
        assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        app.settle("ada")
        root = Operator(user="root", uid=0)  # as the socket's peer would name it
        said = app.run(app.sup.ingest("ada", Message("alice", "hi"), operator=root))
        reply = app.wait_for("ada", "reply", since=said.id)
        app.settle("ada")
        stored = get_event(app.sup.store.reader(), said.id)
        assert (stored.actor, Message.of(stored).author, Message.of(stored).operator) == ("user:alice", "alice", "operator:root")
        assert operator_of(stored) == "operator:root"
        calls = app.sup.store.reader().execute("SELECT role, actor FROM model_calls").fetchall()
        assert calls and all(tuple(c) == ("respond", "operator:root") for c in calls)  # the turn it woke is the operator's
        shown = app.api("GET", f"/events/{said.id}").json()
        assert "(stored by operator:root)" in event_line(shown).plain
        assert "(stored by operator:root)" in node_label(shown).plain
        assert reply["actor"] == "model:respond"
        # An event stored before the operator was kept reads as before: no operator, and nothing shown.
        old = {**shown, "data": {"author": "alice", "mentions": []}}
        assert "stored by" not in event_line(old).plain
        in_process = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "yo"}).json()
        assert "operator" not in in_process["data"]  # no socket, no peer: nothing claimed about who stored it
    finally:
        app.stop()
