"""The listening socket: bound by noemad itself, or handed over by systemd.

noemad binds its Unix socket with mode 0600 (0660 and a group with
`socket_group`) inside a 0700 directory it creates; uvicorn's own `--uds`
would leave it world-writable. A lock file beside the socket makes sure a
live daemon is never displaced: a second one exits with a clear message, and
a stale socket file left by a crash is replaced.
"""

from __future__ import annotations

import errno
import fcntl
import grp
import os
import socket
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from noemad.errors import DaemonError, SocketInUse

SD_LISTEN_FDS_START = 3
_MAX_UNIX_PATH = 107  # sun_path holds 108 bytes with the terminating NUL


@dataclass
class Listener:
    """A bound, listening socket and how to clean it up."""

    sock: socket.socket
    path: Path | None  # None when systemd owns the socket file
    activated: bool
    _lock_fd: int | None = None

    def close(self) -> None:
        """Close the socket and, if noemad bound it, remove its file."""
        self.sock.close()
        if self.path is not None and not self.activated:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def activated_socket(env: Mapping[str, str] | None = None) -> socket.socket | None:
    """The socket systemd passed in `LISTEN_FDS`, if it was meant for this process."""
    env = os.environ if env is None else env
    if env.get("LISTEN_PID") != str(os.getpid()):
        return None
    count = int(env.get("LISTEN_FDS", "0") or 0)
    if count < 1:
        return None
    if count > 1:
        raise DaemonError(f"systemd passed {count} sockets; noemad.socket should declare exactly one ListenStream=")
    sock = socket.socket(fileno=SD_LISTEN_FDS_START)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        raise DaemonError("the socket systemd passed is not a Unix stream socket; use ListenStream=/path in noemad.socket")
    os.set_inheritable(SD_LISTEN_FDS_START, False)
    return sock


def socket_name(sock: socket.socket) -> str | None:
    """The path a Unix socket is bound to (`@name` for an abstract one), or None if unnamed."""
    name = sock.getsockname()
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not isinstance(name, str) or not name:
        return None
    return "@" + name[1:] if name.startswith("\0") else name


def take_lock(path: Path, busy: str) -> int:
    """Hold an exclusive lock on `path` for the life of the process, or raise `SocketInUse(busy)`."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise SocketInUse(busy) from None
        raise
    return fd


def _socket_is_live(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError:
        return False
    finally:
        probe.close()
    return True


def bind_socket(path: Path, group: str | None = None) -> Listener:
    """Bind and listen on `path`, refusing to displace a live daemon."""
    if len(os.fsencode(path)) > _MAX_UNIX_PATH:
        raise DaemonError(f"socket path {path} is longer than {_MAX_UNIX_PATH} bytes; choose a shorter --socket")
    directory = path.parent
    if not directory.exists():
        directory.mkdir(parents=True, mode=0o700)
        if group is not None:
            # The group needs to reach the socket through its directory.
            os.chown(directory, -1, grp.getgrnam(group).gr_gid)
            directory.chmod(0o710)
    lock_fd = take_lock(
        path.with_name(path.name + ".lock"),
        f"another noemad is already running on {path}; stop it first, or start this one with another --socket",
    )
    try:
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise DaemonError(f"{path} exists and is not a socket; move it away or choose another --socket")
            if _socket_is_live(path):
                raise SocketInUse(f"another process is serving {path}; stop it first or pass another --socket")
            path.unlink()  # stale: left by a daemon that died
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # the file is born 0600: no window where others can connect
        try:
            sock.bind(str(path))
        finally:
            os.umask(old_umask)
        if group is not None:
            os.chown(path, -1, grp.getgrnam(group).gr_gid)
            path.chmod(0o660)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        os.close(lock_fd)
        raise
    return Listener(sock=sock, path=path, activated=False, _lock_fd=lock_fd)
