"""Human views of the gate: wake rules, a change with its probe table, gate-status, sleep.

Each function takes noemad's JSON and returns rich renderables, as
`noemactl.render` does; user text (names, globs, patterns, notes) is always
plain `Text`, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from noemactl.render import columns as padded
from noemactl.render import when


def columns(headers: Sequence[str], rows: Sequence[Sequence[str | Text]], right: Sequence[int] = ()) -> list[Text]:
    """`render.columns` without the padding an empty last cell leaves at a line's end."""
    lines = padded(headers, rows, right)
    for line in lines:
        line.rstrip()
    return lines


# one rule -------------------------------------------------------------------------
#
# The phrasing of a behaviour, a match and a rule's extras is noemad's (`noemad.rules.phrasing`:
# behaviour_words, match_words, extras_words), which the dashboard and the rules' events use;
# noemactl imports nothing of noemad, so it mirrors those three here, word for word
# (tests/test_rules_words.py holds them to the same words).


def behaviour(data: Any) -> str:
    """A behaviour in a few words: `always`, `debounce 2000 ms`, `rate_limit 5 per 60000 ms by channel`."""
    if isinstance(data, str):
        return data
    if not isinstance(data, dict) or len(data) != 1:
        return str(data)
    ((kind, args),) = data.items()
    args = args or {}
    by = f" by {args['key_by']}" if args.get("key_by") not in (None, "none") else ""
    if kind == "debounce":
        return f"debounce {args.get('ms')} ms"
    if kind == "rate_limit":
        return f"rate_limit {args.get('tokens')} per {args.get('refill_ms')} ms{by}"
    if kind == "passive_sample":
        return f"passive_sample 1 in {args.get('every')}{by}"
    if kind == "judge":
        wait = f", at most {args['max_wait_ms']} ms" if args.get("max_wait_ms") is not None else ""
        said = " with instructions" if args.get("instructions") else ""
        return f"judge after {args.get('debounce_ms')} ms{wait}{said}"
    return str(kind)


def match(data: dict[str, Any] | None) -> str:
    """What a rule matches, the fields given only: `kinds message; channel discord:*; flags mention|dm`."""
    data = data or {}
    parts = []
    if data.get("kinds"):
        parts.append("kinds " + ",".join(data["kinds"]))
    for key in ("channel", "author"):
        if data.get(key) not in (None, "*"):
            parts.append(f"{key} {data[key]}")
    if data.get("flags"):
        parts.append("flags " + "|".join(data["flags"]))
    if data.get("text") is not None:
        parts.append(("regex " if data.get("regex") else "text ") + repr(data["text"]))
    for key, label in (("tags_any", "tags any"), ("tags_all", "tags all"), ("tags_none", "tags none")):
        if data.get(key):
            parts.append(f"{label} " + ",".join(data[key]))
    return "; ".join(parts) or "any stimulus"


def extras(rule: dict[str, Any]) -> str:
    """Passthrough and resets, when set."""
    parts = []
    if rule.get("passthrough"):
        parts.append("passthrough")
    if rule.get("resets"):
        parts.append("resets " + ",".join(rule["resets"]))
    return "; ".join(parts)


def _rule_rows(rules: Sequence[dict[str, Any]]) -> list[Text]:
    return columns(
        ["#", "RULE", "BEHAVIOUR", "MATCH", "ALSO"],
        [[str(i), Text(r["name"], style="bold"), behaviour(r["behaviour"]), match(r.get("match")), extras(r)] for i, r in enumerate(rules, 1)],
        right=[0],
    )


def _lines(title: str, items: Sequence[str], style: str) -> list[Text]:
    return [Text.assemble((title + ": ", style), item) for item in items]


def default_line(data: dict[str, Any]) -> Text:
    """`default: always (for stimuli no rule matches)`."""
    return Text.assemble(("default: ", "bold"), behaviour(data["default"]), (" (for stimuli no rule matches)", "dim"))


