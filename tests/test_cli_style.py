"""The CLI reads cleanly (issue 14): help like git's, plain errors, NO_COLOR, JSON errors, sentences, timeline words.

What only a process proves goes through the real noemactl (and, where an
answer is needed, a real noemad): errors on a terminal under NO_COLOR, and
usage errors and an unreachable daemon with nothing in between. The exit code
of each class of error, the daemon's 422 sentences for names, the timeline's
cut lines and completion of `consolidate <TAB>` run noemactl's own code in
process (`app.ctl`). The help of every command is
rendered in process from noemactl's own command tree; a few helps are checked
to be the real noemactl's, byte for byte.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import NOEMACTL, Noemad, short_dir, start_noemad
from inprocess import InProcess, start_app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import gendocs  # noqa: E402  (the walk of every command path the man page documents)

from noemactl.timeline_view import tree  # noqa: E402
from test_cli_timeline import GRAPH, node, render  # noqa: E402

TIMEOUT = 60
TYPE_METAVAR = re.compile(r"<(?:bool|str|int|float|path|uuid|datetime|(?:int|float) range|list\[[^]]*\])>")


def bare_ctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """noemactl with no daemon, piped."""
    full = {**os.environ, "COLUMNS": "100", **(env or {})}
    return subprocess.run([NOEMACTL, *args], capture_output=True, text=True, env=full, timeout=TIMEOUT)


def on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """Run noemactl with stdout and stderr on a pseudo-terminal; its exit code and every byte it wrote there."""
    controller, terminal = pty.openpty()
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update({"TERM": "xterm-256color", "COLUMNS": "120", **env})
    try:
        proc = subprocess.Popen([NOEMACTL, *args], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, env=full)
    finally:
        os.close(terminal)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([controller], [], [], TIMEOUT)
            if not ready:
                proc.kill()
                raise AssertionError(f"noemactl {args} wrote nothing for {TIMEOUT} s")
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
    return proc.wait(timeout=TIMEOUT), b"".join(chunks)


# --- help ------------------------------------------------------------------------------


def command_paths() -> list[list[str]]:
    return [list(page.path) for page in gendocs.walk()]


@pytest.fixture(scope="module")
def help_of(pytestconfig: pytest.Config) -> Iterator[Callable[[list[str]], tuple[int, str]]]:
    """`noemactl PATH --help` rendered in this process: its exit code and stdout, at the width `bare_ctl` gives.

    The command tree is built once: each real noemactl builds it whole at
    start, and that, not the help, was most of the time of 50-odd processes.
    `test_help_in_process_is_the_real_noemactls` shows the text is the same.
    """
    import typer

    from noemactl.app import app

    command = typer.main.get_command(app)
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "100")  # as bare_ctl sets it: click wraps at min(COLUMNS, 80) - 2

    def render(path: list[str]) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = command.main(args=[*path, "--help"], prog_name="noemactl", standalone_mode=False)
        return (code or 0), out.getvalue()

    yield render
    mp.undo()


def test_help_in_process_is_the_real_noemactls(help_of: Callable[[list[str]], tuple[int, str]]) -> None:
    for path in (["say"], ["consolidate", "run"], ["events"], []):
        out = bare_ctl(*path, "--help")
        assert (out.returncode, out.stdout) == help_of(path), path


def test_every_commands_help_reads_like_gits(help_of: Callable[[list[str]], tuple[int, str]]) -> None:
    paths = command_paths()
    assert ["say"] in paths and ["consolidate", "run"] in paths and len(paths) > 30
    for path in paths:
        code, text = help_of(path)
        assert code == 0, path
        usage = text.splitlines()[0]
        assert usage.startswith("Usage: noemactl"), (path, usage)
        assert "{" not in usage and "<" not in usage, (path, usage)
        assert not TYPE_METAVAR.search(text), (path, TYPE_METAVAR.search(text))
        assert "[default: (" not in text and "x>=" not in text and "<=x" not in text, path
        assert not set("╭╮╰╯│─") & set(text), (path, "a boxed panel")
        assert "\x1b" not in text, path
        for default in re.findall(r"\[default: ([^];]*)", text):
            assert text.count(f"default: {default}") == text.count(f"[default: {default}"), (path, default)


def test_say_help_has_a_plain_usage_line_and_flags_without_types() -> None:
    text = bare_ctl("say", "--help").stdout
    lines = text.splitlines()
    assert lines[0] == "Usage: noemactl say [OPTIONS] MIND TEXT"
    assert any(re.match(r"^  --json +Print JSON", line) for line in lines), text
    assert any(re.match(r"^  --from AUTHOR +Who says it\.  \[default: \$USER, else operator\]$", line) for line in lines), text
    assert "[required]" not in text  # the usage line says which arguments are required

    events = bare_ctl("events", "--help").stdout
    assert "--limit N" in events and "[default: 100; 1 to 1000]" in events and events.count("default: 100") == 1
    assert bare_ctl("consolidate", "run", "--help").stdout.splitlines()[0] == "Usage: noemactl consolidate run [OPTIONS] [MIND]"


def test_the_man_page_reads_as_cleanly() -> None:
    page = (Path(__file__).resolve().parent.parent / "man" / "noemactl.1").read_text()
    assert not TYPE_METAVAR.search(page.replace("\\-", "-"))
    assert "(100)" not in page and "x>=" not in page and "<=x" not in page


# --- errors ----------------------------------------------------------------------------


def test_a_usage_error_is_two_plain_lines_and_exit_2() -> None:
    out = bare_ctl("say")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "noemactl: error: Missing argument 'MIND'.\nTry 'noemactl say --help'.\n"
    unknown = bare_ctl("timeline", "3", "--backk", "2")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("noemactl: error: No such option: --backk") and "Try 'noemactl timeline --help'." in unknown.stderr
    assert bare_ctl("nonsense").stderr == "noemactl: error: No such command 'nonsense'.\nTry 'noemactl --help'.\n"


def test_with_json_a_usage_error_is_a_problem_document_on_stderr() -> None:
    for args in (("--json", "say"), ("say", "--json")):
        out = bare_ctl(*args)
        assert (out.returncode, out.stdout) == (2, "")
        assert json.loads(out.stderr) == {"type": "about:blank", "title": "Bad command line", "status": 400, "detail": "Missing argument 'MIND'."}


def test_an_unreachable_daemon_with_json_is_exit_3_and_a_problem_document(tmp_path: Path) -> None:
    out = bare_ctl("--json", "status", env={"NOEMA_SOCKET": str(tmp_path / "none.sock")})
    assert (out.returncode, out.stdout) == (3, "")
    problem = json.loads(out.stderr)
    assert (problem["title"], problem["status"]) == ("noemad unreachable", 503) and "is not running" in problem["detail"]


@pytest.fixture(scope="module")
def daemon() -> Iterator[Noemad]:
    """One daemon with mind `ada` and one turn, for the cases that only read or are refused."""
    place = short_dir()
    (place / "home").mkdir()
    running = start_noemad(place / "home", place / "s.sock")
    assert running.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    yield running
    running.stop()
    running.notify.close()
    shutil.rmtree(place, ignore_errors=True)


def a_turn(engine: Noemad | InProcess) -> dict[str, int]:
    """A message to ada and the turn it caused: message -> cycle_started -> cycle_completed -> narrative_updated."""
    if isinstance(engine, InProcess) and engine.api("GET", "/minds/ada").status_code == 404:
        assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    message = int(engine.ctl("say", "ada", "hello there", "--from", "alice").stdout.split()[2])
    story = engine.wait_for("ada", "narrative_updated", since=message)
    completed = engine.api("GET", f"/events/{story['causation_id']}").json()
    return {"message": message, "started": completed["causation_id"], "completed": completed["id"], "narrative": story["id"]}


@pytest.fixture(scope="module")
def turn(daemon: Noemad) -> dict[str, int]:
    """`a_turn` on the module's daemon."""
    return a_turn(daemon)


