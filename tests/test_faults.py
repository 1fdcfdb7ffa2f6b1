"""Faults and hostile input (issue 10): what an operator or a stranger can throw at noemad and noemactl.

Stored text carrying terminal controls, a reader that closes the pipe early,
a FIFO where noemad.toml belongs, request heads without end, a second and a
third stop signal, the demo's Ctrl-C, and the systemd units (the socket
systemd passed, as `status` reports it, is checked in test_daemon.py). Each
test runs the real `noemad` or `noemactl` where only they can show the fault;
waits are on the daemon's own signals (sd_notify, the event stream), each
bounded.
"""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pty
import pwd
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import NOEMACTL, NOEMAD, START, Noemad, own_noemad

from noemad.config.files import load_config
from noemad.errors import ConfigError

TIMEOUT = 30.0  # seconds: a bound on a hung process, never a wait for time to pass
ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "PWNED \x1b[2J\x1b]0;title\x07 end \x9b31m"
HOSTILE_AUTHOR = "mal\x1b[31mlory"


def _no_controls(text: str) -> None:
    """No ESC, CSI or other control character but newline and tab reaches the terminal."""
    bad = sorted({hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0})
    assert not bad, f"control characters {bad} in {text!r}"


# 5. terminal control sequences from stored text -------------------------------------


@pytest.fixture(scope="module")
def shared() -> Iterator[Noemad]:
    """One daemon for the tests that only read: the hostile mind's views, and request heads it refuses."""
    with own_noemad() as running:
        yield running


@pytest.fixture(scope="module")
def hostile(shared: Noemad) -> str:
    """A mind `sec` whose first message (and its author) carries terminal controls, walked through a cycle."""
    assert shared.api("POST", "/minds", json={"name": "sec"}).status_code == 201
    # A name holding a control character is refused at the edge (noemad.names); the text is free and is stored.
    refused = shared.api("POST", "/minds/sec/events", json={"kind": "message", "author": HOSTILE_AUTHOR, "text": HOSTILE})
    assert refused.status_code == 422 and "control character U+001B" in refused.json()["detail"]
    sent = shared.api("POST", "/minds/sec/events", json={"kind": "message", "author": "mallory", "text": HOSTILE})
    assert sent.status_code == 201, sent.text
    shared.wait_for("sec", "narrative_updated")
    return "sec"


def test_stored_control_sequences_are_shown_not_obeyed(shared: Noemad, hostile: str) -> None:
    message = shared.ctl_json("events", hostile, "--kind", "message")["events"][0]
    views = [
        ("events", hostile),
        ("memories", hostile),
        ("narrative", hostile),
        ("mind", "show", hostile),
        ("timeline", str(message["id"])),
        ("timeline", str(message["id"]), "--dot"),
        ("mind", "show", "no\x1b[2Jsuch"),  # an error sentence echoing the name
    ]
    for args in views:
        out = shared.ctl(*args)
        _no_controls(out.stdout)
        _no_controls(out.stderr)
    events = shared.ctl("events", hostile).stdout
    assert "PWNED ␛[2J␛]0;title end \\x9b31m" in events
    assert "no␛[2Jsuch" in shared.ctl("mind", "show", "no\x1b[2Jsuch").stderr


def test_json_keeps_the_bytes_as_json_escapes(shared: Noemad, hostile: str) -> None:
    out = shared.ctl("--json", "events", hostile, "--kind", "message")
    assert out.returncode == 0, out.stderr
    _no_controls(out.stdout)  # C0 is escaped by JSON itself, C1 by noemactl: the same value
    assert "\\u009b" in out.stdout
    event = json.loads(out.stdout)["events"][0]
    assert event["text"] == HOSTILE
    assert "mallory" in event["actor"]


