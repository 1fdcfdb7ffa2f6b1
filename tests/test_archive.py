"""Archiving a mind's old events, in process: what goes, what stays and why, the cuts the timeline shows, the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from inprocess import InProcess

DAY = 86400.0


def say(app: InProcess, mind: str, text: str, author: str = "alice") -> int:
    answer = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": author, "channel": "cli", "text": text})
    assert answer.status_code == 201, answer.text
    app.settle(mind)
    return int(answer.json()["id"])


def assert_claim(app: InProcess, mind: str, proposition: str) -> int:
    body = {"kind": "assertion", "source": "alice", "claim": {"proposition": proposition, "subject": "deploy"}}
    answer = app.api("POST", f"/minds/{mind}/events", json=body)
    assert answer.status_code == 201, answer.text
    app.settle(mind)
    return int(answer.json()["id"])


def events(app: InProcess, mind: str) -> list[dict[str, Any]]:
    answer = app.api("GET", f"/minds/{mind}/events", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["events"])


def archive(app: InProcess, mind: str, older_than: str, dry_run: bool = False) -> dict[str, Any]:
    answer = app.api("POST", f"/minds/{mind}/archive", json={"older_than": older_than, "dry_run": dry_run})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def old_and_new(app: InProcess, mind: str) -> tuple[list[int], list[int], int]:
    """Three messages and a claim 60 days back, then a message today: (old stimuli, new stimuli, the claim)."""
    old = [say(app, mind, f"old note {n}") for n in range(3)]
    claim = assert_claim(app, mind, "deploys are frozen on fridays")
    app.advance(60 * DAY)
    new = [say(app, mind, "a new note")]
    settle_jobs(app)
    return old, new, claim


def settle_jobs(app: InProcess) -> None:
    """Wait until every reflection and consolidation due now has run: what they write cites old events too.

    The scheduler's own tick may come after a look at the jobs, so the test ticks it too, until nothing is due.
    """
    while True:
        for job in app.api("GET", "/jobs").json()["jobs"]:
            app.wait_job(job["id"])
        if not app.run(app.sup.scheduler.tick()):
            running = [j for j in app.api("GET", "/jobs").json()["jobs"] if j["status"] == "running"]
            if not running:
                return


def test_a_dry_run_counts_what_would_go_and_writes_nothing(app: InProcess, mind: str) -> None:
    old_and_new(app, mind)
    before = events(app, mind)
    dry = archive(app, mind, "45d", dry_run=True)
    assert dry["dry_run"] is True and "archive" not in dry
    assert dry["events"] > 0 and dry["pinned"] > 0
    assert events(app, mind) == before
    assert app.api("GET", f"/minds/{mind}/archives").json() == []
    done = archive(app, mind, "45d")
    assert (done["events"], done["pinned"], done["in_kept_cycles"], done["cuts"]) == (dry["events"], dry["pinned"], dry["in_kept_cycles"], dry["cuts"])


def test_old_events_move_to_the_file_and_what_the_mind_stands_on_stays(app: InProcess, mind: str) -> None:
    old, new, claim = old_and_new(app, mind)
    stored = {e["id"]: e for e in events(app, mind)}
    done = archive(app, mind, "45d")
    kept = {e["id"]: e for e in events(app, mind)}
    gone = sorted(set(stored) - set(kept))
    assert done["events"] == len(gone) > 0
    assert sum(done["by_kind"].values()) == len(gone)
    # the old messages went; the claim is a belief's evidence, so it stays; today's stimulus stays
    assert set(old) <= set(gone)
    assert claim in kept and set(new) <= set(kept)
    # every archived event is in the file, whole, and nothing else is
    path = Path(done["archive"]["path"])
    assert path.parent == app.paths.data_dir / "archives"
    assert path.stat().st_mode & 0o777 == 0o600
    assert not Path(f"{path}-wal").exists()  # the file stands alone once the run is over
    with sqlite3.connect(path) as conn:
        in_file = {row[0]: row for row in conn.execute("SELECT id, kind, text, data FROM events")}
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert sorted(in_file) == gone
    assert [in_file[i][1:3] for i in gone] == [(stored[i]["kind"], stored[i]["text"]) for i in gone]
    # the run is listed, and recorded on the mind's log
    listed = app.api("GET", f"/minds/{mind}/archives").json()
    assert [a["events"] for a in listed] == [len(gone)] and listed[0]["finished_at"]
    recorded = [e for e in events(app, mind) if e["kind"] == "events_archived"]
    assert recorded[-1]["data"]["finished"] is True and recorded[-1]["data"]["events"] == len(gone)
    # the store still holds together
    db = sqlite3.connect(app.paths.db_file)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_an_archived_event_says_where_it_went_and_its_timeline_is_walked_in_the_file(app: InProcess, mind: str) -> None:
    old, _, _ = old_and_new(app, mind)
    done = archive(app, mind, "45d")
    answer = app.api("GET", f"/events/{old[0]}")
    assert answer.status_code == 404
    assert "archived" in answer.json()["detail"] and done["archive"]["path"] in answer.json()["detail"]
    chain = app.api("GET", f"/events/{old[0]}/chain")
    assert chain.status_code == 200, chain.text
    walked = chain.json()
    assert walked["archive"] == done["archive"]["path"]
    assert old[0] in [n["id"] for n in walked["nodes"]]
    assert any(n["kind"] == "cycle_started" for n in walked["nodes"])  # the cycle that took it went with it


def test_a_kept_event_linked_to_an_archived_one_shows_the_cut(app: InProcess, mind: str) -> None:
    _, _, claim = old_and_new(app, mind)
    done = archive(app, mind, "45d")
    assert done["cuts"] > 0
    walked = app.api("GET", f"/events/{claim}/chain").json()
    assert "archive" not in walked
    cuts = walked["cuts"]
    assert cuts, walked
    assert {c["path"] for c in cuts} == {done["archive"]["path"]}
    shown = {n["id"] for n in walked["nodes"]}
    for cut in cuts:
        assert cut["event"] in shown and cut["archived"] not in shown
        assert app.api("GET", f"/events/{cut['archived']}").status_code == 404


def test_cycles_keep_counting_after_their_events_are_archived(app: InProcess, mind: str) -> None:
    old_and_new(app, mind)
    cycles = [e["cycle_id"] for e in events(app, mind) if e["kind"] == "cycle_started"]
    archive(app, mind, "45d")
    say(app, mind, "after the archive")
    after = [e["cycle_id"] for e in events(app, mind) if e["kind"] == "cycle_started"]
    assert after[-1] == f"{mind}/{len(cycles) + 1}"
    assert len(set(after)) == len(after)


def test_a_second_run_finds_nothing_new_and_makes_no_file(app: InProcess, mind: str) -> None:
    old_and_new(app, mind)
    archive(app, mind, "45d")
    again = archive(app, mind, "45d")
    assert again["events"] == 0 and "archive" not in again
    assert len(app.api("GET", f"/minds/{mind}/archives").json()) == 1


def test_a_stimulus_no_cycle_has_taken_is_never_archived(app: InProcess, mind: str) -> None:
    assert app.api("POST", f"/minds/{mind}/pause").status_code == 200
    waiting = say(app, mind, "nobody has read me yet")
    app.advance(60 * DAY)
    done = archive(app, mind, "45d")
    assert waiting in {e["id"] for e in events(app, mind)}
    assert done["pinned"] >= 1


def test_spans_younger_than_the_mind_reads_are_refused(app: InProcess, mind: str) -> None:
    for older_than, words in (("1h", "older than 30d"), ("29d", "consolidation window"), ("soon", "not a span")):
        answer = app.api("POST", f"/minds/{mind}/archive", json={"older_than": older_than})
        assert answer.status_code == 422, answer.text
        assert words in answer.json()["detail"]
    assert app.api("POST", f"/minds/{mind}/archive", json={"older_than": 30}).status_code == 422
    assert app.api("POST", "/minds/nobody/archive", json={"older_than": "45d"}).status_code == 404
    assert app.api("GET", "/minds/nobody/archives").status_code == 404


def test_the_dashboard_timeline_names_the_cuts_and_the_archive_walk(app: InProcess, mind: str) -> None:
    old, _, claim = old_and_new(app, mind)
    done = archive(app, mind, "45d")
    path = done["archive"]["path"]
    kept = app.run(app.client.get(f"/events/{claim}/timeline"))
    assert kept.status_code == 200
    assert "Cut by archiving" in kept.text and path in kept.text
    walked = app.run(app.client.get(f"/events/{old[0]}/timeline"))
    assert walked.status_code == 200
    assert f"Event #{old[0]} is archived: this walk ran inside the archive file {path}." in walked.text


def test_a_run_that_fails_part_way_loses_nothing_and_the_next_run_finishes(app: InProcess, mind: str, monkeypatch: Any) -> None:
    from noemad.archive import run

    old, _, _ = old_and_new(app, mind)
    stored = {e["id"] for e in events(app, mind)}
    monkeypatch.setattr(run, "CHUNK_IDS", 8)  # several chunks
    real = run.remove_archived
    calls = 0

    def failing(db: Any, mind: str, ids: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise OSError("injected: the disk went away")
        return real(db, mind, ids)

    monkeypatch.setattr(run, "remove_archived", failing)
    answer = app.api("POST", f"/minds/{mind}/archive", json={"older_than": "45d"})
    assert answer.status_code >= 500
    first = app.api("GET", f"/minds/{mind}/archives").json()
    assert len(first) == 1 and "finished_at" not in first[0] and first[0]["events"] > 0
    after_failure = {e["id"] for e in events(app, mind)}
    moved = stored - after_failure
    assert len(moved) == first[0]["events"]  # only the chunk that committed left the store
    assert set(old) & after_failure  # the failed chunk's old messages are still in the store
    db = sqlite3.connect(app.paths.db_file)
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []

    monkeypatch.setattr(run, "remove_archived", real)
    done = archive(app, mind, "45d")
    assert done["archive"]["id"] == 2 and done["archive"]["finished_at"]
    assert not set(old) & {e["id"] for e in events(app, mind)}
    # every event that left the store is in one of the two files
    held: set[int] = set()
    for listed in app.api("GET", f"/minds/{mind}/archives").json():
        with sqlite3.connect(listed["path"]) as conn:
            held |= {row[0] for row in conn.execute("SELECT id FROM events")}
    assert stored - {e["id"] for e in events(app, mind)} <= held


def test_an_archive_file_that_cannot_be_written_is_a_507_and_the_store_keeps_everything(app: InProcess, mind: str) -> None:
    old_and_new(app, mind)
    stored = events(app, mind)
    (app.paths.data_dir / "archives").write_text("a file where the directory should be")
    answer = app.api("POST", f"/minds/{mind}/archive", json={"older_than": "45d"})
    assert answer.status_code == 507, answer.text
    assert "could not be written" in answer.json()["detail"] and "stay in the store" in answer.json()["detail"]
    assert events(app, mind) == stored
    assert app.api("GET", f"/minds/{mind}/archives").json() == []


def test_event_counts_are_of_events_ever_written_so_they_never_go_back(tmp_path: Path) -> None:
    from inprocess import start_app

    def counted(engine: InProcess) -> tuple[int, str]:
        row = next(m for m in engine.api("GET", "/status").json()["minds"] if m["name"] == "ada")
        metrics = engine.api("GET", "/metrics").text
        line = next(line for line in metrics.splitlines() if line.startswith('noemad_events_total{kind="message"}'))
        return int(row["events"]), line

    app = start_app(tmp_path)
    try:
        assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        old_and_new(app, "ada")
        before = counted(app)
        done = archive(app, "ada", "45d")
        assert done["by_kind"]["message"] == 3
        # the archive's own events are new events: the count moves on by them, never back by what was archived
        after = counted(app)
        assert after[0] >= before[0] and after[1] == before[1]
    finally:
        app.stop()
    again = start_app(tmp_path)
    try:
        assert counted(again) == after
    finally:
        again.stop()


def test_the_daily_archive_runs_once_a_day_for_the_minds_that_have_one(tmp_path: Path) -> None:
    from inprocess import start_app

    config = '[archive]\nolder_than = "45d"\n[minds.bob.archive]\nolder_than = "off"\n'
    app = start_app(tmp_path, config=config)
    try:
        for name in ("ada", "bob"):
            assert app.api("POST", "/minds", json={"name": name}).status_code == 201
        say(app, "ada", "an old note")
        say(app, "bob", "an old note")
        app.advance(60 * DAY)
        settle_jobs(app)
        app.advance(3600)  # the next look
        since = 0
        while not (done := app.wait_for("ada", "events_archived", since))["data"]["finished"]:
            since = done["id"]
        runs = app.api("GET", "/minds/ada/archives").json()
        assert len(runs) == 1 and runs[0]["actor"] == "schedule" and runs[0]["events"] > 0
        assert app.api("GET", "/minds/bob/archives").json() == []
        say(app, "ada", "a note today")
        app.advance(3600)  # within the day: no second run
        assert len(app.api("GET", "/minds/ada/archives").json()) == 1
    finally:
        app.stop()


def test_a_daily_archive_younger_than_a_day_is_refused_in_the_config(tmp_path: Path) -> None:
    from noemad.config.schema import Config
    import pytest

    with pytest.raises(ValueError, match="at least a day"):
        Config.model_validate({"archive": {"older_than": "2h"}})
    with pytest.raises(ValueError, match="at least a day"):
        Config.model_validate({"minds": {"ada": {"archive": {"older_than": "30m"}}}})


def test_an_archive_file_moved_away_is_named_when_its_events_are_asked_for(app: InProcess, mind: str) -> None:
    old, _, _ = old_and_new(app, mind)
    done = archive(app, mind, "45d")
    Path(done["archive"]["path"]).rename(app.paths.data_dir / "elsewhere.sqlite")
    answer = app.api("GET", f"/events/{old[0]}/chain")
    assert answer.status_code == 404
    assert "is no longer there; put the file back" in answer.json()["detail"] and done["archive"]["path"] in answer.json()["detail"]


LINKS_SQL = """
SELECT id, causation_id, 'caused' FROM events WHERE causation_id IS NOT NULL
UNION SELECT event_id, parent_id, 'parent' FROM event_parents
UNION SELECT event_id, ref_id, 'cited' FROM event_refs WHERE ref_type = 'event'
UNION SELECT r.event_id, (SELECT max(w.id) FROM events w WHERE w.subject_type = r.ref_type AND w.subject_id = r.ref_id
                           AND w.id < r.event_id), 'cited'
  FROM event_refs r WHERE r.ref_type IN ('memory', 'belief')
