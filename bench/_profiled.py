"""Run noemad with cProfile in every thread, for bench/ingest.py --profile.

    python bench/_profiled.py OUT.prof [noemad arguments]

Each thread gets its own profiler as it starts (the event loop's, the
writer's, asyncio.to_thread workers), timing the thread's CPU; at exit their
stats are merged into OUT.prof. Profiling slows the daemon several times over, so only the shares
it finds are meant to be read, not its times.

A window: each SIGUSR1 takes a snapshot of every thread's stats (and writes
OUT.prof.markN once taken, so the sender can wait for it); with two marks,
OUT.prof holds only what ran between them, the same window the bench
measures the daemon's CPU in (startup before it and the work left after it,
such as debounced turns that fire once the clients stop, are left out).
"""

from __future__ import annotations

import cProfile
import gc
import marshal
import pstats
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

PROFILES: list[cProfile.Profile] = []
MARKS: list[dict[Any, Any]] = []
_LOCK = threading.Lock()
Stats = dict[Any, Any]  # pstats' raw form: func -> (cc, nc, tt, ct, callers {func: (cc, nc, tt, ct)})


def _start_in_thread(frame: FrameType, event: str, arg: Any) -> None:
    """threading.setprofile's hook: on a new thread's first event, start that thread's own profiler."""
    sys.setprofile(None)
    profile = cProfile.Profile(time.thread_time)  # the thread's CPU: waits on a lock, a queue or epoll count nothing
    with _LOCK:
        PROFILES.append(profile)
    profile.enable()


def _merged() -> Stats:
    """Every thread's stats so far, merged (the profilers keep running)."""
    merged = pstats.Stats()
    # No collection while the other threads' tables are read: a finalizer could let a thread run and change them.
    gc.disable()
    try:
        with _LOCK:
            for profile in PROFILES:
                profile.snapshot_stats()  # type: ignore[attr-defined]  # what create_stats does, without disabling
                if profile.stats:  # type: ignore[attr-defined]
                    merged.add(_Taken(marshal.loads(marshal.dumps(profile.stats))))  # type: ignore[attr-defined]
    finally:
        gc.enable()
    return merged.stats  # type: ignore[attr-defined,no-any-return]


class _Taken:
    """A snapshot as pstats takes a profile (`Stats(profile)` would disable it first)."""

    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    def create_stats(self) -> None:
        pass


def _minus(end: Stats, start: Stats) -> Stats:
    """What ran between two snapshots."""
    out: Stats = {}
    for func, (cc, nc, tt, ct, callers) in end.items():
        if func not in start:
            out[func] = (cc, nc, tt, ct, dict(callers))
            continue
        cc0, nc0, tt0, ct0, callers0 = start[func]
        if nc == nc0 and tt == tt0:
            continue
        diff = {}
        for caller, value in callers.items():
            before = callers0.get(caller)
            if before is None:
                diff[caller] = value
            elif value != before:
                diff[caller] = tuple(v - b for v, b in zip(value, before))
        out[func] = (cc - cc0, nc - nc0, tt - tt0, ct - ct0, diff)
    return out


def main() -> int:
    out, sys.argv = sys.argv[1], [sys.argv[0], *sys.argv[2:]]
    from noemad.main import main as noemad_main

    def mark(signum: int, frame: FrameType | None) -> None:
        MARKS.append(_merged())
        Path(f"{out}.mark{len(MARKS)}").touch()

    signal.signal(signal.SIGUSR1, mark)
    threading.setprofile(_start_in_thread)
    profile = cProfile.Profile(time.thread_time)
    PROFILES.append(profile)
    profile.enable()
    try:
        code = noemad_main()
    finally:
        profile.disable()
        stats = _minus(MARKS[1], MARKS[0]) if len(MARKS) >= 2 else _merged()
        with open(out, "wb") as f:
            marshal.dump(stats, f)
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
