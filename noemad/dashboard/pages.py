"""The dashboard's pages: each reads the API (`Reader`) and renders escaped HTML.

Live parts (the event stream, job progress) and the buttons that change
state are driven by /static/dashboard.js through the same /api/v1 routes the
CLI uses; every button names its method and path in data attributes, and the
script sends exactly that.
"""

from __future__ import annotations

import json
from typing import Any

from noemad.dashboard.html import Markup, h, join, page, pct, section, seg, short, table, tag, when
from noemad.rules.phrasing import behaviour_words, extras_words, match_words
from noemad.dashboard.layout import lay_out
from noemad.dashboard.reads import Reader
from noemad.dashboard.svg import calibration, confidence_chart, edge_list, timeline

BELIEF_STATUSES = ("active", "contested", "rejected", "pinned")
MEMORY_KINDS = ("episodic", "semantic", "procedural")
EVIDENCE_SHOWN = 25  # beliefs whose evidence is read for the page


def action(label: str, method: str, path: str, body: dict[str, Any] | None = None, confirm: str | None = None, field: str | None = None) -> Markup:
    """A button the script turns into `method /api/v1{path}` with `body` (and a text field's value, when `field` names one)."""
    return tag(
        "button",
        label,
        type="button",
        class_="action",
        data_method=method,
        data_path="/api/v1" + path,
        data_body=json.dumps(body) if body is not None else None,
        data_confirm=confirm,
        data_field=field,
    )


def _status_line(status: dict[str, Any], schedules: list[dict[str, Any]]) -> Markup:
    holds = status["models"].get("holds") or []
    paused = [s["kind"] for s in schedules if s["paused"]]
    parts = [
        f"noemad {status['version']}",
        f"up {_span(status['uptime_s'])}",
        f"models: {status['models']['provider']}" + (f", {len(holds)} on hold" if holds else ""),
        f"schedules paused: {', '.join(paused)}" if paused else "schedules running",
        f"jobs running: {len(status['jobs']['running'])}" if isinstance(status["jobs"]["running"], list) else f"jobs running: {status['jobs']['running']}",
    ]
    replica = status.get("replica")
    if replica:  # the store's Litestream replica: its state, and how far behind when known
        lag = replica.get("lag_s")
        parts.append(f"replica: {replica['state']}" + (f", {lag:.1f}s behind" if lag is not None else ""))
    # The daemon's now: the script tells times relative to it (a manual clock included).
    return tag("p", join(parts, " · "), class_="status", id="daemon-status", data_now=status.get("now"))


