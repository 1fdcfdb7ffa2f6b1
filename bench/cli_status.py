"""`noemactl status` wall time against a bare httpx script doing the same request.

What is measured
  With a running noemad (started here on a temp home, real system clock),
  the wall time of whole subprocesses, start to exit, as a user sees them:
    * `noemactl status` (the venv's noemactl, next to sys.executable);
    * `python -c "import httpx; ... GET /api/v1/status over the socket ..."`,
      the same request with nothing but httpx (the floor for a Python CLI).
  Each is run twice to warm the page cache, then N times (default 20),
  interleaved so both see the same machine. p50/p95 of each and the ratio of
  the p50s are printed.

Goal: noemactl status within 2x of the bare httpx script.

Beside it, noemad's own start: the daemon is started S times (default 5)
on fresh homes, after one untimed start that also counts, through
`-X importtime`, the modules it has imported by READY=1. For each timed start the
CPU (user + system, from /proc) noemad used from exec to READY=1; the median
is reported. CPU, not wall time: the suite and other work on the machine
stretch wall time, hardly CPU. Every daemon-tier test and every restart pays
it. Reported with no goal: a figure to watch. Before the start-up cuts of
December 2026 it was 1.43 s and 965 modules (load 11 on 2 cores); after
them 0.86 s and 774 modules (load 4.6).

Run: .venv/bin/python bench/cli_status.py [-n 20] [--starts 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _daemon import NOEMACTL, BenchDaemon, DaemonError, exit_on_sigterm, running_daemon  # noqa: E402
from _report import figure  # noqa: E402

GOAL_RATIO = 2.0
RUN_TIMEOUT = 30.0  # seconds for one subprocess: a bound on a hang

BARE = (
    "import sys, httpx\n"
    "with httpx.Client(transport=httpx.HTTPTransport(uds=sys.argv[1]), timeout=30) as c:\n"
    "    r = c.get('http://noemad/api/v1/status')\n"
    "    r.raise_for_status()\n"
    "    print(r.text)\n"
)


class CtlNotWorking(RuntimeError):
    """`noemactl status` did not succeed against the running daemon."""


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run `cmd` to completion; its wall time in seconds and the result."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0, out


def check(name: str, out: subprocess.CompletedProcess[str]) -> None:
    if out.returncode != 0 or not out.stdout.strip():
        detail = (out.stderr or out.stdout).strip().splitlines()
        tail = "\n    ".join(detail[-8:]) or "(no output)"
        raise CtlNotWorking(f"`{name}` exited {out.returncode} against a running noemad:\n    {tail}")


def measure(d: BenchDaemon, runs: int, warmup: int) -> tuple[list[float], list[float], str]:
    """Warm up, then time both commands `runs` times, interleaved; also returns noemactl's first output line."""
    env = d.ctl_env()
    ctl = [str(NOEMACTL), "status"]
    bare = [sys.executable, "-c", BARE, str(d.socket)]
    if not NOEMACTL.exists():
        raise CtlNotWorking(f"{NOEMACTL} does not exist; install the package into the venv (pip install -e .)")
    sample = ""
    ctl_times: list[float] = []
    bare_times: list[float] = []
    # Warm-up runs first (untimed; the first one also fails fast if noemactl is broken),
    # then the timed runs, interleaved so both commands see the same load and cache state.
    for i in range(warmup + runs):
        t_ctl, out = timed(ctl, env)
        check("noemactl status", out)
        sample = sample or out.stdout.strip().splitlines()[0]
        t_bare, out = timed(bare, env)
        check("bare httpx script", out)
        if i >= warmup:
            ctl_times.append(t_ctl)
            bare_times.append(t_bare)
    return ctl_times, bare_times, sample


def daemon_starts(starts: int) -> tuple[list[float], int]:
    """Start noemad `starts` times (after one untimed start): the CPU seconds each used to READY=1, and the modules imported by then."""
    with running_daemon(env={"PYTHONPROFILEIMPORTTIME": "1"}) as d:
        # -X importtime writes a line for each module imported, to stderr (the log), unbuffered.
        modules = sum(1 for line in d.log_path.read_text(errors="replace").splitlines() if line.startswith("import time:") and "|" in line)
        modules -= 1  # its header line
    cpu: list[float] = []
    for _ in range(starts):
        with running_daemon() as d:
            cpu.append(d.cpu_seconds())
    return cpu, modules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Time `noemactl status` against a bare httpx script making the same request over the socket.",
        epilog=f"goal: noemactl status within {GOAL_RATIO:g}x of the bare httpx script",
    )
    parser.add_argument("-n", "--runs", type=int, default=20, help="timed runs of each (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs of each first (default 2)")
    parser.add_argument("--starts", type=int, default=5, help="timed starts of noemad to READY=1 (default 5)")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    if args.runs < 1 or args.warmup < 0 or args.starts < 1:
        parser.error("--runs and --starts must be positive and --warmup not negative")

    try:
        with running_daemon() as d:
            d.create_minds(["m0", "m1"])
            ctl_times, bare_times, sample = measure(d, args.runs, args.warmup)
        start_cpu, modules = daemon_starts(args.starts)
    except CtlNotWorking as exc:
        print(f"cli_status bench failed: {exc}", file=sys.stderr)
        print("noemactl status must work before it can be timed; nothing was measured.", file=sys.stderr)
        return 2
    except (DaemonError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"cli_status bench failed: {exc}", file=sys.stderr)
        return 1

    ctl50, ctl95 = percentile(ctl_times, 0.5), percentile(ctl_times, 0.95)
    bare50, bare95 = percentile(bare_times, 0.5), percentile(bare_times, 0.95)
    ratio = ctl50 / bare50
    print(f"noemactl status said: {sample}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (other work on the machine skews wall times)")
    print(f"wall time of whole subprocesses, {args.runs} runs each after {args.warmup} warm-up runs, interleaved")
    rows = [("noemactl status", ctl50, ctl95), ("bare httpx script", bare50, bare95)]
    width = max(len(r[0]) for r in rows)
    print(f"{'command'.ljust(width)}  {'p50 ms':>8}  {'p95 ms':>8}")
    print(f"{'-' * width}  {'-' * 8}  {'-' * 8}")
    for name, p50, p95 in rows:
        print(f"{name.ljust(width)}  {p50 * 1e3:8.1f}  {p95 * 1e3:8.1f}")
    print(f"ratio (p50): {ratio:.2f}x   ratio (p95): {ctl95 / bare95:.2f}x")
    verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
    print(f"goal: noemactl status within {GOAL_RATIO:g}x of the bare httpx script  -> {ratio:.2f}x: {verdict}")
    figure("cli_status", "noemactl status / bare httpx script (p50)", f"{ratio:.2f}x", f"<= {GOAL_RATIO:g}x", ratio <= GOAL_RATIO,
           baseline=f"{bare50 * 1e3:.0f} ms", size=f"{args.runs} runs, wall time")
    start50 = percentile(start_cpu, 0.5)
    print(f"noemad start to READY=1: CPU {start50:.2f} s (median of {args.starts}; min {min(start_cpu):.2f}, max {max(start_cpu):.2f}), {modules} modules imported")
    figure("cli_status", "noemad start to READY=1, CPU (median)", f"{start50:.2f} s, {modules} modules", "(a cost to watch; no goal)", None,
           size=f"{args.starts} starts, empty home")
    return 0


if __name__ == "__main__":
    sys.exit(main())
