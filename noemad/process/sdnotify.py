"""sd_notify by hand: one datagram to `$NOTIFY_SOCKET` per message.

Outside systemd (no `NOTIFY_SOCKET`) every call is a no-op.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger("noemad.sdnotify")


class Notifier:
    """Sends state changes to systemd's notify socket."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        address = env.get("NOTIFY_SOCKET", "")
        # An address starting with '@' is in the abstract namespace.
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self.watchdog_usec = int(env.get("WATCHDOG_USEC", "0") or 0)
        watchdog_pid = env.get("WATCHDOG_PID")
        if watchdog_pid and watchdog_pid != str(os.getpid()):
            self.watchdog_usec = 0

    @property
    def enabled(self) -> bool:
        return bool(self._address)

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between `WATCHDOG=1` pings: half of `WATCHDOG_USEC`, or None."""
        return self.watchdog_usec / 2_000_000 if self.watchdog_usec > 0 else None

    def notify(self, *lines: str) -> None:
        """Send `KEY=value` lines as one datagram; failures are logged, never raised."""
        if not self._address:
            return
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(self._address)
                sock.sendall("\n".join(lines).encode())
        except OSError as exc:
            log.warning("sd_notify to %s failed: %s", self._address, exc)

    def ready(self, status: str) -> None:
        self.notify("READY=1", f"STATUS={status}", f"MAINPID={os.getpid()}")

    def status(self, status: str) -> None:
        self.notify(f"STATUS={status}")

    def reloading(self, monotonic_usec: int) -> None:
        self.notify("RELOADING=1", f"MONOTONIC_USEC={monotonic_usec}")

    def stopping(self) -> None:
        self.notify("STOPPING=1", "STATUS=stopping")

    def watchdog(self) -> None:
        self.notify("WATCHDOG=1")