def _span(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h {seconds % 3600 // 60}m"


async def status_line(api: Reader) -> Markup:
    return _status_line(await api.get("/status"), (await api.get("/schedules"))["schedules"])


# --- Minds ----------------------------------------------------------------------------------


async def minds_page(api: Reader) -> str:
    listed = (await api.get("/minds"))["minds"]
    rows = []
    for mind in listed:
        name = mind["name"]
        overview = await api.get(f"/minds/{seg(name)}")
        open_notes = (await api.get(f"/minds/{seg(name)}/notifications", status="open", limit=1000))["notifications"]
        last_turn = await _last_turn(api, name)
        warnings = overview["warnings"][:2]
        rows.append([
            tag("a", name, href=f"/minds/{seg(name)}"),
            tag("span", overview["mode"], class_=f"mode mode-{overview['mode']}", data_mode=name),
            overview["events"],
            last_turn,
            len(open_notes),
            join((tag("span", f"{w['check']}: {short(w['text'], 70)}", class_="warning") for w in warnings), Markup("<br>")) if warnings else "none",
        ])
    body = table(["Mind", "Mode", "Events", "Last turn", "Open notifications", "Newest warnings"], rows, "Every mind", "No minds yet: create one with `noemactl mind create NAME` or play the demo with `noemactl demo`.")
    live = tag("div", body, data_modes="/api/v1/minds")  # the script keeps each mode current
    return page("Minds", live, [("Minds", None)], await status_line(api))  # the page's heading names it once


async def _last_turn(api: Reader, name: str) -> Markup:
    """When the mind's newest cycle completed: the events API reads oldest first, so page to the end."""
    since, newest = 0, None
    while True:
        page_ = await api.get(f"/minds/{seg(name)}/events", kind="cycle_completed", since=since, limit=1000)
        if not page_["events"]:
            return when(newest["at"]) if newest else h("no turn yet")
        newest, since = page_["events"][-1], page_["next_since"]


# --- A mind ---------------------------------------------------------------------------------


def _tabs(name: str, current: str) -> Markup:
    items = [("Overview", f"/minds/{seg(name)}"), ("Background", f"/minds/{seg(name)}/background")]
    return tag("nav", tag("ul", join(
        tag("li", tag("span", text, aria_current="page") if text == current else tag("a", text, href=link)) for text, link in items
    ), class_="tabs"), aria_label="Mind views")


def _ref(ref: str | None) -> Markup | str:
    """A warning's `belief:1` as a link where the dashboard has a place for it."""
    return ref or ""


async def mind_page(api: Reader, name: str, query: dict[str, str]) -> str:
    m = seg(name)
    overview = await api.get(f"/minds/{m}")
    story = await api.get(f"/minds/{m}/narrative")
    parts: list[Any] = [_tabs(name, "Overview")]
    parts.append(tag("p", "Mode: ", tag("strong", overview["mode"], data_mode=name), f" · {overview['events']} events",
                     " · a turn is running" if overview["turn_running"] else "", class_="lead"))
    parts.append(section("What it says it is doing", "narrative",
                         tag("blockquote", story["text"]) if story.get("text") else tag("p", "No narrative yet: the mind has not taken a turn.", class_="empty"),
                         tag("p", tag("a", "walk the narrative's causes", href=f"/events/{story['event_id']}/timeline")) if story.get("event_id") else ""))
    warnings = overview["warnings"]
    parts.append(section("Warnings", "warnings", table(
        ["When", "Check", "About", "What it did", "Walk"],
        [[when(w["at"]), w["check"], _ref(w.get("ref")), w["text"], tag("a", f"#{w['event']}", href=f"/events/{w['event']}/timeline")] for w in warnings],
        "The newest metacognition warnings", "No warnings: no check has fired for this mind.")))
    parts.append(await _beliefs(api, m, query.get("status")))
    parts.append(await _memories(api, m, query))
    goals = (await api.get(f"/minds/{m}/goals"))["goals"]
    parts.append(section("Goals", "goals", table(
        ["#", "Goal", "Status", "Progress", "Set by", "Updated"],
        [[g["id"], g["title"], g["status"], pct(g["progress"]), "an operator" if g["origin"] == "operator" else "the mind", when(g["updated_at"])]
         for g in goals],
        "Goals, oldest first", "No goals.")))
    parts.append(await _predictions(api, m))
    parts.append(await _notifications(api, m))
    usage = (await api.get("/usage", mind=name, by="role"))["rows"]
    parts.append(section("Usage by role", "usage", table(
        ["Role", "Calls", "OK", "Failed", "Input tokens", "Cache read", "Output tokens", "Cost", "Cache hit rate"],
        [[u["role"], u["calls"], u["ok"], u["failed"], u["input_tokens"], u["cache_read_tokens"], u["output_tokens"], f"${u['cost_usd']:.4f}", pct(u["cache_hit_rate"])] for u in usage],
        "Model spend by role", "No model calls yet (no model configured, or none needed).")))
    parts.append(await _gate(api, m))
    parts.append(await _connectors(api, m))
    parts.append(section("Live events", "live",
                         tag("p", "New events appear here as the mind writes them.", class_="hint"),
                         tag("ol", join(tag("li", tag("a", f"#{e['id']}", href=f"/events/{e['id']}/timeline"), f" {e['kind']} · {e['actor']} · {short(e.get('text'), 100)}")
                                        for e in reversed(overview["recent"])), class_="stream", data_stream=f"/api/v1/minds/{m}/events/stream", aria_live="polite")))
    return page(name, join(parts), [("Minds", "/"), (name, None)], await status_line(api))


async def _beliefs(api: Reader, m: str, status: str | None) -> Markup:
    status = status if status in BELIEF_STATUSES else None
    listed = (await api.get(f"/minds/{m}/beliefs", status=status))["beliefs"]
    rows = []
    for n, b in enumerate(listed):
        evidence: Any = f"{b['support']} for, {b['contradict']} against"
        if n < EVIDENCE_SHOWN:
            full = await api.get(f"/beliefs/{b['id']}")
            items = [tag("li", f"{e['stance']}: {e['source']} ({e['kind']}, weight {e['weight']:.2f}, credibility {e['credibility']:.2f}) ",
                         tag("a", f"event #{e['event_id']}", href=f"/events/{e['event_id']}/timeline"),
                         *([" withdrawn (no longer counted) by ", tag("a", f"event #{e['withdrawn_by']}", href=f"/events/{e['withdrawn_by']}/timeline")]
                           if e.get("withdrawn_by") is not None else []))
                     for e in full.get("evidence") or []]
            evidence = tag("details", tag("summary", evidence), tag("ul", join(items)))
        rows.append([tag("a", f"#{b['id']}", href=f"/beliefs/{b['id']}", aria_label=f"belief #{b['id']}: its history"), b["proposition"], b["subject"],
                     b["status"], f"{b['confidence']:.2f}", evidence])
    choose = tag("form", tag("label", "Status ", tag("select", join(
        [tag("option", "any", value="")] + [tag("option", s, value=s, selected=s == status) for s in BELIEF_STATUSES]), name="status")),
        tag("button", "Filter", type="submit"), method="get", action="#beliefs", class_="filter")
    return section("Beliefs", "beliefs", choose, table(["#", "Proposition", "Subject", "Status", "Confidence", "Evidence"], rows,
                                                       "Beliefs, most confident first", "No beliefs" + (f" with status {status}." if status else ".")))


async def belief_page(api: Reader, belief_id: int) -> str:
    """One belief: what it holds, its confidence over every change (each a link to that event's timeline), the changes as a table, its evidence."""
    b = await api.get(f"/beliefs/{belief_id}")
    steps = (await api.get(f"/beliefs/{belief_id}/history"))["steps"]
    facts = tag("p", f"{b['proposition']} · subject {b['subject']} · {b['kind']} · {b['status']} at {b['confidence']:.2f} · "
                     f"{b['support']} for, {b['contradict']} against", class_="belief-facts")
    rows = [
        [tag("a", f"#{s['event_id']}", href=f"/events/{s['event_id']}/timeline"), when(s["at"]), f"{s['confidence_from']:.2f} → {s['confidence_to']:.2f}",
         s["status_to"] if s["status_from"] == s["status_to"] else f"{s['status_from']} → {s['status_to']}", s["by"], s["actor"],
         tag("a", f"#{s['cause']} {s.get('cause_kind') or ''}", href=f"/events/{s['cause']}/timeline") if s.get("cause") else "", _behind(s)]
        for s in steps
    ]
    changes = section("Confidence over time", "history", tag("div", confidence_chart(steps), class_="graph-wrap"),
                      table(["Event", "When", "Confidence", "Status", "By", "Actor", "Cause", "Behind it"], rows,
                            "Every change of its confidence and status, oldest first", "No changes recorded."))
    items = [tag("li", f"{e['stance']}: {e['source']} ({e['kind']}, weight {e['weight']:.2f}, credibility {e['credibility']:.2f}) ",
                 tag("a", f"event #{e['event_id']}", href=f"/events/{e['event_id']}/timeline"),
                 " withdrawn (no longer counted)" if e.get("withdrawn_by") is not None else "")
             for e in (b.get("evidence") or [])[-200:]]
    evidence = section("Evidence", "evidence", tag("ul", join(items)) if items else tag("p", "No evidence.", class_="empty"))
    crumbs = [("Minds", "/"), (b["mind"], f"/minds/{b['mind']}"), (f"belief #{belief_id}", None)]
    return page(f"Belief #{belief_id}", join([facts, changes, evidence]), crumbs, await status_line(api))


def _behind(step: dict[str, Any]) -> str:
    item = step.get("evidence") or {}
    if "withdrawn" in item:
        return f"withdrew {len(item['withdrawn'])} item(s)" + (f" of warning {step['warning']}" if step.get("warning") else "")
    if "count" in item:
        return f"{item['count']} items ({item['support']} for, {item['contradict']} against)"
    if "stance" in item:
        return f"{item['stance']} from {item['source']}"
    return step.get("reason") or ""


async def _memories(api: Reader, m: str, query: dict[str, str]) -> Markup:
    search = query.get("search") or None
    kind = query.get("kind") if query.get("kind") in MEMORY_KINDS else None
    retracted = query.get("retracted") == "1"
    listed = (await api.get(f"/minds/{m}/memories", search=search, kind=kind))["memories"]
    shown = [x for x in listed if retracted or x.get("status") != "retracted"]
    form = tag("form",
               tag("label", "Search ", tag("input", type="search", name="search", value=search or "")),
               tag("label", "Kind ", tag("select", join([tag("option", "any", value="")] + [tag("option", k, value=k, selected=k == kind) for k in MEMORY_KINDS]), name="kind")),
               tag("label", tag("input", type="checkbox", name="retracted", value="1", checked=retracted), " show retracted"),
               tag("button", "Show", type="submit"), method="get", action="#memories", class_="filter")
    rows = [[x["id"], x["kind"], x["text"], x.get("status", ""), f"{x['importance']:.2f}", tag("a", f"#{x['event_id']}", href=f"/events/{x['event_id']}/timeline") if x.get("event_id") else ""] for x in shown]
    hidden = len(listed) - len(shown)
    note = tag("p", f"{hidden} retracted not shown.", class_="hint") if hidden else ""
    return section("Memories", "memories", form, table(["#", "Kind", "Text", "Status", "Importance", "Event"], rows, "Memories" + (" matching the search" if search else ""), "No memories match."), note)


async def _predictions(api: Reader, m: str) -> Markup:
    listed = (await api.get(f"/minds/{m}/predictions"))["predictions"]
    cal = await api.get(f"/minds/{m}/calibration")
    rows = [[p["id"], p["proposition"], f"{p['stated_confidence']:.2f}", p["status"] + (" (overdue)" if p.get("overdue") else ""), when(p["due_at"]), p.get("observed") or ""] for p in listed]
    brier = "no resolved predictions yet" if cal.get("brier") is None else f"Brier score {cal['brier']:.3f} over {cal['resolved']} resolved ({cal['hits']} hit, mean stated {cal['mean_stated']:.2f}, hit rate {pct(cal['hit_rate'])})" + ("; overconfident" if cal.get("overconfident") else "")
    return section("Predictions", "predictions",
                   table(["#", "Prediction", "Stated", "Status", "Due", "Observed"], rows, "Predictions, soonest due first", "No predictions."),
                   tag("figure", calibration(cal), tag("figcaption", f"Calibration: {brier}. The diagonal is perfect calibration; each circle is a bin, its number the predictions in it."), class_="calibration"))


async def _notifications(api: Reader, m: str) -> Markup:
    listed = (await api.get(f"/minds/{m}/notifications"))["notifications"]
    rows = [[n["id"], n["title"], n["rule"], n["count"], n["status"], tag("a", f"#{n['event_id']}", href=f"/events/{n['event_id']}/timeline"),
             action("Acknowledge", "POST", f"/notifications/{n['id']}/ack") if n["status"] == "open" else join(["acked ", when(n.get("acked_at"), "")])] for n in listed]
    return section("Notifications", "notifications", table(["#", "Title", "Rule", "Times", "Status", "Event", ""], rows, "Notifications, newest first", "No notifications."))


async def _gate(api: Reader, m: str) -> Markup:
    rules = await api.get(f"/minds/{m}/rules")
    gate = await api.get(f"/minds/{m}/gate")
    # Worded as `noemactl rules list` words them (noemad.rules.phrasing holds the one phrasing).
    rows = [[n + 1, r.get("name"), join([match_words(r.get("match"))] + ([f"; {extras_words(r)}"] if extras_words(r) else [])),
             behaviour_words(r.get("behaviour"))] for n, r in enumerate(rules["rules"])]
    sleeping = gate.get("sleeping")
    facts: list[Any] = [
        join([tag("strong", "default: "), behaviour_words(rules["default"]), " (for stimuli no rule matches)"]),
        join(["sleeping until ", when(sleeping.get("until"))]) if isinstance(sleeping, dict) else "awake",
        f"held {gate.get('held', 0)}, dropped {gate.get('dropped', 0)}, absorbed {gate.get('absorbed', 0)}",
    ]
    governance = gate.get("governance") or {}
    if governance.get("off"):
        facts.append(f"governance off: {governance['off']}")
    return section("Rules and gate", "gate", tag("ul", join(tag("li", f) for f in facts)),
                   table(["Order", "Rule", "Matches", "Behaviour"], rows, "Wake rules in the order they are asked", "No wake rules: the default decides."))


async def _connectors(api: Reader, m: str) -> Markup:
    listed = (await api.get(f"/minds/{m}/connectors"))["connectors"]
    rows = []
    for c in listed:
        state = c["state"]
        phase = state["phase"].replace("_", " ") + (f" ({state['why']})" if state.get("why") else "")
        out = c["outbox"]
        rows.append([c["key"], phase, ", ".join(state.get("rooms") or []) or "–", when(state.get("last_sync")), out["pending"], out["sent"],
                     out["given_up"], f"{out['lag_s']:.0f} s" if out.get("lag_s") is not None else "–", state.get("last_error") or ""])
    given_up = [[d["id"], c["key"], d["what"], tag("a", f"#{d['event_id']}", href=f"/events/{d['event_id']}/timeline"), d["attempts"],
                 d.get("last_error") or "", action("Retry", "POST", f"/minds/{m}/deliveries/{d['id']}/retry")]
                for c in listed for d in c["given_up"]]
    return section("Connectors", "connectors",
                   table(["Connector", "State", "Rooms", "Last sync", "Pending", "Sent", "Given up", "Lag", "Last error"], rows,
                         "The rooms and webhooks it lives in, and their outboxes", "No connectors: add [[minds.NAME.connectors]] to noemad.toml."),
                   table(["Delivery", "Connector", "What", "Event", "Attempts", "Error", ""], given_up,
                         "Deliveries given up (Retry sends one again)", "No delivery given up.") if given_up else "")


# --- Background ------------------------------------------------------------------------------


async def background_page(api: Reader, name: str) -> str:
    m = seg(name)
    await api.get(f"/minds/{m}")  # 404 for an unknown mind
    jobs = (await api.get("/jobs", mind=name))["jobs"]
    schedules = (await api.get("/schedules"))["schedules"]
    run = tag("p", action("Run reflection now", "POST", f"/minds/{m}/jobs", {"kind": "reflection"}), " ",
              action("Run consolidation now", "POST", f"/minds/{m}/jobs", {"kind": "consolidation"}), class_="actions")
    sched_rows = [[s["kind"], join(["paused"] + ([f" by {s['actor']}, ", when(s.get("paused_at"))] if s.get("actor") else [])) if s["paused"] else "running", s["every"],
                   action("Resume" if s["paused"] else "Pause", "PUT", f"/schedules/{s['kind']}", {"paused": not s["paused"]})] for s in schedules]
    made = {c["memory"] for j in jobs for c in (j.get("outputs") or {}).get("clusters") or [] if c.get("memory")}
    retracted = {m for m in made if (await api.get(f"/memories/{m}")).get("status") == "retracted"}
    job_rows = [[j["id"], j["kind"], j["trigger"], when(j["started_at"]), _progress(j), _found(j, retracted)] for j in jobs]
    body = join([
        _tabs(name, "Background"),
        section("Run now", "run", run, tag("p", "A job starts at once and its progress shows below.", class_="hint")),
        section("Schedules", "schedules", tag("p", "Pausing a kind's scheduled runs applies to every mind; run-now still works.", class_="hint"),
                table(["Kind", "State", "Every", ""], sched_rows, "Scheduled runs", "No schedules.")),
        section("Jobs", "jobs", table(["#", "Kind", "Trigger", "Started", "Progress", "What it found"], job_rows, "Jobs, newest first", "No jobs yet for this mind.")),
    ])
    return page(f"{name}: background", body, [("Minds", "/"), (name, f"/minds/{m}"), ("Background", None)], await status_line(api))


def _progress(job: dict[str, Any]) -> Markup:
    value = f"{job['progress']:.2f}"
    text = f"{job['status']} · {job['stage']} · {pct(job['progress'])}"
    attrs = {"data_job": job["id"]} if job["status"] == "running" else {}
    return tag("div", tag("progress", text, value=value, max="1", aria_label=f"job {job['id']} progress"), tag("span", text, class_="job-state"), class_="job", **attrs)


def _found(job: dict[str, Any], retracted: set[int]) -> Markup:
    out = job.get("outputs") or {}
    items: list[Any] = []
    if job.get("error"):
        items.append(tag("li", f"failed: {job['error']}"))
    if out.get("summary"):
        items.append(tag("li", out["summary"]))
    if out.get("event"):
        items.append(tag("li", tag("a", f"walk event #{out['event']}", href=f"/events/{out['event']}/timeline")))
    for cluster in out.get("clusters") or []:
        memory = cluster.get("memory")
        links = [cluster.get("proposition") or ""]
        if cluster.get("belief_event"):
            links += [" ", tag("a", f"belief #{cluster.get('belief')}", href=f"/events/{cluster['belief_event']}/timeline")]
        if memory in retracted:
            links += [" ", tag("em", f"memory #{memory} retracted")]
        elif memory:
            links += [" ", action(f"Reject memory #{memory}", "POST", f"/memories/{memory}/reject", {"reason": "rejected from the dashboard"}, confirm=f"Reject the generalisation in memory #{memory}? It is retracted and its belief rejected.")]
        items.append(tag("li", *links))
    for lesson in out.get("lessons") or []:
        if isinstance(lesson, dict):
            items.append(tag("li", lesson.get("text") or json.dumps(lesson, sort_keys=True)))
    return tag("ul", join(items), class_="found") if items else Markup("")


# --- Timeline --------------------------------------------------------------------------------


async def timeline_page(api: Reader, event_id: int, controls: dict[str, int | None]) -> str:
    chain = await api.get(f"/events/{event_id}/chain", **controls)
    limits = chain["limits"]
    chosen = {"back": limits["back"], "forward": limits["forward"], "limit": limits["limit"]}
    layout = lay_out(chain)
    root = next(n for n in chain["nodes"] if n["id"] == chain["root"])
    cut = chain["truncation"]
    said = (
        f"The walk was cut by {' and '.join(cut['by'])}: {cut['omitted_back']} more causes and {cut['omitted_forward']} more consequences are not shown. Raise the hops or the cap to see them."
        if cut.get("truncated") else "The walk is whole: no limit cut it."
    )
    form = tag("form",
               tag("label", "Hops back ", tag("input", type="number", name="back", min="0", max="6", value=chosen["back"])),
               tag("label", "Hops forward ", tag("input", type="number", name="forward", min="0", max="6", value=chosen["forward"])),
               tag("label", "Most events ", tag("input", type="number", name="limit", min="1", max="200", value=chosen["limit"])),
               tag("button", "Walk again", type="submit"), method="get", class_="filter controls")
    legend = tag("ul", tag("li", tag("span", "———", class_="key key-caused"), " caused"), tag("li", tag("span", "– – –", class_="key key-parent"), " parent"),
                 tag("li", tag("span", "·······", class_="key key-cited"), " cited"), tag("li", "dashed frame: one cycle (correlation, not causation)"),
                 tag("li", "◆ a model call the event cites"), class_="legend")
    body = join([
        tag("p", f"Event #{root['id']} {root['kind']} of ", tag("a", root["mind"], href=f"/minds/{seg(root['mind'])}"), f" by {root['actor']}, ", when(root["at"]), ": ", tag("q", root.get("text") or ""), class_="lead"),
        tag("p", "Causes on the left, consequences on the right. Every arrow is a link stored with the events; where nothing says why, no arrow is drawn. Select an event to walk from it.", class_="hint"),
        form,
        tag("p", said, class_="cut-note"),
        archived_note(chain),
        legend,
        tag("div", timeline(layout, chain, chosen), class_="graph-wrap"),
        section("The links as text", "links", edge_list(chain)),
        section("Cut by archiving", "cuts", cut_list(chain)) if chain.get("cuts") else Markup(""),
    ])
    return page(f"Timeline of event #{event_id}", body, [("Minds", "/"), (root["mind"], f"/minds/{seg(root['mind'])}"), (f"event #{event_id}", None)], await status_line(api))


def archived_note(chain: dict[str, Any]) -> Markup:
    """Where archiving cut this walk, in a sentence: inside an archive file, or at links into one."""
    if chain.get("archive"):
        return tag("p", f"Event #{chain['root']} is archived: this walk ran inside the archive file {chain['archive']}.", class_="cut-note")
    cuts = chain.get("cuts") or []
    if cuts:
        return tag("p", f"{len(cuts)} link{'' if len(cuts) == 1 else 's'} lead{'s' if len(cuts) == 1 else ''} to archived events; the walk stops there (see Cut by archiving).", class_="cut-note")
    return Markup("")


def cut_list(chain: dict[str, Any]) -> Markup:
    """Each link archiving cut: the kept event, the link, the archived event and the file that holds it."""
    items = [
        tag("li", tag("a", f"#{c['event']}", href=f"/events/{c['event']}/timeline"),
            f" {'◀' if c['side'] == 'cause' else '▶'} {c['link']} #{c['archived']}, archived in ", tag("code", c["path"]))
        for c in chain["cuts"]
    ]
    return tag("ul", join(items), class_="edge-list")


def error_page(status: int, detail: str) -> str:
    return page(f"{status}: cannot show this", tag("p", detail, class_="problem"), [("Minds", "/"), ("error", None)])
