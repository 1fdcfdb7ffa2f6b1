"""A real Matrix homeserver for tests: Synapse on loopback, on SQLite in a temporary directory.

`Homeserver.start` writes a config of its own (no federation listener, no key
server, no URL previews, no media repository, presence off: nothing reaches
beyond 127.0.0.1), starts `python -m synapse.app.homeserver` on a free port
and waits for Synapse's own sd_notify `READY=1`, as conftest waits for
noemad's. Accounts are registered by shared secret (the admin API, with its
HMAC); `People` gives tests matrix-nio `AsyncClient`s for them, run on one
event loop in a background thread so the tests stay synchronous.

Rate limits are high unless a module asks for low ones (`Limits`): the 429
test sets `rc_message` low for the mind's account. Start one homeserver per
module (`homeserver` fixture in conftest): it takes 1.3 s on an idle machine, 4.5 s on a
busy one (`started_in`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
from nio import AsyncClient

SERVER_NAME = "test.local"
READY_TIMEOUT = 60.0  # seconds: a bound on a hung homeserver (2 busy cores), not a wait for time to pass
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """Synapse's rate limits for messages: high by default, so only the test that wants 429s meets one."""

    per_second: float = 1000.0
    burst_count: int = 10000


@dataclass(frozen=True)
class Account:
    """A registered Matrix user and its access token."""

    user_id: str
    access_token: str
    device_id: str


def free_port() -> int:
    """A loopback port nothing listens on now (bound once, then released for Synapse)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _config(place: Path, port: int, secret: str, limits: Limits) -> dict[str, Any]:
    high = {"per_second": 1000, "burst_count": 10000}
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(place / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(place / "homeserver.db")}},
        "log_config": str(place / "log.yaml"),
        "media_store_path": str(place / "media"),
        "enable_media_repo": False,
        "url_preview_enabled": False,
        "registration_shared_secret": secret,
        "report_stats": False,
        "bcrypt_rounds": 4,  # registering an account hashes its password: the default 12 rounds cost ~0.3 s of CPU each
        "macaroon_secret_key": secret + "-macaroon",
        "form_secret": secret + "-form",
        "signing_key_path": str(place / "signing.key"),
        # No federation: no key server (the default is matrix.org), no federation listener or sender.
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "send_federation": False,
        "presence": {"enabled": False},
        "enable_metrics": False,
        "rc_message": {"per_second": limits.per_second, "burst_count": limits.burst_count},
        "rc_registration": high,
        "rc_login": {"address": high, "account": high, "failed_attempts": high},
        "rc_joins": {"local": high, "remote": high},
        "rc_joins_per_room": high,
        "rc_invites": {"per_room": high, "per_user": high, "per_issuer": high},
        "rc_room_creation": high,
        "rc_admin_redaction": high,
        "rc_profile": high,
    }


_LOG = """version: 1
formatters:
  precise: {format: '%(asctime)s - %(name)s - %(levelname)s - %(request)s - %(message)s'}
handlers:
  file: {class: logging.FileHandler, formatter: precise, filename: LOGFILE, encoding: utf8}
loggers:
  synapse.storage.SQL: {level: WARNING}
  synapse.access: {level: WARNING}
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