def test_on_a_terminal_styles_stay_and_stored_controls_do_not(shared: Noemad, hostile: str) -> None:
    """On a terminal rich writes its own colour codes; the ones from the mind's text are still only shown."""
    controller, terminal = pty.openpty()
    try:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update({"NOEMA_SOCKET": str(shared.socket), "TERM": "xterm-256color", "COLUMNS": "200"})
        proc = subprocess.Popen([NOEMACTL, "events", hostile], stdout=terminal, stderr=terminal, env=env)
        os.close(terminal)
        terminal = -1
        chunks = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        if terminal >= 0:
            os.close(terminal)
        os.close(controller)
    shown = b"".join(chunks).decode()
    assert "\x1b[" in shown  # rich's styles
    for obeyed in ("\x1b[2J", "\x1b]0;", "\x07", "\x1b[31mlory", "\x9b"):
        assert obeyed not in shown
    assert "␛[2J" in shown


# 3. a reader that stops early ---------------------------------------------------------


def _into_closed_pipe(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run a command whose stdout's reader has already gone (as `| head -1` does after its line)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=TIMEOUT), err


def test_check_config_piped_into_head_ends_quietly(place: Path) -> None:
    env = {**os.environ, "NOEMA_HOME": str(place)}
    code, err = _into_closed_pipe([NOEMAD, "--check-config"], env)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 0  # the config is valid; the reader only stopped reading
    head = subprocess.run(f"'{NOEMAD}' --check-config | head -1", shell=True, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert head.stdout == "# config: embedded defaults\n"
    assert "Traceback" not in head.stderr


def test_noemactl_piped_into_head_ends_quietly(shared: Noemad, hostile: str) -> None:
    env = {**os.environ, "NOEMA_SOCKET": str(shared.socket), "NO_COLOR": "1"}
    for args in (["events", hostile], ["--json", "events", hostile], ["timeline", "2"], ["timeline", "2", "--dot"], ["status"]):
        code, err = _into_closed_pipe([NOEMACTL, *args], env)
        assert err == "", (args, err)
        assert code == 1, args  # click's answer to a closed stdout: no traceback, no sentence


# 7. a FIFO (or any non-regular file) as noemad.toml -----------------------------------


def _release(fifo: Path) -> None:
    """Open the FIFO's other end, so a reader stuck on it (before the fix) returns."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_config_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "noemad.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")  # would never end
    outcome: list[BaseException | object] = []
    reader = threading.Thread(target=lambda: outcome.append(_attempt(path)), daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    if reader.is_alive():
        _release(path)
        reader.join(TIMEOUT)
        pytest.fail(f"load_config waited on a {kind}")
    assert isinstance(outcome[0], ConfigError)
    what = {"fifo": "a FIFO", "directory": "a directory", "device": "a character device"}[kind]
    assert outcome[0].detail == f"{path} is {what}, not a regular file; noemad reads its config from a regular file only."


@pytest.mark.parametrize("what", ["model script", "API key file"])
def test_a_fifo_as_the_model_script_or_key_file_is_refused_without_waiting(tmp_path: Path, what: str) -> None:
    # Both are read when a reload rebuilds the provider, on the event loop: a FIFO must not block it.
    from noemad.config.models import AnthropicSettings
    from noemad.models.apikey import resolve_api_key
    from noemad.models.scripted import ScriptedProvider

    fifo = tmp_path / "file"
    os.mkfifo(fifo)
    outcome: list[BaseException | object] = []

    def attempt() -> None:
        try:
            if what == "model script":
                outcome.append(ScriptedProvider.from_file(fifo))
            else:
                outcome.append(resolve_api_key(AnthropicSettings(api_key_file=str(fifo)), {}))
        except BaseException as exc:  # the outcome is the assertion
            outcome.append(exc)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    if reader.is_alive():
        _release(fifo)
        reader.join(TIMEOUT)
        pytest.fail(f"reading the {what} waited on a FIFO")
    assert "FIFO" in str(getattr(outcome[0], "detail", outcome[0]))


def _attempt(path: Path) -> BaseException | object:
    try:
        return load_config(path)
    except BaseException as exc:  # the outcome is the assertion
        return exc


def test_a_fifo_put_in_place_of_noemad_toml_is_refused_and_the_api_keeps_answering(noemad: Noemad) -> None:
    config = noemad.home / "noemad.toml"
    os.mkfifo(config)
    try:
        noemad.proc.send_signal(signal.SIGHUP)
        refused = noemad.wait_notify("STATUS=config reload refused")
        assert "is a FIFO, not a regular file" in refused
        with noemad.client as c:  # the loop never waited on the FIFO
            assert c.get("/api/v1/status", timeout=5).status_code == 200
        status = noemad.ctl("status")
        assert "config reload refused" in status.stdout and "is a FIFO, not a regular file" in status.stdout
        assert "still running" in status.stdout
    finally:
        _release(config)


# 8. bounded request heads ---------------------------------------------------------------


def _raw(noemad: Noemad, head: bytes, chunk: int = 1 << 16) -> bytes:
    """Send a request head over a raw connection (in chunks, until the daemon stops reading); return its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(TIMEOUT)
        conn.connect(str(noemad.socket))
        try:
            for start in range(0, len(head), chunk):
                conn.sendall(head[start : start + chunk])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon answered and closed before the head was over
        answer = b""
        while True:
            try:
                data = conn.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            answer += data
    return answer


def _status_line(answer: bytes) -> str:
    return answer.split(b"\r\n", 1)[0].decode()


def test_a_header_line_without_end_is_answered_431(shared: Noemad) -> None:
    head = b"GET /api/v1/status HTTP/1.1\r\nHost: noemad\r\nX-Big: " + b"a" * (4 << 20) + b"\r\nConnection: close\r\n\r\n"
    answer = _raw(shared, head)
    assert _status_line(answer) == "HTTP/1.1 431 Request Header Fields Too Large"
    problem = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert problem["status"] == 431 and "65536 bytes" in problem["detail"]
    assert shared.api("GET", "/status").status_code == 200  # the daemon goes on


def test_too_many_headers_are_answered_431(shared: Noemad) -> None:
    fields = b"".join(b"X-H%d: v\r\n" % i for i in range(20_000))
    answer = _raw(shared, b"GET /api/v1/status HTTP/1.1\r\nHost: noemad\r\n" + fields + b"Connection: close\r\n\r\n")
    assert _status_line(answer) == "HTTP/1.1 431 Request Header Fields Too Large"
    assert "more than 100 header fields" in json.loads(answer.split(b"\r\n\r\n", 1)[1])["detail"]


def test_an_ordinary_head_and_a_large_body_still_pass(noemad: Noemad, mind: str) -> None:
    fields = b"".join(b"X-H%d: v\r\n" % i for i in range(90))
    answer = _raw(noemad, b"GET /api/v1/status HTTP/1.1\r\nHost: noemad\r\n" + fields + b"Connection: close\r\n\r\n")
    assert _status_line(answer) == "HTTP/1.1 200 OK"
    text = "x" * 99_000  # a body larger than the head bound, in one chunk with its head
    sent = noemad.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": text})
    assert sent.status_code == 201, sent.text


# 9. a second signal during a stop -------------------------------------------------------


def _hold_the_stop(noemad: Noemad) -> socket.socket:
    """A request whose body is still coming: the graceful stop waits for it (up to its own bound)."""
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.connect(str(noemad.socket))
    held.sendall(b"POST /api/v1/minds HTTP/1.1\r\nHost: noemad\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    assert noemad.api("GET", "/status").status_code == 200  # answered after the held request was read
    return held


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_during_the_stop_does_not_lose_it(noemad: Noemad, first: int) -> None:
    held = _hold_the_stop(noemad)
    noemad.proc.send_signal(first)
    noemad.wait_notify("STOPPING=1")
    noemad.proc.send_signal(signal.SIGTERM)
    noemad.wait_notify("STATUS=already stopping")
    held.close()  # the stop goes on
    assert noemad.proc.wait(timeout=TIMEOUT) == 0
    log = noemad.stderr()
    assert "SIGTERM: already stopping" in log
    assert log.rstrip().endswith("INFO noemad: stopped")
    assert not noemad.socket.exists()


def test_a_third_signal_forces_the_stop_and_says_so(noemad: Noemad) -> None:
    held = _hold_the_stop(noemad)
    try:
        noemad.proc.send_signal(signal.SIGINT)
        noemad.wait_notify("STOPPING=1")
        noemad.proc.send_signal(signal.SIGTERM)
        noemad.wait_notify("STATUS=already stopping")
        noemad.proc.send_signal(signal.SIGTERM)
        assert noemad.proc.wait(timeout=TIMEOUT) == -signal.SIGTERM
    finally:
        held.close()
    assert "forcing the stop now" in noemad.stderr()


def test_ctrl_c_on_the_demo_stops_the_daemon_cleanly_and_removes_its_home(place: Path) -> None:
    tmp = place / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOEMA_")}
    bin_dir = Path(NOEMAD).parent
    # A manual clock: the demo moves it past its quiet periods (the system clock's path is the same but waits).
    env.update({"TMPDIR": str(tmp), "NO_COLOR": "1", "PATH": f"{bin_dir}:{env.get('PATH', '')}", "NOEMA_CLOCK": f"manual:{START}"})
    demo = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "demo.sh")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    assert demo.stderr is not None
    daemon: int | None = None
    try:
        seen = []
        for line in demo.stderr:
            seen.append(line)
            if m := re.search(r"noemad is running \(pid (\d+)\)", line):
                daemon = int(m.group(1))
            if "Press Ctrl-C here to stop it." in line:
                break
        else:
            pytest.fail("the demo never got going:\n" + "".join(seen))
        assert daemon is not None
        told = "".join(seen)
        assert ": skipped" not in told, told  # every scenario played: the script configured noemad for them all
        # From another terminal: noemactl on PATH, the socket, and the dashboard's address.
        assert f'export PATH="{bin_dir}:$PATH" NOEMA_SOCKET=' in told
        assert re.search(r"The dashboard \(noemactl ui, running until Ctrl-C here\): http://127\.0\.0\.1:\d+/\?token=\S+", told), told
        homes = list(tmp.iterdir())
        assert len(homes) == 1
        os.killpg(demo.pid, signal.SIGINT)  # what Ctrl-C on the terminal does to its foreground job
        rest = demo.stderr.read()
        assert demo.wait(timeout=TIMEOUT) == 130
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            if daemon is not None:  # its own session: the group kill misses it (a demo that ended waited for it)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(daemon, signal.SIGKILL)
    assert "noemad exited with status" not in rest, rest
    assert list(tmp.iterdir()) == []


# 10. systemd units ------------------------------------------------------------------------

UNITS = ROOT / "contrib" / "systemd"


def _render(out: Path, noemad: str = NOEMAD, systemd: int = 254) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_units.py"), "--noemad", noemad, "--out", str(out), "--systemd", str(systemd)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return {p.name: p.read_text() for p in out.iterdir()}


def _directives(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def test_rendered_service_starts_the_installed_noemad_and_waits_for_reloads(tmp_path: Path) -> None:
    assert "/usr/local/bin" not in (UNITS / "noemad.service.in").read_text()
    service = _directives(_render(tmp_path / "new")["noemad.service"])
    assert service["ExecStart"] == [NOEMAD]
    assert service["Type"] == ["notify-reload"] and "ExecReload" not in service
    assert service["MemoryDenyWriteExecute"] == ["yes"]
    assert service["SystemCallFilter"] == ["@system-service", "~@privileged @resources"]
    old = _directives(_render(tmp_path / "old", systemd=252)["noemad.service"])  # Debian 12's systemd
    assert old["Type"] == ["notify"] and old["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    refused = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_units.py"), "--noemad", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert refused.returncode == 1 and "is not an executable file" in refused.stderr


def test_the_socket_group_reaches_the_run_directory_from_boot(tmp_path: Path) -> None:
    """/run/noema is made by tmpfiles.d at boot with the group let through, not root:root 0750 by the socket unit."""
    rendered = _render(tmp_path / "units")
    service = _directives(rendered["noemad.service"])
    socket_unit = _directives(rendered["noemad.socket"])
    entries = [line.split() for line in rendered["noema.conf"].splitlines() if line and not line.startswith("#")]
    assert len(entries) == 1
    kind, path, mode, user, group, _age = entries[0]
    assert (kind, path) == ("d", "/run/noema")
    assert socket_unit["ListenStream"] == ["%t/noema/noemad.sock"]  # %t is /run for the system manager
    assert int(mode, 8) & 0o010, "the group must be able to traverse /run/noema"
    assert not int(mode, 8) & 0o007
    assert (user, group) == (service["User"][0], service["Group"][0]) == (socket_unit["SocketUser"][0], socket_unit["SocketGroup"][0])
    assert int(mode, 8) == int(service["RuntimeDirectoryMode"][0], 8)  # the service's start leaves it as boot made it
    tmpfiles = shutil.which("systemd-tmpfiles")
    if tmpfiles is None:
        pytest.skip("systemd-tmpfiles is not installed: the entry was checked, not applied")
    # Apply the entry under a scratch root, as this user (no noema user here): the mode is what boot makes.
    me, my_group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    conf = tmp_path / "noema.conf"
    conf.write_text(rendered["noema.conf"].replace(f" {user} {group} ", f" {me} {my_group} "))
    root = tmp_path / "root"
    (root / "run").mkdir(parents=True)
    applied = subprocess.run([tmpfiles, f"--root={root}", "--create", str(conf)], capture_output=True, text=True, timeout=TIMEOUT)
    assert applied.returncode == 0, applied.stderr
    made = (root / "run" / "noema").stat()
    assert stat.S_IMODE(made.st_mode) == int(mode, 8)
    assert (made.st_uid, made.st_gid) == (os.getuid(), os.getgid())


def test_systemd_analyze_security_scores_the_service(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    _render(tmp_path)
    done = subprocess.run(
        [analyze, "security", "--offline=true", "--no-pager", "noemad.service"], cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT
    )
    if "Unknown command verb" in done.stderr or "unrecognized option" in done.stderr:
        pytest.skip("this systemd-analyze has no offline security review")
    report = done.stdout
    score = float(re.search(r"Overall exposure level for noemad.service: (\d+\.\d+)", report).group(1))  # type: ignore[union-attr]
    assert score <= 1.5, report
    for wanted in ("MemoryDenyWriteExecute=", "SystemCallFilter=~@privileged", "SystemCallFilter=~@resources", "NoNewPrivileges="):
        assert any(line.startswith("✓ " + wanted) for line in report.splitlines()), f"{wanted} not satisfied:\n{report}"


def _syscall_group(analyze: str, group: str) -> set[str]:
    """The system calls in a systemd syscall group, nested groups expanded."""
    out = subprocess.run([analyze, "syscall-filter", group], capture_output=True, text=True, timeout=TIMEOUT).stdout
    names: set[str] = set()
    for line in out.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        names |= _syscall_group(analyze, item) if item.startswith("@") else {item}
    return names


def test_the_daemon_stays_inside_the_units_syscall_filter_and_never_maps_writable_code(place: Path) -> None:
    """Under strace, a daemon's life (start, a message and its cycle, reads, a reload, a stop) uses only what
    SystemCallFilter= allows, and nothing MemoryDenyWriteExecute= forbids."""
    analyze, strace = shutil.which("systemd-analyze"), shutil.which("strace")
    if analyze is None or strace is None:
        pytest.skip("needs systemd-analyze and strace")
    allowed = _syscall_group(analyze, "@system-service") - _syscall_group(analyze, "@privileged") - _syscall_group(analyze, "@resources")
    # numpy's OpenBLAS (sqlite_utils loads numpy; consolidation counts with it) asks mbind for a NUMA memory policy
    # on its buffers. The unit refuses it with EPERM (SystemCallErrorNumber=) and OpenBLAS goes on without the hint:
    # test_numpy_goes_on_when_the_unit_refuses_mbind proves it.
    allowed |= {"mbind"}
    home = place / "home"
    home.mkdir()
    trace = place / "trace"  # outside the watched config directory
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(home / "notify.sock"))
    env = {
        **os.environ,
        "NOEMA_HOME": str(home),
        "NOEMA_SOCKET": str(place / "s.sock"),
        "NOEMA_CLOCK": "manual:2026-01-01T00:00:00Z",
        "NOTIFY_SOCKET": str(home / "notify.sock"),
    }
    log = open(home / "noemad.log", "w")
    proc = subprocess.Popen([strace, "-f", "-qq", "-o", str(trace), NOEMAD], env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    daemon = Noemad(home=home, socket=place / "s.sock", proc=proc, notify=notify, env=env)
    try:
        ready = daemon.wait_notify("READY=1")
    except AssertionError:
        proc.kill()
        proc.wait()
        if "ptrace" in daemon.stderr() or "Operation not permitted" in daemon.stderr():
            pytest.skip("strace cannot trace here")
        raise
    pid = int(next(line for line in ready.splitlines() if line.startswith("MAINPID="))[8:])
    try:
        assert daemon.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        assert daemon.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "hi"}).status_code == 201
        daemon.wait_for("ada", "cycle_completed")
        assert daemon.ctl("events", "ada").returncode == 0
        (home / "noemad.toml").write_text("[timeline]\nmax_hops = 5\n")
        os.kill(pid, signal.SIGHUP)
        daemon.wait_notify("STATUS=config reloaded")
        os.kill(pid, signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
    used: set[str] = set()
    writable_code = []
    for line in trace.read_text(errors="replace").splitlines():
        call = re.match(r"^\d+\s+(\w+)\(", line)
        if call:
            used.add(call.group(1))
        if re.search(r"^\d+\s+(mmap|mprotect|pkey_mprotect)\(.*PROT_EXEC", line) and (
            "PROT_WRITE" in line or not line.split()[1].startswith("mmap")
        ):
            writable_code.append(line)
    assert used, "strace recorded nothing"
    if os.geteuid() == 0:
        # SQLite running as root hands a new WAL to the database's owner, ignoring failure; the service runs as noema.
        used.discard("fchown")
    assert not used - allowed, f"system calls the unit's SystemCallFilter= refuses: {sorted(used - allowed)}"
    assert not writable_code, writable_code[:5]


# A seccomp filter that refuses mbind with EPERM, as the unit's SystemCallFilter= does, then numpy and the
# consolidation's clustering at work (x86_64: mbind is system call 237).
_REFUSE_MBIND = """
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
prog = [(0x20, 0, 0, 0), (0x15, 0, 1, 237), (0x06, 0, 0, 0x00050000 | 1), (0x06, 0, 0, 0x7FFF0000)]
code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in prog))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(Prog(len(prog), ctypes.cast(code, ctypes.c_void_p)))) == 0  # PR_SET_SECCOMP
import numpy as np
from noemad.background.consolidation.clustering import cluster
a = np.arange(90_000, dtype=np.float64).reshape(300, 300)
assert (a @ a).shape == (300, 300)
sets = [{"deploy", "kubernetes", f"service{i % 3}"} for i in range(30)] + [{"lunch", "pizza"} for _ in range(5)]
print(sorted(len(c.members) for c in cluster(sets, 3)))
"""


def test_numpy_goes_on_when_the_unit_refuses_mbind() -> None:
    """The unit refuses mbind (in @resources); numpy's OpenBLAS asks for it as a hint and carries on without it."""
    import platform

    strace = shutil.which("strace")
    if platform.machine() != "x86_64" or strace is None:
        pytest.skip("needs x86_64 (the filter names mbind by number) and strace")
    done = subprocess.run(
        [strace, "-f", "-qq", "-e", "trace=mbind", sys.executable, "-c", _REFUSE_MBIND],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT,
    )
    if "Operation not permitted" in done.stderr and "PTRACE" in done.stderr.upper():
        pytest.skip("strace cannot trace here")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mbind(" in done.stderr and "EPERM" in done.stderr  # it asked, and was refused
    assert done.stdout.strip() == "[5, 30]"
