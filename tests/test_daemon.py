"""The daemon's life: socket, locks, sd_notify, signals, restart, socket activation."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

from conftest import NOEMAD, Noemad, start_noemad
from inprocess import start_app


def test_socket_is_private_in_a_private_directory(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    daemon = start_noemad(home, place / "run" / "s.sock")
    try:
        assert stat.S_IMODE(os.stat(place / "run" / "s.sock").st_mode) == 0o600
        assert stat.S_IMODE(os.stat(place / "run").st_mode) == 0o700
        assert stat.S_IMODE(os.stat(home / "noema.db").st_mode) == 0o600
    finally:
        daemon.stop()


def test_socket_group_gives_0660(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    group = __import__("grp").getgrgid(os.getgid()).gr_name
    (home / "noemad.toml").write_text(f'[daemon]\nsocket_group = "{group}"\n')
    daemon = start_noemad(home, place / "s.sock")
    try:
        st = os.stat(place / "s.sock")
        assert stat.S_IMODE(st.st_mode) == 0o660
        assert st.st_gid == os.getgid()
    finally:
        daemon.stop()


def test_ready_only_once_the_socket_accepts(noemad: Noemad) -> None:
    ready = noemad.wait_notify("READY=1")
    assert "STATUS=serving 0 minds" in ready
    assert f"MAINPID={noemad.proc.pid}" in ready
    # READY came first; the socket must already answer.
    assert noemad.api("GET", "/status").status_code == 200


def test_second_daemon_on_the_same_socket_is_refused(noemad: Noemad, place: Path) -> None:
    other = place / "other"
    other.mkdir()
    second = subprocess.run(
        [NOEMAD], env={**noemad.env, "NOEMA_HOME": str(other), "NOTIFY_SOCKET": ""}, capture_output=True, text=True, timeout=60
    )
    assert second.returncode == 2
    assert "already running on" in second.stderr and str(noemad.socket) in second.stderr
    assert noemad.api("GET", "/status").status_code == 200  # the first one still serves


def test_second_daemon_on_the_same_home_is_refused(noemad: Noemad, place: Path) -> None:
    second = subprocess.run(
        [NOEMAD, "--socket", str(place / "t.sock")],
        env={**noemad.env, "NOTIFY_SOCKET": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 2
    assert "already using" in second.stderr
    assert not (place / "t.sock").exists()


def test_stale_socket_is_replaced(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    sock_path = place / "s.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock_path))
    stale.close()  # the file stays; nobody listens: a crashed daemon's leftover
    daemon = start_noemad(home, sock_path)
    try:
        assert daemon.api("GET", "/status").status_code == 200
    finally:
        daemon.stop()


def test_a_file_that_is_not_a_socket_is_left_alone(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    (place / "s.sock").write_text("precious")
    daemon = start_noemad(home, place / "s.sock", wait=False)
    assert daemon.proc.wait(timeout=60) == 2
    assert "is not a socket" in daemon.stderr()
    assert (place / "s.sock").read_text() == "precious"


def test_sigterm_stops_gracefully_and_removes_the_socket(noemad: Noemad, mind: str) -> None:
    noemad.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "hello"})
    noemad.wait_for(mind, "cycle_completed")
    assert noemad.stop(signal.SIGTERM) == 0
    assert any("STOPPING=1" in m for m in [noemad.wait_notify("STOPPING=1")])
    assert not noemad.socket.exists()
    assert "stopped" in noemad.stderr()


def test_events_survive_a_restart_and_untaken_stimuli_are_resumed(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    first = start_noemad(home, place / "s.sock")
    first.api("POST", "/minds", json={"name": "ada"})
    stored = first.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": "remember me"}).json()
    first.wait_for("ada", "narrative_updated")  # the last event of a turn
    assert first.stop() == 0
    first.notify.close()
    second = start_noemad(home, place / "s.sock")
    try:
        events = second.api("GET", "/minds/ada/events").json()["events"]
        assert [e["kind"] for e in events] == [
            "mind_created", "message", "cycle_started", "memory_created", "attention", "cycle_completed", "narrative_updated"
        ]
        assert events[1]["id"] == stored["id"] and events[1]["text"] == "remember me"
        assert second.api("GET", "/status").json()["counts"]["events"] == 7
    finally:
        second.stop()


def test_stimuli_stored_but_not_taken_are_taken_after_restart(tmp_path: Path) -> None:
    first = start_app(tmp_path)
    first.api("POST", "/minds", json={"name": "ada"})
    first.stop()
    # A stimulus committed by a daemon that died before its turn: written straight to the store.
    import sqlite3

    with sqlite3.connect(tmp_path / "noema.db") as db:
        db.execute(
            "INSERT INTO events (mind, kind, actor, text, data, at) VALUES ('ada', 'message', 'user:alice', 'late', '{}', '2026-01-01T00:00:00Z')"
        )
    second = start_app(tmp_path)  # the engine's start, in process: the same supervisor a daemon starts
    try:
        started = second.wait_for("ada", "cycle_started")
        late = second.api("GET", "/minds/ada/events", params={"kind": "message"}).json()["events"][0]
        assert started["parents"] == [late["id"]]
        assert started["causation_id"] == late["id"]
    finally:
        second.stop()


def test_watchdog_pings_on_the_daemon_clock(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    daemon = start_noemad(home, place / "s.sock", env={"WATCHDOG_USEC": "10000000"})
    try:
        daemon.wait_notify("WATCHDOG=1")
        pings = sum(m.count("WATCHDOG=1") for m in daemon.messages)
        daemon.advance(5)  # half of WATCHDOG_USEC
        daemon.messages.clear()
        daemon.wait_notify("WATCHDOG=1")
        assert pings >= 1
    finally:
        daemon.stop()


def test_socket_activation_takes_the_passed_socket(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    path = place / "act.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    notify_path = home / "notify.sock"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    # systemd sets LISTEN_PID to the service's pid: exec noemad from a process that knows its own.
    launcher = (
        "import os, sys; os.dup2(int(sys.argv[1]), 3); os.environ['LISTEN_PID'] = str(os.getpid()); "
        "os.environ['LISTEN_FDS'] = '1'; os.execv(sys.argv[2], [sys.argv[2]])"
    )
    env = {
        **os.environ,
        "NOEMA_HOME": str(home),
        "NOEMA_SOCKET": str(place / "unused.sock"),
        "NOEMA_CLOCK": "manual",
        "NOTIFY_SOCKET": str(notify_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", launcher, str(listener.fileno()), NOEMAD],
        env=env,
        pass_fds=[listener.fileno()],
        stderr=subprocess.PIPE,
        text=True,
    )
    listener.close()
    daemon = Noemad(home=home, socket=path, proc=proc, notify=notify, env=env)
    try:
        assert f"the socket systemd passed ({path})" in daemon.wait_notify("READY=1")
        # noemactl status names the socket clients really use, not the one noemad would have bound (issue 10).
        assert daemon.ctl_json("status")["socket"] == str(path)
        assert not (place / "unused.sock").exists()
    finally:
        assert daemon.stop() == 0
    assert path.exists()  # systemd owns the socket file; noemad does not remove it


def test_check_config(place: Path) -> None:
    env = {**os.environ, "NOEMA_HOME": str(place)}
    ok = subprocess.run([NOEMAD, "--check-config"], env=env, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0
    assert "# config: embedded defaults" in ok.stdout and "max_hops = 6" in ok.stdout
    (place / "noemad.toml").write_text("[timeline]\nmax_hop = 3\n")
    bad = subprocess.run([NOEMAD, "--check-config"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert "timeline.max_hop: unknown key; did you mean 'timeline.max_hops'?" in bad.stderr
    assert bad.stdout == ""


def test_version() -> None:
    out = subprocess.run([NOEMAD, "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("noemad ")


def test_invalid_config_at_start_refuses_to_start(place: Path) -> None:
    home = place / "home"
    home.mkdir()
    (home / "noemad.toml").write_text("[daemon]\nmax_body_bytes = 12\n")
    daemon = start_noemad(home, place / "s.sock", wait=False)
    assert daemon.proc.wait(timeout=60) == 1
    assert "daemon.max_body_bytes: write a whole number from 1024 to 67108864, not 12." in daemon.stderr()
    assert not (place / "s.sock").exists()
