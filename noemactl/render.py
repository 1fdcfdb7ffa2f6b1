"""Human views of noemad's answers: status, minds, a mind's overview, event lines.

Each function takes the daemon's JSON and returns rich renderables. User text
is always wrapped in `Text` (never parsed as markup). Styles vanish when stdout
is not a terminal or `NO_COLOR` is set, so the same views serve pipes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

ELLIPSIS = "…"
KIND_STYLES = {
    "message": "green",
    "observation": "yellow",
    "reply": "bright_green",
    "mind_created": "bright_blue",
}


def plural(count: int, noun: str) -> str:
    """`1 event`, `2 events`."""
    return f"{count} {noun if count == 1 else noun + 's'}"


def when(at: str | None) -> str:
    """An event time as `YYYY-MM-DD HH:MM:SS` (UTC, as stored); unknown shapes as given."""
    if not at:
        return "-"
    if len(at) >= 19 and at[10] == "T":
        return f"{at[:10]} {at[11:19]}"
    return at


def duration(seconds: float) -> str:
    """`3d 4h`, `2h 5m`, `4m 12s`, `9s`."""
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def clip(text: str, width: int | None) -> str:
    """One line of `text`; cut to `width` characters with an ellipsis when a width is given."""
    line = " ".join(text.split())
    if width is not None and len(line) > width:
        return line[: max(width - 1, 0)] + ELLIPSIS
    return line


def kind_style(kind: str) -> str:
    """The colour of an event kind."""
    if kind in KIND_STYLES:
        return KIND_STYLES[kind]
    if kind.startswith("cycle_"):
        return "blue"
    return "cyan"


def columns(headers: Sequence[str], rows: Sequence[Sequence[str | Text]], right: Sequence[int] = ()) -> list[Text]:
    """Aligned columns with a bold header line; columns in `right` are right-aligned.

    Built by hand rather than with rich's Table so piped lines carry no
    trailing padding.
    """
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
    widths = [max([len(h), *(row[i].cell_len for row in cells)]) for i, h in enumerate(headers)]

    def line(items: Sequence[Text], style: str = "") -> Text:
        out = Text(style=style, no_wrap=True)
        for i, item in enumerate(items):
            pad = " " * (widths[i] - item.cell_len)
            if i:
                out.append("  ")
            if i in right:
                out.append(pad)
            out.append_text(item)
            if i not in right and i < len(items) - 1:
                out.append(pad)
        return out

    return [line([Text(h) for h in headers], "bold"), *(line(row) for row in cells)]


def _fields(rows: Iterable[tuple[str, str | Text]]) -> list[Text]:
    rows = list(rows)
    width = max(len(key) for key, _ in rows) + 2
    return [Text.assemble((key.ljust(width), "bold"), value) for key, value in rows]


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
    return [*_fields(rows), Text(r["detail"])]


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
    out: list[RenderableType] = [head, *_fields(rows)]
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


# minds ----------------------------------------------------------------------


def settings(value: dict[str, Any]) -> str:
    """A mind's settings as compact JSON (`{}` when none)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def minds(items: Sequence[dict[str, Any]]) -> list[Text]:
    """`noemactl mind list`: one line per mind."""
    return columns(
        ["NAME", "MODE", "CREATED", "SETTINGS"],
        [[Text(m["name"], style="bold"), m["mode"], when(m["created_at"]), settings(m["settings"])] for m in items],
    )


def _archived(archived: dict[str, int] | None) -> str:
    """`; N archived in K archives` when some of a mind's events were archived."""
    if not archived or not archived.get("archives"):
        return ""
    return f"; {archived['events']:,} archived in {plural(archived['archives'], 'archive')}"


