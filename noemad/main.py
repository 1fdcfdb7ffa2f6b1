"""`noemad`: run the daemon in the foreground, or check its config."""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

from noemad import __version__
from noemad.clock import SystemClock, clock_from_spec
from noemad.config.files import LoadedConfig, config_notes, load_config, render_config
from noemad.config.daemon import LOG_LEVELS
from noemad.config.schema import Config
from noemad.errors import ConfigError, NoemaError
from noemad.paths import Paths, resolve_paths
from noemad.process.logs import setup_logging
from noemad.runtime.loglevel import LogLevel

EXIT_CONFIG = 1
EXIT_RUNTIME = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; also the source of noemad's man page synopsis."""
    parser = argparse.ArgumentParser(
        prog="noemad",
        description="The Noema daemon: holds minds in SQLite and serves noemactl over a Unix socket. "
        "Runs in the foreground (systemd style); stop it with SIGTERM or Ctrl-C, reload its config with SIGHUP.",
    )
    parser.add_argument("--version", action="version", version=f"noemad {__version__}")
    parser.add_argument(
        "--check-config", action="store_true", help="validate the config, print the effective settings and exit (0 valid, 1 not)"
    )
    parser.add_argument("--home", metavar="DIR", help="keep config, data and socket under DIR (or set NOEMA_HOME)")
    parser.add_argument("--socket", metavar="PATH", help="serve on this Unix socket (or set NOEMA_SOCKET)")
    parser.add_argument("--config", metavar="FILE", help="read this config file instead of noemad.toml in the config directory")
    parser.add_argument(
        "--log-level", choices=LOG_LEVELS, help="override daemon.log_level from the config"
    )
    parser.add_argument(
        "--log-format",
        choices=["plain", "json"],
        default="plain",
        help="plain lines for journald (the default), or one JSON object a line (time, level, logger, message, extra fields) for log shippers",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    restore = commands.add_parser(
        "restore",
        help="restore the store from its replica ([replica] in noemad.toml), before noemad starts on a new host",
        description="Fetch the store from its Litestream replica (the newest state, or the state at --at), check its integrity"
        " and put it in place. Refuses to overwrite a store, and to run while a noemad uses the data directory.",
    )
    restore.add_argument("--from-replica", action="store_true", required=True, help="restore from the replica [replica] names")
    restore.add_argument("--at", metavar="TIME", help="the state at this time (ISO 8601, e.g. 2026-05-01T12:00:00Z), not the newest")
    restore.add_argument("--to", metavar="PATH", help="write the store here instead of the data directory's (e.g. to look at it first)")
    # Also after the command word: `noemad restore --from-replica --home DIR` reads as it is typed.
    restore.add_argument("--home", metavar="DIR", default=argparse.SUPPRESS, help="the home whose config and data directory to use")
    restore.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help="read this config file instead of noemad.toml")
    return parser


