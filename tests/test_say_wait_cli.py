"""`noemactl say --wait` through the real noemactl and a real noemad on the scripted provider, when no reply comes.

What the operator sees on stdout and stderr, and the exit code, when the
reply judge says WAIT (no reply, nothing failed: 0) and when the turn runs
but drafting its reply fails (an error: 1).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import NOEMACTL, SCRIPTED_RESPOND, Noemad, scripted_noemad

CONFIG = SCRIPTED_RESPOND + """
[gate.judge]
enabled = true
"""

SCRIPT = """
[judge]
default = "Two people trading jokes.\\nWAIT: banter between others"

[respond]
replies = [{ fault = "invalid", detail = "the request was malformed (scripted)" }]  # the first call fails
default = "Noted."
"""


@pytest.fixture
def daemon(place: Path) -> Iterator[Noemad]:
    with scripted_noemad(place, SCRIPT, CONFIG) as running:
        yield running


def start_say(daemon: Noemad, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "NOEMA_SOCKET": str(daemon.socket), "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("NOEMA_HOME", None)
    return subprocess.Popen([NOEMACTL, "say", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_the_judge_saying_wait_ends_the_wait_with_its_reason_and_exit_0(daemon: Noemad) -> None:
    added = daemon.ctl("rules", "add", "ada", "--name", "room", "--kind", "message", "--judge", "2000")
    assert added.returncode == 0, added.stderr
    proc = start_say(daemon, "ada", "lol, nice one", "--from", "eve", "--wait")
    try:
        message = daemon.wait_for("ada", "message")
        daemon.advance(3)  # the quiet period ends: the batch goes to the judge, who says WAIT
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out) == (0, "")
    assert err.splitlines() == [
        "batched by rule room: waiting for the batch's turn",
        f"no reply to event {message['id']}: rule room: the judge said WAIT to 1 stimulus; it did not wake the mind;"
        " see why with `noemactl gate-status ada`",
    ]
    # ... and gate-status gives the judge's reason.
    status = daemon.ctl("gate-status", "ada")
    assert "WAIT (did not wake it): banter between others" in status.stdout


def test_the_judge_saying_wait_in_json_names_why(daemon: Noemad) -> None:
    assert daemon.ctl("rules", "add", "ada", "--name", "room", "--kind", "message", "--judge", "2000").returncode == 0
    proc = start_say(daemon, "ada", "haha", "--wait", "--json")
    try:
        daemon.wait_for("ada", "message")
        daemon.advance(3)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    shown = json.loads(out)
    assert proc.returncode == 0 and shown["reply"] is None
    assert shown["why"].startswith("rule room: the judge said WAIT to 1 stimulus; it did not wake the mind; see why with")


def test_a_reply_that_fails_to_draft_is_an_error_naming_the_model_s_problem(daemon: Noemad) -> None:
    out = daemon.ctl("say", "ada", "is the deploy done?", "--wait")
    assert (out.returncode, out.stdout) == (1, "")
    [line] = out.stderr.splitlines()
    assert line.startswith("noemactl: no reply to event 2: drafting the reply failed: ")
    assert "the request was malformed (scripted)" in line
    assert "Traceback" not in out.stderr
    # The next message is answered: a failed draft does not stop the mind.
    again = daemon.ctl("say", "ada", "thanks", "--wait")
    assert (again.returncode, again.stdout, again.stderr) == (0, "Noted.\n", "")
