"""The demo's six scenarios, each a function that plays into one fresh mind through a `Player`, and `choose`, which picks them by name or number.

Each sends ordinary stimuli over the API (what `noemactl say`, `observe`,
`predict` and `outcome` send), waits for the mind's turn to end, reads back
what the mind concluded, and says what happened with the commands to explore
it. `noemactl demo` (`noemactl.demo`) says which a daemon can play.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from noemactl.demo_player import Player
from noemactl.errors import BadInput, CtlError

DRAFT = "The migration is at 14:00 on 3 servers."  # what the demo's script drafts first in the critic scenario (noemad keeps no draft's text)


def single_source(p: Player) -> None:
    """A belief from a single source draws `single_source` and `insufficient_evidence` warnings."""
    p.s.client.set_trust(p.mind, "build-monitor", 0.9)
    p.say("The mind trusts build-monitor at 0.9. build-monitor reports, once, that the build server is down.")
    stored = p.send(
        {
            "kind": "observation",
            "source": "build-monitor",
            "text": "the build server is down",
            "claim": {"proposition": "the build server is down", "subject": "build server", "stance": "supports"},
        }
    )
    beliefs = p.s.client.beliefs(p.mind, "build server", None, 10)["beliefs"]
    if not beliefs:
        raise CtlError("the observation made no belief; the demo cannot go on")
    belief = p.s.client.belief(beliefs[0]["id"])
    created = next(e for e in p.events("belief_created", since=stored["id"]))
    first = created["data"]["confidence"]["to"]
    warnings = p.events("metacognition", since=stored["id"])
    checks = sorted({w["data"]["check"] for w in warnings})
    p.found.update(belief=belief["id"], warnings=[w["id"] for w in warnings], checks=checks, confidence=belief["confidence"])
    p.say(f"It now believes \"{belief['proposition']}\" (belief #{belief['id']}): one credible item took it to {first:.2f}.")
    if checks:
        p.say(
            f"Metacognition audited that belief in the same cycle and warned: {', '.join(checks)}"
            f" — one supporting item, all from one source."
        )
        p.say(f"The admitted warnings added counter-evidence from metacognition: confidence is now {belief['confidence']:.2f}.")
    else:
        p.say("Metacognition raised no warning this time.")
    p.explore(f"noemactl belief {belief['id']}", f"noemactl timeline {warnings[0]['id'] if warnings else created['id']}", f"noemactl mind show {p.mind}")


def prediction_miss(p: Player) -> None:
    """Confident predictions miss; the beliefs they rested on are updated, a notification fires, reflection writes a lesson."""
    p.say("The mind predicts, three times at 0.9, that a deploy finishes without a rollback; each one misses.")
    resolved: list[dict[str, Any]] = []
    for n, service in enumerate(("api", "billing", "search"), start=1):
        proposition = f"the {service} deploy finishes without a rollback"
        p.send(
            {
                "kind": "prediction",
                "proposition": proposition,
                "subject": "deploy",
                "confidence": 0.9,
                "due": "1h",
            }
        )
        prediction = next(x for x in p.s.client.predictions(p.mind, "open", 100)["predictions"] if x["proposition"] == proposition)
        outcome = p.send({"kind": "outcome", "prediction": prediction["id"], "result": "miss", "observed": f"rolled back ({n} of 3)"})
        resolved.extend(p.events("prediction_resolved", since=outcome["id"]))
    updated = p.events("belief_updated", since=resolved[0]["id"]) if resolved else []
    notes = p.s.client.notifications(p.mind, None, 100)["notifications"]
    misses = [x for x in notes if x["rule"] == "prediction_miss"]
    p.say(
        f"{len(resolved)} predictions resolved as misses; {len(updated)} belief updates followed downstream of the outcomes."
    )
    if misses:
        note = misses[0]
        p.say(f"Notification #{note['id']} fired ({note['rule']}): {note['title']} — counted {note['count']}x.")
    job = p.job("reflection")
    out = job["outputs"]
    lessons = out.get("lessons", [])
    p.found.update(predictions=[e["id"] for e in resolved], notifications=[x["id"] for x in misses], reflection=out.get("event"), lessons=lessons)
    p.say(f"Reflection (job {job['id']}): {out.get('summary', '')}")
    for memory_id in lessons:
        memory = p.s.client.memory(memory_id)
        p.say(f"  lesson, procedural memory #{memory_id}: {memory['text']}")
    if out.get("event"):
        prose = p.s.client.event(out["event"])["text"] or ""
        by = out.get("rendered_by", "plain") + (f", {out['reason']}" if out.get("reason") else "")
        p.say(f"  what it wrote ({by}):")
        for line in prose.splitlines():
            p.say(f"    {line}")
    p.explore(f"noemactl notifications {p.mind}", f"noemactl calibration {p.mind}", f"noemactl timeline {out.get('event')}", f"noemactl jobs show {job['id']}")


GO_MESSAGES = (
    "I'll select Go for the new parser",
    "the coffee machine on floor two is broken again",
    "Selected Go again for the metrics service",
    "we select Go for the importer too",
    "lunch at noon on Friday?",
    "Go is what I select for the scheduler",
    "select Go for the CLI rewrite, as usual",
)


def go(p: Player) -> None:
    """"User repeatedly selects Go": consolidation makes a generalisation belief and a semantic memory."""
    p.say(f"alice tells the mind {len(GO_MESSAGES)} things; five of them are about picking Go.")
    for text in GO_MESSAGES:
        p.send({"kind": "message", "author": "alice", "channel": "cli", "text": text, "mentions": []})
    job = p.job("consolidation")
    out = job["outputs"]
    clusters = out.get("clusters", [])
    p.found.update(consolidation=out.get("event"), clusters=clusters)
    p.say(f"Consolidation (job {job['id']}): {out.get('summary', '')}")
    if not clusters:
        p.say("No cluster was large enough this time.")
        return
    cluster = clusters[0]
    belief = p.s.client.belief(cluster["belief"])
    p.say(
        f"Belief #{belief['id']} ({belief['kind']}, confidence {belief['confidence']:.2f} from {len(belief['evidence'])} episodes"
        f" at weight 0.3, one source): {belief['proposition']}"
    )
    p.say(f"Semantic memory #{cluster['memory']} says the same, derived from each episode; wording: {cluster.get('worded_by', 'plain')}.")
    created = cluster["belief_event"]  # the belief_created event the job wrote
    from noemactl.timeline_view import tree

    p.say(f"The timeline walks from the belief back to the episodes (noemactl timeline {created} --forward 0):")
    if not p.as_json:
        p.s.output.show(*tree(p.s.client.chain(created, back=3, forward=0, limit=60)))
    p.found["belief_event"] = created
    p.explore(f"noemactl belief {belief['id']}", f"noemactl memories {p.mind} --search go", f"noemactl consolidate reject {cluster['memory']} --reason 'not a habit'")


ROOM = "room:general"
LUNCH = (("bob", "lunch at noon?"), ("carol", "sure, the usual place"), ("bob", "I'll book a table for four"))


def _quoted(event: dict[str, Any]) -> str:
    return f"\"{event['text']}\""


def gate(p: Player) -> None:
    """A DM wakes the mind at once, room talk is batched by a debounce, a mention cuts through the batch."""
    rules = (
        {"name": "dms", "match": {"flags": ["dm", "mention"]}, "behaviour": "always"},
        {"name": "ambient", "match": {"kinds": ["message"], "channel": "room:*"}, "behaviour": {"debounce": {"ms": 2000}}},
    )
    for rule in rules:
        p.s.client.add_rule(p.mind, rule, None)
    p.say(f"{p.mind} has two wake rules: dms wakes it at once for a DM or a mention; ambient batches the talk in room:*,")
    p.say("one turn for the batch once 2 s pass with no new line.")
    dm = p.message("alice", "are you around?", "dm:alice", dm=True)
    woke = p.turn(dm["id"]).started
    p.say(f"alice's DM (event #{dm['id']}) woke it at once: cycle_started #{woke['id']} says {_quoted(woke)}.")

    from noemactl.render import when

    talk = [p.message(author, text, ROOM) for author, text in LUNCH[:2]]
    ambient = next(r for r in p.gate()["rules"] if r["name"] == "ambient")
    p.say(
        f"bob and carol talk in {ROOM} (events #{talk[0]['id']}, #{talk[1]['id']}): no turn yet; gate-status shows rule ambient"
        f" holding {ambient['pending']}, due at {when(ambient['next_delivery'])}."
    )
    p.after(2.0)
    batch = p.turn(talk[-1]["id"]).started
    p.say(f"2 s after the last line one turn took the batch: cycle_started #{batch['id']} says {_quoted(batch)}.")

    more = p.message(*LUNCH[2], ROOM)
    mention = p.message("dave", f"{p.mind}, can you sum up the thread?", ROOM, mentions=[p.mind])
    cut = p.turn(mention["id"]).started
    status = p.gate()
    from noemactl.reply import cites

    along = "took bob's line along" if cites(cut, more["id"]) else "bob's line had already had its own turn"
    p.say(
        f"bob adds a line (#{more['id']}, batched again), then dave mentions {p.mind} (#{mention['id']}): the mention cut"
        f" through at once and {along}: cycle_started #{cut['id']} says {_quoted(cut)}."
    )
    p.say(f"gate-status counts it: absorbed {status['absorbed']} (a batch a turn took before it was due).")
    p.found.update(dm=dm["id"], batch=batch["id"], mention=mention["id"], cut=cut["id"], absorbed=status["absorbed"])
    p.explore(f"noemactl gate-status {p.mind}", f"noemactl rules {p.mind}", f"noemactl events {p.mind} --kind cycle_started", f"noemactl timeline {cut['id']}")


def _newest_verdict(p: Player, rule: str, verdict: dict[str, Any]) -> str:
    """The judge's reason for `verdict`: gate-status keeps the newest verdict's (the event does not: it may repeat what was said)."""
    judged = next(r for r in p.gate()["rules"] if r["name"] == rule)["judge"]
    last = judged.get("last") or {}
    if last.get("call") != verdict["data"].get("call"):
        return "(a newer verdict has taken its place in gate-status)"
    return f"{str(last['verdict']).upper()}: {last['reason']}"


def judge(p: Player) -> None:
    """The judge, a small model, reads each batch of room talk: WAIT wakes no turn, REPLY wakes the mind; gate-status shows why."""
    from noemactl.reply import cites

    instructions = "Wake me when someone asks about the build."
    rule = {
        "name": "room",
        "match": {"kinds": ["message"], "channel": "room:*"},
        "behaviour": {"judge": {"debounce_ms": 1500, "instructions": instructions}},
    }
    p.s.client.add_rule(p.mind, rule, None)
    p.say(f"{p.mind}'s rule room hands each batch of talk in room:* to the judge, 1.5 s after its last line,")
    p.say(f"with the mind's instructions: \"{instructions}\"")

    talk = [p.message(author, text, ROOM) for author, text in LUNCH[:2]]
    p.after(1.5)
    waited = p.first(("judge_verdict",), talk[0]["id"], lambda e: cites(e, talk[-1]["id"]), "the judge gave no verdict on the lunch talk")
    p.say(f"bob and carol plan lunch (events #{talk[0]['id']}, #{talk[1]['id']}). judge_verdict #{waited['id']}: {waited['text']}.")
    p.say(f"  {_newest_verdict(p, 'room', waited)}")
    p.say("  The lines are stored and in the mind's context; it reads them when it next wakes.")

    question = p.message("bob", "is the build green again? does anyone know?", ROOM)
    p.after(1.5)
    replied = p.first(("judge_verdict",), question["id"], lambda e: cites(e, question["id"]), "the judge gave no verdict on bob's question")
    p.say(f"bob asks about the build (event #{question['id']}). judge_verdict #{replied['id']}: {replied['text']}.")
    p.say(f"  {_newest_verdict(p, 'room', replied)}")
    shown = p.gate()
    if replied["data"].get("woke"):
        turn = p.turn(question["id"])
        answer = turn.reply
        p.say(f"cycle_started #{turn.started['id']} says {_quoted(turn.started)}.")
        if answer is not None and answer["kind"] == "reply":
            p.say(f"{p.mind} answered in {ROOM} (reply #{answer['id']}): {_quoted(answer)}")
        p.found.update(turn=turn.started["id"], reply=answer["id"] if answer else None)
    p.found.update(wait=waited["id"], reply_verdict=replied["id"], verdicts=[waited["data"]["verdict"], replied["data"]["verdict"]])
    p.say(f"`noemactl gate-status {p.mind}` shows the rule, its verdicts and the newest reason:")
    p.show_gate(shown)
    p.explore(
        f"noemactl events {p.mind} --kind judge_verdict",
        f"noemactl timeline {replied['id']}",
        f"noemactl usage {p.mind} --by role",
    )


TRIGGERS = {
    "fabrication_finding": "a number, name, ID or link nothing in the context supports",
    "draft_claim": "a claim in the draft",
    "intent:action": "a message asking for action",
    "intent:ambiguous": "a message in a language the gate does not know",
    "mutating_tool": "a tool call not named read-only",
    "sensitive_term": "a configured sensitive term",
    "not_trivial_ack": "not a short acknowledgment, and only those skip",
}


def _pass(event: dict[str, Any]) -> str:
    """One governance pass in words, from its bounded record."""
    data = event["data"]
    which = "the redraft" if data.get("revision") else "the draft"
    if data["status"] == "skipped":
        return f"governance #{event['id']}: {which} is a short acknowledgment with no claim; the gate skipped the critic"
    trigger = data.get("trigger")
    why = f"{trigger}: {TRIGGERS[trigger]}" if trigger in TRIGGERS else str(trigger)
    verdict = {"revise": "the critic said REVISE", "approve": "the critic said APPROVE"}.get(data.get("verdict") or "", f"status {data['status']}")
    return f"governance #{event['id']}: the gate sent {which} to the critic ({why}); {verdict}"


QUESTION = "When is the migration?"


def critic(p: Player) -> None:
    """A draft with a claim nothing supports is reviewed, revised and reviewed again; an acknowledgment skips the critic."""
    p.say(f"{p.mind} drafts replies with a respond model and has a critic. Each draft passes the governance gate, which")
    p.say("decides with no model call whether the critic reads it before it is sent.")
    results: list[dict[str, Any]] = []
    for text in (QUESTION, "Thanks for checking!"):
        asked = p.message("alice", text, "cli")
        turn = p.turn(asked["id"])
        passes = [e for e in p.events("governance", since=asked["id"]) if e["causation_id"] == asked["id"]]
        p.say(f"alice: \"{text}\" (event #{asked['id']})")
        if not passes:
            p.say(f"  no governance pass: {(p.gate().get('governance') or {}).get('off') or 'see noemactl gate-status'}")
        if text == QUESTION:
            p.say(f"  the first draft: \"{DRAFT}\" (a time and a count nobody gave the mind)")
        for event in passes:
            p.say(f"  {_pass(event)}")
        reply = turn.reply
        if reply is not None and reply["kind"] == "reply":
            calls = [r["id"] for r in reply.get("refs", ()) if r["type"] == "model_call"]
            cited = f", citing model calls {', '.join(map(str, calls))}" if len(calls) > 1 else ""
            p.say(f"  what went out (reply #{reply['id']}{cited}): {_quoted(reply)}")
        results.append({"message": asked["id"], "governance": [e["id"] for e in passes], "reply": reply["id"] if reply else None})
    status = p.gate()
    p.found.update(exchanges=results, governance=status.get("governance"))
    p.say(f"`noemactl gate-status {p.mind}` counts the passes:")
    if not p.as_json:
        from noemactl import gate_view

        p.s.output.show(*gate_view.governance(status.get("governance")))
    last = results[0]["reply"]
    p.explore(
        f"noemactl events {p.mind} --kind governance --kind reply",
        *([f"noemactl timeline {last}"] if last else []),
        f"noemactl usage {p.mind} --by role",
    )


@dataclass(frozen=True)
class Scenario:
    name: str
    number: int
    title: str
    play: Callable[[Player], None]
    roles: tuple[str, ...] = ()  # the models its mind drafts and reviews with (per-mind settings)
    judge: bool = False  # needs [gate.judge] enabled

    @property
    def models(self) -> bool:
        """Whether it makes model calls (and so plays only on the scripted provider)."""
        return bool(self.roles) or self.judge


SCENARIOS = (
    Scenario("single-source", 1, "a belief from a single source draws metacognition's warnings", single_source),
    Scenario("prediction-miss", 2, "confident predictions miss, a notification fires, reflection writes a lesson", prediction_miss),
    Scenario("go", 3, '"user repeatedly selects Go": consolidation generalises', go),
    Scenario("gate", 4, "the gate: a DM wakes the mind, room talk is batched, a mention cuts through", gate),
    Scenario("judge", 5, "the judge: WAIT on small talk, REPLY to a question, and why", judge, roles=("respond",), judge=True),
    Scenario("critic", 6, "the critic: a draft with an unsupported claim is revised, an acknowledgment skips review", critic, roles=("respond", "critic")),
)
NAMES = tuple(s.name for s in SCENARIOS)


def choose(name: str | None) -> list[Scenario]:
    """The scenarios `name` picks: all by default, else one by name or number."""
    if name is None or name == "all":
        return list(SCENARIOS)
    for scenario in SCENARIOS:
        if name in (scenario.name, str(scenario.number)):
            return [scenario]
    raise BadInput(f"no demo scenario is called {name!r}; pick one of {', '.join(NAMES)} (or 1-{len(SCENARIOS)}, or all)")
