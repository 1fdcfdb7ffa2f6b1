"""The narrative: built from state, rendered as first-person prose, stored when it changes, rephrased only without new content.

In process with a real store (and the scripted provider behind the model
gateway); through the in-process engine for `GET /narrative` and
`noemactl narrative` (noemactl's own code, run in this process).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from inprocess import InProcess, start_app
from noemad.clock import ManualClock, parse_iso
from noemad.cognition.narrative.stored import NarrativeShown, latest, narrative_shown, update
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.goals import create_goal, update_goal
from noemad.cognition.narrative.build import build
from noemad.cognition.narrative.model import MAX_ITEM, MAX_ITEMS, Narrative
from noemad.cognition.narrative.render import render
from noemad.cognition.narrative.rephrase import apply_rephrase, unsupported
from noemad.cognition.predictions import make_prediction
from noemad.cognition.thoughts import Thought
from noemad.config.files import parse_config
from noemad.config.mind import MindSettings
from noemad.events import Event, EventDraft, Ref, append, latest_events
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway
from noemad.models.scripted import ScriptedProvider
from noemad.store import Store

T = TypeVar("T")
START = parse_iso("2026-01-01T00:00:00Z")
HOUR = 3600.0
HAIKU = "claude-haiku-5-5"


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
    yield s
    s.close()


def put(store: Store, draft: EventDraft, now: float = START) -> Event:
    return store.writer.run_sync(lambda db: append(db, draft, now))


def say(store: Store, text: str, author: str = "alice", now: float = START) -> Event:
    return put(store, EventDraft("ada", "message", f"user:{author}", text=text, data={"author": author, "mentions": []}), now)


def thought(summary: str, key: str, *refs: Ref) -> Thought:
    return Thought("perception", "message", 0.6, summary, key, refs)


def built(store: Store, winners: list[Thought] | None = None, now: float = START) -> Narrative:
    return build(store.reader(), "ada", winners or [], now)


def stored(store: Store, n: Narrative, cause: int, now: float = START, cycle_id: str = "ada/1") -> Event | None:
    return store.writer.run_sync(lambda db: update(db, mind="ada", narrative=n, cause=cause, cycle_id=cycle_id, now=now))


# building and rendering ----------------------------------------------------------


def test_build_is_deterministic_capped_and_rendered_as_first_person_prose(store: Store) -> None:
    said = [say(store, text) for text in ("one", "two", "three", "four")]
    long = say(store, "the flaky integration test in the payments service failed again before the release " * 3, author="bob")
    winners = [thought(f"user:alice: {said[i].text}", f"event:{said[i].id:012d}", Ref("event", said[i].id)) for i in range(4)]
    first, second = built(store, winners), built(store, list(winners))
    assert first == second and render(first) == render(second)
    # The winners, in order, capped; a stimulus no other part quotes is told as thought over ("three" is quoted in `why`).
    assert first.doing == ["thought over what alice said “one”", "thought over what alice said “two”"]
    # The newest stimuli, oldest of them first, one clause per person.
    assert first.why[0] == "alice said “three”, then “four”"
    # A long quote is cut at a word boundary, its trailing punctuation dropped.
    assert first.why[1] == "bob said “the flaky integration test in the payments service failed…”"
    assert all(len(item) <= MAX_ITEM for part in first.parts().values() for item in part)
    assert all(len(part) <= MAX_ITEMS for part in first.parts().values())
    assert first.recently == first.resolving == first.next == []
    assert Ref("event", long.id) in first.refs and Ref("event", said[0].id) in first.refs
    assert render(first) == (
        "alice said “three”, then “four”; then " + first.why[1]
        + " So I thought over what alice said “one” and over what alice said “two”."
    )
    # Empty parts are left out of the prose.
    assert render(Narrative(why=["alice said “hi”"], next=["expect that it rains (due 2026-01-02 00:00 UTC, fairly sure)"])) == (
        "alice said “hi”. I expect that it rains (due 2026-01-02 00:00 UTC, fairly sure)."
    )
    assert render(Narrative()) == "I have nothing on my mind yet."


def test_a_winner_whose_stimulus_is_quoted_is_not_told_twice(store: Store) -> None:
    hello = say(store, "hello")
    n = built(store, [thought("user:alice: hello", f"event:{hello.id:012d}", Ref("event", hello.id))])
    assert (n.doing, n.why) == ([], ["alice said “hello”"]) and Ref("event", hello.id) in n.refs
    assert render(n) == "alice said “hello”."


def evidence(store: Store, proposition: str, stance: str, source: str, now: float, subject: str = "build") -> Event:
    cause = put(store, EventDraft("ada", "observation", f"source:{source}", text=proposition, data={"source": source}), now)
    _, event = store.writer.run_sync(
        lambda db: add_evidence(db, mind="ada", proposition=proposition, subject=subject, kind="observation", stance=stance,  # type: ignore[arg-type]
                                weight=1.0, source=source, credibility=0.9, brought_by=cause.id, now=now, actor="test")
    )
    return event


def test_the_parts_come_from_state(store: Store) -> None:
    ask = say(store, "ship it")
    goals = [store.writer.run_sync(lambda db, t=t: create_goal(db, mind="ada", title=t, origin="operator", cause=ask.id, cycle_id=None, now=START))
             for t in ("ship the release", "write the notes", "tidy the wiki")]
    created = evidence(store, "the build is green", "support", "ci", START + 1)
    contested = evidence(store, "the build is green", "contradict", "qa", START + 2)
    assert contested.data["status"] == {"from": "active", "to": "contested"}
    evidence(store, "the docs are current", "support", "ci", START + 3, subject="docs")
    evidence(store, "the docs are current", "support", "qa", START + 4, subject="docs")  # no status change: not notable
    prediction, _ = store.writer.run_sync(
        lambda db: make_prediction(db, mind="ada", proposition="the deploy lands", subject="deploy", confidence=0.8,
                                   due_at=START + 2 * HOUR, brought_by=ask.id, now=START + 5)
    )
    reply = put(store, EventDraft("ada", "reply", "model:respond", text="On it."), START + 6)
    store.writer.run_sync(lambda db: update_goal(db, goal_id=goals[2][0].id, status="completed", cause=reply.id, cycle_id=None,
                                                 now=START + 7, actor="operator"))
    n = built(store, now=START + 10)
    assert n.recently == [
        "found the evidence split on whether the build is green",
        "replied “On it.”",
        "completed the goal “tidy the wiki”",
    ]
    assert n.resolving == [
        "have not settled whether the build is green",
        "am working on “ship the release”, 0% done",
        "am working on “write the notes”, 0% done",
    ]
    assert n.next == ["expect that the deploy lands (due 2026-01-01 02:00 UTC, quite sure)"]
    assert built(store, now=START + 3 * HOUR).next == ["am still waiting to learn whether the deploy lands (due 2026-01-01 02:00 UTC)"]
    assert {Ref("belief", created.subject.id), Ref("event", goals[0][1].id), Ref("belief", prediction.belief_id),  # type: ignore[arg-type, union-attr]
            Ref("event", reply.id)} <= set(n.refs)
    prose = render(n)
    assert "Lately I found the evidence split on whether the build is green" in prose
    assert "I have not settled whether the build is green" in prose and "I expect that the deploy lands (due" in prose
    assert prediction.id and "#" not in prose  # ids stay in the refs, out of the prose


# storing -------------------------------------------------------------------------


def test_a_narrative_is_stored_only_when_it_changes(store: Store) -> None:
    assert stored(store, built(store), cause=1) is None  # nothing to say yet
    hello = say(store, "hello")
    winners = [thought("user:alice: hello", f"event:{hello.id:012d}", Ref("event", hello.id))]
    n = built(store, winners)
    first = stored(store, n, cause=hello.id)
    assert first is not None and first.kind == "narrative_updated" and first.actor == "process:narrative"
    assert first.text == render(n) == "alice said “hello”."
    assert first.causation_id == hello.id and first.cycle_id == "ada/1" and Ref("event", hello.id) in first.refs
    assert first.data == {**n.parts(), "rendered_by": "plain", "previous": None}
    # The same state again: nothing new is written.
    assert stored(store, built(store, winners), cause=hello.id, cycle_id="ada/2") is None
    assert len(latest_events(store.reader(), "ada", kinds=("narrative_updated",))) == 1
    again = say(store, "hello again")
    second = stored(store, built(store), cause=again.id, cycle_id="ada/3")
    assert second is not None and second.data["previous"] == first.id and second.data["doing"] == []
    shown = latest(store.reader(), "ada")
    assert shown is not None and shown.event_id == second.id and shown.text == second.text == shown.plain
    assert (shown.rendered_by, shown.reason, shown.model_call) == ("plain", "narrative_llm_off", None)
    assert shown.parts.why == ["alice said “hello”, then “hello again”"]
    assert narrative_shown(store.reader(), "bob") == NarrativeShown("bob")


# the "adds no content" check ----------------------------------------------------------

PLAIN = (
    "alice said “the build is green”. So I came to believe that the build is green (0.72 sure)."
    " I expect that the deploy lands (due 2026-01-02 00:00 UTC, 0.80 sure)."
)


@pytest.mark.parametrize(
    "answer",
    [
        "I expect that the deploy lands (due 2026-01-02 00:00 UTC, 0.80 sure). Alice said the build is green, so I came to believe it (0.72 sure).",
        "Alice said that the builds are green, so I came to believe it; I expect the deploy lands.",
        "I came to believe what alice said.",
    ],
)
def test_a_reordering_adds_no_content(answer: str) -> None:
    assert unsupported(answer, PLAIN, None, "ada") == []


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ("I came to believe the build, which is green, and the tests failed.", ["tests", "failed"]),
        ("I expect that the deploy lands (0.90 sure).", ["0.90"]),
        ("Alice said the build is green 3 times.", ["3", "times"]),
        ("I don't expect that the deploy lands.", ["not"]),
        ("Bob said the build is green.", ["bob"]),
        ("I might expect that the deploy lands.", ["might"]),
    ],
)
def test_an_added_claim_or_number_is_refused(answer: str, found: list[str]) -> None:
    assert unsupported(answer, PLAIN, None, "ada") == found


# rephrasing ----------------------------------------------------------------------


class Env:
    """A store with mind ada and one stored narrative, a manual clock, and gateways over them."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = Store(tmp_path / "noema.db")
        self.clock = ManualClock(START)
        self.store.writer.run_sync(lambda db: create_mind(db, "ada", {"narrative_llm": True}, START, "test"))
        hello = say(self.store, "hello")
        winners = [thought("user:alice: hello", f"event:{hello.id:012d}", Ref("event", hello.id))]
        updated = stored(self.store, built(self.store, winners), cause=hello.id)
        assert updated is not None
        self.updated = updated

    def gateway(self, script: dict[str, Any] | None, text: str = '[models]\nprovider = "scripted"\n') -> tuple[ModelGateway, ScriptedProvider | None]:
        cfg = parse_config(text, "noemad.toml").config
        provider = ScriptedProvider(script) if script is not None else None
        return ModelGateway(config=lambda: cfg, clock=self.clock, writer=self.store.writer, provider=provider), provider

    def apply(self, gateway: ModelGateway, settings: dict[str, Any] | None = None) -> Event | None:
        typed = MindSettings.model_validate(settings if settings is not None else {"narrative_llm": True})
        return run(apply_rephrase(gateway, self.store, self.clock, "ada", typed, self.updated))


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    yield e
    e.store.close()