def test_the_exit_code_says_the_class_of_error(app: InProcess, mind: str) -> None:
    said = "no mind is named 'zed'; list minds with `noemactl mind list` or create it with `noemactl mind create zed`"
    missing = app.ctl("mind", "show", "zed")
    assert (missing.returncode, missing.stderr) == (4, f"noemactl: {said}\n")
    as_json = app.ctl("mind", "show", "zed", "--json")
    assert (as_json.returncode, as_json.stdout) == (4, "")
    assert json.loads(as_json.stderr) == {"type": "about:blank", "title": "Mind not found", "status": 404, "detail": said}
    exists = app.ctl("--json", "mind", "create", "ada")
    assert exists.returncode == 5 and json.loads(exists.stderr)["status"] == 409
    invalid = app.ctl("--json", "say", "ada", "hi", "--channel", "bad channel")
    assert invalid.returncode == 2 and json.loads(invalid.stderr)["status"] == 422
    assert app.ctl("events", "ada", "--limit", "0").returncode == 2  # refused before sending


def test_no_color_means_no_escape_at_all_on_a_terminal(daemon: Noemad, turn: dict[str, int]) -> None:
    env = {"NOEMA_SOCKET": str(daemon.socket)}
    for args in (["events", "ada"], ["timeline", str(turn["started"])], ["mind", "show", "zed"], ["say"], ["say", "--help"]):
        code, written = on_a_terminal(args, {**env, "NO_COLOR": "1"})
        assert b"\x1b" not in written, (args, written[:300])
        assert not set("╭╮╰╯") & set(written.decode()), (args, "a boxed panel")
    code, written = on_a_terminal(["say"], {**env, "NO_COLOR": "1"})
    assert code == 2 and written.decode().replace("\r\n", "\n") == "noemactl: error: Missing argument 'MIND'.\nTry 'noemactl say --help'.\n"
    # The same views without NO_COLOR (or with it empty, as no-color.org says) are styled: the check above can fail.
    for value in ({}, {"NO_COLOR": ""}):
        _, styled = on_a_terminal(["events", "ada"], {**env, **value})
        assert b"\x1b[" in styled, value


