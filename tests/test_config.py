"""noemad.toml: validation, and reloads that apply or are refused whole."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from conftest import Noemad, start_noemad
from noemad.config.files import load_config, parse_config
from noemad.config.schema import Config
from noemad.errors import ConfigError
from noemad.paths import resolve_paths


def test_missing_file_gives_embedded_defaults(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "noemad.toml")
    assert loaded.source == "embedded defaults"
    assert loaded.config == Config()
    assert loaded.config.timeline.max_events == 200


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[daemon]\nsokcet_group = 'x'\n", "daemon.sokcet_group: unknown key; did you mean 'daemon.socket_group'?"),
        ("[timelien]\n", "timelien: unknown key; did you mean 'timeline'?"),
        ("[timeline]\nmax_hops = 7\n", "timeline.max_hops: write a whole number from 1 to 6, not 7"),
        ("[timeline]\nmax_events = 'lots'\n", "timeline.max_events: write a whole number from 1 to 200, not \"lots\""),
        ("[daemon]\nsocket_group = 'no-such-group-here'\n", "group 'no-such-group-here' does not exist"),
        ("[schedules.reflection]\nevery = 'daily'\n", "schedules.reflection.every: every must be a span of at least a minute such as 30m, 6h or 1d"),
        ("[schedules.consolidation]\nevery = '30s'\n", 'or "off"; not \'30s\''),
        ("[schedules.consolidation]\nwindow = '2y'\n", "window must be a span between 1h and 366d such as 30d"),
        ("[schedules.consolidation]\nmin_episode = 4\n", "did you mean 'schedules.consolidation.min_episodes'?"),
        ("[schedules.consolidation]\nmin_episodes = 1\n", "schedules.consolidation.min_episodes: write a whole number from 2 to 10000, not 1"),
        ("[minds.ada.schedules.reflection]\nevery = 'sometimes'\n", "minds.ada.schedules.reflection.every: every must be a span"),
        ("[schedules.dreaming]\n", "schedules.dreaming: unknown key"),
        ("[daemon]\nlog_level = 'loud'\n", "daemon.log_level"),
        ("daemon = [", "is not valid TOML"),
        ("[daemon]\nzzz = 1\nyyy = 2\n", "daemon.zzz: unknown key"),
    ],
)
def test_invalid_config_names_the_problem(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(text, "noemad.toml")
    assert words in err.value.detail
    assert err.value.detail.startswith("noemad.toml")


def test_several_problems_are_all_named() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config("[daemon]\nzzz = 1\nyyy = 2\n", "noemad.toml")
    assert "daemon.zzz" in err.value.detail and "daemon.yyy" in err.value.detail


def test_paths_precedence(tmp_path: Path) -> None:
    systemd = {"STATE_DIRECTORY": "/var/lib/noema", "RUNTIME_DIRECTORY": "/run/noema:/run/other", "CONFIGURATION_DIRECTORY": "/etc/noema"}
    paths = resolve_paths(env=systemd)
    assert (paths.data_dir, paths.socket, paths.config_file) == (
        Path("/var/lib/noema"),
        Path("/run/noema/noemad.sock"),
        Path("/etc/noema/noemad.toml"),
    )
    home = resolve_paths(env={**systemd, "NOEMA_HOME": str(tmp_path)})
    assert home.db_file == tmp_path / "noema.db" and home.socket == tmp_path / "run" / "noemad.sock"
    explicit = resolve_paths(env={**systemd, "NOEMA_SOCKET": "/tmp/x.sock"}, home=tmp_path / "h", socket="/tmp/y.sock")
    assert explicit.socket == Path("/tmp/y.sock") and explicit.data_dir == tmp_path / "h"


def _limit_in_use(noemad: Noemad, mind: str) -> int:
    event = noemad.api("GET", f"/minds/{mind}/events").json()["events"][0]
    return noemad.api("GET", f"/events/{event['id']}/chain").json()["limits"]["limit"]


def test_a_changed_file_is_reloaded(noemad: Noemad, mind: str) -> None:
    assert _limit_in_use(noemad, mind) == 200
    # Written the way editors do: a new file renamed over the old name.
    tmp = noemad.home / ".noemad.toml.swp"
    tmp.write_text("[timeline]\nmax_events = 50\n")
    tmp.rename(noemad.home / "noemad.toml")
    noemad.wait_notify("STATUS=config reloaded")
    assert _limit_in_use(noemad, mind) == 50
    status = noemad.api("GET", "/status").json()["config"]
    assert status["source"] == str(noemad.home / "noemad.toml") and status["reloads"] == 1
    assert status["reload_error"] is None


def test_an_invalid_reload_keeps_the_old_config_and_says_why(noemad: Noemad, mind: str) -> None:
    (noemad.home / "noemad.toml").write_text("[timeline]\nmax_events = 50\n")
    noemad.wait_notify("STATUS=config reloaded")
    noemad.messages.clear()
    (noemad.home / "noemad.toml").write_text("[timeline]\nmax_events = 500\n")
    refused = noemad.wait_notify("STATUS=config reload refused")
    assert "timeline.max_events" in refused and "RELOADING=1" not in refused
    status = noemad.api("GET", "/status").json()["config"]
    assert "timeline.max_events: write a whole number from 1 to 200, not 500" in status["reload_error"]
    assert "the running config is kept" in status["reload_error"]
    assert _limit_in_use(noemad, mind) == 50  # still the last good config
    # Fixing the file clears the error.
    noemad.messages.clear()
    (noemad.home / "noemad.toml").write_text("[timeline]\nmax_events = 80\n")
    noemad.wait_notify("STATUS=config reloaded")
    assert noemad.api("GET", "/status").json()["config"]["reload_error"] is None
    assert _limit_in_use(noemad, mind) == 80


def test_a_config_apart_from_the_store_is_watched_too(place: Path) -> None:
    """With the store beside it (a home, as above) the config's directory is polled; apart from the store, inotify watches it."""
    home, elsewhere = place / "home", place / "etc"
    home.mkdir()
    elsewhere.mkdir()
    (elsewhere / "noemad.toml").write_text("[timeline]\nmax_events = 60\n")
    daemon = start_noemad(home, place / "s.sock", args=("--config", str(elsewhere / "noemad.toml")))
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        assert _limit_in_use(daemon, "ada") == 60
        tmp = elsewhere / ".noemad.toml.swp"
        tmp.write_text("[timeline]\nmax_events = 70\n")
        tmp.rename(elsewhere / "noemad.toml")
        daemon.wait_notify("STATUS=config reloaded")
        assert _limit_in_use(daemon, "ada") == 70
    finally:
        daemon.stop()
        daemon.notify.close()


def test_sighup_reloads_and_announces_it(noemad: Noemad, mind: str) -> None:
    noemad.proc.send_signal(signal.SIGHUP)
    noemad.wait_notify("RELOADING=1")
    noemad.wait_notify("STATUS=config reloaded")
    assert noemad.api("GET", "/status").json()["config"]["reloads"] >= 1


def test_a_mind_may_set_its_own_schedule_over_the_default() -> None:
    from noemad.config.schema import schedule

    config = parse_config(
        '[schedules.consolidation]\nevery = "6h"\nmin_episodes = 4\n[minds.ada.schedules.consolidation]\nevery = "off"\n', "noemad.toml"
    ).config
    ada, bob = schedule(config, "ada", "consolidation"), schedule(config, "bob", "consolidation")
    assert (ada.every, ada.min_episodes, ada.window) == ("off", 4, "30d")
    assert (bob.every, bob.min_episodes) == ("6h", 4)
    assert schedule(Config(), "ada", "reflection").every == "1d"
