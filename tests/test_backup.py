"""Backups: `noemactl backup PATH` against a real noemad, taken while it writes, and the documented restore."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import Noemad, start_noemad
from noemad.errors import BackupFailed, BackupRunning
from noemad.store import backup as backups


def say(noemad: Noemad, text: str) -> None:
    r = noemad.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": text})
    assert r.status_code == 201, r.text


def count_events(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])


def test_backup_writes_a_private_verified_copy_and_refuses_to_overwrite(noemad: Noemad, mind: str, place: Path) -> None:
    for i in range(5):
        say(noemad, f"message {i}")
    target = place / "ada.sqlite"
    out = noemad.ctl("backup", str(target))
    assert out.returncode == 0, out.stderr
    total = noemad.api("GET", "/status").json()
    events = count_events(target)
    assert out.stdout.startswith(f"backed up {events} events of 1 mind (") and out.stdout.rstrip().endswith(f"to {target}; integrity ok")
    assert events >= 6  # the mind's creation and five messages, at least
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not list(target.parent.glob("*.part"))
    assert not list(noemad.home.glob(".backup-*"))  # the daemon's snapshot is gone once sent
    with sqlite3.connect(f"file:{target}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        texts = [r[0] for r in conn.execute("SELECT text FROM events WHERE kind = 'message' ORDER BY id")]
    assert texts == [f"message {i}" for i in range(5)]
    assert total["minds"]  # the daemon still answers

    again = noemad.ctl("backup", str(target))
    assert again.returncode != 0 and f"{target} exists; give another path, or --force to replace it" in again.stderr
    say(noemad, "one more")
    forced = noemad.ctl_json("backup", str(target), "--force")
    assert forced["events"] == count_events(target) > events and forced["integrity"] == "ok"
    assert forced["migration"].startswith("m0")
    into_dir = noemad.ctl("backup", str(place))
    assert into_dir.returncode != 0 and "is a directory; give a file path" in into_dir.stderr


def test_a_backup_taken_during_heavy_ingest_is_consistent(noemad: Noemad, mind: str, place: Path) -> None:
    stop = threading.Event()
    stored: list[int] = []

    def ingest() -> None:
        with noemad.client as c:
            i = 0
            while not stop.is_set():
                r = c.post("/api/v1/minds/ada/events", json={"kind": "observation", "source": "probe", "text": f"reading {i}"})
                assert r.status_code == 201
                stored.append(int(r.json()["id"]))
                i += 1

    writers = [threading.Thread(target=ingest) for _ in range(2)]
    for t in writers:
        t.start()
    try:
        while len(stored) < 50:
            threading.Event().wait(0.01)  # a real daemon on the wall clock: wait for writes to be under way
        before = max(stored)
        target = place / "busy.sqlite"
        out = noemad.ctl_json("backup", str(target))
        after = max(stored)
    finally:
        stop.set()
        for t in writers:
            t.join()
    with sqlite3.connect(f"file:{target}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        ids = [r[0] for r in conn.execute("SELECT id FROM events ORDER BY id")]
        # One snapshot: every acknowledged observation up to some point and none after it, no gaps.
        readings = [r[0] for r in conn.execute("SELECT id FROM events WHERE kind = 'observation' ORDER BY id")]
    assert out["events"] == len(ids)
    assert before <= max(ids) <= after + 100
    assert readings == sorted(i for i in stored if i <= max(readings))


def test_the_documented_restore_brings_the_store_back(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    first = start_noemad(home, place / "s.sock")
    try:
        assert first.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        say(first, "before the backup")
        target = place / "keep.sqlite"
        assert first.ctl("backup", str(target)).returncode == 0
        say(first, "after the backup")
        database = Path(first.api("GET", "/status").json()["database"])
    finally:
        first.stop()
        first.notify.close()
    # The README's restore: stop noemad, put the backup in place of the database, remove -wal and -shm, start it.
    os.replace(target, database)
    for extra in ("-wal", "-shm"):
        Path(str(database) + extra).unlink(missing_ok=True)
    second = start_noemad(home, place / "s.sock")
    try:
        texts = [e["text"] for e in second.api("GET", "/minds/ada/events", params={"kind": "message"}).json()["events"]]
        assert texts == ["before the backup"]
        say(second, "after the restore")  # and it writes on
    finally:
        second.stop()
        second.notify.close()


def test_one_backup_at_a_time_and_a_failed_copy_leaves_nothing(tmp_path: Path) -> None:
    from noemad.store import Store

    store = Store(tmp_path / "noema.db")
    try:
        assert backups._running.acquire(blocking=False)
        try:
            with pytest.raises(BackupRunning, match="a backup is already being made"):
                backups.snapshot(store.path, tmp_path / "b.sqlite")
        finally:
            backups._running.release()
        nowhere = tmp_path / "missing" / "b.sqlite"  # a directory that is not there: the copy cannot be written
        with pytest.raises(BackupFailed, match="the backup could not be made: unable to open database"):
            backups.snapshot(store.path, nowhere)
        assert not nowhere.exists()
        made = backups.snapshot(store.path, tmp_path / "b.sqlite")
        assert made.events == 0 and made.minds == 0 and made.migration.startswith("m0")
    finally:
        store.close()


def test_the_api_answers_409_while_a_backup_is_being_made(app: Any) -> None:
    assert backups._running.acquire(blocking=False)
    try:
        r = app.api("GET", "/backup")
    finally:
        backups._running.release()
    assert r.status_code == 409 and "a backup is already being made" in r.json()["detail"]
    ok = app.api("GET", "/backup")
    assert ok.status_code == 200 and ok.headers["content-type"] == "application/vnd.sqlite3"
    assert ok.content.startswith(b"SQLite format 3\x00") and int(ok.headers["x-noema-minds"]) == 0
