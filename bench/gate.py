"""What the gate costs per stimulus: `Gate.offer` over 20 wake rules, beside a bare fnmatch loop.

    .venv/bin/python bench/gate.py [--stimuli N] [--rounds R]

A mind with 20 rules of the kinds a busy host writes (DMs and mentions
first, per-channel debounces and rate limits, bot sampling, text filters,
one regex, tag rules, a catch-all debounce last) is offered N stimuli
shaped like a busy Discord guild (many channels and authors; one in ten a
mention, a few DMs, bots, observations), each at its own time on a
hand-driven clock, with `due` asked every 100 stimuli as the actor's timer
would. Each `offer` is timed alone (perf_counter_ns), so the figure is the
decision's cost: the rules asked in order, the behaviour's state moved, the
reason written.

Beside it, the same stimuli against the same 20 rules in a bare loop: the
matching only, with `fnmatch.fnmatchcase` on the globs, `in` on the text, no
state and no reason. That is roughly the floor of any gate in Python; the
difference is what the compiled matchers, the state machine and the
sentence cost.

The facts are built beforehand (as the supervisor does in its store job),
so neither side counts them. Best of R rounds; goal: p50 <= 50 µs.
"""

from __future__ import annotations

import argparse
import fnmatch
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from noemad.gate.engine import Gate  # noqa: E402
from noemad.rules.match import Facts  # noqa: E402
from noemad.rules.shape import Always, Rule, read_rule  # noqa: E402
from noemad.rules.table import StoredRules  # noqa: E402

from _report import figure  # noqa: E402  (bench/_report.py)

NOW = 1_767_225_600.0

RULES: list[dict[str, Any]] = [
    {"name": "dms", "match": {"flags": ["dm"]}, "behaviour": "always"},
    {"name": "mentions", "match": {"flags": ["mention", "reply"]}, "behaviour": "always", "resets": ["ambient"]},
    {"name": "operator", "match": {"author": "operator"}, "behaviour": "always"},
    {"name": "self", "match": {"flags": ["from_self"]}, "behaviour": "defer"},
    {"name": "alerts", "match": {"kinds": ["observation"], "tags_any": ["page", "critical"]}, "behaviour": "always"},
    {"name": "deploys", "match": {"kinds": ["message"], "text": "deploy"}, "behaviour": {"debounce": {"ms": 2000}}},
    {"name": "outage", "match": {"text": r"\b(outage|incident|sev[0-9])\b", "regex": True}, "behaviour": {"rate_limit": {"tokens": 3, "refill_ms": 60000}}},
    {"name": "ops", "match": {"channel": "discord:*:ops-*"}, "behaviour": {"debounce": {"ms": 5000}}},
    {"name": "builds", "match": {"channel": "discord:*:builds", "flags": ["from_bot"]}, "behaviour": {"passive_sample": {"every": 20}}},
    {"name": "bots", "match": {"flags": ["from_bot"]}, "behaviour": {"passive_sample": {"every": 10, "key_by": "channel"}}, "passthrough": True},
    {"name": "bots-rest", "match": {"flags": ["from_bot"]}, "behaviour": "defer"},
    {"name": "random", "match": {"channel": "discord:*:random"}, "behaviour": "defer"},
    {"name": "memes", "match": {"channel": "discord:*:memes*"}, "behaviour": "defer"},
    {"name": "alice", "match": {"author": "alice*"}, "behaviour": {"rate_limit": {"tokens": 5, "refill_ms": 30000, "key_by": "channel"}}},
    {"name": "questions", "match": {"kinds": ["message"], "text": "?"}, "behaviour": {"debounce": {"ms": 3000}}},
    {"name": "quiet-tags", "match": {"tags_any": ["fyi", "low"]}, "behaviour": "defer"},
    {"name": "metrics", "match": {"kinds": ["observation"], "author": "prometheus"}, "behaviour": {"passive_sample": {"every": 50}}},
    {"name": "observations", "match": {"kinds": ["observation"]}, "behaviour": {"debounce": {"ms": 10000}}},
    {"name": "per-author", "match": {"kinds": ["message"]}, "behaviour": {"rate_limit": {"tokens": 2, "refill_ms": 20000, "key_by": "author"}}, "passthrough": True},
    {"name": "ambient", "match": {}, "behaviour": {"debounce": {"ms": 2000}}},
]

CHANNELS = [f"discord:guild:{c}" for c in ("general", "random", "ops-db", "ops-web", "builds", "memes", "design", "help", "lounge", "dev")]
AUTHORS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "operator"]
WORDS = "the deploy is green did anyone see the outage on db1 lunch today ship it now please review my change".split()