def test_an_accepted_rephrasing_is_recorded_with_its_model_call(env: Env) -> None:
    gateway, provider = env.gateway({"narrate": ["Alice said “hello” to me."]})
    event = env.apply(gateway)
    assert event is not None and event.kind == "narrative_rephrased" and event.actor == "model:narrate"
    assert event.causation_id == env.updated.id and event.cycle_id == "ada/1"
    assert event.text == "Alice said “hello” to me."
    [ref] = event.refs
    assert ref.type == "model_call" and event.data == {"narrative": env.updated.id, "rendered_by": "model", "model_call": ref.id, "model": HAIKU}
    assert provider is not None and provider.requests[-1].role == "narrate" and env.updated.text in provider.requests[-1].text()
    shown = latest(env.store.reader(), "ada")
    assert shown is not None and (shown.text, shown.plain, shown.rendered_by, shown.model_call, shown.rephrased_event_id) == (
        event.text, env.updated.text, "model", ref.id, event.id
    )


def test_a_rephrasing_that_adds_content_is_refused_and_the_plain_prose_kept(env: Env) -> None:
    gateway, _ = env.gateway({"narrate": ["Alice said hello twice and I am worried about the 3 outages."]})
    event = env.apply(gateway)
    assert event is not None and event.actor == "process:narrative" and event.text == env.updated.text
    assert event.data["rendered_by"] == "plain" and event.data["reason"] == "unsupported_content"
    assert event.data["unsupported"] == ["3", "twice", "worried", "outages"]
    assert "twice" in event.data["detail"] and [r.type for r in event.refs] == ["model_call"]
    shown = latest(env.store.reader(), "ada")
    assert shown is not None and (shown.text, shown.rendered_by, shown.reason) == (env.updated.text, "plain", "unsupported_content")