def mind(data: dict[str, Any], width: int | None) -> list[RenderableType]:
    """`noemactl mind show`: the mind's fields, then its recent events."""
    head = Text.assemble(("mind ", "bold"), (data["name"], "bold cyan"))
    rows: list[tuple[str, str | Text]] = [
        ("mode", data["mode"]),
        ("turn", "running" if data.get("turn_running") else "idle"),
        ("created", when(data["created_at"])),
        ("events", f"{data['events']} (last #{data['last_event_id']}{_archived(data.get('archived'))})"),
        ("settings", settings(data["settings"])),
    ]
    in_force = data.get("settings_in_force")
    if in_force is not None and in_force != data["settings"]:  # noemad.toml's [minds.NAME] sets keys too
        rows.append(("in force", settings(in_force)))
    out: list[RenderableType] = [head, *_fields(rows)]
    problems = data.get("settings_problems") or []
    if problems:
        out.append(Text(f"settings left out ({len(problems)}): set or unset them with `noemactl mind set`", style="bold yellow"))
        out.extend(Text(p) for p in problems)
    warnings = data.get("warnings") or []
    if warnings:
        out.append(Text(f"warnings ({len(warnings)})", style="bold yellow"))
        out.extend(
            Text.assemble(f"#{w['event']}  {when(w['at'])}  ", (w["check"], "yellow"), f"  {w['ref']}  {w.get('text') or ''}")
            for w in warnings
        )
    recent = data.get("recent") or []
    if recent:
        out.append(Text(f"recent events ({len(recent)})", style="bold"))
        out.extend(event_lines(recent, width))
    return out


