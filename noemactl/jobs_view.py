"""Views of background jobs: the list, one job, and what a finished job did."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from noemactl.render import columns, fields, plural, when


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
    return [Text(f"job #{data['id']}", style="bold"), *fields(rows), *(job_summary(data) if data["status"] != "running" else [])]
