"""A bad noemad.toml (or a bad stored setting) is answered in the operator's words.

Each problem is one sentence: the key path as written in the file, what to
write, and what was written; never pydantic's "Input should be ..." with its
error codes. The same translator serves the file and `mind set` / PATCH.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from noemad.config.files import parse_config
from noemad.config.mind import parse_mind_settings
from noemad.errors import ConfigError, InvalidInput
from tests.conftest import NOEMAD


def _refused(text: str) -> str:
    with pytest.raises(ConfigError) as err:
        parse_config(text, "noemad.toml")
    return err.value.detail


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        # wrong type
        ('[daemon]\nmax_body_bytes = "big"\n', 'daemon.max_body_bytes: write a whole number from 1024 to 67108864, not "big"'),
        ('[gate.judge]\ntimeout = "x"\n', 'gate.judge.timeout: write a number over 0 and at most 600, not "x"'),
        ('[gate]\nprivileged = "operator"\n', 'gate.privileged: write a list such as ["a", "b"], not "operator"'),
        ("[daemon]\nsocket_group = 5\n", 'daemon.socket_group: write a string in quotes such as "text", not 5'),
        ("[minds]\nada = 3\n", "minds.ada: write a table of keys, not 3"),
        ("[schedules.consolidation]\nmin_episodes = 2.5\n", "schedules.consolidation.min_episodes: write a whole number from 2 to 10000, not 2.5"),
        # TOML has types: a quoted number or a word for a flag is refused, not guessed at
        ('[gate.judge]\nenabled = "yes"\n', 'gate.judge.enabled: write true or false, not "yes"'),
        ("[models.anthropic]\nmax_retries = true\n", "models.anthropic.max_retries: write a whole number from 0 to 10, not true"),
        ('[timeline]\nmax_hops = "3"\n', 'timeline.max_hops: write a whole number from 1 to 6, not "3"'),
        # out of range
        ("[daemon]\nshutdown_timeout = -1\n", "daemon.shutdown_timeout: write a number from 0 to 600, not -1"),
        ("[minds.ada.models.respond]\ntimeout = 0\n", "minds.ada.models.respond.timeout: write a number over 0 and at most 600, not 0"),
        ("[budgets.respond]\ntokens_per_day = -5\n", "budgets.respond.tokens_per_day: write a whole number of at least 0, not -5"),
        ("[minds.ada]\nattention_capacity = 99\n", "minds.ada.attention_capacity: write a whole number from 1 to 16, not 99"),
        # a word out of a list
        ('[daemon]\nlog_level = "verbose"\n', 'daemon.log_level: write "debug", "info", "warning" or "error", not "verbose"'),
        ('[gate.judge]\non_error = "boom"\n', 'gate.judge.on_error: write "wake" or "skip", not "boom"'),
        # nested gate tables: an item of a list is counted from 1, as rules are
        ('[gate]\nprivileged = ["ops", ""]\n', 'gate.privileged[2]: write a non-empty string, not ""'),
        ("[minds.ada.gate]\nrules = [1]\n", "minds.ada.gate.rules[1]: write a table of keys, not 1"),
        ("[minds.ada.gate]\ndefault = 5\n", 'minds.ada.gate.default: write a string in quotes such as "text" or a table of keys, not 5'),
        ("[minds.ada.gate]\ndefualt = 'always'\n", "minds.ada.gate.defualt: unknown key; did you mean 'minds.ada.gate.default'?"),
        ("[gate.judge]\nenabld = true\n", "gate.judge.enabld: unknown key; did you mean 'gate.judge.enabled'?"),
        # a table keyed by a name that needs quotes keeps them
        ('[pricing."claude-x.5"]\ninput = "x"\noutput = 1\n', 'pricing."claude-x.5".input: write a number of at least 0, not "x"'),
        ('[pricing."m"]\noutput = 1\n', "pricing.m.input: missing; this table needs it (Uncached input, per million tokens)"),
    ],
)
def test_each_problem_names_the_key_as_written_and_what_to_write(text: str, sentence: str) -> None:
    detail = _refused(text)
    assert detail.startswith(f"noemad.toml: {sentence}") and detail.count("noemad.toml") == 1
    assert "Input should" not in detail and "type=" not in detail and "http" not in detail


def test_several_problems_are_counted_and_each_is_its_own_sentence() -> None:
    detail = _refused('[daemon]\nlog_level = 3\nshutdown_timeout = "soon"\n[minds.ada]\natention_capacity = 2\n')
    assert detail.startswith("noemad.toml has 3 problems: ")
    assert 'daemon.log_level: write "debug", "info", "warning" or "error", not 3. ' in detail
    assert 'daemon.shutdown_timeout: write a number from 0 to 600, not "soon". ' in detail
    assert "minds.ada.atention_capacity: unknown key; did you mean 'minds.ada.attention_capacity'?" in detail


def test_stored_settings_use_the_same_sentences_under_their_own_key() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_mind_settings({"models": {"respond": {"timeout": "x", "effort": "max"}}})
    assert err.value.detail == (
        'settings.models.respond.effort: write "low", "medium", "high" or "none", not "max".'
        ' settings.models.respond.timeout: write a number over 0 and at most 600, not "x"'
    )


def test_check_config_prints_the_sentences(tmp_path: Path) -> None:
    (tmp_path / "noemad.toml").write_text('[gate.judge]\nmax_input_tokens = "lots"\n[minds.ada.gate]\nrules = "none"\n')
    env = {**os.environ, "NOEMA_HOME": str(tmp_path)}
    bad = subprocess.run([NOEMAD, "--check-config"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stdout == ""
    assert "has 2 problems: gate.judge.max_input_tokens: write a whole number from 1 to 1000000, not \"lots\"." in bad.stderr
    assert 'minds.ada.gate.rules: write a list such as ["a", "b"], not "none".' in bad.stderr
    assert "Input should" not in bad.stderr


def test_a_stored_setting_s_unknown_key_does_not_offer_the_file_only_gate() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_mind_settings({"gat": {}})
    assert "valid here: persona," in err.value.detail and "gate" not in err.value.detail.split("valid here:")[1]
    with pytest.raises(ConfigError) as file_err:
        parse_config("[minds.ada]\ngat = {}\n", "noemad.toml")
    assert "did you mean 'minds.ada.gate'?" in file_err.value.detail