def mind_then(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl mind show NAME --at TIME`: what it had lived, believed, remembered and would have said then."""
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(data["beliefs"].items())) or "none"
    out: list[RenderableType] = [*_fields([
        ("events", str(data["events"])),
        ("beliefs", statuses),
        ("memories", f"{data['memories']['active']} active, {data['memories']['retracted']} retracted"),
        ("narrative", data.get("narrative") or "(none yet)"),
    ])]
    if data["recent"]:
        out.append(Text(f"events up to then ({len(data['recent'])})", style="bold"))
        out.extend(event_lines(data["recent"], None))
    return out


# events ---------------------------------------------------------------------


def stored_by(event: dict[str, Any]) -> str | None:
    """`stored by operator:root` for a message (observation, assertion) an operator's connection stored; None otherwise."""
    data = event.get("data")
    operator = data.get("operator") if isinstance(data, dict) else None
    return f"stored by {operator}" if isinstance(operator, str) and operator != event.get("actor") else None


def links(event: dict[str, Any]) -> str:
    """Who stored it and the links it was written with: `stored by operator:root; caused by #2; parents #2, #5; cites #7, memory 3`."""
    parts = [by] if (by := stored_by(event)) else []
    if event.get("causation_id") is not None:
        parts.append(f"caused by #{event['causation_id']}")
    if event.get("parents"):
        parts.append("parents " + ", ".join(f"#{p}" for p in event["parents"]))
    refs = [f"#{r['id']}" if r["type"] == "event" else f"{r['type'].replace('_', ' ')} {r['id']}" for r in event.get("refs") or []]
    if refs:
        parts.append("cites " + ", ".join(refs))
    return "; ".join(parts)


ID_WIDTH, KIND_WIDTH, ACTOR_WIDTH, CHANNEL_WIDTH = 5, 15, 16, 6
MIN_TEXT = 20


def event_line(event: dict[str, Any], width: int | None = None) -> Text:
    """One event on one line: id, time, kind, actor, channel, text and links.

    With a `width` (a terminal), the text is cut so the line fits.
    """
    line = Text(no_wrap=True)
    line.append(f"#{event['id']}".ljust(ID_WIDTH + 1), style="bold")
    line.append(" " + when(event.get("at")) + "  ", style="dim")
    line.append(event["kind"].ljust(KIND_WIDTH), style=kind_style(event["kind"]))
    line.append("  " + event["actor"].ljust(ACTOR_WIDTH), style="magenta")
    line.append("  " + (event.get("channel") or "-").ljust(CHANNEL_WIDTH))
    linked = links(event)
    tail = f"  ({linked})" if linked else ""
    if event.get("text"):
        room = None if width is None else max(width - len(line) - len(tail) - 4, MIN_TEXT)
        line.append('  "' + clip(event["text"], room) + '"')
    if tail:
        line.append(tail, style="dim")
    line.rstrip()
    return line


def event_lines(events: Sequence[dict[str, Any]], width: int | None) -> list[Text]:
    """One `event_line` per event."""
    return [event_line(e, width) for e in events]


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


# beliefs and memories ---------------------------------------------------------


def beliefs(items: Sequence[dict[str, Any]], mind: str) -> list[Text]:
    """`noemactl beliefs`: one line per belief."""
    if not items:
        return [Text(f"{mind} holds no beliefs yet", style="dim")]
    return columns(
        ["ID", "CONF", "STATUS", "SUBJECT", "EVIDENCE", "PROPOSITION"],
        [
            [f"#{b['id']}", f"{b['confidence']:.2f}", b["status"], b["subject"], f"+{b['support']} -{b['contradict']}", b["proposition"]]
            for b in items
        ],
        right=[1],
    )


def belief(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl belief ID`: the belief, its evidence, and the events to walk."""
    out: list[RenderableType] = [
        Text.assemble((f"belief #{data['id']} ", "bold"), (data["proposition"], "bold cyan")),
        *_fields(
            [
                ("mind", data["mind"]),
                ("subject", data["subject"]),
                ("kind", data["kind"]),
                ("confidence", f"{data['confidence']:.3f}"),
                ("status", data["status"]),
                ("created", when(data["created_at"])),
                ("updated", when(data.get("updated_at"))),
            ]
        ),
    ]
    evidence = data.get("evidence") or []
    if evidence:
        withdrawn = [e for e in evidence if e.get("withdrawn_by") is not None]
        head = f"evidence ({len(evidence)}" + (f", {len(withdrawn)} withdrawn: no longer counted)" if withdrawn else ")")
        out.append(Text(head, style="bold"))
        out.extend(
            columns(
                ["STANCE", "WEIGHT", "CRED", "SOURCE", "KIND", "EVENT", *(["WITHDRAWN"] if withdrawn else [])],
                [
                    [
                        e["stance"], f"{e['weight']:.2f}", f"{e['credibility']:.2f}", e["source"], e["kind"], f"#{e['event_id']}",
                        *([f"by #{e['withdrawn_by']}" if e.get("withdrawn_by") is not None else ""] if withdrawn else []),
                    ]
                    for e in evidence
                ],
                right=[1, 2],
            )
        )
    events = data.get("events") or []
    if events:
        out.append(Text(f"why: noemactl timeline {events[-1]}   (written by events {', '.join('#' + str(i) for i in events)})", style="dim"))
    return out


def memories(items: Sequence[dict[str, Any]], mind: str, search: str | None) -> list[Text]:
    """`noemactl memories`: one line per memory."""
    if not items:
        return [Text(f"no memories in {mind}" + (f" match {search!r}" if search else ""), style="dim")]
    return columns(
        ["ID", "KIND", "IMP", "SEEN", "STATUS", "TEXT"],
        [
            [f"#{m['id']}", m["kind"], f"{m['importance']:.2f}", str(m["access_count"]), m["status"], m["text"]]
            for m in items
        ],
        right=[2, 3],
    )


def trust(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl trust MIND`: the levels the mind was told, and the default for the rest."""
    default = Text(f"any other source: {data['default']:g} (the default)", style="dim")
    if not data["trust"]:
        return [Text(f"{data['mind']} was told no trust levels; set one with `noemactl trust {data['mind']} SOURCE VALUE`", style="dim"), default]
    rows = columns(["SOURCE", "TRUST", "SET"], [[t["source"], f"{t['value']:g}", when(t["updated_at"])] for t in data["trust"]], right=[1])
    return [*rows, default]


# goals, predictions, calibration ------------------------------------------------


def _unit(value: float | None, fmt: str = ".2f") -> str:
    return "-" if value is None else format(value, fmt)


def goals(items: Sequence[dict[str, Any]], mind: str) -> list[Text]:
    """`noemactl goals`: one line per goal."""
    if not items:
        return [Text(f"{mind} has no goals", style="dim")]
    return columns(
        ["ID", "STATUS", "PROGRESS", "ORIGIN", "SET", "TITLE"],
        [[f"#{g['id']}", g["status"], f"{g['progress']:.0%}", g["origin"], when(g["created_at"]), g["title"]] for g in items],
        right=[2],
    )


def predictions(items: Sequence[dict[str, Any]], mind: str) -> list[Text]:
    """`noemactl predictions`: one line per prediction, soonest due first."""
    if not items:
        return [Text(f"{mind} has no predictions", style="dim")]

    def status(p: dict[str, Any]) -> Text:
        if p["status"] == "open":
            return Text("overdue", style="bold yellow") if p.get("overdue") else Text("open")
        return Text(p["status"], style="green" if p["status"] == "hit" else "red")

    return columns(
        ["ID", "STATUS", "STATED", "DUE", "BELIEF", "PROPOSITION"],
        [
            [
                f"#{p['id']}",
                status(p),
                f"{p['stated_confidence']:.2f}",
                when(p["due_at"]),
                "-" if p["belief_id"] is None else f"#{p['belief_id']}",
                p["proposition"] + (f"  (observed: {p['observed']})" if p.get("observed") else ""),
            ]
            for p in items
        ],
        right=[2],
    )


def calibration(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl calibration`: the bins, the Brier score and the overconfidence verdict."""
    resolved = data["resolved"]
    head = Text.assemble(
        ("calibration of ", "bold"),
        (data["mind"], "bold cyan"),
        f"  {plural(resolved, 'resolved prediction')} ({data['hits']} hit, {data['misses']} missed), {data['open']} open",
    )
    if not resolved:
        return [head, Text("nothing to score until a prediction is resolved: noemactl outcome ID --hit|--miss", style="dim")]
    table = columns(
        ["STATED", "COUNT", "MEAN STATED", "HIT RATE"],
        [
            [f"{b['low']:.1f}-{b['high']:.1f}", str(b["count"]), _unit(b["mean_stated"]), _unit(b["hit_rate"])]
            for b in data["bins"]
            if b["count"]
        ],
        right=[1, 2, 3],
    )
    summary = f"mean stated {data['mean_stated']:.2f}, hit rate {data['hit_rate']:.2f}, gap {data['gap']:+.2f}"
    if data["overconfident"]:
        verdict = Text(f"overconfident: stated confidence runs ahead of outcomes ({summary})", style="bold yellow")
    else:
        verdict = Text(f"not overconfident ({summary})")
    return [
        head,
        *table,
        Text(f"Brier score {data['brier']:.3f} (0 is perfect; always stating 0.5 scores 0.250)"),
        verdict,
        Text(data["rule"], style="dim"),
    ]


def notifications(items: Sequence[dict[str, Any]], mind: str, status: str | None) -> list[Text]:
    """`noemactl notifications`: one line per notification, newest first."""
    if not items:
        return [Text(f"{mind} has no {status + ' ' if status else ''}notifications", style="dim")]
    return columns(
        ["ID", "STATUS", "RULE", "COUNT", "LAST", "TITLE"],
        [
            [
                f"#{n['id']}",
                Text(n["status"], style="bold yellow" if n["status"] == "open" else "dim"),
                n["rule"],
                str(n["count"]),
                when(n["updated_at"]),
                n["title"],
            ]
            for n in items
        ],
        right=[3],
    )


# narrative --------------------------------------------------------------------

NARRATIVE_PARTS = ("doing", "why", "recently", "resolving", "next")


def narrative(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl narrative`: the prose as shown, the five parts, and where it comes from."""
    out: list[RenderableType] = [Text(data.get("text") or ""), Text("")]
    parts = data.get("parts") or {}
    width = max(len(name) for name in NARRATIVE_PARTS) + 2
    for name in NARRATIVE_PARTS:
        items = parts.get(name) or []
        if not items:
            out.append(Text.assemble((name.ljust(width), "bold"), ("-", "dim")))
        for i, item in enumerate(items):
            out.append(Text.assemble(((name if i == 0 else "").ljust(width), "bold"), item))
    source = f"narrative #{data['event_id']}, {when(data.get('at'))}, cycle {data.get('cycle_id') or '-'}; "
    if data.get("rendered_by") == "model":
        source += f"rephrased by the narrate model (model call {data.get('model_call')})"
    else:
        source += "plain" + (f" ({data['reason']}: {data.get('detail')})" if data.get("reason") else "")
    out.append(Text(f"{source}; why: noemactl timeline {data['event_id']}", style="dim"))
    return out


# background jobs -------------------------------------------------------------------


def _took(job: dict[str, Any]) -> str:
    from datetime import datetime

    if not job.get("finished_at"):
        return ""
    try:
        start = datetime.fromisoformat(job["started_at"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(job["finished_at"].replace("Z", "+00:00"))
    except ValueError:
        return ""
    return f" in {(end - start).total_seconds():.1f}s"


def job_summary(job: dict[str, Any]) -> list[RenderableType]:
    """What a finished job found and created, with the ids to walk."""
    out = job.get("outputs") or {}
    head = f"{job['kind']} job {job['id']} for {job['mind']} {job['status']}{_took(job)}"
    if job["status"] == "failed":
        return [Text(f"{head}: {job['error']}", style="red")]
    lines: list[RenderableType] = [Text(f"{head}: {out.get('summary', '')}".rstrip(": "), style="bold")]
    for cluster in out.get("clusters", []):
        lines.append(
            Text(
                f"  belief #{cluster.get('belief')}  memory #{cluster.get('memory')}  from {plural(int(cluster.get('episodes', 0)), 'episode')}"
                f" ({cluster.get('worded_by', 'plain')}): {cluster.get('proposition', '')}"
            )
        )
    for pattern in out.get("patterns", []):
        if isinstance(pattern, dict):
            state = "new lesson" if pattern.get("new") else "known"
            lesson = f" -> memory #{pattern['memory']}" if pattern.get("memory") else ""
            lines.append(Text(f"  pattern {pattern.get('key', '')} ({state}){lesson}"))
    for item in out.get("discarded", []):
        lines.append(Text(f"  discarded model wording: {item.get('reason', item) if isinstance(item, dict) else item}", style="dim"))
    if out.get("rendered_by"):
        lines.append(Text(f"  prose: {out['rendered_by']}" + (f" ({out['reason']})" if out.get("reason") else ""), style="dim"))
    if out.get("event"):
        lines.append(Text(f"  walk it: noemactl timeline {out['event']}", style="dim"))
    return lines


def started_by(job: dict[str, Any]) -> str:
    """Who started a job: the operator (`operator:alice`), or its schedule."""
    return str(job["actor"]) if job["trigger"] == "operator" else str(job["trigger"])


def jobs(items: Sequence[dict[str, Any]], mind: str | None) -> list[Text]:
    """`noemactl jobs`: one line per job, newest first."""
    if not items:
        return [Text("no jobs" + (f" for {mind}" if mind else "") + " yet", style="dim")]
    return columns(
        ["ID", "MIND", "KIND", "BY", "STATUS", "PROGRESS", "STARTED", "SUMMARY"],
        [
            [
                f"#{j['id']}", j["mind"], j["kind"], started_by(j), j["status"], f"{j['progress']:.0%}", when(j["started_at"]),
                (j.get("outputs") or {}).get("summary") or j.get("error") or j["stage"],
            ]
            for j in items
        ],
        right=[5],
    )


def job(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl jobs show`: one job's fields, then what it did."""
    rows = [
        ("mind", data["mind"]),
        ("kind", data["kind"]),
        ("started by", started_by(data)),
        ("status", data["status"] + (f" at {data['progress']:.0%}: {data['stage']}" if data["status"] == "running" else "")),
        ("started", when(data["started_at"])),
        ("finished", when(data["finished_at"])),
        ("settings", json.dumps(data.get("inputs", {}).get("settings", {}), sort_keys=True)),
        ("model calls", ", ".join(f"#{c}" for c in data["model_calls"]) or "none"),
    ]
    if data.get("error"):
        rows.append(("error", data["error"]))
    return [Text(f"job #{data['id']}", style="bold"), *_fields(rows), *(job_summary(data) if data["status"] != "running" else [])]


def schedules(items: Sequence[dict[str, Any]]) -> list[Text]:
    """Each kind's schedule state."""
    return columns(
        ["KIND", "EVERY", "STATE"],
        [[s["kind"], s["every"], f"paused since {when(s['paused_at'])} by {s['actor']}" if s["paused"] else "running"] for s in items],
    )
