"""noemactl against a real noemad: status, minds, stimuli, events, errors, start-up.

A test that proves what only a process proves (the socket, a terminal, a
stream, a signal, the operator a real socket names, what noemactl imports
at start) runs the installed `noemactl` executable (see `Noemad.ctl`)
against a real noemad; the rest (parsing, refusals, wording, JSON keys,
rendering) run noemactl's own code in process (`app.ctl`). None mocks the
daemon or sleeps. Waits are on the daemon's own signals (the event
stream, sd_notify) or on lines the CLI prints, each bounded by a timeout.
"""

from __future__ import annotations

import json
import os
import pty
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

import pytest
from conftest import NOEMACTL, OPERATOR, Noemad, own_noemad
from inprocess import ME, InProcess

TIMEOUT = 30.0  # seconds: a bound on a hung process, never a wait for time to pass
FORBIDDEN = ("noemad", "fastapi", "anthropic", "pydantic", "pydantic_core", "uvicorn", "starlette")
EVENT_KEYS = {"id", "mind", "kind", "actor", "at", "channel", "text", "data", "cycle_id", "causation_id", "parents", "refs", "subject"}
INGESTED_KEYS = EVENT_KEYS | {"gate"}  # what storing a stimulus answers: the event, and the gate's decision beside it
NOT_RUNNING = "start it with `noemad` or `systemctl --user start noemad`"


