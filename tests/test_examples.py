"""Every file in examples/ loads and works with every feature it enables (issue 23 item 9).

An example is a model script (its top-level keys are model roles) or a
noemad.toml. A script must load in the scripted provider, the config its
header shows must validate, and each answer of each role must read through
that role's real parser: the judge's last line REPLY:/WAIT:, the critic's
APPROVE:/REVISE:, a respond tool call a tool the mind has with an input it
takes. Then the judge runs in process: a judge wake rule, a question and
banter, and the verdicts the example's judge gives them.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from inprocess import InProcess, start_app
from noemad.config.files import parse_config
from noemad.gate.judge import prompt as judge_prompt
from noemad.models.scripted import Reply, RoleScript, ScriptedProvider
from noemad.models.types import ROLES
from noemad.rules.shape import read_rule
from noemad.turn import govern
from noemad.turn.tools import JUDGE_MIND_TOOLS

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.toml"))


def _is_script(path: Path) -> bool:
    return set(tomllib.loads(path.read_text())) <= set(ROLES)


def _answers(script: RoleScript) -> list[Reply]:
    return [*(rule.reply for rule in script.rules), *script.replies, *([script.default] if script.default else [])]


def _header_config(path: Path) -> str:
    """The noemad.toml a script's header comment shows, with the script's own path in it."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "Use it with:" in line) + 1
    block: list[str] = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        body = line[1:].strip()
        if not body and block:
            break
        if body:
            block.append(body)
    return "\n".join(block).replace("/path/to/examples/scripted-demo.toml", str(path)).replace(
        f"/path/to/examples/{path.name}", str(path)
    )


def test_there_are_examples() -> None:
    assert EXAMPLES, "examples/ holds no .toml file"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_example_loads_and_its_config_validates(path: Path) -> None:
    if not _is_script(path):
        parse_config(path.read_text(), str(path))
        return
    provider = ScriptedProvider.from_file(path)  # the script's own validator: every problem named, or none
    assert provider.roles
    config = parse_config(_header_config(path), "header of " + path.name).config
    assert config.models.provider == "scripted" and config.models.scripted is not None


def _check_answer(role: str, reply: Reply, where: str) -> None:
    if reply.fault is not None:
        return  # a scripted failure is a feature of the script, not an answer
    if reply.tool is not None:
        assert role == "respond", f"{where}: only the respond model calls tools"
        tools = {tool.name for tool in JUDGE_MIND_TOOLS}
        assert reply.tool in tools, f"{where}: {reply.tool!r} is not one of the mind's tools ({', '.join(sorted(tools))})"
        if reply.tool == "wake_add_rule":
            read_rule({k: v for k, v in dict(reply.input or {}).items() if k != "position"}, judge=True)
        return
    text = reply.text or ""
    assert text.strip(), f"{where}: an empty answer"
    if role == "judge":
        reading = judge_prompt.parse_verdict(text)
        assert reading.verdict is not None and reading.reason, f"{where}: {reading.reason}"
    elif role == "critic":
        verdict, reason = govern.parse_verdict(text)  # raises NoVerdict when the last line is neither
        assert verdict in ("approve", "revise") and reason


@pytest.mark.parametrize("path", [p for p in EXAMPLES if _is_script(p)], ids=lambda p: p.name)
def test_every_answer_of_every_role_reads_through_its_roles_parser(path: Path) -> None:
    for role, script in ScriptedProvider.from_file(path).roles.items():
        for index, reply in enumerate(_answers(script)):
            _check_answer(role, reply, f"{path.name} [{role}] answer {index + 1}")


def test_the_checks_would_catch_the_old_json_judge() -> None:
    with pytest.raises(AssertionError, match="not REPLY: or WAIT:"):
        _check_answer("judge", Reply(text='{"verdict": "accept", "reason": "fine"}'), "old")
    with pytest.raises(govern.NoVerdict):
        _check_answer("critic", Reply(text="No objection."), "old")


def _judge_engine(tmp_path: Path, script: Path) -> InProcess:
    config = _header_config(script) + '\n[gate.judge]\nenabled = true\n'
    app = start_app(tmp_path, config)
    assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    room = {"name": "room", "match": {"kinds": ["message"], "channel": "discord:*"}, "behaviour": {"judge": {"debounce_ms": 1000}}}
    assert app.api("POST", "/minds/ada/rules", json={"rule": room}).status_code == 201
    app.settle("ada")
    return app


@pytest.mark.parametrize("path", [p for p in EXAMPLES if _is_script(p) and "judge" in tomllib.loads(p.read_text())], ids=lambda p: p.name)
def test_the_examples_judge_wakes_the_mind_for_a_question_and_lets_banter_go_by(tmp_path: Path, path: Path) -> None:
    app = _judge_engine(tmp_path, path)
    try:
        verdicts: list[dict[str, Any]] = []
        for text in ("lunch at noon, as always", "will it rain tomorrow?"):
            said = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "channel": "discord:g:general", "text": text}).json()
            app.advance(2)
            verdict = app.wait_for("ada", "judge_verdict", since=said["id"])
            app.settle("ada")
            verdicts.append(verdict["data"])
        assert [(v["verdict"], v["woke"]) for v in verdicts] == [("wait", False), ("reply", True)]
        status = app.api("GET", "/minds/ada/gate").json()
        [room] = [r for r in status["rules"] if r["name"] == "room"]
        assert room["judge"]["verdicts"]["reply"] == 1 and room["judge"]["verdicts"]["wait"] == 1
        assert room["judge"]["last"]["reason"] == "someone asked something the mind can answer"
        assert not [n for n in status.get("notices") or [] if "fail" in n]
        assert re.search(r"judge said REPLY", app.api("GET", "/minds/ada/events", params={"kind": "cycle_started"}).json()["events"][-1]["data"]["wake"])
    finally:
        app.stop()
