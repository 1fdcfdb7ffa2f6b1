"""`noemactl demo`: scripted scenarios played into fresh demo minds, narrated as they happen.

Each scenario sends ordinary stimuli over the API (what `noemactl say`,
`observe`, `predict` and `outcome` send), waits for the mind's turn to end,
reads back what the mind concluded, and says what happened with the commands
to explore it. Nothing here decides anything: every conclusion shown is the
daemon's. No model is needed; where a model is configured (e.g. the scripted
provider) it words the reflection and the generalisation, and the narration
says which.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from noemactl.errors import BadInput, CtlError, Refused

if TYPE_CHECKING:
    from noemactl.session import Session

POLL = 0.05  # seconds between looks for the end of a turn
TURN_TIMEOUT = 60.0  # seconds a turn may take before the demo gives up


@dataclass
class Player:
    """Plays one scenario into one mind and collects what it shows."""

    s: Session
    mind: str
    as_json: bool
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
        deadline = time.monotonic() + TURN_TIMEOUT
        cycle: str | None = None
        since = stimulus
        while time.monotonic() < deadline:
            page = self.s.client.events(self.mind, ["cycle_started", "cycle_completed"], since, 1000)
            for event in page["events"]:
                if cycle is None and event["kind"] == "cycle_started" and stimulus in event.get("parents", []):
                    cycle = event["cycle_id"]
                elif cycle is not None and event["kind"] == "cycle_completed" and event["cycle_id"] == cycle:
                    return event
                since = max(since, event["id"])
            time.sleep(POLL)
        raise CtlError(f"mind {self.mind} did not finish the turn over event {stimulus} within {TURN_TIMEOUT:.0f}s; see `noemactl status`")

    def events(self, *kinds: str, since: int = 0) -> list[dict[str, Any]]:
        return self.s.client.events(self.mind, list(kinds), since, 1000)["events"]

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
    from noemactl.timeline import tree

    p.say(f"The timeline walks from the belief back to the episodes (noemactl timeline {created} --forward 0):")
    if not p.as_json:
        p.s.output.show(*tree(p.s.client.chain(created, back=3, forward=0, limit=60)))
    p.found["belief_event"] = created
    p.explore(f"noemactl belief {belief['id']}", f"noemactl memories {p.mind} --search go", f"noemactl consolidate reject {cluster['memory']} --reason 'not a habit'")


@dataclass(frozen=True)
class Scenario:
    name: str
    number: int
    title: str
    play: Callable[[Player], None]


SCENARIOS = (
    Scenario("single-source", 1, "a belief from a single source draws metacognition's warnings", single_source),
    Scenario("prediction-miss", 2, "confident predictions miss, a notification fires, reflection writes a lesson", prediction_miss),
    Scenario("go", 3, '"user repeatedly selects Go": consolidation generalises', go),
)
NAMES = tuple(s.name for s in SCENARIOS)


def choose(name: str | None) -> list[Scenario]:
    """The scenarios `name` picks: all by default, else one by name or number."""
    if name is None or name == "all":
        return list(SCENARIOS)
    for scenario in SCENARIOS:
        if name in (scenario.name, str(scenario.number)):
            return [scenario]
    raise BadInput(f"no demo scenario is called {name!r}; pick one of {', '.join(NAMES)} (or 1-3, or all)")


def play(s: Session, name: str | None, replace: bool, as_json: bool) -> None:
    """Play the chosen scenarios, each into a fresh mind `demo-<scenario>`."""
    results = []
    existing = {m["name"] for m in s.client.minds()["minds"]}
    for scenario in choose(name):
        mind = f"demo-{scenario.name}"
        if mind in existing:
            if not replace:
                raise Refused(
                    f"mind {mind} is left from an earlier demo; pass --replace to remove it and play again, or `noemactl mind rm {mind} --yes`"
                )
            s.client.delete_mind(mind)
        s.client.create_mind(mind, {})
        player = Player(s, mind, as_json)
        if not as_json:
            s.output.show(f"\n== {scenario.number}. {scenario.title} (mind {mind})")
        scenario.play(player)
        results.append({"scenario": scenario.name, "mind": mind, "narration": player.said, "found": player.found})
    if as_json:
        s.output.json({"scenarios": results})
