"""Run noemad with cProfile in every thread, for bench/ingest.py --profile.

    python bench/_profiled.py OUT.prof [noemad arguments]

Each thread gets its own profiler as it starts (the event loop's, the
writer's, asyncio.to_thread workers), timing the thread's CPU; at exit their
stats are merged into OUT.prof. Profiling slows the daemon several times over, so only the shares
it finds are meant to be read, not its times.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import threading
import time
from types import FrameType
from typing import Any

PROFILES: list[cProfile.Profile] = []
_LOCK = threading.Lock()


def _start_in_thread(frame: FrameType, event: str, arg: Any) -> None:
    """threading.setprofile's hook: on a new thread's first event, start that thread's own profiler."""
    sys.setprofile(None)
    profile = cProfile.Profile(time.thread_time)  # the thread's CPU: waits on a lock, a queue or epoll count nothing
    with _LOCK:
        PROFILES.append(profile)
    profile.enable()


def main() -> int:
    out, sys.argv = sys.argv[1], [sys.argv[0], *sys.argv[2:]]
    from noemad.main import main as noemad_main

    threading.setprofile(_start_in_thread)
    profile = cProfile.Profile(time.thread_time)
    PROFILES.append(profile)
    profile.enable()
    try:
        code = noemad_main()
    finally:
        profile.disable()
        with _LOCK:
            stats = pstats.Stats(PROFILES[0])
            for other in PROFILES[1:]:
                stats.add(other)
        stats.dump_stats(out)
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