def stimuli(n: int, rng: random.Random) -> list[Facts]:
    out = []
    for _ in range(n):
        roll = rng.random()
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + ("?" if rng.random() < 0.2 else "")
        if roll < 0.1:
            out.append(Facts("observation", "host:db1", rng.choice(["ci", "prometheus", "pager"]), text, frozenset(), frozenset(rng.sample(["page", "fyi", "disk"], 1))))
            continue
        flags: set[str] = set()
        if roll < 0.13:
            flags.add("dm")
        elif roll < 0.23:
            flags.add("mention")
        author = rng.choice(AUTHORS)
        if roll > 0.85:
            flags.add("from_bot")
            author = "ci-bot"
        out.append(Facts("message", rng.choice(CHANNELS), author, text, frozenset(flags)))
    return out


def bare(rules: list[Rule]) -> Any:
    """The same rules as a bare loop: fnmatch on the globs, plain tests on the rest; the first match's name."""

    def decide(f: Facts) -> str | None:
        for r in rules:
            m = r.match
            if m.kinds and f.kind not in m.kinds:
                continue
            if m.flags and not any(flag in f.flags for flag in m.flags):
                continue
            if m.tags_any and not any(t in f.tags for t in m.tags_any):
                continue
            if m.channel and not fnmatch.fnmatchcase(f.channel, m.channel):
                continue
            if m.author and not fnmatch.fnmatchcase(f.author, m.author):
                continue
            if m.text and not m.regex and m.text.lower() not in f.text.lower():
                continue
            return r.name
        return None

    return decide


def percentiles(samples: list[int]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    return (ordered[len(ordered) // 2] / 1000, ordered[int(len(ordered) * 0.95)] / 1000, statistics.fmean(ordered) / 1000)


def best(runs: list[tuple[float, float, float]]) -> list[float]:
    """Each figure's best round."""
    return [min(column) for column in zip(*runs)]


def run_gate(rules: StoredRules, facts: list[Facts]) -> tuple[list[int], list[int]]:
    """Each offer's time, and each offer's with the `next_due` the actor asks after it to arm its timer."""
    gate = Gate("ada", rules)
    perf = time.perf_counter_ns
    offers, armed = [], []
    now = NOW
    for i, f in enumerate(facts):
        now += 0.05  # 20 stimuli a second
        start = perf()
        gate.offer(i + 1, f, now)
        middle = perf()
        gate.next_due()
        end = perf()
        offers.append(middle - start)
        armed.append(end - start)
        if i % 100 == 99:
            gate.due(now)
            gate.taken(range(i - 99, i + 1))
    return offers, armed


def run_bare(decide: Any, facts: list[Facts]) -> list[int]:
    perf = time.perf_counter_ns
    samples = []
    for f in facts:
        start = perf()
        decide(f)
        samples.append(perf() - start)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stimuli", type=int, default=20000, help="stimuli per round (default 20000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best is reported (default 3)")
    args = parser.parse_args()
    read = [read_rule(body).rule for body in RULES]
    stored = StoredRules(tuple(read), Always())
    facts = stimuli(args.stimuli, random.Random(11))
    decide = bare(read)
    gate_runs, armed_runs, bare_runs = [], [], []
    for _ in range(args.rounds):
        offers, armed = run_gate(stored, facts)
        gate_runs.append(percentiles(offers))
        armed_runs.append(percentiles(armed))
        bare_runs.append(percentiles(run_bare(decide, facts)))
    g, a, b = best(gate_runs), best(armed_runs), best(bare_runs)
    print(f"{len(RULES)} rules, {args.stimuli} stimuli, best of {args.rounds} rounds (µs per stimulus)")
    print(f"gate.offer     p50 {g[0]:6.1f}  p95 {g[1]:6.1f}  mean {g[2]:6.1f}   (goal: p50 <= 50)")
    print(f"  + next_due   p50 {a[0]:6.1f}  p95 {a[1]:6.1f}  mean {a[2]:6.1f}   (what the actor pays per stimulus)")
    print(f"bare fnmatch   p50 {b[0]:6.1f}  p95 {b[1]:6.1f}  mean {b[2]:6.1f}   (matching only: no state, no reason)")
    print(f"ratio p50 {g[0] / b[0]:.2f}x")
    figure("gate", "Gate.offer over 20 rules, p50", f"{g[0]:.1f} µs", "<= 50 µs", g[0] <= 50, baseline=f"{b[0]:.1f} µs bare fnmatch",
           size=f"{args.stimuli:,} stimuli")
    return 0


if __name__ == "__main__":
    sys.exit(main())
