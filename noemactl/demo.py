"""`noemactl demo`: scripted scenarios played into fresh demo minds, narrated as they happen.

Each scenario sends ordinary stimuli over the API (what `noemactl say`,
`observe`, `predict` and `outcome` send), waits for the mind's turn to end,
reads back what the mind concluded, and says what happened with the commands
to explore it. Nothing here decides anything: every conclusion shown is the
daemon's. The background scenarios (1-3) and the gate's (4) need no model;
where a model is configured it words the reflection and the generalisation,
and the narration says which. The judge's (5) and the critic's (6) need
model calls, and play only on the scripted provider, offline and free:
`make demo` starts noemad on `demo_script.toml` (beside this module), and
the demo gives its own minds their respond and critic models.

Time: a debounce or a judge's quiet period must pass on the daemon's clock.
On a test daemon's manual clock (`NOEMA_CLOCK=manual:...`) the demo moves it;
on the system clock the looks for what follows wait for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from noemactl.errors import BadInput, CtlError, Refused
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, session

if TYPE_CHECKING:
    from noemactl.session import Session

POLL = 0.05  # seconds between looks for the end of a turn
TURN_TIMEOUT = 60.0  # seconds a turn may take before the demo gives up
MODEL = "claude-haiku-5-5"  # the model id the demo's minds name; the scripted provider answers any
SCRIPT = Path(__file__).resolve().parent / "demo_script.toml"
DRAFT = "The migration is at 14:00 on 3 servers."  # what SCRIPT drafts first in the critic scenario (noemad keeps no draft's text)
# What noemad.toml needs for the scenarios that call models (scripts/demo.sh writes it, and leaves narrate and summarise
# without a model so that scenarios 1-3 read as they do with none).
NEEDED_CONFIG = f"""[models]
provider = "scripted"
[models.scripted]
file = "{SCRIPT}"
[gate.judge]
enabled = true"""


@dataclass(frozen=True)
class Turn:
    """A turn the demo waited for: its cycle_started event and, from a mind that drafts, what ended its reply."""

    started: dict[str, Any]
    reply: dict[str, Any] | None  # the reply, reply_skipped or reply_failed event; None from a mind with no respond model


@dataclass
class Player:
    """Plays one scenario into one mind and collects what it shows."""

    s: Session
    mind: str
    as_json: bool
    manual_clock: bool = False  # a test daemon's clock: the demo moves it (`after`)
    drafts: bool = False  # the mind has a respond model: its turns end with a reply
    said: list[str] = field(default_factory=list)
    found: dict[str, Any] = field(default_factory=dict)

    # narration -------------------------------------------------------------

    def say(self, text: str) -> None:
        """A line of narration (stdout, unless --json)."""
        self.said.append(text)
        if not self.as_json:
            self.s.output.show(text)

    def explore(self, *commands: str) -> None:
        """Commands to look further."""
        for command in commands:
            self.say(f"    $ {command}")

    # stimuli ---------------------------------------------------------------

    def send(self, body: dict[str, Any]) -> dict[str, Any]:
        """Store a stimulus, wait for the turn that takes it, return the stored event."""
        event = self.s.client.ingest(self.mind, body)
        self.settle(event["id"])
        return event

    def settle(self, stimulus: int) -> dict[str, Any]:
        """Wait until the cycle that took `stimulus` has completed; its cycle_completed event."""
        return self._completed(self._started(stimulus), stimulus)

    def turn(self, stimulus: int) -> Turn:
        """Wait for the turn that takes `stimulus` to end, its reply included when the mind drafts one."""
        started = self._started(stimulus)
        self._completed(started, stimulus)
        reply = None
        if self.drafts:
            reply = self.first(
                ("reply", "reply_skipped", "reply_failed"),
                started["id"],
                lambda e: e["cycle_id"] == started["cycle_id"],
                f"the turn over event {stimulus} sent no reply",
            )
        return Turn(started, reply)

    def _started(self, stimulus: int) -> dict[str, Any]:
        from noemactl.reply import cites  # imported here: shell completion reads NAMES without httpx

        return self.first(("cycle_started",), stimulus, lambda e: cites(e, stimulus), f"no turn took event {stimulus}")

    def _completed(self, started: dict[str, Any], stimulus: int) -> dict[str, Any]:
        cycle = started["cycle_id"]
        return self.first(("cycle_completed",), started["id"], lambda e: e["cycle_id"] == cycle, f"the turn over event {stimulus} did not finish")

    def first(self, kinds: Sequence[str], since: int, wanted: Callable[[dict[str, Any]], bool], missing: str) -> dict[str, Any]:
        """The first of the mind's events of `kinds` after `since` that is `wanted`, looked for until TURN_TIMEOUT."""
        deadline = time.monotonic() + TURN_TIMEOUT
        while True:
            events: list[dict[str, Any]] = self.s.client.events(self.mind, list(kinds), since, 1000)["events"]
            for event in events:
                if wanted(event):
                    return event
                since = max(since, event["id"])
            if time.monotonic() >= deadline:
                raise CtlError(f"mind {self.mind}: {missing} within {TURN_TIMEOUT:.0f}s; see `noemactl events {self.mind}`")
            time.sleep(POLL)

    def after(self, seconds: float) -> None:
        """Let `seconds` pass on the daemon's clock: a manual clock is moved; the system clock passes while `first` looks."""
        if self.manual_clock:
            self.s.client.advance_clock(seconds)

    def message(self, author: str, text: str, channel: str, *, dm: bool = False, mentions: Sequence[str] = ()) -> dict[str, Any]:
        """Store a message as a connector would (`noemactl say`), without waiting; the stored event."""
        body: dict[str, Any] = {"kind": "message", "author": author, "channel": channel, "text": text, "mentions": list(mentions)}
        if dm:
            body["dm"] = True
        return self.s.client.ingest(self.mind, body)

    def gate(self) -> dict[str, Any]:
        """The mind's gate-status, as `noemactl gate-status MIND --json` prints it."""
        return self.s.client.gate(self.mind)

    def show_gate(self, data: dict[str, Any]) -> None:
        """The human gate-status view, as `noemactl gate-status MIND` prints it."""
        from noemactl import gate_view

        if not self.as_json:
            self.s.output.show(*gate_view.gate(data))

    def events(self, *kinds: str, since: int = 0) -> list[dict[str, Any]]:
        """The mind's events of `kinds` after `since` (one page of up to 1000)."""
        events: list[dict[str, Any]] = self.s.client.events(self.mind, list(kinds), since, 1000)["events"]
        return events

    def job(self, kind: str) -> dict[str, Any]:
        """Run reflection or consolidation now and follow it to its end."""
        from noemactl.jobs import follow

        job = follow(self.s, self.s.client.run_job(self.mind, kind))
        if job["status"] != "succeeded":
            raise CtlError(f"the demo's {kind} job {job['id']} failed: {job['error']}")
        return job