@pytest.mark.parametrize("case", ["no_model", "budget", "held", "model_error"])
def test_a_rephrasing_that_cannot_be_made_keeps_the_plain_prose_and_says_why(env: Env, case: str) -> None:
    script: dict[str, Any] | None = {"narrate": ["I am thinking."]}
    text = '[models]\nprovider = "scripted"\n'
    if case == "no_model":
        script, text = None, "[models]\n"
    elif case == "budget":
        text += "[budgets.narrate]\ntokens_per_day = 10\n"
    elif case == "model_error":
        script = {"narrate": [{"fault": "overloaded"}]}
    gateway, _ = env.gateway(script, text)
    if case == "held":
        gateway.holds.arm(HAIKU, 30, "rate_limited")
    event = env.apply(gateway)
    assert event is not None and event.text == env.updated.text and event.actor == "process:narrative"
    assert (event.data["rendered_by"], event.data["reason"]) == ("plain", case) and event.data["detail"]
    # A call refused or failed is in the ledger and cited; with no model none was made.
    assert [r.type for r in event.refs] == ([] if case == "no_model" else ["model_call"])


def test_without_narrative_llm_no_model_is_asked(env: Env) -> None:
    gateway, provider = env.gateway({"narrate": ["I am thinking."]})
    assert env.apply(gateway, {"narrative_llm": False}) is None
    assert run(apply_rephrase(gateway, env.store, env.clock, "ada", {"narrative_llm": True}, None)) is None
    assert provider is not None and provider.requests == []