def rules(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl rules list`: the rules in order, the default, then errors, notes and warnings."""
    out: list[RenderableType] = []
    if data["rules"]:
        out.extend(_rule_rows(data["rules"]))
    else:
        out.append(Text(f"{data['mind']} has no wake rules; every stimulus gets the default", style="dim"))
    out.append(default_line(data))
    out.extend(_lines("left out", data.get("errors") or [], "bold red"))
    out.extend(_lines("note", data.get("notes") or [], "yellow"))
    out.extend(_lines("warning", data.get("warnings") or [], "bold yellow"))
    out.extend(governance(data.get("governance")))
    return out


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def governance(data: dict[str, Any] | None) -> list[Text]:
    """The governance lines of gate-status: drafts passed, the critic's firing rate, statuses and triggers."""
    if not data:
        return []
    if not data.get("passes"):
        if data.get("off"):
            return [Text.assemble(("governance: off", "bold"), f": {data['off']}")]
        return [Text("governance: no drafts passed the gate yet", style="dim")]
    rate = data.get("firing_rate") or 0.0
    lines = [
        Text.assemble(
            ("governance: ", "bold"),
            f"{data['passes']} drafts, critic fired {data['fired']} ({rate:.0%}), skipped {data['skipped']}"
            + (f", revised {data['revised']}" if data.get("revised") else ""),
        ),
        Text(f"  statuses: {_counted(data.get('statuses') or {})}"),
    ]
    if data.get("triggers"):
        lines.append(Text(f"  fired by: {_counted(data['triggers'])}"))
    if data.get("off"):
        lines.append(Text(f"  off now: {data['off']}", style="bold"))
    return lines


def rule(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl rules show`: one rule, field by field."""
    r = data["rule"]
    rows = [
        ("position", f"{data['position']} of {data['of']}"),
        ("behaviour", behaviour(r["behaviour"])),
        ("match", match(r.get("match"))),
        ("passthrough", "yes" if r.get("passthrough") else "no"),
        ("resets", ", ".join(r.get("resets") or []) or "-"),
    ]
    state = data.get("state")
    if state:
        rows.append(("matches", f"{state.get('matches', 0)}, last {when(state.get('last_match'))}"))
        if state.get("pending"):
            rows.append(("batch", f"{state['pending']} pending, delivered {when(state.get('next_delivery'))}"))
        if _rule_state(state):
            rows.append(("state", _rule_state(state)))
    width = max(len(k) for k, _ in rows) + 2
    return [
        Text.assemble(("rule ", "bold"), (r["name"], "bold cyan"), f" of {data['mind']}"),
        *(Text.assemble((k.ljust(width), "bold"), v) for k, v in rows),
        *_lines("note", data.get("notes") or [], "yellow"),
    ]


# a change ---------------------------------------------------------------------------

VERBS = {"add": "added", "edit": "changed", "remove": "removed", "move": "moved", "default": "set the default of"}


def change(data: dict[str, Any]) -> list[RenderableType]:
    """After rules add/edit/rm/move/default: what was done, notes, the probe table, shadow warnings."""
    action = data["action"]
    if action == "default":
        head = f"{data['mind']}: default is now {behaviour(data['default'])}"
    elif action == "remove":
        head = f"{data['mind']}: removed rule {data['rule']}"
    else:
        head = f"{data['mind']}: {VERBS.get(action, action)} rule {data['rule']} at position {data['position']} of {len(data['rules'])}"
    out: list[RenderableType] = [Text.assemble((head, "bold"), (f"  (event #{data['event']})", "dim"))]
    out.extend(_lines("note", data.get("notes") or [], "yellow"))
    out.extend(probes(data.get("probes") or []))
    out.extend(_lines("warning", data.get("warnings") or [], "bold yellow"))
    return out


def probes(rows: Sequence[dict[str, Any]]) -> list[Text]:
    """The probe table: what each kind of stimulus did before and does after; changed rows marked `*`."""
    if not rows:
        return []
    return columns(
        ["", "STIMULUS", "BEFORE", "AFTER"],
        [["*" if p.get("changed") else "", p["probe"], p["before"], Text(p["after"], style="bold" if p.get("changed") else "")] for p in rows],
    )


# gate-status ----------------------------------------------------------------------------


def _rule_state(r: dict[str, Any]) -> str:
    """A rule's state beyond its counters: buckets, denials, samples."""
    parts = []
    buckets = r.get("buckets") or []
    if buckets:
        parts.append("tokens " + ", ".join(f"{b.get('key') or 'all'} {b.get('tokens', 0):g}" for b in buckets))
    if r.get("denials"):
        parts.append(f"denied {r['denials']}")
    sampled = r.get("sampled") or {}
    if sampled.get("seen"):
        parts.append(f"sampled {sampled.get('woke', 0)} of {sampled['seen']}")
    judge = r.get("judge")
    if judge:
        waiting = [f"{judge[k]} {k}" for k in ("judging", "held", "queued", "unanswered") if judge.get(k)]
        if waiting:
            parts.append(", ".join(waiting))
    return "; ".join(parts)


def _judge_lines(rules: Sequence[dict[str, Any]]) -> list[Text]:
    """Per judge rule: its verdict counts, the newest verdict with its reason, tokens and cache share, and its notices."""
    out: list[Text] = []
    for r in rules:
        judge = r.get("judge")
        if not judge:
            continue
        counts = judge.get("verdicts") or {}
        shown = ", ".join(f"{k} {counts.get(k, 0)}" for k in ("reply", "wait", "failed", "refused", "superseded"))
        share = judge.get("cache_share")
        tokens = f"; {judge.get('input_tokens', 0)} tokens in" + (f" ({share:.0%} from cache)" if share is not None else "")
        tokens += f", {judge.get('output_tokens', 0)} out"
        ratio = f"; {judge['ratio']:.2f} chars/token" if judge.get("ratio") else ""
        dropped = f"; dropped {judge['dropped']} (past 100)" if judge.get("dropped") else ""
        out.append(Text.assemble(("judge ", "bold"), (r["name"], "bold"), f": {shown}{tokens}{ratio}{dropped}"))
        last = judge.get("last")
        if last:
            woke = "woke the mind" if last.get("woke") else ("overtaken by a turn" if last.get("superseded") else "did not wake it")
            out.append(Text(f"  newest {when(last.get('at'))}: {str(last.get('verdict', '')).upper()} ({woke}): {last.get('reason', '')}"))
        out.extend(Text(f"  notice: {n}", style="bold yellow") for n in judge.get("notices") or [])
    return out


def gate(data: dict[str, Any]) -> list[RenderableType]:
    """`noemactl gate-status`: one mind's gate, or every mind's when noemad answered `{"minds": [...]}`."""
    if "minds" in data:
        if not data["minds"]:
            return [Text("no minds yet; create one with `noemactl mind create NAME`", style="dim")]
        out: list[RenderableType] = []
        for i, one in enumerate(data["minds"]):
            if i:
                out.append(Text(""))
            out.extend(gate(one))
        return out
    mind = data["mind"]
    head = Text.assemble(("gate of ", "bold"), (mind, "bold cyan"), (f"  (counters since {when(data.get('since'))})", "dim"))
    out = [head]
    sleep = data.get("sleeping")
    if sleep:
        note = f" ({sleep['note']})" if sleep.get("note") else ""
        out.append(Text.assemble(("sleeping", "bold yellow"), f" until {when(sleep.get('until'))}{note}"))
    else:
        out.append(Text("awake"))
    wake = data.get("self_wake")
    if wake:
        cause = f" (set by #{wake['cause']})" if wake.get("cause") else ""
        out.append(Text(f"self-wake at {when(wake.get('at'))}{cause}"))
    rows = data.get("rules") or []
    if rows:
        out.extend(
            columns(
                ["#", "RULE", "BEHAVIOUR", "MATCH", "MATCHES", "LAST MATCH", "PENDING", "NEXT DELIVERY", "STATE"],
                [
                    [
                        str(i),
                        Text(r["name"], style="bold"),
                        behaviour(r.get("behaviour")),
                        match(r.get("match")) + (f"; {extras(r)}" if extras(r) else ""),
                        str(r.get("matches", 0)),
                        when(r.get("last_match")),
                        str(r.get("pending") or "-"),
                        when(r.get("next_delivery")),
                        _rule_state(r),
                    ]
                    for i, r in enumerate(rows, 1)
                ],
                right=[0, 4, 6],
            )
        )
    else:
        out.append(Text("no wake rules", style="dim"))
    out.extend(_judge_lines(rows))
    out.append(Text.assemble(("default: ", "bold"), behaviour(data.get("default"))))
    upcoming = data.get("upcoming") or []
    if upcoming:
        out.append(Text(f"upcoming wakes ({len(upcoming)})", style="bold"))
        out.extend(
            Text(
                f"  {when(u.get('at'))}  {u.get('what')}" + (f" (rule {u['rule']})" if u.get("rule") else "")
                + (" (maybe)" if u.get("maybe") else "")
            )
            for u in upcoming
        )
    else:
        out.append(Text("no upcoming wakes", style="dim"))
    out.append(
        Text(
            f"held {data.get('held', 0)} (for the running turn or a resume), dropped {data.get('dropped', 0)} (past 100),"
            f" absorbed {data.get('absorbed', 0)} (batches a turn took before they were due)",
            style="dim",
        )
    )
    out.extend(_lines("left out", data.get("errors") or [], "bold red"))
    out.extend(_lines("note", data.get("notes") or [], "yellow"))
    out.extend(_lines("warning", data.get("warnings") or [], "bold yellow"))
    out.extend(governance(data.get("governance")))
    out.extend(connector_lines(data.get("connectors") or []))
    return out


def connector_lines(connectors: list[dict[str, Any]]) -> list[Text]:
    """gate-status's connector lines: each one's state and outbox (`noemactl connectors MIND` has the rest)."""
    out = []
    for c in connectors:
        line = Text.assemble(("connector ", "bold"), f"{c['key']}: {c['phase'].replace('_', ' ')}")
        if c.get("why"):
            line.append(f" ({c['why']})")
        line.append(f", {c['pending']} pending")
        if c["given_up"]:
            line.append(f", {c['given_up']} given up", style="bold red")
        out.append(line)
    return out


# sleep ---------------------------------------------------------------------------------


def slept(data: dict[str, Any]) -> Text:
    """`noemactl sleep`: until when, and who still wakes it."""
    note = f" ({data['note']})" if data.get("note") else ""
    who = data.get("privileged") or []
    still = f"; messages from {', '.join(who)} still wake it" if who else ""
    return Text(f"{data['mind']} sleeps until {when(data.get('until'))}{note}{still}")


def woke(data: dict[str, Any]) -> Text:
    """`noemactl wake`: awake now, or was not asleep."""
    if data.get("event") is None:
        return Text(f"{data['mind']} was not asleep; nothing changed")
    return Text(f"{data['mind']} is awake (event #{data['event']})")
