"""`--grep` (and the API's `grep`) finds a word in an event's data as well as its text: the values, never the keys.

In process for the daemon's query; the real noemactl for `--follow`, which
filters the events arriving on the stream itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from conftest import NOEMACTL, Noemad
from inprocess import InProcess
from test_cli import TIMEOUT, Lines


def observe(engine: Any, text: str, data: dict[str, Any]) -> int:
    answer = engine.api("POST", "/minds/ada/events", json={"kind": "observation", "source": "thermo", "text": text, "data": data})
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


def found(app: InProcess, grep: str) -> list[int]:
    answer = app.api("GET", "/minds/ada/events", params={"grep": grep, "kind": "observation"})
    assert answer.status_code == 200, answer.text
    return [e["id"] for e in answer.json()["events"]]


def test_grep_searches_the_data_s_values_not_its_keys(app: InProcess, mind: str) -> None:
    kitchen = observe(app, "a reading", {"room": "Kitchen", "celsius": 21.5, "probe": {"label": "Ünterkühlt \"cold\" side"}})
    hall = observe(app, "another reading", {"room": "hall", "celsius": 19})
    app.settle(mind)
    assert found(app, "KITCHEN") == [kitchen]  # a value, ignoring case
    assert found(app, "21.5") == [kitchen]  # a number, as written
    assert found(app, "ünterKÜHLT") == [kitchen]  # nested, and not ASCII (stored escaped)
    assert found(app, '"cold" side') == [kitchen]  # quotes, stored escaped
    assert found(app, "celsius") == []  # a key name is not searched
    assert found(app, "reading") == [kitchen, hall]  # the text still is
    # A message's author is in its data: their messages are found by name.
    said = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "zelda", "text": "hello"}).json()["id"]
    app.settle(mind)
    assert [e["id"] for e in app.api("GET", "/minds/ada/events", params={"grep": "zelda", "kind": "message"}).json()["events"]] == [said]


def test_follow_with_grep_prints_an_event_that_matches_in_its_data(noemad: Noemad, mind: str) -> None:
    env = {**os.environ, "NOEMA_SOCKET": str(noemad.socket), "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("NOEMA_HOME", None)
    proc = subprocess.Popen(
        [NOEMACTL, "events", "ada", "--follow", "--grep", "kitchen", "--kind", "observation", "-n", "0", "--json"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        Lines(proc.stderr).until(lambda line: "following ada's events" in line)
        out = Lines(proc.stdout)
        observe(noemad, "hall reading", {"room": "hall"})
        kitchen = observe(noemad, "a reading", {"room": "Kitchen"})
        lines = out.until(lambda line: f'"id":{kitchen},' in line.replace(" ", ""), timeout=TIMEOUT)
        assert [json.loads(line)["id"] for line in lines] == [kitchen]  # the hall's reading was left out
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)
