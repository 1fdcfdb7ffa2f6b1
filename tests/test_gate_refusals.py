"""Refusals and notes of the gate that say what to do, in the words the reader typed (issue 23 item 8).

The validator's own sentences (judging off, a rule that resets itself, a
pattern too large) are in tests/test_rules.py's table; here what only a
route, noemactl or `noemad --check-config` shows. In process: noemactl's
`main` refuses a bad `--for` before it connects, and `--check-config` needs
no daemon.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from inprocess import InProcess


def ctl(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """Run noemactl's `main` in this process: its exit code and stderr."""
    from noemactl.app import main

    monkeypatch.setattr(sys, "argv", ["noemactl", "--socket", "/nonexistent/noemad.sock", *argv])
    with pytest.raises(SystemExit) as done:
        main()
    return int(done.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(("span", "says"), [("0", "--for '0' is not a span"), ("0s", "--for 0s is no time at all"), ("soon", "--for 'soon' is not a span")])
def test_sleep_names_the_for_option_not_the_api_field(span: str, says: str, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    code, err = ctl(["sleep", "ada", "--for", span], capsys, monkeypatch)
    assert code == 2 and err.startswith("noemactl: ") and says in err
    assert "for=" not in err and "noemad" not in err  # refused here, before anything was sent


def test_rules_show_keeps_the_note_a_clamped_bound_got(app: InProcess, mind: str) -> None:
    from noemactl import gate_view

    added = app.api("POST", "/minds/ada/rules", json={"rule": {"name": "quick", "behaviour": {"debounce": {"ms": 5}}}}).json()
    [note] = added["notes"]
    assert note == "rule 'quick': behaviour.debounce.ms 5 is below the least allowed; read as 100 ms"
    shown = app.api("GET", "/minds/ada/rules/quick").json()
    assert shown["notes"] == [note]
    lines = [line.plain for line in gate_view.rule(shown) if isinstance(line, Text)]
    assert lines[-1] == f"note: {note}"
    edited = app.api("PUT", "/minds/ada/rules/quick", json={"rule": {"behaviour": {"debounce": {"ms": 500}}}})
    assert edited.status_code == 200 and app.api("GET", "/minds/ada/rules/quick").json()["notes"] == []  # the new bound is its own


def test_check_config_mentions_a_clamped_judge_budget(tmp_path: Path, capsys: Any) -> None:
    from noemad.main import main

    config = tmp_path / "noemad.toml"
    config.write_text(
        "[gate.judge]\nenabled = true\nmax_input_tokens = 1000\n\n"
        '[[minds.ada.gate.rules]]\nname = "quick"\nbehaviour = { debounce = { ms = 5 } }\n'
    )
    assert main(["--check-config", "--home", str(tmp_path), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "# note: [gate.judge] max_input_tokens 1000 is under 4000: read as 4000\n" in out
    assert "# note: [minds.ada.gate] rule 1: behaviour.debounce.ms 5 is below the least allowed; read as 100 ms\n" in out
    config.write_text("[gate.judge]\nenabled = true\n")
    assert main(["--check-config", "--home", str(tmp_path), "--config", str(config)]) == 0
    assert "# note:" not in capsys.readouterr().out
