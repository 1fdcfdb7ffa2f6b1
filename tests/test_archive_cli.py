"""`noemactl archive` and `archives`: what the operator reads, and the timeline at a cut.

noemactl's own code in process against the engine; one case runs the real
noemactl against a real noemad, so the commands are seen over the socket too.
"""

from __future__ import annotations

import re

from conftest import Noemad
from inprocess import InProcess

DAY = 86400.0


def say(engine: Noemad | InProcess, mind: str, text: str) -> int:
    """Say `text` and wait for the mind to take it (`say --wait` streams: in process, the engine is waited on instead)."""
    if isinstance(engine, InProcess):
        out = engine.ctl("--json", "say", mind, text, "--from", "alice")
        assert out.returncode == 0, out.stderr
        engine.settle(mind)
    else:
        out = engine.ctl("--json", "say", mind, text, "--from", "alice", "--wait")
        assert out.returncode == 0, out.stderr
    return int(engine.api("GET", f"/minds/{mind}/events", params={"kind": "message", "tail": 1}).json()["events"][-1]["id"])


def test_archive_dry_run_then_run_list_and_walk_at_the_cut(app: InProcess, mind: str) -> None:
    old = [say(app, mind, f"old note {n}") for n in range(2)]
    app.advance(60 * DAY)
    say(app, mind, "a new note")

    refused = app.ctl("archive", mind, "--older-than", "1h")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "consolidation window" in refused.stderr and "Traceback" not in refused.stderr

    dry = app.ctl("archive", mind, "--older-than", "45d", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert re.match(r"would archive \d+ events of ada older than 2026-01-16 and cut \d+ links", dry.stdout), dry.stdout
    assert "nothing was written" in dry.stdout
    assert app.ctl("archives", mind).stdout.startswith("ada has no archives")

    done = app.ctl("archive", mind, "--older-than", "45d")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    match = re.match(r"archived (\d+) events of ada older than 2026-01-16 into (\S+)$", first)
    assert match, done.stdout
    path = match.group(2)
    assert path.startswith(str(app.home)) and path.endswith("/archives/ada-2026-03.sqlite")  # the month it ran

    listed = app.ctl_json("archives", mind)
    assert [(a["path"], a["events"]) for a in listed] == [(path, int(match.group(1)))]
    table = app.ctl("archives", mind).stdout
    assert path in table and "2026-01-16" in table

    # an archived event: `events show`-style lookups say where it went; the timeline walks it in the file
    walked = app.ctl("timeline", str(old[0]))
    assert walked.returncode == 0, walked.stderr
    assert f"walked inside the archive {path}" in walked.stdout
    assert f"#{old[0]} message" in walked.stdout

    # a kept event that cited an archived one: the walk stops at the cut and names the file
    kept = app.api("GET", f"/minds/{mind}/events", params={"kind": "memory_retrieved", "tail": 1}).json()["events"][-1]
    at_cut = app.ctl("timeline", str(kept["id"]))
    assert at_cut.returncode == 0, at_cut.stderr
    assert "cut here (the linked events are archived; the walk stops at them):" in at_cut.stdout
    assert f"  in {path}:" in at_cut.stdout
    assert re.search(rf"#{kept['id']} ◀ cited #\d+", at_cut.stdout), at_cut.stdout


def test_mind_show_says_how_many_events_are_archived(noemad: Noemad, mind: str) -> None:
    # On a real noemad: the real noemactl's archive and archives, over the socket, once.
    say(noemad, mind, "an old note")
    noemad.advance(60 * DAY)
    assert "archived" not in noemad.ctl("mind", "show", mind).stdout
    done = noemad.ctl_json("archive", mind, "--older-than", "45d")
    shown = noemad.ctl("mind", "show", mind).stdout
    assert f"; {done['events']} archived in 1 archive)" in shown, (done, shown)
    assert [a["events"] for a in noemad.ctl_json("archives", mind)] == [done["events"]]
