"""The systemd units ship what the daemon relies on."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, comment_prefixes=("#",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(ROOT / "contrib" / "systemd" / name)
    return parser


def test_service_is_notify_type_with_a_watchdog_and_sandbox() -> None:
    service = unit("noemad.service.in")["Service"]
    assert service["Type"] == "notify-reload"  # systemd waits for RELOADING=1 ... READY=1 (see scripts/render_units.py)
    assert int(service["WatchdogSec"]) > 0
    for directive in ("StateDirectory", "RuntimeDirectory", "ConfigurationDirectory"):
        assert service[directive] == "noema"
    for hardening in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "RestrictAddressFamilies", "SystemCallFilter"):
        assert hardening in service


def test_socket_unit_matches_the_daemon_default_path() -> None:
    socket = unit("noemad.socket")["Socket"]
    assert socket["SocketMode"] == "0660"
    # RUNTIME_DIRECTORY=/run/noema makes the daemon's default socket /run/noema/noemad.sock.
    assert socket["ListenStream"] == "%t/noema/noemad.sock"
    assert unit("noemad.service.in")["Unit"]["Requires"] == "noemad.socket"
