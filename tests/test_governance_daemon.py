"""Governance: noemactl's views (in process, on the scripted provider), the config refusals of a real noemad, and the critic through the fake Messages API."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import NOEMAD, SCRIPTED_RESPOND, Noemad
from fake_messages_api import FakeMessagesAPI
from inprocess import InProcess, scripted_app, start_app

SCRIPT = """
[[respond.rules]]
match = "(?i)thanks for the update"
text = "Got it, thanks!"

[[respond.rules]]
match = "(?i)weather"
text = "It is 21 degrees in Paris."

[critic]
default = "APPROVE: supported"
"""

CONFIG = SCRIPTED_RESPOND + """
[models.critic]
model = "claude-haiku-5-5"

[gate]
mind_tools = false
"""


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[InProcess]:
    """The engine in process on the scripted provider with a critic: the cases below read views and refusals."""
    with scripted_app(tmp_path, SCRIPT, CONFIG) as engine:
        yield engine


def say(noemad: Noemad | InProcess, text: str) -> int:
    resp = noemad.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "channel": "cli", "text": text})
    assert resp.status_code == 201
    return int(resp.json()["id"])


def test_gate_status_counts_governance_and_usage_shows_the_critic(daemon: InProcess) -> None:
    first = say(daemon, "Thanks for the update!")
    daemon.wait_for("ada", "reply", first)
    second = say(daemon, "What's the weather?")
    daemon.wait_for("ada", "reply", second)
    counts = daemon.ctl_json("gate-status", "ada")["governance"]
    assert counts["passes"] == 2 and counts["fired"] == 1 and counts["skipped"] == 1
    assert counts["statuses"] == {"skipped": 1, "reviewed": 1} and counts["firing_rate"] == 0.5
    assert counts["triggers"] == {"fabrication_finding": 1}
    shown = daemon.ctl("gate-status", "ada")
    assert shown.returncode == 0, shown.stderr
    assert "governance: 2 drafts, critic fired 1 (50%), skipped 1" in shown.stdout
    assert "fired by: fabrication_finding 1" in shown.stdout
    usage = daemon.ctl("usage", "--by", "role")
    assert usage.returncode == 0 and "critic" in usage.stdout


def test_remember_takes_tags(daemon: InProcess) -> None:
    made = daemon.ctl_json("remember", "ada", "Contracts go through legal counsel", "--tag", "legal", "--tag", "contracts")
    assert made["tags"] == ["legal", "contracts"]
    bad = daemon.ctl("remember", "ada", "x", "--tag", "not a name")
    assert bad.returncode != 0 and "a memory tag is a name" in bad.stderr


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("metacognition_selective_gate = true\n", 'metacognition_selective_gate is retired: write policy = "selective"'),
        ("[minds.ada]\nmetacognition_trivial_ack_patterns = [\"^ok$\"]\n", "write trivial_ack_patterns = [...] under"),
        ("read_only_tools = [\"search\"]\n", "read_only_tools is retired: write read_only_tools = [...] under [governance]"),
        ("[governance]\npolicy = \"always\"\n", 'governance.policy: write "selective" or "confidence_only", not "always"'),
    ],
)
def test_check_config_refuses_retired_and_bad_governance_settings(place: Path, toml: str, says: str) -> None:
    (place / "noemad.toml").write_text(toml)
    env = {**os.environ, "NOEMA_HOME": str(place)}
    bad = subprocess.run([NOEMAD, "--check-config"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and says in bad.stderr


# --- the real SDK against the fake Messages API ------------------------------------------

KEY = "sk-ant-test-GOVERN"
KEY_ENV = "NOEMA_TEST_GOVERN_KEY"
SDK_CONFIG = """
[models]
provider = "anthropic"

[models.anthropic]
api_key_env = "{key_env}"
base_url = "{url}"
max_retries = 0

[models.respond]
model = "claude-haiku-5-5"

[models.critic]
model = "claude-sonnet-5"

[gate]
mind_tools = false
"""


@pytest.fixture
def sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InProcess, FakeMessagesAPI]]:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CREDENTIALS_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeMessagesAPI(key=KEY) as api:
        app = start_app(tmp_path, SDK_CONFIG.format(key_env=KEY_ENV, url=api.url))
        assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        yield app, api
        app.stop()


def governance_of(app: InProcess, since: int) -> list[dict]:
    return app.api("GET", f"/minds/ada/events?kind=governance&since={since}").json()["events"]


def test_the_critic_through_the_sdk_revises_once(sdk: tuple[InProcess, FakeMessagesAPI]) -> None:
    app, api = sdk
    api.message("It is 21 degrees in Paris.")
    api.message("Nothing in the conversation gives a temperature.\nREVISE: drop the 21 degrees and Paris")
    api.message("I do not know the weather there.")
    api.message("APPROVE: it claims nothing")
    message = say(app, "What's the weather?")
    reply = app.wait_for("ada", "reply", message)
    app.settle("ada")
    assert reply["text"] == "I do not know the weather there."
    govs = governance_of(app, message)
    assert [(g["data"]["status"], g["data"]["verdict"], g["data"]["revision"]) for g in govs] == [
        ("reviewed", "revise", 0),
        ("reviewed", "approve", 1),
    ]
    models = [r.body["model"] for r in api.requests]
    assert models == ["claude-haiku-5-5", "claude-sonnet-5", "claude-haiku-5-5", "claude-sonnet-5"]
    critic = api.requests[1].body
    assert "APPROVE:" in critic["system"][0]["text"] and "It is 21 degrees in Paris." in critic["messages"][-1]["content"][0]["text"]
    redraft = api.requests[2].body["messages"]
    assert [m["role"] for m in redraft[-3:]] == ["user", "assistant", "user"]
    assert "drop the 21 degrees" in redraft[-1]["content"][0]["text"]


def test_a_critic_outage_through_the_sdk_fails_open_degraded(sdk: tuple[InProcess, FakeMessagesAPI]) -> None:
    app, api = sdk
    api.message("It is 21 degrees in Paris.")
    api.overloaded()
    message = say(app, "What's the weather?")
    reply = app.wait_for("ada", "reply", message)
    app.settle("ada")
    assert reply["text"] == "It is 21 degrees in Paris."
    [gov] = governance_of(app, message)
    assert gov["data"]["status"] == "degraded" and gov["data"]["reviewed"] is True
    assert "overloaded" not in str(gov["data"]) and "degraded" in gov["text"]
