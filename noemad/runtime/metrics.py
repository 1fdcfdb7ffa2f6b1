"""The daemon's metrics, as `GET /api/v1/metrics` serves them (Prometheus text, in `noemad.api.metrics`).

Read from what is already counted, through the modules that own it: events
by mind and kind and governance passes by status (the supervisor's counts,
kept as events commit), each mind's gate decisions, wakes and turns (its
actor's `MindStats`), judge verdicts and dropped stimuli (the gate's status),
the writer's queue and commit latency, model calls by role (the ledger), jobs
by kind and status (the jobs table). Nothing here scans the event log: one
scrape costs two small grouped queries (bench/metrics.py: 3.6 ms at 10 minds
x 10,000 events).

Counters count since the daemon started, except those read from tables
(events, model calls, jobs), which count everything stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from noemad import __version__
from noemad.background.jobs import job_counts
from noemad.ledger import usage
from noemad.stimuli import STIMULUS_KINDS
from noemad.clock import parse_iso
from noemad.store.replica.child import STATES
from noemad.store.stats import Histogram

if TYPE_CHECKING:
    from noemad.runtime.supervisor import Supervisor

Labels = tuple[tuple[str, str], ...]
TOKEN_KINDS = (("input", "input_tokens"), ("cache_read", "cache_read_tokens"), ("cache_write", "cache_write_tokens"), ("output", "output_tokens"))
CALL_OUTCOMES = ("ok", "failed", "refused", "cancelled")


@dataclass(frozen=True)
class Sample:
    """One line of a family: a value with its labels (`suffix` for a histogram's `_bucket`, `_sum`, `_count`)."""

    labels: Labels
    value: float
    suffix: str = ""


@dataclass
class Family:
    """One metric: its name (a counter's ends in `_total`), type, help sentence and samples."""

    name: str
    type: Literal["counter", "gauge", "histogram"]
    help: str
    samples: list[Sample] = field(default_factory=list)

    def add(self, value: float, **labels: str) -> None:
        self.samples.append(Sample(tuple(labels.items()), value))

    def observe(self, histogram: Histogram, **labels: str) -> None:
        """Add a histogram's `_bucket` (with `le`), `_sum` and `_count` samples."""
        base = tuple(labels.items())
        for bound, count in histogram.cumulative():
            self.samples.append(Sample((*base, ("le", _bound(bound))), count, "_bucket"))
        self.samples.append(Sample(base, histogram.total, "_sum"))
        self.samples.append(Sample(base, histogram.count, "_count"))


def _bound(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


def collect(sup: Supervisor) -> list[Family]:
    """Every family, read now."""
    db = sup.store.reader()
    info = Family("noemad_info", "gauge", "The running noemad (always 1), with its version.")
    info.add(1, version=__version__)
    uptime = Family("noemad_uptime_seconds", "gauge", "Seconds since the daemon started, on its clock.")
    uptime.add(sup.uptime)
    minds = Family("noemad_minds", "gauge", "Minds, by state (running, paused).")
    paused = sum(1 for actor in sup.actors.values() if actor.paused)
    minds.add(len(sup.actors) - paused, state="running")
    minds.add(paused, state="paused")

    events = Family("noemad_events_total", "counter", "Events written, by kind (every mind's together; archived ones still count).")
    stimuli = Family("noemad_stimuli_total", "counter", "Stimuli stored, by mind and kind.")
    by_kind: dict[str, int] = {}
    for (mind, kind), n in sorted(sup.counts.by_kind.items()):
        by_kind[kind] = by_kind.get(kind, 0) + n
        if kind in STIMULUS_KINDS:
            stimuli.add(n, mind=mind, kind=kind)
    for kind, n in sorted(by_kind.items()):
        events.add(n, kind=kind)

    decisions = Family("noemad_gate_decisions_total", "counter", "The gate's verdicts on stored stimuli (wake, batch, defer, deny, asleep), by mind.")
    wakes = Family("noemad_gate_wakes_total", "counter", "Deliveries that woke a mind for a turn, by mind.")
    dropped = Family("noemad_gate_dropped_total", "counter", "Stimuli dropped from held or queued deliveries past their cap (still stored), by mind.")
    verdicts = Family("noemad_judge_verdicts_total", "counter", "Reply-judge verdicts (reply, wait, failed, refused, superseded), by mind.")
    governance = Family("noemad_governance_passes_total", "counter", "Drafts through the governance gate, by mind and status (skipped: not sent to the critic).")
    fired = Family("noemad_governance_fired_total", "counter", "Drafts the governance gate sent to the critic, by mind.")
    turns = Family("noemad_turns_total", "counter", "Mind turns, by mind and outcome (ok, failed).")
    latency = Family("noemad_turn_duration_seconds", "histogram", "Wall time of each mind turn, model calls included, by mind.")
    now = sup.clock.now()
    for mind, actor in sorted(sup.actors.items()):
        status = actor.gate.status(now)
        stats = actor.stats
        for decided, n in sorted(stats.decisions.items()):
            decisions.add(n, mind=mind, verdict=decided)
        wakes.add(stats.wakes, mind=mind)
        for outcome in ("ok", "failed"):
            turns.add(stats.turns.get(outcome, 0), mind=mind, outcome=outcome)
        latency.observe(stats.turn_seconds, mind=mind)
        judged: dict[str, int] = {}
        lost = status.dropped
        for rule in status.rules:
            if rule.judge is not None:
                lost += rule.judge.dropped
                for verdict, n in rule.judge.verdicts.items():
                    judged[verdict] = judged.get(verdict, 0) + n
        dropped.add(lost, mind=mind)
        for verdict, n in sorted(judged.items()):
            verdicts.add(n, mind=mind, verdict=verdict)
        passes = {s: n for (m, s), n in sup.counts.governance.items() if m == mind}
        for gov_status, n in sorted(passes.items()):
            governance.add(n, mind=mind, status=gov_status)
        fired.add(sum(n for s, n in passes.items() if s != "skipped"), mind=mind)

    writer = sup.store.writer
    queue = Family("noemad_writer_queue_depth", "gauge", "Write jobs waiting for the one writer.")
    queue.add(writer.queued)
    commits = Family("noemad_writer_commits_total", "counter", "Transactions the writer committed (each a group of jobs).")
    commits.add(writer.commits)
    commit_latency = Family("noemad_writer_commit_duration_seconds", "histogram", "Wall time of each group commit, BEGIN to COMMIT.")
    commit_latency.observe(writer.commit_seconds)

    calls = Family("noemad_model_calls_total", "counter", "Model calls, by role and outcome (ok, failed, refused, cancelled).")
    tokens = Family("noemad_model_tokens_total", "counter", "Model tokens, by role and type (input: uncached; cache_read; cache_write; output).")
    cost = Family("noemad_model_cost_dollars_total", "counter", "Estimated model spend in US dollars, by role.")
    for row in usage(db, None, "role", None):
        role = str(row.role)
        for outcome in CALL_OUTCOMES:
            calls.add(getattr(row, outcome) or 0, role=role, outcome=outcome)
        for token_type, key in TOKEN_KINDS:
            tokens.add(getattr(row, key) or 0, role=role, type=token_type)
        cost.add(row.cost_usd or 0.0, role=role)

    jobs = Family("noemad_jobs", "gauge", "Background jobs stored, by kind and status (running, succeeded, failed).")
    for (kind, job_status), n in sorted(job_counts(db).items()):
        jobs.add(n, kind=kind, status=job_status)

    reloads = Family("noemad_config_reloads_total", "counter", "Config reloads taken since the daemon started.")
    reloads.add(sup.running.reload.reloads)
    refused = Family("noemad_config_reload_refused", "gauge", "1 while the newest config on disk was refused (the old one runs), else 0.")
    refused.add(1 if sup.running.reload.error else 0)

    return [
        info, uptime, minds, events, stimuli, turns, latency, decisions, wakes, dropped, verdicts, governance, fired,
        queue, commits, commit_latency, calls, tokens, cost, jobs, reloads, refused, *_replica(sup),
    ]


def _replica(sup: Supervisor) -> list[Family]:
    """The Litestream replica's families, when [replica] is set (as last asked of Litestream, just before the scrape)."""
    if sup.replica is None:
        return []
    view = sup.replica.view
    state = Family("noemad_replica_state", "gauge", "1 for the replica's state now (replicating, lagging, failing, restarting, missing, ...), 0 for the others.")
    for name in STATES:
        state.add(1 if view.state == name else 0, state=name)
    lag = Family("noemad_replica_lag_seconds", "gauge", "How far the replica is behind the store: 0 when it has every commit, else seconds since its last sync.")
    if view.lag_s is not None:
        lag.add(view.lag_s)
    synced = Family("noemad_replica_last_sync_timestamp_seconds", "gauge", "Unix time of Litestream's last successful sync to the replica.")
    if view.last_sync_at is not None:
        synced.add(parse_iso(view.last_sync_at))
    errors = Family("noemad_replica_errors_total", "counter", "Errors Litestream logged since noemad started.")
    errors.add(view.errors)
    restarts = Family("noemad_replica_restarts_total", "counter", "Times noemad restarted Litestream since it started.")
    restarts.add(view.restarts)
    return [state, lag, synced, errors, restarts]
