"""noemactl's gate commands: rules, gate-status (and --watch), sleep and wake.

What only a process proves (a watch piped or on a terminal, what noemactl
imports at start) runs the installed noemactl against a real noemad; the rest
runs noemactl's own code in process (`app.ctl`). None mocks the daemon or sleeps.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import NOEMACTL, Noemad, own_noemad
from inprocess import InProcess, start_app
from test_cli import _forbidden_imports, follower  # noqa: F401  (follower: the fixture that starts and stops long-running noemactl)

AMBIENT = '{"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*"}, "behaviour": {"debounce": {"ms": 2000}}}'


def ok(out: Any) -> str:
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return str(out.stdout)


def test_rules_add_from_flags_shows_the_change_and_its_probe_table(app: InProcess, mind: str) -> None:
    lines = ok(app.ctl("rules", "add", mind, "--name", "dms", "--flag", "dm", "--always")).splitlines()
    assert lines[0].startswith("ada: added rule dms at position 1 of 1  (event #")
    header = lines[1].split()
    assert header == ["STIMULUS", "BEFORE", "AFTER"]
    assert len(lines) == 2 + 6  # the six probes
    sent = app.api("GET", "/minds/ada/rules").json()["rules"]
    assert sent == [
        {
            "name": "dms",
            "match": {"kinds": [], "channel": None, "author": None, "flags": ["dm"], "text": None, "regex": False,
                      "tags_any": [], "tags_all": [], "tags_none": []},
            "behaviour": {"always": {}},
            "passthrough": False,
            "resets": [],
        }
    ]


def test_every_flag_reaches_the_rule(app: InProcess, mind: str) -> None:
    change = app.ctl_json(
        "rules", "add", mind, "--name", "bots", "--kind", "message", "--channel", "discord:*", "--author", "*bot*",
        "--flag", "from_bot", "--text", "deploy|release", "--regex", "--rate-limit", "3/60000", "--key-by", "channel",
        "--passthrough", "--resets", "a,b", "--resets", "c",
    )
    [rule] = change["rules"]
    assert rule["match"] == {
        "kinds": ["message"], "channel": "discord:*", "author": "*bot*", "flags": ["from_bot"], "text": "deploy|release",
        "regex": True, "tags_any": [], "tags_all": [], "tags_none": [],
    }
    assert rule["behaviour"] == {"rate_limit": {"tokens": 3, "refill_ms": 60000, "key_by": "channel"}}
    assert rule["passthrough"] is True and rule["resets"] == ["a", "b", "c"]
    sampled = app.ctl_json("rules", "add", mind, "--name", "sample", "--sample", "10", "--position", "1")
    assert sampled["rules"][0]["behaviour"] == {"passive_sample": {"every": 10, "key_by": "none"}}


def test_rules_list_show_move_rm_with_rule_json(app: InProcess, mind: str, tmp_path: Any) -> None:
    ok(app.ctl("rules", "add", mind, "--rule", AMBIENT))
    path = tmp_path / "rule.json"
    path.write_text('{"name": "mute", "match": {"author": "spam*"}, "behaviour": "defer"}')
    ok(app.ctl("rules", "add", mind, "--file", str(path)))
    listed = ok(app.ctl("rules", "list", mind)).splitlines()
    assert listed[0].split() == ["#", "RULE", "BEHAVIOUR", "MATCH", "ALSO"]
    assert listed[1].split()[:4] == ["1", "ambient", "debounce", "2000"]
    assert "kinds message; channel discord:*" in listed[1]
    assert listed[2].split()[:3] == ["2", "mute", "defer"] and "author spam*" in listed[2]
    assert listed[3] == "default: always (for stimuli no rule matches)"
    assert ok(app.ctl("rules", mind)) == "\n".join(listed) + "\n"  # `rules MIND` is `rules list MIND`
    shown = ok(app.ctl("rules", "show", mind, "mute")).splitlines()
    assert shown[0] == "rule mute of ada" and shown[1].split() == ["position", "2", "of", "2"]
    assert shown[-1] == "matches      0, last -"  # its state in the running gate
    moved = ok(app.ctl("rules", "move", mind, "mute", "--to", "1")).splitlines()
    assert moved[0].startswith("ada: moved rule mute at position 1 of 2")
    assert [r["name"] for r in app.ctl_json("rules", "list", mind)["rules"]] == ["mute", "ambient"]
    removed = ok(app.ctl("rules", "rm", mind, "mute")).splitlines()
    assert removed[0].startswith("ada: removed rule mute")
    assert [r["name"] for r in app.ctl_json("rules", "list", mind)["rules"]] == ["ambient"]
    kinds = [e["data"]["action"] for e in app.api("GET", "/minds/ada/events", params={"kind": "gate_rules_changed"}).json()["events"]]
    assert kinds == ["add", "add", "move", "remove"]


def test_a_catch_all_defer_first_is_warned_about(app: InProcess, mind: str) -> None:
    ok(app.ctl("rules", "add", mind, "--name", "dms", "--flag", "dm", "--always"))
    out = ok(app.ctl("rules", "add", mind, "--name", "quiet", "--defer", "--position", "1"))
    dm = next(line for line in out.splitlines() if line.startswith("*"))
    assert "defer" in dm and "quiet" in dm
    assert any(line.startswith("warning: ") for line in out.splitlines()), out
    assert any(line.startswith("warning: ") for line in ok(app.ctl("rules", "list", mind)).splitlines())


def test_a_refusal_is_the_validators_sentence_not_a_traceback(app: InProcess, mind: str) -> None:
    out = app.ctl("rules", "add", mind, "--name", "x", "--always", "--defer")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("noemactl: ") and "exactly one behaviour" in out.stderr
    assert "Traceback" not in out.stderr
    regex = app.ctl("rules", "add", mind, "--name", "x", "--text", "(?=a)", "--regex", "--always")
    assert regex.returncode == 2 and "RE2" in regex.stderr
    dup = [app.ctl("rules", "add", mind, "--rule", AMBIENT) for _ in range(2)][1]
    assert dup.returncode == 5 and "ambient" in dup.stderr
    missing = app.ctl("rules", "rm", mind, "nope")
    assert missing.returncode == 4 and "nope" in missing.stderr
    # Bad command lines send nothing (exit 2).
    for args in (["--rule", "{"], ["--rate-limit", "fast"], ["--key-by", "channel", "--always", "--name", "x"], []):
        bad = app.ctl("rules", "add", mind, *args)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr, (args, bad.stderr)
    assert app.api("GET", "/minds/ada/rules").json()["rules"][0]["name"] == "ambient"


def test_rules_edit_changes_a_rule_in_place_and_odd_names_never_reach_another_route(app: InProcess, mind: str) -> None:
    ok(app.ctl("rules", "add", mind, "--rule", AMBIENT))
    ok(app.ctl("rules", "add", mind, "--name", "dms", "--flag", "dm", "--always"))
    lines = ok(app.ctl("rules", "edit", mind, "ambient", "--kind", "message", "--debounce", "5000")).splitlines()
    assert lines[0].startswith("ada: changed rule ambient at position 1 of 2  (event #")
    rule = app.ctl_json("rules", "show", mind, "ambient")["rule"]
    assert rule["behaviour"] == {"debounce": {"ms": 5000}} and rule["match"]["channel"] is None
    assert app.ctl_json("rules", "edit", mind, "dms", "--rule", '{"behaviour": "defer"}', "--position", "1")["position"] == 1
    bare = app.ctl("rules", "edit", mind, "dms")
    assert bare.returncode == 2 and "say what rule dms becomes" in bare.stderr
    # `rules rm ada ..` once sent DELETE /minds/ada; every odd name now reaches its own route or is refused.
    for args in (["show", mind, ".."], ["rm", mind, ".."], ["move", mind, ".", "--to", "1"]):
        out = app.ctl("rules", *args)
        assert out.returncode == 4 and "no wake rule named" in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)
    for args in (["add", mind, "--name", "..", "--always"], ["edit", mind, "..", "--always"]):
        refused = app.ctl("rules", *args)
        assert refused.returncode == 2 and "'..' cannot name a rule" in refused.stderr, (args, refused.stderr)
    assert app.api("GET", "/minds/ada").status_code == 200


def test_rules_default_shows_and_sets(app: InProcess, mind: str) -> None:
    assert ok(app.ctl("rules", "default", mind)) == "default: always (for stimuli no rule matches)\n"
    out = ok(app.ctl("rules", "default", mind, "--debounce", "5000")).splitlines()
    assert out[0].startswith("ada: default is now debounce 5000 ms")
    assert app.ctl_json("rules", "default", mind) == {"mind": "ada", "default": {"debounce": {"ms": 5000}}}


def test_gate_status_text_and_json(app: InProcess, mind: str) -> None:
    ok(app.ctl("rules", "add", mind, "--rule", AMBIENT))
    ok(app.ctl("say", mind, "hello", "--channel", "discord:general"))
    data = app.ctl_json("gate-status", mind)
    assert data == app.api("GET", "/minds/ada/gate").json()
    assert data["rules"][0]["pending"] == 1
    lines = ok(app.ctl("gate-status", mind)).splitlines()
    assert lines[0] == "gate of ada  (counters since 2026-01-01 00:00:00)"
    assert lines[1] == "awake"
    row = next(line for line in lines if line.split()[:2] == ["1", "ambient"])
    assert "debounce 2000 ms" in row and "2026-01-01 00:00:02" in row
    assert "upcoming wakes (1)" in lines
    every = ok(app.ctl("gate-status"))
    assert every.startswith("gate of ada")
    assert app.ctl_json("gate-status")["minds"][0]["mind"] == "ada"


def test_sleep_and_wake(app: InProcess, mind: str) -> None:
    out = ok(app.ctl("sleep", mind, "--for", "30m", "--note", "night shift"))
    assert out == "ada sleeps until 2026-01-01 00:30:00 (night shift); messages from operator still wake it\n"
    lines = ok(app.ctl("gate-status", mind)).splitlines()
    assert lines[1] == "sleeping until 2026-01-01 00:30:00 (night shift)"
    woke = ok(app.ctl("wake", mind))
    assert woke.startswith("ada is awake (event #")
    assert ok(app.ctl("wake", mind)) == "ada was not asleep; nothing changed\n"
    assert app.ctl_json("sleep", mind, "--until", "2026-01-01T08:00:00Z")["until"] == "2026-01-01T08:00:00.000Z"
    both = app.ctl("sleep", mind)
    assert both.returncode == 2 and "--for" in both.stderr
    past = app.ctl("sleep", mind, "--until", "2025-01-01T00:00:00Z")
    assert past.returncode == 2 and "future" in past.stderr


def test_gate_status_watch_piped_prints_changed_lines(noemad: Noemad, mind: str, follower: Any) -> None:
    proc, out, _ = follower("gate-status", mind, "--watch", "--interval", "0.05")
    out.until(lambda line: line.startswith("held "))  # the whole view first
    seen = len(out.seen)
    assert noemad.api("POST", "/minds/ada/rules", json={"rule": json.loads(AMBIENT)}).status_code == 201
    out.until(lambda line: "ambient" in line)
    fresh = out.seen[seen:]
    assert not any(line.startswith("gate of ada") for line in fresh), fresh  # unchanged lines are not printed again


def test_gate_status_watch_stops_after_count(app: InProcess, mind: str) -> None:
    out = app.ctl("--json", "gate-status", mind, "--watch", "--interval", "0.05", "--count", "3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["mind"] == "ada"  # JSON Lines, printed when it changed


@pytest.fixture(scope="module")
def shared() -> Iterator[Noemad]:
    """One daemon with mind `ada`, for the cases below that only read or add a rule of their own (one start, not one each)."""
    with own_noemad() as running:
        assert running.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        yield running


def test_gate_status_watch_on_a_terminal_redraws_in_place(shared: Noemad) -> None:
    noemad, mind = shared, "ada"
    controller, terminal = pty.openpty()
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1", "COLUMNS": "120"}
    try:
        done = subprocess.run(
            [NOEMACTL, "gate-status", mind, "--watch", "--interval", "0.05", "--count", "3"],
            stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.PIPE, text=True, env=env, timeout=60,
        )
    finally:
        os.close(terminal)
    reader.join(60)
    os.close(controller)
    assert done.returncode == 0, done.stderr
    shown = b"".join(chunks).decode()
    assert "gate of ada" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
    assert "\x1b[2K" in shown  # lines erased and drawn again: a live view, not a scroll of copies


def test_the_gate_commands_do_not_import_the_engine_or_pydantic(shared: Noemad) -> None:
    noemad, mind = shared, "ada"
    env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1"}
    for args in (("rules", "add", mind, "--name", "dms", "--flag", "dm", "--always"), ("rules", mind), ("gate-status", mind), ("wake", mind)):
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "noemactl", *args], capture_output=True, text=True, timeout=60, env=env, cwd="/")
        assert out.returncode == 0, (args, out.stderr[-2000:])
        assert _forbidden_imports(out.stderr) == [], args


def test_judge_flags_make_a_judge_rule_and_stray_judge_options_are_refused(tmp_path: Any) -> None:
    daemon = start_app(tmp_path, "[gate.judge]\nenabled = true\n")
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        change = daemon.ctl_json(
            "rules", "add", "ada", "--name", "ambient", "--judge", "2000", "--max-wait", "20000", "--instructions", "garden questions"
        )
        [rule] = change["rules"]
        assert rule["behaviour"] == {"judge": {"debounce_ms": 2000, "max_wait_ms": 20000, "instructions": "garden questions"}}
        listed = ok(daemon.ctl("rules", "list", "ada"))
        assert "judge after 2000 ms, at most 20000 ms with instructions" in listed
        status = ok(daemon.ctl("gate-status", "ada"))  # no critic model here: say that drafts go out unreviewed
        assert "governance: off: no critic model is configured ([models.critic]); drafts go out unreviewed" in status
        stray = daemon.ctl("rules", "add", "ada", "--name", "x", "--max-wait", "5000")
        assert stray.returncode != 0 and "give --judge MS" in stray.stderr and "Traceback" not in stray.stderr
        assert [r["name"] for r in daemon.api("GET", "/minds/ada/rules").json()["rules"]] == ["ambient"]
        clamped = ok(daemon.ctl("rules", "add", "ada", "--name", "y", "--judge", "5"))  # read at its least, and said so
        assert "behaviour.judge.debounce_ms 5 is below the least allowed; read as 100 ms" in clamped
        assert daemon.api("GET", "/minds/ada/rules").json()["rules"][1]["behaviour"] == {"judge": {"debounce_ms": 100}}
    finally:
        daemon.stop()
