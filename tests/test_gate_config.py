"""Wake rules in noemad.toml: `[minds.NAME.gate]` read by the one validator, `[gate]`, and the seed.

The file seeds a mind's rules once (when it is created, or at the first start
that finds the table for a mind never seeded); the stored rules win after.
`gate` is not a stored setting. Messages and observations carry what rules
match on (dm, reply_to, bot, tags), stored only when given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import OPERATOR
from inprocess import ME, InProcess, start_app
from noemad.config.files import parse_config, render_config
from noemad.config.schema import Config
from noemad.errors import ConfigError
from noemad.rules.shape import Always, Debounce, Defer, Match, Rule
from noemad.rules.table import RulesChange, stored_rules

GATE = """
[gate]
privileged = ["operator", "pager"]

[minds.ada.gate]
default = { debounce = { ms = 2000 } }

[[minds.ada.gate.rules]]
name = "dms"
match = { flags = ["dm", "mention"] }
behaviour = "always"

[[minds.ada.gate.rules]]
name = "bots"
match = { flags = ["from_bot"] }
behaviour = { debounce = { ms = 5 } }
"""


def test_the_gate_tables_are_read_with_the_rule_validator() -> None:
    config = parse_config(GATE, "noemad.toml").config
    assert config.gate.privileged == ["operator", "pager"] and config.gate.mind_tools is True
    assert Config().gate.privileged == ["operator"]
    gate = config.minds["ada"].gate
    assert gate is not None
    reads, default, notes = gate.read()
    assert [r.rule for r in reads] == [
        Rule("dms", Match(flags=("dm", "mention")), Always()),
        Rule("bots", Match(flags=("from_bot",)), Debounce(100)),
    ]
    assert reads[1].notes == ("rule 2: behaviour.debounce.ms 5 is below the least allowed; read as 100 ms",)
    assert (default, notes) == (Debounce(2000), [])


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            '[[minds.ada.gate.rules]]\nname = "x"\nbehaviour = "defer"\npassthrough = true\n',
            "noemad.toml: minds.ada.gate.rules: rule 1: passthrough is only for rate_limit and passive_sample",
        ),
        (
            '[[minds.ada.gate.rules]]\nname = "a"\nbehaviour = "defer"\n[[minds.ada.gate.rules]]\nname = "b"\nbehavior = "defer"\n',
            "minds.ada.gate.rules: rule 2: unknown key 'behavior'; did you mean 'behaviour'?",
        ),
        (
            '[[minds.ada.gate.rules]]\nname = "a"\nbehaviour = "defer"\n[[minds.ada.gate.rules]]\nname = "a"\nbehaviour = "always"\n',
            "minds.ada.gate.rules: rule 2: the name 'a' is taken by an earlier rule; rule names are unique per mind",
        ),
        (
            '[[minds.ada.gate.rules]]\nname = "a"\nbehaviour = "always"\nmatch = { text = "(?=x)", regex = true }\n',
            "uses a backreference or lookaround; patterns run on RE2",
        ),
        ('[minds.ada.gate]\ndefault = "sometimes"\n', "minds.ada.gate.default: 'sometimes' is not a behaviour (one of always, defer"),
        ('[minds.ada.gate]\nrule = []\n', "minds.ada.gate.rule: unknown key; did you mean 'minds.ada.gate.rules'?"),
        ('[gate]\nprivileged = "operator"\n', "gate.privileged"),
        ('[gate]\nmind_tool = false\n', "gate.mind_tool: unknown key; did you mean 'gate.mind_tools'?"),
    ],
)
def test_a_bad_rule_refuses_the_config_with_the_sentence(text: str, sentence: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(text, "noemad.toml")
    assert sentence in refused.value.detail


def test_the_effective_config_renders_the_gate_as_toml_that_reads_back() -> None:
    config = parse_config(GATE, "noemad.toml").config
    text = render_config(config)
    assert 'privileged = ["operator", "pager"]' in text
    assert 'rules = [{name = "dms", match = {flags = ["dm", "mention"]}, behaviour = "always"}' in text
    assert parse_config(text, "rendered").config == config


def test_gate_is_not_a_stored_setting(app: InProcess) -> None:
    refused = app.api("POST", "/minds", json={"name": "ada", "settings": {"gate": {"default": "defer"}}})
    assert refused.status_code == 422
    assert "settings.gate: wake rules are not a stored setting; change them with `noemactl rules`" in refused.json()["detail"]
    assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    patched = app.api("PATCH", "/minds/ada", json={"settings": {"gate": {"rules": []}}})
    assert patched.status_code == 422 and "the rules API, /api/v1/minds/NAME/rules" in patched.json()["detail"]


def _seed_events(engine: InProcess, mind: str) -> list[RulesChange]:
    events = engine.api("GET", f"/minds/{mind}/events?kind=gate_rules_changed").json()["events"]
    return [RulesChange(e["data"]["action"], tuple(e["data"]["rules"])) for e in events if e["actor"] == "config"]


def test_a_new_mind_is_seeded_from_the_config(tmp_path: Path) -> None:
    engine = start_app(tmp_path, GATE)
    try:
        assert engine.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        assert engine.api("POST", "/minds", json={"name": "bob"}).status_code == 201
        ada = stored_rules(engine.sup.store.reader(), "ada")
        assert [r.name for r in ada.rules] == ["dms", "bots"] and ada.default == Debounce(2000)
        assert ada.notes == ("rule 2: behaviour.debounce.ms 5 is below the least allowed; read as 100 ms",)
        assert _seed_events(engine, "ada") == [RulesChange("seed", ("dms", "bots"))]
        assert stored_rules(engine.sup.store.reader(), "bob").rules == () and _seed_events(engine, "bob") == []
    finally:
        engine.stop()


def test_the_stored_rules_win_over_a_later_config(tmp_path: Path) -> None:
    engine = start_app(tmp_path)
    engine.api("POST", "/minds", json={"name": "ada"})
    engine.api("POST", "/minds", json={"name": "bob"})
    engine.stop()
    # A table added to the file later seeds a mind whose rules were never written, at the next start...
    engine = start_app(tmp_path, GATE + '\n[minds.bob.gate]\ndefault = "defer"\n')
    try:
        assert [r.name for r in stored_rules(engine.sup.store.reader(), "ada").rules] == ["dms", "bots"]
        assert stored_rules(engine.sup.store.reader(), "bob").default == Defer()
    finally:
        engine.stop()
    # ...once: a changed file does not reach a seeded mind.
    engine = start_app(tmp_path, '[minds.ada.gate]\ndefault = "always"\n[[minds.ada.gate.rules]]\nname = "other"\nbehaviour = "defer"\n')
    try:
        ada = stored_rules(engine.sup.store.reader(), "ada")
        assert [r.name for r in ada.rules] == ["dms", "bots"] and ada.default == Debounce(2000)
        assert len(_seed_events(engine, "ada")) == 1
    finally:
        engine.stop()


def test_messages_and_observations_carry_what_rules_match(app: InProcess) -> None:
    app.api("POST", "/minds", json={"name": "ada"})
    sent = app.api(
        "POST", "/minds/ada/events", json={"kind": "message", "author": "zoe", "text": "hi", "dm": True, "bot": True, "tags": ["ops", "ops"], "reply_to": 1}
    )
    assert sent.status_code == 201
    assert sent.json()["data"] == {"author": "zoe", "mentions": [], "dm": True, "bot": True, "tags": ["ops"], "reply_to": 1}
    plain = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "zoe", "text": "hi"}).json()
    assert plain["data"] == {"author": "zoe", "mentions": []}  # as before: nothing stored that was not given
    seen = app.api("POST", "/minds/ada/events", json={"kind": "observation", "source": "ci", "text": "green", "tags": ["build"]}).json()
    assert seen["data"] == {"source": "ci", "tags": ["build"]}
    bad = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "zoe", "text": "hi", "reply_to": 0})
    assert bad.status_code == 422 and "reply_to" in bad.json()["detail"]
    many = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "zoe", "text": "hi", "tags": [f"t{i}" for i in range(51)]})
    assert many.status_code == 422


def test_noemactl_say_and_observe_send_the_rule_fields(app: InProcess, mind: str) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    plain = app.ctl_json("say", mind, "hello")
    said = app.ctl_json("say", mind, "ping", "--dm", "--bot", "--reply-to", str(plain["id"]), "--tag", "ops", "--tag", "urgent")
    assert said["data"] == {
        "author": said["data"]["author"], "mentions": [], "dm": True, "bot": True, "reply_to": plain["id"], "tags": ["ops", "urgent"],
        "operator": OPERATOR,  # who stored it, beside who it claims to be from
    }
    assert set(plain["data"]) == {"author", "mentions", "operator"}
    seen = app.ctl_json("observe", mind, "green", "--source", "ci", "--tag", "build")
    assert seen["data"] == {"source": "ci", "tags": ["build"], "operator": OPERATOR}
    refused = app.ctl("say", mind, "x", "--reply-to", "0")
    assert refused.returncode != 0 and "--reply-to" in refused.stderr