# --- validation sentences ----------------------------------------------------------------

NAME_RULE = "a name has 1-200 letters, digits and _ . : # @ / ! + = - (no spaces)"


def test_every_name_follows_one_rule_and_a_refusal_says_it(app: InProcess, mind: str) -> None:
    cases = {
        ("say", "ada", "x", "--channel", "bad channel"): "channel 'bad channel' is not a name: it holds a space",
        ("say", "ada", "x", "--from", "Bad Name?"): "author 'Bad Name?' is not a name: it holds a space and '?'",
        ("say", "ada", "x", "--mention", "a b"): "mentions[0]: mention 'a b' is not a name: it holds a space",
        ("observe", "ada", "warm", "--source", "the sensor"): "source 'the sensor' is not a name: it holds a space",
        ("assert", "ada", "x is y", "--subject", "x", "--from", "who?"): "source 'who?' is not a name: it holds '?'",
        ("trust", "ada", "Bad Name?", "0.5"): "source 'Bad Name?' is not a name: it holds a space and '?'",
    }
    before = app.api("GET", "/status").json()["counts"]["events"]
    for args, said in cases.items():
        out = app.ctl(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.startswith(f"noemactl: {said}; {NAME_RULE}"), (args, out.stderr)
        assert "pattern" not in out.stderr and "should" not in out.stderr, out.stderr
    assert app.api("GET", "/status").json()["counts"]["events"] == before
    # A mind's name is the same rule made narrower; its refusal says so in the same shape.
    bad_mind = app.ctl("mind", "create", "Bad Name!")
    assert (bad_mind.returncode, bad_mind.stderr) == (
        2,
        "noemactl: 'Bad Name!' is not a valid mind name: use 1-63 lowercase letters, digits, '-' or '_', starting with a letter or digit\n",
    )
    # Names from other scripts and with the allowed punctuation pass.
    for author in ("josé", "user:alice", "bot@discord/7"):
        assert app.ctl("say", "ada", "hi", "--from", author, "--channel", "discord:guild#ops").returncode == 0, author


def test_body_field_errors_name_the_field_the_fault_and_what_is_allowed(app: InProcess, mind: str) -> None:
    cases = [
        ({"kind": "message", "author": "a", "text": "x", "colour": 1}, "colour is not a field here; remove it (a typo?)"),
        ({"kind": "message", "author": "a"}, "text is missing; it is required here"),
        ({"kind": "message", "author": "a", "text": ""}, "text is empty; give some text"),
        ({"kind": "message", "author": "a", "text": "x", "dm": "maybe"}, "dm must be true or false, not 'maybe'"),
        ({"kind": "message", "author": "a", "text": "x", "tags": ["t"] * 51}, "tags has 51 items; at most 50 are allowed"),
        ({"kind": "prediction", "proposition": "p", "subject": "s", "confidence": 2, "due": "1h"}, "confidence must be at most 1, not 2"),
        ({"kind": "correction", "belief": 1, "reason": "r", "status": "odd"}, "status must be 'active', 'pinned' or 'rejected', not 'odd'"),
        ({"kind": "outcome", "prediction": "one", "result": "hit"}, "prediction must be a whole number, not 'one'"),
    ]
    for body, said in cases:
        answer = app.api("POST", "/minds/ada/events", json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["detail"] == said, body


# --- the timeline's words ----------------------------------------------------------------


def test_forward_0_is_not_called_a_cut(app: InProcess) -> None:
    turn = a_turn(app)
    out = app.ctl("timeline", str(turn["started"]), "--forward", "0")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(f"#{turn['message']} message" in line for line in lines)
    assert any(line.startswith("└── consequences: not walked (--forward 0); ") and line.endswith(" one hop away") for line in lines), lines
    assert not any(line.startswith("cut at") for line in lines), lines


def test_the_daemons_max_hops_bounds_every_walk_and_the_hint(tmp_path: Path) -> None:
    running = start_app(tmp_path, "[timeline]\nmax_hops = 2\n")
    try:
        assert running.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        message = int(running.ctl("say", "ada", "hello", "--from", "alice").stdout.split()[2])
        running.wait_for("ada", "narrative_updated", since=message)
        refused = running.ctl("timeline", str(message), "--back", "5")
        assert (refused.returncode, refused.stderr) == (
            2,
            "noemactl: back must be from 0 to 2 (this daemon's [timeline] max_hops), not 5\n",
        )
        walked = running.ctl("--json", "timeline", str(message))
        graph = json.loads(walked.stdout)
        assert graph["limits"] == {"back": 2, "forward": 2, "limit": 200, "max_hops": 2, "max_events": 200}
        assert max(n["hop"] for n in graph["nodes"]) == 2
        short = running.ctl("timeline", str(message), "--forward", "1").stdout.splitlines()
        assert short[-1].startswith("cut at 1 hop forward: ")
        assert short[-1].endswith("walk again with --back/--forward/--limit (this noemad walks at most 2 hops each way and 200 events)")
    finally:
        running.stop()


def test_also_linked_names_a_pair_of_events_once() -> None:
    graph: dict[str, Any] = {
        **GRAPH,
        "nodes": [*GRAPH["nodes"][:3], node(4, 0, "reply"), node(7, -1, "attention", 4, "caused")],
        "edges": [
            *[e for e in GRAPH["edges"] if e["to"] <= 4],
            {"from": 2, "to": 7, "kind": "cited", "via": None},
            {"from": 2, "to": 7, "kind": "cited", "via": {"type": "belief", "id": 1}},
            {"from": 7, "to": 4, "kind": "caused", "via": None},
        ],
        "truncation": {"truncated": False, "by": [], "omitted_back": 0, "omitted_forward": 0},
    }
    lines = render(tree(graph))
    extra = lines[lines.index("also linked:") + 1 :]
    pair = [line for line in extra if line.startswith("  #2 ")]
    assert pair == ["  #2 ─cited, cited via belief 1→ #7"], lines


# --- completion ------------------------------------------------------------------------


def test_consolidate_tab_offers_its_commands_and_the_minds(app: InProcess, mind: str) -> None:
    env = {"_NOEMACTL_COMPLETE": "complete_bash", "COMP_CWORD": "2"}
    for words, want in (("noemactl consolidate ", {"run", "reject", "ada"}), ("noemactl consolidate r", {"run", "reject"}), ("noemactl jobs ", {"list", "show", "ada"})):
        out = app.ctl(env={**env, "COMP_WORDS": words})
        offered = set(out.stdout.split())
        assert offered >= want and (words.endswith(" ") or "ada" not in offered), (words, offered)