# the scenarios ---------------------------------------------------------------------


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


@dataclass(frozen=True)
class Daemon:
    """What the daemon offers the scenarios: its clock, its model provider, whether it accepts judge rules."""

    manual_clock: bool
    provider: str
    script: str | None  # [models.scripted] file
    judging: bool

    @classmethod
    def of(cls, s: Session) -> Daemon:
        status = s.client.status()
        values = {v["key"]: v["value"] for v in s.client.config()["values"]}
        return cls(
            status["clock"] == "manual", status["models"]["provider"], values.get("models.scripted.file"), values.get("gate.judge.enabled") is True
        )

    def lacks(self, scenario: Scenario) -> str | None:
        """Why `scenario` cannot play on this daemon, or None when it can."""
        missing: list[str] = []
        if scenario.models and self.provider != "scripted":
            missing.append(f"the scripted provider (this noemad's is {self.provider})")
        elif scenario.models and (self.script is None or Path(self.script).resolve() != SCRIPT):
            missing.append(f"the demo's script (this noemad's is {self.script})")
        if scenario.judge and not self.judging:
            missing.append("[gate.judge] enabled = true")
        if not missing:
            return None
        return (
            f"scenario {scenario.name} makes model calls, so it plays only offline, on noemad with {' and '.join(missing)}."
            f" `make demo` starts one; or put this in noemad.toml and `noemactl reload`:\n{NEEDED_CONFIG}"
        )


