"""Reading a mind through noemactl: events as people read logs, `say --wait`, trust levels, retraction, and runs for every mind.

Most cases run noemactl's own code in process (`app.ctl`); a real noemad and
noemactl stay for what streams: `events --follow` and `say --wait`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import NOEMACTL, SCRIPTED_RESPOND, Noemad, scripted_noemad
from inprocess import InProcess
from test_cli import TIMEOUT, Lines

SCRIPT = """
[respond]
default = "Noted."

[[respond.rules]]
match = "(?i)weather"
text = "It is sunny."
"""

CONFIG = SCRIPTED_RESPOND


@pytest.fixture
def spawn(noemad: Noemad) -> Iterator[Any]:
    """Start a long-running noemactl (a follower, a waiting say); each is terminated after the test."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> tuple[subprocess.Popen[str], Lines, Lines]:
        env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1", "COLUMNS": "120"}
        env.pop("NOEMA_HOME", None)
        proc = subprocess.Popen([NOEMACTL, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        procs.append(proc)
        assert proc.stdout is not None and proc.stderr is not None
        return proc, Lines(proc.stdout), Lines(proc.stderr)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=TIMEOUT)


def said(noemad: Noemad | InProcess, mind: str, text: str) -> int:
    """Say `text` and wait for its turn's cycle to complete; the message's id."""
    out = noemad.ctl_json("say", mind, text)
    noemad.wait_for(mind, "cycle_completed", since=out["id"])
    if isinstance(noemad, InProcess):
        noemad.settle(mind)  # and the rest of the turn (its narrative), so `newest` is the turn's last event
    return int(out["id"])


def ids(out: subprocess.CompletedProcess[str]) -> list[int]:
    """The ids leading each line (0 for a header line)."""
    assert out.returncode == 0, out.stderr
    return [int(word) if (word := line.split()[0].lstrip("#")).isdigit() else 0 for line in out.stdout.splitlines()]


def newest(noemad: Noemad | InProcess, mind: str) -> int:
    return int(noemad.api("GET", f"/minds/{mind}").json()["last_event_id"])


# --- events ----------------------------------------------------------------------


def test_events_shows_the_newest_like_tail(app: InProcess, mind: str) -> None:
    for n in range(5):
        said(app, mind, f"note {n}")
    last = newest(app, mind)
    assert last > 20
    out = app.ctl("events", mind)
    assert ids(out) == list(range(last - 19, last + 1))  # the newest 20, oldest first
    assert "the newest 20 shown; older ones with -n N or --since ID" in out.stderr
    assert ids(app.ctl("events", mind, "-n", "3")) == [last - 2, last - 1, last]
    assert ids(app.ctl("events", mind, "--tail", "2", "--kind", "message"))[-1] < last


def test_events_grep_searches_and_tail_counts_matches(app: InProcess, mind: str) -> None:
    first = said(app, mind, "Deploy the api")
    said(app, mind, "lunch?")
    third = said(app, mind, "deploy the web")
    assert ids(app.ctl("events", mind, "--grep", "DEPLOY", "--kind", "message")) == [first, third]
    assert ids(app.ctl("events", mind, "--grep", "deploy", "--kind", "message", "-n", "1")) == [third]
    none = app.ctl("events", mind, "--grep", "nothing like this")
    assert (none.returncode, none.stdout) == (0, "")
    assert "no events in ada matching 'nothing like this'" in none.stderr


def test_events_since_takes_an_id_a_span_or_a_time(app: InProcess, mind: str) -> None:
    early = said(app, mind, "early")
    app.advance(3 * 3600)
    late = said(app, mind, "late")
    assert ids(app.ctl("events", mind, "--since", "1h", "--kind", "message")) == [late]
    assert ids(app.ctl("events", mind, "--since", "2026-01-01T01:00:00Z", "--kind", "message")) == [late]
    assert ids(app.ctl("events", mind, "--since", "3d", "--kind", "message")) == [early, late]
    assert ids(app.ctl("events", mind, "--since", str(early), "--kind", "message")) == [late]
    bad = app.ctl("events", mind, "--since", "yesterday")
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.startswith("noemactl: --since 'yesterday' is not an event id (42), a span back (10m, 2h, 3d) or an ISO date")


def test_events_kind_typo_is_an_error_listing_the_kinds(app: InProcess, mind: str) -> None:
    out = app.ctl("events", mind, "--kind", "mesage")
    assert (out.returncode, out.stdout) == (2, "")  # bad input, refused by noemad (422)
    assert out.stderr.startswith("noemactl: 'mesage' is not an event kind; did you mean 'message'? the kinds are: ")
    assert "cycle_completed" in out.stderr
    assert app.ctl("events", mind, "--tail", "3", "--limit", "3").returncode == 2


def test_events_follow_prints_a_backlog_then_follows_without_gap_or_repeat(noemad: Noemad, mind: str, spawn: Any) -> None:
    said(noemad, mind, "before")
    last = newest(noemad, mind)
    _, out, err = spawn("events", mind, "--follow", "-n", "2")
    err.until(lambda line: line.startswith("following ada's events"))
    again = noemad.ctl_json("say", mind, "after")["id"]
    noemad.wait_for(mind, "cycle_completed", since=again)
    done = newest(noemad, mind)
    lines = out.until(lambda line: line.startswith(f"#{done} "))
    assert [int(line.split()[0][1:]) for line in lines] == [last - 1, last, *range(last + 1, done + 1)]


def test_events_follow_with_grep_filters_the_backlog_and_the_stream(noemad: Noemad, mind: str, spawn: Any) -> None:
    old = said(noemad, mind, "ping one")
    said(noemad, mind, "other")
    _, out, err = spawn("--json", "events", mind, "--follow", "--grep", "PING", "--kind", "message")
    err.until(lambda line: line.startswith("following"))
    said(noemad, mind, "unrelated")
    new = noemad.ctl_json("say", mind, "ping two")["id"]
    lines = out.until(lambda line: f'"id":{new},' in line)
    assert len(lines) == 2 and f'"id":{old},' in lines[0]


# --- say --wait ----------------------------------------------------------------------


def test_say_wait_without_a_respond_model_says_why(noemad: Noemad, mind: str) -> None:
    out = noemad.ctl("say", mind, "hello", "--wait")
    assert (out.returncode, out.stdout) == (0, "")
    assert "no reply to event 2: the mind has no respond model" in out.stderr


def test_say_wait_names_the_rule_that_deferred_it(noemad: Noemad, mind: str) -> None:
    assert noemad.ctl("rules", "add", mind, "--name", "quiet", "--kind", "message", "--defer").returncode == 0
    out = noemad.ctl("say", mind, "psst", "--wait")
    assert (out.returncode, out.stdout) == (0, "")
    assert "deferred by rule quiet: stored and in context, but it wakes no turn" in out.stderr


def test_say_wait_times_out_on_a_paused_mind(noemad: Noemad, mind: str) -> None:
    assert noemad.ctl("pause", mind).returncode == 0
    out = noemad.ctl("say", mind, "anyone?", "--wait", "--timeout", "0.5")
    assert (out.returncode, out.stdout) == (1, "")
    assert "ada is paused: its turn runs when it is resumed" in out.stderr
    assert "noemactl: no reply within 0.5 s: no turn has taken it; see what happened with `noemactl events ada --since " in out.stderr
    alone = noemad.ctl("say", mind, "x", "--timeout", "5")
    assert (alone.returncode, alone.stderr) == (2, "noemactl: --timeout is how long --wait waits; add --wait or drop --timeout\n")
    # Resumed (the real noemactl over the socket; its other cases run in process), the mind takes what waited.
    assert noemad.ctl("resume", mind).stdout == "mind ada is running again (mode idle)\n"
    assert noemad.wait_for(mind, "cycle_started")["kind"] == "cycle_started"


def test_say_wait_follows_a_batch_to_its_turn(noemad: Noemad, mind: str, spawn: Any) -> None:
    assert noemad.ctl("rules", "add", mind, "--name", "gather", "--kind", "message", "--debounce", "5000").returncode == 0
    proc, _, err = spawn("say", mind, "later", "--wait")
    err.until(lambda line: "batched by rule gather: waiting for the batch's turn" in line)
    noemad.advance(6)  # the batch is due: its turn runs
    err.until(lambda line: "no respond model" in line)
    assert proc.wait(timeout=TIMEOUT) == 0


@pytest.fixture
def talker(place: Path) -> Iterator[Noemad]:
    with scripted_noemad(place, SCRIPT, CONFIG) as daemon:
        yield daemon


def test_say_wait_prints_the_reply(talker: Noemad) -> None:
    out = talker.ctl("say", "ada", "how is the weather?", "--wait")
    assert (out.returncode, out.stdout, out.stderr) == (0, "It is sunny.\n", "")
    shown = talker.ctl_json("say", "ada", "thanks", "--wait")
    assert (shown["reply"]["kind"], shown["reply"]["text"], shown["why"]) == ("reply", "Noted.", None)
    assert shown["reply"]["causation_id"] == shown["event"]["id"]


# --- trust, retract, runs for every mind -------------------------------------------------------


def test_trust_with_no_value_lists_the_levels(app: InProcess, mind: str) -> None:
    empty = app.ctl("trust", mind)
    assert empty.returncode == 0 and "ada was told no trust levels" in empty.stdout
    assert app.ctl("trust", mind, "wiki", "0.3").returncode == 0
    assert app.ctl("trust", mind, "bob", "0.9").returncode == 0
    lines = app.ctl("trust", mind).stdout.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [["SOURCE", "TRUST"], ["bob", "0.9"], ["wiki", "0.3"]]
    assert lines[3] == "any other source: 0.6 (the default)"
    assert app.ctl("trust", mind, "carol").stdout == "ada trusts carol 0.6 (the default; never set)\n"
    assert app.ctl_json("trust", mind)["trust"][0]["source"] == "bob"


def test_retract_a_memory(app: InProcess, mind: str) -> None:
    memory = app.ctl_json("remember", mind, "the build server is in Oslo")["id"]
    out = app.ctl("retract", mind, str(memory), "--reason", "it moved to Bergen")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"retracted memory #{memory}: the build server is in Oslo\nwalk it: noemactl timeline ")
    again = app.ctl("retract", mind, str(memory), "--reason", "still wrong")
    assert (again.returncode, again.stderr) == (5, f"noemactl: memory {memory} is already retracted; nothing was changed\n")  # refused: 409
    listed = app.ctl("memories", mind).stdout.splitlines()
    assert listed[1].split()[:5] == [f"#{memory}", "semantic", listed[1].split()[2], "0", "retracted"]
    assert ids(app.ctl("memories", mind, "--retracted"))[1:] == [memory]
    assert app.ctl_json("memories", mind, "--search", "Oslo")["memories"] == []
    [event] = app.ctl_json("events", mind, "--kind", "memory_retracted")["events"]
    assert (event["text"], event["subject"]) == ("it moved to Bergen", {"type": "memory", "id": memory})
    assert app.ctl("retract", mind, str(memory), "--reason", " ").returncode == 2
    assert app.ctl("mind", "create", "bob").returncode == 0
    other = app.ctl("retract", "bob", str(memory), "--reason", "x")
    assert other.returncode == 2 and f"memory #{memory} belongs to ada, not bob" in other.stderr


def test_reflect_for_every_mind_skips_those_with_nothing_new(app: InProcess, mind: str) -> None:
    assert app.ctl("mind", "create", "bob").returncode == 0
    assert app.ctl("reflect", mind).returncode == 0
    out = app.ctl("reflect")
    assert out.returncode == 0, out.stderr
    assert "skipped ada (nothing new since its last reflection at 2026-01-01T00:00:00.000Z)" in out.stderr
    jobs = app.ctl_json("jobs", "--kind", "reflection")["jobs"]
    assert sorted(j["mind"] for j in jobs) == ["ada", "bob"]  # bob ran now; ada only before
    again = app.ctl("reflect")
    assert again.stdout == "no mind has anything new to reflect; name one to run it anyway: noemactl reflect MIND\n"
    assert "skipped ada" in again.stderr and "bob (nothing new" in again.stderr
    assert app.ctl_json("reflect") == {"jobs": [], "skipped": ["ada", "bob"]}
