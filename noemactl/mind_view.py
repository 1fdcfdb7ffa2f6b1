"""Views of minds and what a mind holds: the mind list and one mind, beliefs, memories, trust, goals, predictions, calibration, notifications, the narrative."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from noemactl.render import columns, event_lines, fields, plural, when


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
    out: list[RenderableType] = [head, *fields(rows)]
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
    out: list[RenderableType] = [*fields([
        ("events", str(data["events"])),
        ("beliefs", statuses),
        ("memories", f"{data['memories']['active']} active, {data['memories']['retracted']} retracted"),
        ("narrative", data.get("narrative") or "(none yet)"),
    ])]
    if data["recent"]:
        out.append(Text(f"events up to then ({len(data['recent'])})", style="bold"))
        out.extend(event_lines(data["recent"], None))
    return out


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
        *fields(
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
