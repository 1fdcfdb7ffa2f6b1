"""A mind's settings: one typed model for the file and the store, checked at each edge, changed live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import OPERATOR
from inprocess import ME, InProcess, start_app
from noemad.config.files import parse_config
from noemad.config.mind import MindSettings, parse_mind_settings
from noemad.config.schema import with_stored
from noemad.errors import ConfigError, InvalidInput
from noemad.events import latest_events
from noemad.minds import change_settings, create_mind, get_mind, list_minds
from noemad.models.settings import role_settings
from noemad.store import Store
from noemad.store.connection import open_db

NOW = 1_767_225_600.0


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "noema.db")
    yield s
    s.close()


@pytest.mark.parametrize(
    ("settings", "sentence"),
    [
        ({"attention_capacity": "x"}, "settings.attention_capacity: write a whole number from 1 to 16, not 'x'"),
        ({"attention_capacity": 17}, "settings.attention_capacity: write a whole number from 1 to 16, not 17"),
        ({"persona": 42}, "settings.persona: write the system prompt as a non-empty string"),
        ({"narrative_llm": "yes"}, "settings.narrative_llm: write true or false, not 'yes'"),
        ({"notify_proactively": 1}, "settings.notify_proactively: write true or false, not 1"),
        ({"notify_min_confidence": 1.2}, "settings.notify_min_confidence: write a number from 0 to 1, not 1.2"),
        ({"notify_min_salience": True}, "settings.notify_min_salience: write a number from 0 to 1, not True"),
        ({"notify_cooldown": "soon"}, "settings.notify_cooldown: write a number of seconds (0 or more) or a span"),
        ({"notify_cooldown": "400d"}, "settings.notify_cooldown: write at most 365d, not '400d'"),
        ({"notify_cooldwn": 60}, "settings.notify_cooldwn: unknown key; did you mean 'settings.notify_cooldown'?"),
        ({"tone": "dry"}, "settings.tone: unknown key (valid here: persona, attention_capacity,"),
        ({"models": {"respond": {"modle": "m"}}}, "settings.models.respond.modle: unknown key; did you mean 'settings.models.respond.model'?"),
        ({"schedules": {"reflection": {"every": "1s"}}}, "settings.schedules.reflection.every: every must be a span of at least a minute"),
    ],
)
def test_bad_settings_are_refused_with_a_sentence_naming_the_key(settings: dict, sentence: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_mind_settings(settings)
    assert caught.value.detail.startswith(sentence)


def test_the_file_and_the_store_share_one_model_and_its_sentences() -> None:
    loaded = parse_config('[minds.ada]\npersona = "From the file."\nnotify_cooldown = "15m"\n', "noemad.toml").config
    assert loaded.minds["ada"].persona == "From the file." and loaded.minds["ada"].notify_cooldown == 900.0
    with pytest.raises(ConfigError, match=r"minds\.ada\.attention_capacity: write a whole number from 1 to 16, not 'lots'"):
        parse_config('[minds.ada]\nattention_capacity = "lots"\n', "noemad.toml")
    with pytest.raises(ConfigError, match=r"minds\.ada\.persna: unknown key; did you mean 'minds\.ada\.persona'\?"):
        parse_config('[minds.ada]\npersna = "x"\n', "noemad.toml")
    typed = parse_mind_settings({"notify_proactively": True, "notify_min_confidence": 1, "notify_min_salience": 0, "notify_cooldown": "2d"})
    assert (typed.notify_proactively, typed.notify_min_confidence, typed.notify_min_salience, typed.notify_cooldown) == (True, 1.0, 0.0, 172800.0)
    assert [parse_mind_settings({"notify_cooldown": v}).notify_cooldown for v in (0, 90, 2.5, "90s", "15m", "1.5h", " 1h ")] == [
        0, 90, 2.5, 90, 900, 5400, 3600
    ]


def test_stored_settings_win_over_the_file_key_by_key() -> None:
    config = parse_config(
        '[models]\nprovider = "scripted"\n[models.respond]\nmodel = "global"\ntimeout = 30\n'
        '[minds.ada]\npersona = "From the file."\nattention_capacity = 2\n[minds.ada.models.respond]\nmodel = "file"\n',
        "noemad.toml",
    ).config
    stored = parse_mind_settings({"persona": "Stored.", "models": {"respond": {"max_tokens": 99}}})
    running = with_stored(config, {"ada": stored, "bob": parse_mind_settings({"narrative_llm": True}), "eve": MindSettings()})
    ada = running.minds["ada"]
    assert (ada.persona, ada.attention_capacity) == ("Stored.", 2)  # the stored key wins; the file's other keys stay
    respond = role_settings(running, "ada", "respond")
    assert (respond.model, respond.max_tokens, respond.timeout) == ("file", 99, 30)  # tables merge key by key
    assert running.minds["bob"].narrative_llm is True and "eve" not in running.minds
    assert config.minds["ada"].persona == "From the file."  # the file's config is untouched
    # One mind rebuilt over the running config: the others are kept, a forgotten mind falls back to the file.
    again = with_stored(config, {"bob": parse_mind_settings({"attention_capacity": 9})}, ["ada", "bob"], running)
    assert again.minds["ada"].persona == "From the file." and again.minds["bob"].attention_capacity == 9
    assert with_stored(config, {}, ["bob"], running).minds.keys() == {"ada"}


def test_a_change_is_recorded_with_old_and_new_values_and_a_no_op_records_nothing(store: Store) -> None:
    store.writer.run_sync(lambda db: create_mind(db, "ada", {"persona": "Old.", "attention_capacity": 2}, NOW, "operator"))
    patch = {"persona": "New.", "attention_capacity": None, "models": {"respond": {"model": "m"}}}
    mind = store.writer.run_sync(lambda db: change_settings(db, "ada", patch, NOW + 1, "user:alice"))
    assert mind.settings == {"persona": "New.", "models": {"respond": {"model": "m"}}}
    assert mind.parsed.attention_capacity == 4 and mind.parsed.models.respond.model == "m"
    [event] = latest_events(store.reader(), "ada", kinds=("settings_changed",))
    assert event.actor == "user:alice" and event.text == "settings changed: attention_capacity, models.respond.model, persona"
    assert event.data == {
        "changes": {
            "attention_capacity": {"from": 2, "to": None},
            "models.respond.model": {"from": None, "to": "m"},
            "persona": {"from": "Old.", "to": "New."},
        }
    }
    store.writer.run_sync(lambda db: change_settings(db, "ada", {"persona": "New."}, NOW + 2, "operator"))
    store.writer.run_sync(lambda db: change_settings(db, "ada", {"models": {"respond": {"model": None}}}, NOW + 3, "operator"))
    assert get_mind(store.reader(), "ada").settings == {"persona": "New."}  # an emptied table goes
    assert len(latest_events(store.reader(), "ada", kinds=("settings_changed",))) == 2
    with pytest.raises(InvalidInput, match="settings.attention_capacity: write a whole number"):
        store.writer.run_sync(lambda db: change_settings(db, "ada", {"attention_capacity": 0}, NOW, "operator"))
    with pytest.raises(InvalidInput, match="a settings change is a JSON object"):
        store.writer.run_sync(lambda db: change_settings(db, "ada", {}, NOW, "operator"))
    assert get_mind(store.reader(), "ada").settings == {"persona": "New."}


def test_a_stored_row_that_is_no_longer_valid_still_loads_and_says_why(store: Store) -> None:
    store.writer.run_sync(lambda db: create_mind(db, "old", {}, NOW, "operator"))
    legacy = {"tone": "dry", "attention_capacity": "x", "persona": "Kept."}
    raw = open_db(store.path)  # a row written before settings were checked, not through the writer
    with raw.conn:
        raw.execute("UPDATE minds SET settings = ? WHERE name = 'old'", [json.dumps(legacy)])
    raw.close()
    [mind] = list_minds(store.reader())
    assert mind.settings == legacy  # nothing is lost
    assert mind.parsed.persona == "Kept." and mind.parsed.attention_capacity == 4
    assert [p.split(":")[0] for p in mind.problems] == ["settings.tone", "settings.attention_capacity"]
    # A change is checked whole: the bad keys must be set or unset with it.
    with pytest.raises(InvalidInput, match="settings.tone: unknown key"):
        store.writer.run_sync(lambda db: change_settings(db, "old", {"persona": "New."}, NOW, "operator"))
    fixed = store.writer.run_sync(lambda db: change_settings(db, "old", {"tone": None, "attention_capacity": 3}, NOW, "operator"))
    assert fixed.problems == () and fixed.settings == {"attention_capacity": 3, "persona": "Kept."}


def test_a_live_mind_changes_settings_through_the_api_and_the_cli(app: InProcess) -> None:
    app.peer = ME  # the operator the real noemactl is over a real socket
    assert app.api("POST", "/minds", json={"name": "ada", "settings": {"attention_capacity": 1}}).status_code == 201
    bad = app.api("POST", "/minds", json={"name": "bob", "settings": {"persona": 42}})
    assert bad.status_code == 422 and bad.json()["detail"].startswith("settings.persona: write the system prompt")
    app.ctl("trust", "ada", "alice", "0.9")
    claim = {"kind": "assertion", "source": "alice", "claim": {"proposition": "deploys are frozen", "subject": "deploy"}}
    first = app.api("POST", "/minds/ada/events", json=claim).json()
    app.wait_for("ada", "cycle_completed", since=first["id"])

    out = app.ctl("mind", "set", "ada", "attention_capacity", "3")
    assert out.returncode == 0 and out.stdout == 'settings of ada: {"attention_capacity": 3}\n'
    out = app.ctl("mind", "set", "ada", "persona", "You are Ada.")  # not JSON: taken as text
    assert out.returncode == 0
    changed = app.api("GET", "/minds/ada/events", params={"kind": "settings_changed"}).json()["events"]
    assert [e["data"]["changes"] for e in changed] == [
        {"attention_capacity": {"from": 1, "to": 3}},
        {"persona": {"from": None, "to": "You are Ada."}},
    ]
    assert changed[0]["actor"] == OPERATOR

    # The running actor takes the new capacity at its next turn.
    second = app.api("POST", "/minds/ada/events", json={**claim, "claim": {"proposition": "the build is green", "subject": "build"}})
    app.wait_for("ada", "cycle_completed", since=second.json()["id"])
    capacities = [e["data"]["capacity"] for e in app.api("GET", "/minds/ada/events", params={"kind": "attention"}).json()["events"]]
    assert capacities == [1, 3]

    out = app.ctl("mind", "set", "ada", "attention_capacity", "lots")
    assert out.returncode == 2 and "settings.attention_capacity: write a whole number from 1 to 16, not 'lots'" in out.stderr
    out = app.ctl("mind", "set", "ada", "notify_cooldwn", "60")
    assert out.returncode == 2 and "did you mean 'settings.notify_cooldown'?" in out.stderr
    out = app.ctl("mind", "set", "ada")
    assert out.returncode == 2 and "say what to change" in out.stderr
    patched = app.api("PATCH", "/minds/ada", json={"settings": {"persona": None}})
    assert patched.status_code == 200 and patched.json()["settings"] == {"attention_capacity": 3}
    assert app.ctl_json("mind", "set", "ada", "--unset", "attention_capacity")["settings"] == {}
    assert app.api("PATCH", "/minds/zed", json={"settings": {"persona": "x"}}).status_code == 404
    assert app.api("PATCH", "/minds/ada", json={"persona": "x"}).status_code == 422  # the keys go under "settings"
    overview = app.api("GET", "/minds/ada").json()
    assert overview["settings_problems"] == [] and overview["events"] > 0  # its history is all there


def test_the_file_sets_what_the_store_does_not_and_an_old_bad_row_still_loads(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home = tmp_path
    daemon = start_app(home, '[minds.ada]\npersona = "From the file."\nattention_capacity = 2\n')
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada", "settings": {"persona": "Stored."}}).status_code == 201
        overview = daemon.api("GET", "/minds/ada").json()
        assert overview["settings"] == {"persona": "Stored."}
        assert overview["settings_in_force"] == {"persona": "Stored.", "attention_capacity": 2}
        assert "in force  {\"attention_capacity\": 2, \"persona\": \"Stored.\"}" in daemon.ctl("mind", "show", "ada").stdout
        daemon.ctl("mind", "set", "ada", "--unset", "persona")
        assert daemon.api("GET", "/minds/ada").json()["settings_in_force"] == {"persona": "From the file.", "attention_capacity": 2}
    finally:
        daemon.stop()
    # A row stored before the checks existed: the daemon starts, the mind runs, and says what it left out.
    raw = open_db(home / "noema.db")
    with raw.conn:
        raw.execute("UPDATE minds SET settings = ? WHERE name = 'ada'", [json.dumps({"tone": "dry", "narrative_llm": True})])
    raw.close()
    daemon = start_app(home)  # started again on the same home and its noemad.toml
    try:
        overview = daemon.api("GET", "/minds/ada").json()
        assert overview["settings"] == {"tone": "dry", "narrative_llm": True}
        assert overview["settings_in_force"] == {"persona": "From the file.", "attention_capacity": 2, "narrative_llm": True}
        assert [p.split(":")[0] for p in overview["settings_problems"]] == ["settings.tone"]
        shown = daemon.ctl("mind", "show", "ada").stdout
        assert "settings left out (1): set or unset them with `noemactl mind set`" in shown and "settings.tone: unknown key" in shown
        said = daemon.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": "hello"}).json()
        assert daemon.wait_for("ada", "cycle_completed", since=said["id"])["data"]["stimuli"] == 1
        assert daemon.ctl("mind", "set", "ada", "--unset", "tone").returncode == 0
        assert daemon.api("GET", "/minds/ada").json()["settings_problems"] == []
    finally:
        daemon.stop()
    assert "mind ada: stored settings no longer valid, left out until set or unset: settings.tone: unknown key" in caplog.text