def play(s: Session, name: str | None, replace: bool, as_json: bool) -> None:
    """Play the chosen scenarios, each into a fresh mind `demo-<scenario>`; with all, skip (and say why) those this daemon cannot play."""
    chosen = choose(name)
    daemon = Daemon.of(s)
    if len(chosen) == 1 and (why := daemon.lacks(chosen[0])) is not None:
        raise Refused(why)
    results: list[dict[str, Any]] = []  # a skipped scenario's entry and a played one's hold different values
    existing = {m["name"] for m in s.client.minds()["minds"]}
    for scenario in chosen:
        mind = f"demo-{scenario.name}"
        why = daemon.lacks(scenario)
        if why is not None:
            results.append({"scenario": scenario.name, "mind": None, "skipped": why})
            s.output.note(f"\n== {scenario.number}. {scenario.title}: skipped\n{why}")
            continue
        if mind in existing:
            if not replace:
                raise Refused(
                    f"mind {mind} is left from an earlier demo; pass --replace to remove it and play again, or `noemactl mind rm {mind} --yes`"
                )
            s.client.delete_mind(mind)
        settings = {"models": {role: {"model": MODEL} for role in scenario.roles}} if scenario.roles else {}
        s.client.create_mind(mind, settings)
        player = Player(s, mind, as_json, manual_clock=daemon.manual_clock, drafts="respond" in scenario.roles)
        if not as_json:
            s.output.show(f"\n== {scenario.number}. {scenario.title} (mind {mind})")
        scenario.play(player)
        results.append({"scenario": scenario.name, "mind": mind, "narration": player.said, "found": player.found})
    if as_json:
        s.output.json({"scenarios": results})


# the command ---------------------------------------------------------------------

# Added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


def _scenarios(incomplete: str) -> list[str]:
    """The demo's scenario names starting with `incomplete` (shell completion)."""
    return [n for n in (*NAMES, "all") if n.startswith(incomplete)]


@commands.command(cls=PlainCommand)
def demo(
    ctx: typer.Context,
    scenario: Annotated[
        str | None,
        typer.Argument(
            metavar="SCENARIO",
            help="single-source, prediction-miss, go, gate, judge or critic (or 1-6); default: all.",
            autocompletion=lambda incomplete: _scenarios(incomplete),
            show_default=False,
        ),
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Remove a demo mind left by an earlier run and play it again.")] = False,
    json: JsonFlag = False,
) -> None:
    """Play scripted scenarios into fresh demo minds (demo-SCENARIO) and narrate what the minds made of them.

    \b
    1 single-source: a belief from one source draws single_source and insufficient_evidence warnings.
    2 prediction-miss: confident predictions miss, the beliefs behind them drop, a notification fires, reflection writes a lesson.
    3 go: "user repeatedly selects Go"; consolidation makes a generalisation belief and a semantic memory, and the timeline walks back to the episodes.
    4 gate: a DM wakes the mind at once, room talk is batched by a debounce, a mention cuts through the batch.
    5 judge: a judge rule's small model says WAIT to small talk and REPLY to a question, with its reasons in gate-status.
    6 critic: a draft with a claim nothing supports is reviewed, revised and sent; an acknowledgment skips the critic.

    1-4 need no model; with one configured, it words the reflection and the generalisation. 5 and 6 make model calls and play only offline, on the scripted provider with the demo's script (noemactl/demo_script.toml) and [gate.judge] enabled = true, as `make demo` runs noemad; with all, a scenario this noemad cannot play is skipped with the config it needs.
    """
    s = session(ctx)
    play(s, scenario, replace, s.wants_json(json))
