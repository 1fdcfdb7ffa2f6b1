"""The daemon's views: `noemactl status` (and its --watch), `replica` and `usage`."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text

from noemactl.render import columns, duration, fields, plural, when


# status ---------------------------------------------------------------------


def _turn(mind: dict[str, Any]) -> str:
    """A mind's turn state: running, idle, or paused (a turn may still be finishing)."""
    if mind.get("paused"):
        return "paused, finishing a turn" if mind.get("turn_running") else "paused"
    return "running" if mind.get("turn_running") else "idle"


_REPLICA_STYLES = {"replicating": "green", "starting": "cyan", "lagging": "bold yellow", "stopped": "yellow"}


def replica_line(r: dict[str, Any]) -> Text:
    """The replica in one line: its state (red when in trouble), where, how far behind."""
    line = Text(r["state"], style=_REPLICA_STYLES.get(r["state"], "bold red"))
    line.append(f" to {r['url']}")
    if r.get("lag_s") is not None:
        line.append(f", {r['lag_s']:.1f}s behind")
    if r.get("last_sync_at"):
        line.append(f", last sync {when(r['last_sync_at'])}")
    return line


def replica(r: dict[str, Any]) -> list[RenderableType]:
    """`noemactl replica`: the replica's state, lag, last sync and position, its errors, and what to do."""
    rows: list[tuple[str, str | Text]] = [
        ("state", Text(r["state"], style=_REPLICA_STYLES.get(r["state"], "bold red"))),
        ("url", r["url"]),
        ("lag", "unknown" if r.get("lag_s") is None else f"{r['lag_s']:.3f}s"),
        ("last sync", when(r["last_sync_at"]) if r.get("last_sync_at") else "none yet"),
        ("position", f"txid {r['txid']}" if r.get("txid") else "unknown"),
        ("sync every", f"{r['sync_interval']:g}s"),
        ("litestream", f"pid {r['pid']}, {plural(r['restarts'], 'restart')}" if r.get("pid") else f"not running, {plural(r['restarts'], 'restart')}"),
        ("errors", str(r["errors"]) + (f", last at {when(r['last_error_at'])}: {r['last_error']}" if r.get("last_error") else "")),
    ]
    return [*fields(rows), Text(r["detail"])]


def status(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl status`: the daemon, its config, its minds, totals."""
    config = data["config"]
    head = Text.assemble(("noemad ", "bold"), (data["version"], "bold cyan"), f"  pid {data['pid']}  up {duration(data['uptime_s'])}")
    if data.get("stopping"):
        head.append("  stopping", style="bold yellow")
    loaded = f"{config['source']} ({config['path']}), loaded {when(config['loaded_at'])}"
    if config.get("reloads"):
        loaded += f", {plural(config['reloads'], 'reload')}"
    rows: list[tuple[str, str | Text]] = [
        ("socket", data["socket"]),
        ("database", data["database"]),
        ("config", loaded),
    ]
    if data.get("clock") == "manual":
        rows.append(("clock", f"manual (a test daemon), now {when(data['now'])}"))
    models = data.get("models") or {}
    if models:
        rows.append(("models", f"provider {models['provider']}"))
    jobs_state = data.get("jobs") or {}
    if jobs_state.get("running") or jobs_state.get("paused_schedules"):
        running = ", ".join(f"#{i}" for i in jobs_state.get("running", [])) or "none"
        paused = ", ".join(jobs_state.get("paused_schedules", [])) or "none"
        rows.append(("jobs", f"running {running}; schedules paused: {paused}"))
    replica_state = data.get("replica")
    if replica_state:
        rows.append(("replica", replica_line(replica_state)))
    out: list[RenderableType] = [head, *fields(rows)]
    if config.get("reload_error"):
        out.append(
            Text.assemble(
                ("config reload refused", "bold red"),
                f" at {when(config.get('reload_error_at'))}: {config['reload_error']}",
                f" (the config loaded at {when(config['loaded_at'])} is still running)",
            )
        )
    if models:
        for hold in models.get("holds") or []:
            out.append(
                Text.assemble(
                    ("hold", "bold yellow"),
                    f" {hold['model']} until {when(hold['until'])} ({hold['reason']}): auxiliary calls are refused,"
                    " respond calls wait",
                )
            )
    minds = data.get("minds") or []
    if minds:
        out.extend(
            columns(
                ["MIND", "EVENTS", "TURN"],
                [[m["name"], str(m["events"]), _turn(m)] for m in minds],
                right=[1],
            )
        )
    for m in minds:
        retry = m.get("retry")
        if retry:  # a 201 is a promise: the operator sees that a turn failed and when its stimuli are tried again
            count = retry["stimuli"]
            out.append(
                Text.assemble(
                    ("turn failed", "bold red"),
                    f" {m['name']}: {count} {'stimulus' if count == 1 else 'stimuli'} retried at {when(retry['at'])}"
                    f" (attempt {retry['attempt']}: {retry['error']})",
                )
            )
    for name, c in sorted((data.get("connectors") or {}).items()):
        line = Text.assemble(
            ("connectors", "bold"),
            f" {name}: {c['up']} of {plural(c['connectors'], 'connector')} up, {c['pending']} pending",
        )
        if c["given_up"]:  # a reply that never arrived: the operator sees it here too
            line.append(f", {c['given_up']} given up", style="bold red")
            line.append(f" (noemactl connectors {name})")
        out.append(line)
    counts = data["counts"]
    out.append(
        Text(
            f"{plural(counts['minds'], 'mind')}, {plural(counts['events'], 'event')}"
            f" (last #{counts['last_event_id']}), {plural(counts['commits'], 'commit')}",
            style="dim",
        )
    )
    return out


# usage ----------------------------------------------------------------------


def usage(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl usage`: spend per group with the cache hit rate (a CANCELLED column once any call was cancelled)."""
    by = data["by"]
    rows = data["rows"]
    scope = f"mind {data['mind']}" if data.get("mind") else "all minds"
    since = f" since {when(data['since'])}" if data.get("since") else ""
    if not rows:
        return [Text(f"no model calls for {scope}{since}", style="dim")]
    cancelled = any(r.get("cancelled") for r in rows)
    head = [by.upper(), "CALLS", "OK", "FAILED", "REFUSED", *(["CANCELLED"] if cancelled else [])]
    table = columns(
        [*head, "INPUT", "CACHE READ", "CACHE WRITE", "OUTPUT", "HIT RATE", "COST $"],
        [
            [
                str(r[by]),
                str(r["calls"]),
                str(r["ok"]),
                str(r["failed"]),
                str(r["refused"]),
                *([str(r.get("cancelled", 0))] if cancelled else []),
                f"{r['input_tokens']:,}",
                f"{r['cache_read_tokens']:,}",
                f"{r['cache_write_tokens']:,}",
                f"{r['output_tokens']:,}",
                "-" if r["cache_hit_rate"] is None else f"{r['cache_hit_rate']:.0%}",
                f"{r['cost_usd']:.6f}",
            ]
            for r in rows
        ],
        right=range(1, len(head) + 6),
    )
    total = sum(r["cost_usd"] for r in rows)
    calls = sum(r["calls"] for r in rows)
    return [*table, Text(f"{plural(calls, 'call')} for {scope}{since}, ${total:.6f} estimated", style="dim")]
