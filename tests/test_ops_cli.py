"""Operating the daemon through the real noemactl: reload, log-level, status --watch, JSON logs; and config show (in process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Noemad, start_noemad
from inprocess import InProcess, start_app

SECRET = "sk-ant-test-never-shown-0123456789"
CONFIG = "[daemon]\nshutdown_timeout = 3\n\n[minds.ada]\npersona = \"You are Ada.\"\n"


@pytest.fixture
def ops(place: Path) -> Iterator[Noemad]:
    """A daemon with a config file, an API key in its environment and JSON logs."""
    home = place / "home"
    home.mkdir()
    (home / "noemad.toml").write_text(CONFIG)
    daemon = start_noemad(home, place / "s.sock", env={"ANTHROPIC_API_KEY": SECRET}, args=("--log-format", "json"))
    yield daemon
    daemon.stop()
    daemon.notify.close()


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InProcess]:
    """The in-process twin of `ops` for what needs no process or log: the same config file and API key."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    engine = start_app(tmp_path, CONFIG)
    yield engine
    engine.stop()


def log_lines(daemon: Noemad) -> list[dict]:
    """The daemon's log so far, every line a JSON object."""
    return [json.loads(line) for line in daemon.stderr().splitlines() if line.strip()]


def test_reload_answers_taken_or_refused_with_the_sentence(ops: Noemad) -> None:
    config = ops.home / "noemad.toml"
    config.write_text("[daemon]\nshutdown_timeout = 5\n")
    out = ops.ctl("reload")
    assert out.returncode == 0 and out.stdout.startswith(f"config reloaded from {config}")
    assert ops.ctl_json("config", "show")["values"][3] == {"key": "daemon.shutdown_timeout", "value": 5.0, "source": "noemad.toml"}

    config.write_text("[daemon]\nshutdown_timeout = \"soon\"\n")
    out = ops.ctl("reload")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("noemactl: config reload refused: ")
    assert "daemon.shutdown_timeout" in out.stderr and "the running config is kept" in out.stderr
    as_json = ops.ctl("--json", "reload")
    refused = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and refused["taken"] is False and "daemon.shutdown_timeout" in refused["error"]
    assert "config reload refused" in ops.ctl("status").stdout  # the same refusal SIGHUP gives


def test_config_show_gives_each_value_its_source_and_never_a_secret(configured: InProcess) -> None:
    assert configured.ctl("mind", "create", "ada", "--settings", '{"attention_capacity": 3}').returncode == 0
    out = configured.ctl("config", "show")
    assert out.returncode == 0 and SECRET not in out.stdout
    lines = out.stdout.splitlines()
    assert "shutdown_timeout = 3.0  # noemad.toml" in lines
    assert "max_body_bytes = 1048576  # default" in lines
    assert 'log_level = "info"  # default' in lines
    assert "# secret models.anthropic.api_key: set, from environment (ANTHROPIC_API_KEY)" in lines
    assert "[minds.ada]" in lines
    assert 'persona = "You are Ada."  # noemad.toml [minds.ada]' in lines and "attention_capacity = 3  # stored" in lines
    data = configured.ctl_json("config", "show")
    assert SECRET not in json.dumps(data)
    assert data["secrets"] == [{"key": "models.anthropic.api_key", "set": True, "source": "environment (ANTHROPIC_API_KEY)", "problem": None}]
    assert configured.ctl("config", "show", "--format", "json").stdout == configured.ctl("--json", "config", "show").stdout
    bad = configured.ctl("config", "show", "--format", "yaml")
    assert bad.returncode == 2 and "use toml or json" in bad.stderr


def test_the_log_level_changes_at_run_time_and_on_reload(ops: Noemad) -> None:
    assert ops.ctl("mind", "create", "bob").returncode == 0
    out = ops.ctl("log-level", "error")
    assert (out.returncode, out.stdout) == (0, "log level error (was info)\n")
    assert ops.ctl("reflect", "bob").returncode == 0  # would log "reflection job 1 started" at info
    assert not [r for r in log_lines(ops) if "job 1 started" in r["message"]]
    me = ops.ctl_json("log-level")
    assert me["level"] == "error" and me["source"].startswith("noemactl log-level (operator:")

    (ops.home / "noemad.toml").write_text('[daemon]\nlog_level = "info"\n')
    assert ops.ctl("reload").returncode == 0
    assert ops.ctl_json("log-level") == {"level": "info", "source": "noemad.toml", "previous": None}
    assert ops.ctl("reflect", "bob").returncode == 0
    started = [r for r in log_lines(ops) if r["message"].startswith("reflection job 2 started")]
    assert started and started[0]["level"] == "info" and started[0]["logger"] == "noemad.jobs"
    bad = ops.ctl("log-level", "loud")
    assert bad.returncode == 2 and "debug, info, warning or error" in bad.stderr


def test_json_logs_are_one_object_a_line_with_time_level_logger_message(ops: Noemad) -> None:
    ops.stop()
    records = log_lines(ops)
    assert records, "the daemon logged nothing"
    for record in records:
        assert {"time", "level", "logger", "message"} <= set(record), record
        assert record["time"].endswith("Z") and record["level"] in ("debug", "info", "warning", "error", "critical")
    assert any(r["message"].startswith("noemad serving") for r in records)
    assert records[-1]["message"] == "stopped"


def test_status_watch_piped_prints_the_view_then_only_changed_lines(ops: Noemad) -> None:
    once = ops.ctl("status")
    out = ops.ctl("status", "--watch", "--count", "3", "--interval", "0.05")
    assert out.returncode == 0 and out.stdout == once.stdout  # nothing changed: the view once
    lines = ops.ctl("--json", "status", "--watch", "--count", "2", "--interval", "0.05").stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["version"]
    bad = ops.ctl("status", "--count", "2")
    assert bad.returncode == 2 and "--count goes with --watch" in bad.stderr