def _restore(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    """`noemad restore --from-replica`: the store back from its replica, verified, in place; exit 0, or 1 with a sentence."""
    from noemad.clock import parse_iso
    from noemad.process.listener import take_lock
    from noemad.store.replica.restore import restore

    if config.replica is None:
        print(f"noemad: {paths.config_file} has no [replica]; add the one the lost host had (its url and credentials), then run this again", file=sys.stderr)
        return EXIT_CONFIG
    try:
        at = parse_iso(args.at) if args.at else None
    except ValueError:
        print(f"noemad: --at {args.at!r} is not a time; give ISO 8601 such as 2026-05-01T12:00:00Z", file=sys.stderr)
        return EXIT_CONFIG
    target = Path(args.to).expanduser().absolute() if args.to else paths.db_file
    lock: int | None = None
    try:
        if target == paths.db_file:  # held while restoring: no noemad starts on a half-restored store
            paths.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = take_lock(
                paths.data_dir / "noemad.lock",
                f"a noemad is running on {paths.data_dir}; a restore never replaces a live store. Stop it first, or restore elsewhere with --to PATH",
            )
        made = restore(config.replica, paths.db_file, target, at)
    except NoemaError as exc:
        print(f"noemad: {exc.detail}", file=sys.stderr)
        return EXIT_RUNTIME
    finally:
        if lock is not None:
            os.close(lock)
    when = f"as of {made.at}" if made.at else "newest state"
    _print_to_reader(
        f"restored {made.events} events of {made.minds} mind{'' if made.minds == 1 else 's'} ({made.size:,} bytes, migration {made.migration})"
        f" from {config.replica.url} ({when}) to {made.path} in {made.seconds:.1f}s; integrity ok\n"
    )
    return 0


def _check_provider(config: Config) -> None:
    """Build the configured model provider once, so --check-config catches what start-up would."""
    from noemad.models.gateway import build_provider

    provider = build_provider(config.models, SystemClock())  # built to be checked, never called
    if provider is not None:
        asyncio.run(provider.aclose())


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop when it is installed (less CPU per request), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _print_to_reader(text: str) -> None:
    """Write `text` on stdout; a reader that stops early (`| head -1`) ends the output quietly."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # What the reader read stands; the interpreter's own flush at exit must not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def level_source_of(loaded: LoadedConfig) -> str:
    """Where the config's log level came from: the file when it sets one, else the default."""
    return "noemad.toml" if "log_level" in loaded.config.daemon.model_fields_set else "default"


def _import_sqlite_utils_without_numpy() -> None:
    """Import sqlite_utils without letting it import numpy: a tenth of the daemon's start, for nothing it serves.

    sqlite_utils imports numpy, when it is installed, only to map numpy's number
    types to column types when it infers a table from values; noemad gives it
    Python values only. numpy is imported where noemad itself uses it
    (consolidation, writing many links or evidence items at once), on first use.
    """
    if "sqlite_utils" in sys.modules or "numpy" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` raises ImportError while this stands
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["numpy"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `noemad` console script."""
    args = build_parser().parse_args(argv)
    paths = resolve_paths(home=args.home, socket=args.socket, config=args.config)
    try:
        loaded = load_config(paths.config_file)
    except NoemaError as exc:
        fix = "" if args.check_config else " Fix the file and start noemad again."
        print(f"noemad: {exc.detail}{fix}", file=sys.stderr)
        return EXIT_CONFIG
    if args.command == "restore":
        return _restore(args, paths, loaded.config)
    if args.check_config:
        try:
            _check_provider(loaded.config)
        except NoemaError as exc:
            print(f"noemad: {exc.detail}", file=sys.stderr)
            return EXIT_CONFIG
        # TOML comments, so the output stays a config file; a clamp is seen before the daemon runs.
        notes = "".join(f"# note: {note}\n" for note in config_notes(loaded.config))
        _print_to_reader(
            f"# config: {loaded.source}\n# data:   {paths.data_dir}\n# socket: {paths.socket}\n{notes}{render_config(loaded.config)}\n"
        )
        return 0
    level = args.log_level or loaded.config.daemon.log_level
    level_source = "command line (--log-level)" if args.log_level else level_source_of(loaded)
    # journald timestamps every line itself: plain lines carry none. At DEBUG the SDK and its
    # HTTP client would log whole prompts: they stay at WARNING (noemad.runtime.loglevel).
    setup_logging(level, args.log_format)
    try:
        clock = clock_from_spec(os.environ.get("NOEMA_CLOCK"))
    except ValueError as exc:
        print(f"noemad: {exc}", file=sys.stderr)
        return EXIT_CONFIG

    # Everything start-up builds (the server stack's modules, pydantic schemas, the routes) lives as long as
    # the process: collecting while it is built frees nothing and cost about a tenth of each start's CPU.
    # The daemon freezes it and turns the collector back on once it serves (noemad.process.daemon.settle_heap).
    gc.disable()
    _import_sqlite_utils_without_numpy()
    from noemad.process.daemon import Daemon  # the server stack is only needed to serve

    os.umask(0o077)  # the store, its WAL and the socket are the operator's alone
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(Daemon(paths, loaded, clock, log_level=LogLevel(level, level_source)).serve())
    except ConfigError as exc:
        print(f"noemad: {exc.detail} Fix the file and start noemad again.", file=sys.stderr)
        return EXIT_CONFIG
    except NoemaError as exc:
        print(f"noemad: {exc.detail}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        pass
    # The daemon has stopped and closed its store; the process ends next. Without
    # this, the interpreter's last collections walk every object of the server
    # stack (pydantic schemas, routes) only to free them with the process:
    # a quarter to half a second of every stop.
    gc.freeze()
    return 0


if __name__ == "__main__":
    sys.exit(main())