@dataclass
class Homeserver:
    """One running Synapse and the ways to use it: register accounts, restart it, read its log."""

    place: Path
    port: int
    secret: str
    limits: Limits
    proc: subprocess.Popen[bytes] | None = None
    started_in: float = 0.0  # seconds the last start took, up to READY=1

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def create(cls, place: Path, limits: Limits = Limits()) -> Homeserver:
        """Write a fresh homeserver's config, signing key and log config in `place` (not started)."""
        from signedjson.key import generate_signing_key, write_signing_keys

        secret = os.urandom(16).hex()
        server = cls(place=place, port=free_port(), secret=secret, limits=limits)
        (place / "media").mkdir(parents=True, exist_ok=True)
        with open(place / "signing.key", "w") as f:
            write_signing_keys(f, [generate_signing_key("a_test")])
        (place / "log.yaml").write_text(_LOG.replace("LOGFILE", str(place / "homeserver.log")))
        # JSON is YAML: Synapse reads it as its config file.
        (place / "homeserver.yaml").write_text(json.dumps(_config(place, server.port, secret, limits), indent=1))
        return server

    def start(self) -> None:
        """Start Synapse and wait for its READY=1."""
        notify_path = self.place / "notify.sock"
        notify_path.unlink(missing_ok=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
            notify.bind(str(notify_path))
            notify.settimeout(READY_TIMEOUT)
            env = {**os.environ, "NOTIFY_SOCKET": str(notify_path)}
            began = time.monotonic()
            log = open(self.place / "stderr.log", "ab")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "synapse.app.homeserver", "-c", str(self.place / "homeserver.yaml")],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.place,
            )
            log.close()
            while True:
                try:
                    msg = notify.recv(4096)
                except TimeoutError:
                    self.stop()
                    raise AssertionError(f"Synapse sent no READY=1; its log:\n{self.log()}") from None
                if b"READY=1" in msg:
                    break
            self.started_in = time.monotonic() - began

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop Synapse (SIGKILL: as a crash would)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=READY_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        """Stop and start again on the same port and database."""
        self.stop()
        self.start()

    def log(self) -> str:
        parts = [p.read_text(errors="replace") for p in (self.place / "stderr.log", self.place / "homeserver.log") if p.exists()]
        return "\n".join(parts)

    def register(self, localpart: str, admin: bool = False, displayname: str | None = None) -> Account:
        """Register `@localpart:test.local` by shared secret (the admin API's nonce and HMAC-SHA1)."""
        path = "/_synapse/admin/v1/register"
        with httpx.Client(base_url=self.url, timeout=30) as http:
            nonce = http.get(path).raise_for_status().json()["nonce"]
            password = "pw-" + localpart
            mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
            mac.update(b"\x00".join([nonce.encode(), localpart.encode(), password.encode(), b"admin" if admin else b"notadmin"]))
            body = {"nonce": nonce, "username": localpart, "password": password, "admin": admin, "mac": mac.hexdigest()}
            if displayname is not None:
                body["displayname"] = displayname
            got = http.post(path, json=body).raise_for_status().json()
        return Account(user_id=got["user_id"], access_token=got["access_token"], device_id=got["device_id"])


def unlimited(server: Homeserver, user_id: str) -> None:
    """Exempt `user_id` from the homeserver's message rate limits (the admin API, as an admin registered for it)."""
    admin = server.register(f"admin{os.urandom(4).hex()}", admin=True)
    path = f"/_synapse/admin/v1/users/{user_id}/override_ratelimit"
    with httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {admin.access_token}"}) as http:
        http.post(path, json={"messages_per_second": 0, "burst_count": 0}).raise_for_status()


class Loop:
    """An event loop in a background thread, for the async nio clients of synchronous tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="matrix-people", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = READY_TIMEOUT) -> T:
        """Run `coro` on the loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(READY_TIMEOUT)
        self.loop.close()


@dataclass
class People:
    """The people in the rooms: a registered account and a nio client each, on one loop."""

    server: Homeserver
    loop: Loop = field(default_factory=Loop)
    clients: dict[str, AsyncClient] = field(default_factory=dict)
    accounts: dict[str, Account] = field(default_factory=dict)

    def add(self, localpart: str, displayname: str | None = None) -> AsyncClient:
        """Register `localpart` and give its client (token set, no sync run yet)."""
        account = self.server.register(localpart, displayname=displayname)
        self.accounts[localpart] = account

        async def make() -> AsyncClient:
            client = AsyncClient(self.server.url, account.user_id, device_id=account.device_id)
            client.access_token = account.access_token
            client.user_id = account.user_id
            return client

        self.clients[localpart] = client = self.loop.run(make())
        return client

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a client call on the people's loop (`people.run(alice.room_send(...))`)."""
        return self.loop.run(coro)

    def close(self) -> None:
        for client in self.clients.values():
            self.loop.run(client.close())
        self.loop.close()


@contextmanager
def running_homeserver(limits: Limits = Limits()) -> Iterator[Homeserver]:
    """A started Synapse in a fresh temporary directory, stopped and removed afterwards."""
    place = Path(tempfile.mkdtemp(prefix="hs", dir="/tmp"))
    server = Homeserver.create(place, limits)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        if not os.environ.get("NOEMA_KEEP_LOG"):
            shutil.rmtree(place, ignore_errors=True)