# through the API (in process) and the CLI (on the daemon) --------------------------------------------------------------------


def test_a_mind_without_a_narrative_answers_nulls(app: InProcess, mind: str) -> None:
    resp = app.api("GET", f"/minds/{mind}/narrative")
    assert resp.status_code == 200
    assert resp.json() == {
        "mind": mind, "event_id": None, "at": None, "cycle_id": None, "text": None, "plain": None, "rendered_by": None,
        "reason": None, "detail": None, "model_call": None, "rephrased_event_id": None, "parts": None,
    }
    assert app.api("GET", "/minds/zed/narrative").status_code == 404
    out = app.ctl("narrative", mind)
    assert out.returncode == 0 and out.stdout == "" and "no narrative yet" in out.stderr
    assert app.ctl_json("narrative", mind)["event_id"] is None
    missing = app.ctl("narrative", "zed")
    assert missing.returncode == 4 and "no mind is named 'zed'" in missing.stderr


def test_the_narrative_after_a_cycle(app: InProcess, mind: str) -> None:
    post = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "the build is red"})
    updated = app.wait_for(mind, "narrative_updated", since=post.json()["id"])
    assert updated["actor"] == "process:narrative" and updated["text"] == "alice said “the build is red”."
    assert {"type": "event", "id": post.json()["id"]} in updated["refs"]
    completed = app.api("GET", f"/minds/{mind}/events", params={"kind": "cycle_completed"}).json()["events"][-1]
    assert updated["causation_id"] == completed["id"]
    shown = app.api("GET", f"/minds/{mind}/narrative").json()
    assert (shown["event_id"], shown["text"], shown["rendered_by"]) == (updated["id"], updated["text"], "plain")
    assert shown["parts"]["why"] == ["alice said “the build is red”"]


def test_the_narrative_through_the_cli(app: InProcess, mind: str) -> None:
    post = app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "the build is red"})
    updated = app.wait_for(mind, "narrative_updated", since=post.json()["id"])
    shown = app.api("GET", f"/minds/{mind}/narrative").json()
    assert app.ctl_json("narrative", mind) == shown
    human = app.ctl("narrative", mind)
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert lines[0] == updated["text"]
    assert any(line.startswith("why") and "alice said “the build is red”" in line for line in lines)
    assert f"narrative #{updated['id']}" in human.stdout


SCRIPT = """
[narrate]
default = "alice said “hello” to me."
"""

CONFIG = """
[models]
provider = "scripted"

[models.scripted]
file = "{script}"
"""


def test_a_mind_with_narrative_llm_shows_the_accepted_rephrasing(tmp_path: Path) -> None:
    (tmp_path / "script.toml").write_text(SCRIPT)
    engine = start_app(tmp_path, CONFIG.format(script=tmp_path / "script.toml"))
    try:
        assert engine.api("POST", "/minds", json={"name": "ada", "settings": {"narrative_llm": True}}).status_code == 201
        post = engine.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": "hello"})
        rephrased = engine.wait_for("ada", "narrative_rephrased", since=post.json()["id"])
        assert rephrased["text"] == "alice said “hello” to me." and rephrased["data"]["rendered_by"] == "model"
        shown = engine.api("GET", "/minds/ada/narrative").json()  # what `noemactl --json narrative` prints
        assert (shown["text"], shown["rendered_by"], shown["rephrased_event_id"]) == (rephrased["text"], "model", rephrased["id"])
        assert shown["model_call"] == rephrased["refs"][0]["id"]
        assert json.loads(json.dumps(shown))["plain"] == "alice said “hello”."
    finally:
        engine.stop()