"""


def test_every_link_between_a_kept_and_an_archived_event_is_a_cut_and_nothing_else_is(app: InProcess, mind: str) -> None:
    # A day apart, so the daily consolidation generalises them: their stimuli become a belief's evidence and stay.
    for n in range(4):
        say(app, mind, f"the deploy of service {n} went out at 10:00")
        app.advance(DAY)
        settle_jobs(app)
    old_and_new(app, mind)
    snapshot = app.paths.data_dir / "before.sqlite"
    with sqlite3.connect(app.paths.db_file) as conn:
        conn.execute("VACUUM INTO ?", [str(snapshot)])
    done = archive(app, mind, "45d")
    before = sqlite3.connect(snapshot)
    after = sqlite3.connect(app.paths.db_file)
    kept = {row[0] for row in after.execute("SELECT id FROM events")}
    gone = {row[0] for row in before.execute("SELECT id FROM events")} - kept
    links = [(source, target, kind) for source, target, kind in before.execute(LINKS_SQL) if target is not None]
    expected = set()
    for source, target, kind in links:  # source links to the older target
        if source in kept and target in gone:
            expected.add((source, target, kind, "cause"))
        elif source in gone and target in kept:
            expected.add((target, source, kind, "consequence"))
    recorded = set(after.execute("SELECT event_id, archived_id, link, side FROM event_cuts"))
    assert recorded == expected
    assert len(recorded) == done["cuts"] > 0
    # the history has every kind of cut: a kept stimulus whose cycle went, a kept turn that cited what went
    assert {("caused", "consequence"), ("parent", "consequence"), ("cited", "consequence"), ("cited", "cause")} <= {c[2:] for c in recorded}
    # and the archived events' own links are whole in the file
    with sqlite3.connect(done["archive"]["path"]) as file:
        inside = set(file.execute("SELECT id, causation_id, 'caused' FROM events WHERE causation_id IS NOT NULL UNION SELECT event_id, parent_id, 'parent' FROM event_parents"))
    assert {(s, t, k) for s, t, k in links if s in gone and k in ("caused", "parent")} == inside
