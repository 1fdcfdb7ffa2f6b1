"""Render contrib/systemd/ for this machine: `make units`, or `python scripts/render_units.py [--noemad PATH] [--out DIR]`.

The service unit is a template (`noemad.service.in`): ExecStart= needs the
absolute path of the noemad that was installed (a venv, pipx, /usr/local/bin:
each install puts it elsewhere), so it is written here rather than guessed.
The path is the one given, else the noemad on PATH. `Type=notify-reload`
needs systemd 253; for an older systemd (asked of `systemctl --version`, or
given with --systemd) the unit gets `Type=notify` and `ExecReload=` with
SIGHUP instead, which reloads the same way but returns before it is done.
The socket unit and the tmpfiles.d entry are copied as they are.

Standard library only: it runs before anything is installed in a venv.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "contrib" / "systemd"
NOTIFY_RELOAD_SINCE = 253
OLD_RELOAD = "Type=notify\nExecReload=/bin/kill -HUP $MAINPID"
COPIED = ("noemad.socket", "noema.conf")


def systemd_version() -> int | None:
    """The running systemd's version, or None if there is no systemctl to ask."""
    try:
        out = subprocess.run(["systemctl", "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.match(r"systemd (\d+)", out)
    return int(found.group(1)) if found else None


def render_service(template: str, noemad: str, version: int | None) -> str:
    """The service unit with ExecStart= set and, for systemd < 253, the reload spelt the old way."""
    if any(c.isspace() for c in noemad) or not os.path.isabs(noemad):
        raise ValueError(f"ExecStart= needs an absolute path without spaces, not {noemad!r}")
    text = template.replace("@NOEMAD@", noemad)
    if version is not None and version < NOTIFY_RELOAD_SINCE:
        text = re.sub(r"^Type=notify-reload$", OLD_RELOAD, text, flags=re.MULTILINE)
    return text


def render(out: Path, noemad: str, version: int | None) -> list[Path]:
    """Write the units into `out`; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    service = out / "noemad.service"
    service.write_text(render_service((UNITS / "noemad.service.in").read_text(), noemad, version))
    written = [service]
    for name in COPIED:
        shutil.copyfile(UNITS / name, out / name)
        written.append(out / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render noemad's systemd units for this machine.")
    parser.add_argument("--noemad", metavar="PATH", help="the noemad executable (default: the one on PATH)")
    parser.add_argument("--out", metavar="DIR", default=str(ROOT / "build" / "systemd"), help="where to write (default: build/systemd)")
    parser.add_argument("--systemd", metavar="VERSION", type=int, help="the target's systemd version (default: systemctl --version)")
    args = parser.parse_args(argv)
    noemad = args.noemad or shutil.which("noemad")
    if not noemad:
        print("render_units: noemad is not on PATH; install it, or pass --noemad /path/to/noemad (make units NOEMAD=...)", file=sys.stderr)
        return 1
    noemad = os.path.abspath(noemad)
    if not os.access(noemad, os.X_OK):
        print(f"render_units: {noemad} is not an executable file", file=sys.stderr)
        return 1
    version = args.systemd if args.systemd is not None else systemd_version()
    try:
        written = render(Path(args.out), noemad, version)
    except ValueError as exc:
        print(f"render_units: {exc}", file=sys.stderr)
        return 1
    old = version is not None and version < NOTIFY_RELOAD_SINCE
    print(f"wrote {', '.join(str(p) for p in written)}")
    print(f"ExecStart={noemad}; " + (f"systemd {version}: Type=notify with ExecReload= (notify-reload needs {NOTIFY_RELOAD_SINCE})" if old else "Type=notify-reload"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