def bare_ctl(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run noemactl with exactly these noema variables (none inherited)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NOEMA_") and k not in ("RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR")}
    return subprocess.run(
        [NOEMACTL, *args], capture_output=True, text=True, input=stdin, timeout=TIMEOUT, env={**base, "NO_COLOR": "1", **env}
    )


def stored_id(out: subprocess.CompletedProcess[str], kind: str) -> int:
    """The id from `stored event N (kind)`."""
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    assert words[:2] == ["stored", "event"] and words[3] == f"({kind})", out.stdout
    return int(words[2])


class Lines:
    """The lines a running process writes on one pipe, read on a thread so waits can be bounded."""

    def __init__(self, pipe: IO[str]) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.queue.put(line)
        self.queue.put(None)

    def until(self, wanted: Any, timeout: float = TIMEOUT) -> list[str]:
        """Read lines until one satisfies `wanted` (a predicate); return all read so far."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.queue.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                raise AssertionError(f"no wanted line within {timeout}s; read: {self.seen}") from None
            if line is None:
                raise AssertionError(f"the stream closed; read: {self.seen}")
            self.seen.append(line)
            if wanted(line):
                return self.seen


@pytest.fixture
def follower(noemad: Noemad) -> Iterator[Any]:
    """Start `noemactl ... events --follow` processes; each is terminated after the test."""
    with followers(noemad) as start:
        yield start


@contextmanager
def followers(noemad: Noemad) -> Iterator[Any]:
    """Start long-running noemactl processes against `noemad`; each is terminated at the end."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> tuple[subprocess.Popen[str], Lines, Lines]:
        env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1", "COLUMNS": "120"}
        proc = subprocess.Popen(
            [NOEMACTL, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        procs.append(proc)
        assert proc.stdout is not None and proc.stderr is not None
        return proc, Lines(proc.stdout), Lines(proc.stderr)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=TIMEOUT)


# --- status ------------------------------------------------------------------------


def test_version_is_the_distributions(app: InProcess) -> None:
    out = app.ctl("--version")
    assert out.returncode == 0
    assert out.stdout == f"noemactl {version('noema')}\n"


def test_status_shows_the_daemon_its_minds_and_totals(noemad: Noemad, mind: str) -> None:
    stored_id(noemad.ctl("say", mind, "hello"), "message")
    noemad.wait_for(mind, "narrative_updated")  # the last event of a turn
    api = noemad.api("GET", "/status").json()
    out = noemad.ctl("status")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "\x1b" not in out.stdout  # piped: plain text
    lines = out.stdout.splitlines()
    assert lines[0] == f"noemad {api['version']}  pid {api['pid']}  up 0s"
    assert f"socket    {noemad.socket}" in lines
    assert f"database  {api['database']}" in lines
    assert any(line.startswith("config    embedded defaults (") for line in lines)
    assert "MIND  EVENTS  TURN" in lines
    # mind_created, message, cycle_started, memory_created (the episode), attention, cycle_completed, narrative_updated
    assert "ada        7  idle" in lines
    assert f"models    provider {api['models']['provider']}" in lines
    assert lines[-1] == f"1 mind, 7 events (last #7), {api['counts']['commits']} commits"
    assert "reload refused" not in out.stdout


def test_status_shows_a_refused_config_reload(noemad: Noemad) -> None:
    # noemad sends READY=1 just before it installs its SIGHUP handler; once it
    # has answered a request, the handler is in place (same loop step).
    assert noemad.ctl("status").returncode == 0
    (noemad.home / "noemad.toml").write_text("daemon = 3\n")
    noemad.proc.send_signal(signal.SIGHUP)
    noemad.wait_notify("STATUS=config reload refused")
    out = noemad.ctl("status")
    assert out.returncode == 0, out.stderr
    [line] = [line for line in out.stdout.splitlines() if "config reload refused" in line]
    assert line.startswith("config reload refused at 2026-01-01 00:00:00: ")
    assert str(noemad.home / "noemad.toml") in line
    assert line.endswith("(the config loaded at 2026-01-01 00:00:00 is still running)")
    status = noemad.ctl_json("status")
    assert status["config"]["reload_error"] and str(noemad.home / "noemad.toml") in status["config"]["reload_error"]


def test_status_json_is_the_api_answer(app: InProcess, mind: str) -> None:
    status = app.ctl_json("status")
    assert list(status) == ["version", "pid", "started_at", "uptime_s", "now", "clock", "socket", "database", "config", "minds", "counts", "models", "jobs", "replica", "stopping", "connectors"]
    assert status["minds"] == [{"name": "ada", "events": 1, "turn_running": False, "paused": False, "retry": None}]
    assert status == app.api("GET", "/status").json()
    # --json works after the command too
    assert json.loads(app.ctl("status", "--json").stdout) == status


# --- minds -------------------------------------------------------------------------


def test_mind_create_list_show_and_rm(app: InProcess) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    out = app.ctl("mind", "create", "bob", "--settings", '{"narrative_llm": true}')
    assert (out.returncode, out.stdout, out.stderr) == (0, "created mind bob\n", "")

    listed = app.ctl("mind", "list")
    assert listed.stdout.splitlines() == [
        "NAME  MODE  CREATED              SETTINGS",
        'bob   idle  2026-01-01 00:00:00  {"narrative_llm": true}',
    ]

    shown = app.ctl("mind", "show", "bob")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[:6] == [
        "mind bob",
        "mode      idle",
        "turn      idle",
        "created   2026-01-01 00:00:00",
        "events    1 (last #1)",
        'settings  {"narrative_llm": true}',
    ]
    assert lines[6] == "recent events (1)"
    assert lines[7].split() == ["#1", "2026-01-01", "00:00:00", "mind_created", OPERATOR, "-"]

    # Not a terminal and no --yes: refused, nothing sent.
    refused = app.ctl("mind", "rm", "bob", input="bob\n")
    assert refused.returncode == 2
    assert refused.stderr.startswith("noemactl: refusing to remove mind 'bob' without confirmation")
    assert "pass --yes" in refused.stderr
    assert app.api("GET", "/minds/bob").status_code == 200

    removed = app.ctl("mind", "rm", "bob", "--yes")
    assert (removed.returncode, removed.stdout) == (0, "removed mind bob and its 1 event\n")
    assert app.api("GET", "/minds/bob").status_code == 404
    empty = app.ctl("mind", "list")
    assert (empty.returncode, empty.stdout) == (0, "")
    assert "no minds yet" in empty.stderr


def _rm_on_a_terminal(noemad: Noemad, name: str, typed: str) -> subprocess.CompletedProcess[str]:
    controller, terminal = pty.openpty()
    try:
        env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1"}
        proc = subprocess.Popen([NOEMACTL, "mind", "rm", name], stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        os.write(controller, typed.encode() + b"\n")  # the terminal holds it until noemactl reads
        out, err = proc.communicate(timeout=TIMEOUT)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    finally:
        os.close(terminal)
        os.close(controller)


def test_mind_rm_on_a_terminal_asks_for_the_name(noemad: Noemad, mind: str) -> None:
    wrong = _rm_on_a_terminal(noemad, mind, "adda")
    assert wrong.returncode == 5
    assert "This removes mind 'ada' and its 1 event for good. Type its name to confirm:" in wrong.stderr
    assert wrong.stderr.endswith("noemactl: you typed 'adda', not 'ada'; nothing was removed\n")
    assert noemad.api("GET", "/minds/ada").status_code == 200

    right = _rm_on_a_terminal(noemad, mind, "ada")
    assert (right.returncode, right.stdout) == (0, "removed mind ada and its 1 event\n"), right.stderr
    assert noemad.api("GET", "/minds/ada").status_code == 404


# --- stimuli and events ------------------------------------------------------------


def test_say_and_observe_then_list_events_with_filters(noemad: Noemad, mind: str) -> None:
    said = stored_id(noemad.ctl("say", mind, "hello there", "--from", "alice", "--channel", "discord:g:c", "--mention", "ada"), "message")
    noemad.wait_for(mind, "narrative_updated", since=said)
    seen = stored_id(noemad.ctl("observe", mind, "it is warm", "--source", "thermo", "--data", '{"celsius": 21.5}'), "observation")
    noemad.wait_for(mind, "narrative_updated", since=seen)

    message = noemad.api("GET", f"/events/{said}").json()
    assert (message["actor"], message["channel"], message["text"]) == ("user:alice", "discord:g:c", "hello there")
    assert message["data"]["mentions"] == ["ada"]
    observation = noemad.api("GET", f"/events/{seen}").json()
    assert (observation["actor"], observation["data"]["data"]) == ("source:thermo", {"celsius": 21.5})

    out = noemad.ctl("events", mind)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [f"#{i}" for i in range(1, 14)]
    assert [line.split()[3] for line in lines] == [
        "mind_created",
        "message", "cycle_started", "memory_created", "attention", "cycle_completed", "narrative_updated",
        "observation", "cycle_started", "memory_created", "attention", "cycle_completed", "narrative_updated",
    ]  # fmt: skip
    assert lines[1].split()[4:] == ["user:alice", "discord:g:c", '"hello', 'there"', "(stored", "by", f"{OPERATOR})"]
    assert lines[2].endswith(f"(caused by #{said}; parents #{said})")
    assert lines[5].endswith(f"(caused by #{said + 1})")

    only = noemad.ctl("events", mind, "--kind", "message", "--kind", "observation")
    assert [line.split()[0] for line in only.stdout.splitlines()] == [f"#{said}", f"#{seen}"]

    after = noemad.ctl("events", mind, "--since", str(seen))
    assert [line.split()[0] for line in after.stdout.splitlines()] == [f"#{seen + i}" for i in range(1, 6)]

    page = noemad.ctl("events", mind, "--limit", "2")
    assert len(page.stdout.splitlines()) == 2
    assert f"there may be more: noemactl events {mind} --since 2" in page.stderr

    none = noemad.ctl("events", mind, "--kind", "reply")
    assert (none.returncode, none.stdout) == (0, "")
    assert "no events in ada of those kinds" in none.stderr


def test_say_speaks_as_the_login_user_and_text_can_come_from_stdin(app: InProcess, mind: str) -> None:
    event = json.loads(app.ctl("--json", "say", mind, "-", input="from a pipe\n", env={"USER": "carol"}).stdout)
    assert (event["actor"], event["channel"], event["text"]) == ("user:carol", "cli", "from a pipe")
    unnamed = json.loads(app.ctl("say", mind, "hi", "--json", env={"USER": "", "LOGNAME": ""}).stdout)
    assert unnamed["actor"] == "user:operator"


def test_json_outputs_parse_and_have_stable_keys(app: InProcess) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    created = app.ctl_json("mind", "create", "ada")
    assert list(created) == ["name", "created_at", "settings", "mode"]
    assert app.ctl_json("mind", "list") == {"minds": [created]}
    said = app.ctl_json("say", "ada", "hello")
    assert set(said) == INGESTED_KEYS and said["kind"] == "message"
    app.wait_for("ada", "cycle_completed", since=said["id"])
    seen = app.ctl_json("observe", "ada", "warm", "--source", "thermo")
    assert set(seen) == INGESTED_KEYS and (seen["actor"], seen["data"]) == ("source:thermo", {"source": "thermo", "operator": OPERATOR})
    app.settle("ada")  # the observation's turn has written all its events: `mind show` and `mind rm` count the same ones
    shown = app.ctl_json("mind", "show", "ada")
    assert list(shown) == ["name", "created_at", "settings", "mode", "events", "last_event_id", "archived", "turn_running", "settings_problems", "settings_in_force", "recent", "warnings"]
    assert all(set(e) == EVENT_KEYS for e in shown["recent"])
    page = app.ctl_json("events", "ada", "--kind", "message")
    assert list(page) == ["events", "next_since", "last_id"]
    assert [e["id"] for e in page["events"]] == [said["id"]] and page["next_since"] == said["id"]
    assert app.ctl_json("mind", "rm", "ada", "--yes") == {"name": "ada", "events_removed": shown["events"]}


# --- errors ------------------------------------------------------------------------


def test_unknown_mind_is_one_sentence_and_exit_4(app: InProcess) -> None:
    said = "no mind is named 'zed'; list minds with `noemactl mind list` or create it with `noemactl mind create zed`"
    for args in (("say", "zed", "hi"), ("mind", "show", "zed"), ("events", "zed")):
        out = app.ctl(*args)
        assert out.returncode == 4, args
        assert out.stdout == ""
        assert out.stderr == f"noemactl: {said}\n"
    # With --json the error is noemad's problem document, on stderr.
    out = app.ctl("--json", "events", "zed", "--follow")
    assert (out.returncode, out.stdout) == (4, "")
    assert json.loads(out.stderr) == {"type": "about:blank", "title": "Mind not found", "status": 404, "detail": said}


def test_daemon_refusals_print_the_problem_detail(app: InProcess, mind: str) -> None:
    exists = app.ctl("mind", "create", mind)
    assert exists.returncode == 5
    assert exists.stderr.startswith("noemactl: a mind named 'ada' already exists;")
    bad_channel = app.ctl("say", mind, "hi", "--channel", "no spaces")
    assert bad_channel.returncode == 2
    assert bad_channel.stderr.startswith("noemactl: channel 'no spaces' is not a name: it holds a space; a name has")


def test_bad_input_exits_2_and_sends_nothing(app: InProcess, mind: str) -> None:
    before = app.api("GET", "/status").json()["counts"]
    cases = {
        ("mind", "create", "bob", "--settings", "{tone: dry}"): "noemactl: --settings is not valid JSON (",
        ("mind", "create", "bob", "--settings", "[1, 2]"): "noemactl: --settings must be a JSON object such as",
        ("observe", mind, "warm", "--source", "t", "--data", "21.5"): "noemactl: --data must be a JSON object such as",
        ("observe", mind, "warm", "--source", "t", "--data", "{"): "noemactl: --data is not valid JSON (",
        ("say", mind, "   "): "noemactl: the message text is empty;",
        ("say", mind, "hi", "--from", " "): "noemactl: --from is empty;",
        ("timeline", "1", "--dot", "--json"): '{"type": "about:blank", "title": "Bad command line", "status": 400, "detail": "--json and --dot are two different outputs; pick one"}',
        ("events", mind, "--follow", "--limit", "3"): "noemactl: --limit does not apply to --follow",
    }
    for args, sentence in cases.items():
        out = app.ctl(*args)
        assert (out.returncode, out.stdout) == (2, ""), args
        assert out.stderr.startswith(sentence), (args, out.stderr)
    # typer's own usage errors keep exit 2 too
    assert app.ctl("timeline", "1", "--back", "7").returncode == 2
    assert app.ctl("events", mind, "--since", "soon").returncode == 2
    assert app.ctl("say", mind).returncode == 2
    assert app.api("GET", "/status").json()["counts"] == before
    assert app.api("GET", "/minds/bob").status_code == 404


def test_daemon_not_running_exits_3_with_a_hint(place: Path) -> None:
    missing = place / "none.sock"
    out = bare_ctl("status", env={"NOEMA_SOCKET": str(missing)})
    assert (out.returncode, out.stdout) == (3, "")
    assert out.stderr == f"noemactl: noemad is not running on {missing}; {NOT_RUNNING}\n"

    # A socket file left behind by a dead daemon: connection refused, same answer.
    stale = place / "stale.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(stale))
    out = bare_ctl("mind", "list", env={"NOEMA_SOCKET": str(stale)})
    assert out.returncode == 3
    assert out.stderr == f"noemactl: noemad is not running on {stale}; {NOT_RUNNING}\n"


def test_socket_is_resolved_as_noemad_resolves_it(place: Path) -> None:
    home = place / "home"
    flag = place / "flag.sock"
    cases = [
        ((), {"NOEMA_HOME": str(home)}, home / "run" / "noemad.sock"),
        ((), {"NOEMA_HOME": f"{home}:/elsewhere"}, home / "run" / "noemad.sock"),
        ((), {"RUNTIME_DIRECTORY": f"{place}/rt:/other"}, place / "rt" / "noemad.sock"),
        ((), {"NOEMA_HOME": str(home), "NOEMA_SOCKET": str(place / "env.sock")}, place / "env.sock"),
        (("--socket", str(flag)), {"NOEMA_SOCKET": str(place / "env.sock")}, flag),
        ((), {"XDG_RUNTIME_DIR": str(place / "xdg")}, place / "xdg" / "noema" / "noemad.sock"),
    ]
    for flags, env, expected in cases:
        out = bare_ctl(*flags, "status", env=env)
        assert out.returncode == 3, (env, out.stderr)
        assert out.stderr == f"noemactl: noemad is not running on {expected}; {NOT_RUNNING}\n", env


@pytest.fixture(scope="module")
def shared() -> Iterator[Noemad]:
    """One daemon with mind `ada`, for the start-up cases below that only read or add a message (one start, not one each)."""
    with own_noemad() as running:
        assert running.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        yield running


# --- following ---------------------------------------------------------------------


def test_events_follow_json_prints_json_lines_until_stopped(noemad: Noemad, mind: str, follower: Any) -> None:
    proc, out, err = follower("--json", "events", mind, "--follow", "-n", "0")  # no backlog: new events only
    err.until(lambda line: line.startswith("following ada's events"))  # subscribed from here on
    said = stored_id(noemad.ctl("say", mind, "follow me"), "message")
    lines = out.until(lambda line: json.loads(line)["kind"] == "cycle_completed")
    events = [json.loads(line) for line in lines]
    assert all(set(e) == EVENT_KEYS for e in events)
    assert [(e["id"], e["kind"]) for e in events] == [
        (said, "message"), (said + 1, "cycle_started"), (said + 2, "memory_created"), (said + 3, "attention"),
        (said + 4, "cycle_completed"),
    ]  # fmt: skip
    assert all(line.endswith("}\n") and "\n" not in line[:-1] for line in lines)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=TIMEOUT) == 130  # Ctrl-C: stopped quietly


def test_events_follow_since_replays_then_filters_by_kind(noemad: Noemad, mind: str, follower: Any) -> None:
    said = stored_id(noemad.ctl("say", mind, "first"), "message")
    noemad.wait_for(mind, "cycle_completed", since=said)
    _, out, _ = follower("events", mind, "--follow", "--since", "0", "--kind", "cycle_completed", "--kind", "message")
    replayed = out.until(lambda line: "cycle_completed" in line)
    assert [line.split()[:4:3] for line in replayed] == [[f"#{said}", "message"], [f"#{said + 4}", "cycle_completed"]]
    again = stored_id(noemad.ctl("say", mind, "second"), "message")
    live = out.until(lambda line: line.startswith(f"#{again + 4} "))
    assert [line.split()[0] for line in live[2:]] == [f"#{again}", f"#{again + 4}"]


def test_events_follow_ends_when_the_mind_is_removed(shared: Noemad) -> None:
    noemad, mind = shared, "gone"  # a mind of its own on the module's daemon
    assert noemad.api("POST", "/minds", json={"name": mind}).status_code == 201
    with followers(noemad) as follower:
        proc, _, err = follower("events", mind, "--follow")
        err.until(lambda line: line.startswith("following"))
        assert noemad.ctl("mind", "rm", mind, "--yes").returncode == 0
        assert proc.wait(timeout=TIMEOUT) == 0
        err.until(lambda line: line.startswith("the stream ended: the mind was deleted"))


# --- start-up and completion -------------------------------------------------------


def _forbidden_imports(importtime_log: str) -> list[str]:
    names = {line.rsplit("|", 1)[-1].strip() for line in importtime_log.splitlines() if line.startswith("import time:")}
    return sorted(n for n in names if n.split(".")[0] in FORBIDDEN)


def test_importing_the_cli_does_not_import_the_engine() -> None:
    code = (
        "import sys, typer.main; from noemactl.app import app;"
        f" print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}));"
        " print(sorted(typer.main.get_command(app).commands))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT, cwd="/")
    assert out.returncode == 0, out.stderr
    # nothing of the engine; every command registered at import (for completions and man pages)
    assert out.stdout.splitlines() == ["[]", "['ack', 'archive', 'archives', 'assert', 'backup', 'belief', 'beliefs', 'calibration', 'changes', 'config', 'connectors', 'consolidate', 'correct', 'demo', 'events', 'export', 'gate-status', 'goal', 'goals', 'import', 'jobs', 'log-level', 'memories', 'mind', 'narrative', 'notifications', 'observe', 'outcome', 'pause', 'predict', 'predictions', 'reflect', 'reload', 'remember', 'replica', 'resume', 'retract', 'rules', 'say', 'sleep', 'status', 'timeline', 'trust', 'ui', 'usage', 'wake']"]


def test_running_commands_does_not_import_the_engine_or_pydantic(shared: Noemad) -> None:
    noemad, mind = shared, "ada"
    env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1"}
    for args in (("status",), ("say", mind, "hi", "--mention", "x"), ("events", mind, "--kind", "message", "--limit", "5"), ("timeline", "1", "--back", "2"), ("mind", "rm", "-h")):
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "noemactl", *args], capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd="/")
        assert out.returncode == 0, (args, out.stderr[-2000:])
        assert _forbidden_imports(out.stderr) == [], args


def test_shell_completion_uses_typers_mechanism_and_knows_minds(shared: Noemad) -> None:
    noemad = shared
    script = noemad.ctl(env={"_NOEMACTL_COMPLETE": "source_bash"})
    assert script.returncode == 0
    assert "_noemactl_completion()" in script.stdout and "complete -o default -F _noemactl_completion noemactl" in script.stdout
    words = noemad.ctl(env={"_NOEMACTL_COMPLETE": "complete_bash", "COMP_WORDS": "noemactl mind show ", "COMP_CWORD": "3"})
    assert words.stdout.split() == ["ada"]
    commands = noemad.ctl(env={"_NOEMACTL_COMPLETE": "complete_bash", "COMP_WORDS": "noemactl ti", "COMP_CWORD": "1"})
    assert commands.stdout.split() == ["timeline"]
