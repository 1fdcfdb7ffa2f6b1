"""Reflection: what a mind finds when it reviews its recent past, and the lessons it writes once.

In process, on a real store with the real writer and a manual clock:
stimuli go through the real cognitive cycle (perception, predictions,
metacognition, notifications), and reflection runs as a job does (a `jobs`
row, a JobContext, the model gateway with the scripted provider or none).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from noemad.background import reflection
from noemad.background.jobs import Job, JobContext, finish_job, get_job, start_job
from noemad.background.reflection import Findings, render, review
from noemad.clock import ManualClock, iso, parse_iso
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition import intake
from noemad.cognition.cycle import CycleResult, run_cycle
from noemad.cognition.memory.reads import get_memory
from noemad.cognition.predictions import make_prediction, resolve_prediction
from noemad.config.files import parse_config
from noemad.config.schedules import ReflectionSchedule
from noemad.events import Event, EventDraft, append, get_event
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway
from noemad.models.scripted import ScriptedProvider
from noemad.stimuli import Claim, Correction, GoalStimulus, Observation, OutcomeStimulus, PredictionStimulus
from noemad.store import Store
from noemad.timeline import walk

T = TypeVar("T")
START = parse_iso("2026-01-01T00:00:00Z")
DAY = 86_400.0
HAIKU = "claude-haiku-5-5"
SCRIPTED = '[models]\nprovider = "scripted"\n'
DEPLOY_LESSON = (
    "Lesson: 3 confident prediction misses on deploy within 30 days, each resting on a single source."
    " Seek an independent source before raising confidence on deploy."
)


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


@dataclass
class Reflected:
    """One reflection job's outputs, its row after finishing, its event and the context it ran in."""

    outputs: dict[str, Any]
    event: Event
    ctx: JobContext

    @property
    def data(self) -> dict[str, Any]:
        return self.event.data


class Env:
    """Mind ada on a real store, driven through the real cycle on a manual clock."""

    def __init__(self, path: Path) -> None:
        self.store = Store(path)
        self.clock = ManualClock(START)
        self.store.writer.run_sync(lambda db: create_mind(db, "ada", {}, START, "operator"))
        self.cycles = 0

    def close(self) -> None:
        self.store.close()

    def turn(self, stimulus: Any) -> CycleResult:
        """Store a stimulus and run the cycle over it; a minute passes."""
        intake.check(self.store.reader(), "ada", stimulus)
        stored = self.store.writer.run_sync(lambda db: append(db, stimulus.draft("ada"), self.clock.now()))
        self.cycles += 1
        result = run(run_cycle(self.store, self.clock, "ada", [stored.id], f"ada/{self.cycles}", "test"))
        self.clock.advance(60)
        return result

    def predict(self, proposition: str, subject: str, confidence: float) -> int:
        result = self.turn(PredictionStimulus(proposition, subject, confidence, self.clock.now() + 3600))
        return result.perception.predictions[0]

    def outcome(self, prediction: int, result: str, observed: str | None = None) -> CycleResult:
        return self.turn(OutcomeStimulus(prediction, result, observed))  # type: ignore[arg-type]

    def miss(self, proposition: str, subject: str = "deploy", confidence: float = 0.8) -> int:
        prediction = self.predict(proposition, subject, confidence)
        self.outcome(prediction, "miss")
        return prediction

    def observe(self, source: str, proposition: str, subject: str, stance: str = "supports") -> CycleResult:
        return self.turn(Observation(source, f"{source} on {proposition}", claim=Claim(proposition, subject, stance)))  # type: ignore[arg-type]

    def gateway(self, script: dict[str, Any] | None = None, text: str = SCRIPTED) -> tuple[ModelGateway, ScriptedProvider | None]:
        cfg = parse_config(text if script is not None else "[models]\n", "noemad.toml").config
        provider = ScriptedProvider(script) if script is not None else None
        return ModelGateway(config=lambda: cfg, clock=self.clock, writer=self.store.writer, provider=provider), provider

    def start(self) -> Job:
        """Start a reflection job (its mode_changed is the first event of its period)."""
        now = self.clock.now()
        return self.store.writer.run_sync(
            lambda db: start_job(db, mind="ada", kind="reflection", trigger="operator", actor="operator", inputs={}, now=now)
        )

    def reflect(self, gateway: ModelGateway | None = None, model_calls: int = 1, job: Job | None = None) -> Reflected:
        """Run reflection as a job runs it: start the job (unless given), run the service, finish the job."""
        job = job or self.start()
        ctx = JobContext(
            job=job, store=self.store, clock=self.clock, gateway=gateway or self.gateway()[0],
            settings=ReflectionSchedule(model_calls=model_calls),
        )
        outputs = run(reflection.run(ctx))
        self.store.writer.run_sync(
            lambda db: finish_job(db, job.id, outputs=outputs, error=None, model_calls=ctx.model_calls, now=self.clock.now())
        )
        assert json.loads(json.dumps(outputs)) == outputs  # JSON-able
        self.clock.advance(60)
        return Reflected(outputs, get_event(self.store.reader(), outputs["event"]), ctx)

    def findings(self) -> Findings:
        return review(self.store.reader(), "ada", self.clock.now())

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return self.store.reader().execute(sql, list(params)).fetchall()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path / "n.db")
    yield e
    e.close()


def refs(event: Event) -> list[tuple[str, int]]:
    return [(r.type, r.id) for r in event.refs]


def resolved_events(env: Env) -> list[int]:
    return [r[0] for r in env.rows("SELECT id FROM events WHERE mind = 'ada' AND kind = 'prediction_resolved' ORDER BY id")]


# patterns and lessons ----------------------------------------------------------------


def test_three_confident_misses_on_one_subject_become_a_pattern_and_one_lesson(env: Env) -> None:
    # Demo scenario 2: a confident prediction misses, the belief it rested on is
    # updated, a notification fires — and, the third time, reflection writes a lesson.
    first = env.predict("the deploy finishes by noon", "Deploy", 0.8)
    env.outcome(first, "miss", "it took until 3pm")
    belief = get_belief(env.store.reader(), env.rows("SELECT belief_id FROM predictions WHERE id = ?", first)[0][0])
    assert (belief.status, belief.confidence) == ("rejected", 0.0)
    assert env.rows("SELECT rule, key FROM notifications") == [("prediction_miss", "prediction_miss:subject:deploy")]
    env.miss("the rollback is not needed")
    env.miss("the canary stays green")
    outcomes = [r[0] for r in env.rows("SELECT id FROM events WHERE mind = 'ada' AND kind = 'outcome' ORDER BY id")]

    done = env.reflect()

    [lesson_id] = done.outputs["lessons"]
    assert done.outputs["summary"] == "3 prediction misses on deploy; 1 new lesson"
    assert done.outputs["patterns"] == [{"key": "failures:deploy", "status": "new", "failures": 3, "memory": lesson_id}]
    counts = done.outputs["counts"]
    assert (counts["predictions_resolved"], counts["misses"], counts["confident_misses"], counts["rejected"], counts["lessons"]) == (3, 3, 3, 3, 1)
    lesson = get_memory(env.store.reader(), lesson_id)
    assert (lesson.kind, lesson.text, lesson.status) == ("procedural", DEPLOY_LESSON, "active")
    # Derived from the episodes of the three outcomes that brought the failures.
    episodes = [r[0] for r in env.rows(f"SELECT id FROM memories WHERE event_id IN ({','.join('?' * 3)}) ORDER BY id", *outcomes)]
    assert list(lesson.derived_from) == episodes and len(episodes) == 3
    assert env.rows("SELECT key, memory_id, job_id FROM reflection_patterns") == [("failures:deploy", lesson_id, done.ctx.job.id)]
    # The event: who wrote it, what caused it, what it carries and cites.
    event = done.event
    assert (event.kind, event.actor, event.data["job"], event.data["lessons"]) == ("reflection", "process:reflection", done.ctx.job.id, [lesson_id])
    started = get_event(env.store.reader(), event.causation_id)
    assert started.kind == "mode_changed" and started.data == {"from": "idle", "to": "reflecting", "job": done.ctx.job.id}
    assert set(resolved_events(env)) <= {i for t, i in refs(event) if t == "event"}
    [pattern] = event.data["patterns"]
    assert (pattern["lesson"], pattern["memory"], pattern["misses"], pattern["single_source"]) == (DEPLOY_LESSON, lesson_id, 3, 3)
    assert pattern["events"] == resolved_events(env) and pattern["episodes"] == episodes
    assert f"New pattern: 3 failures on deploy within 30 days. I learnt a lesson: “{DEPLOY_LESSON}”" in event.text
    assert "3 confident misses (stated 0.7 or more), on deploy (3)." in event.text
    assert (event.data["rendered_by"], event.data["reason"], event.data["plain"]) == ("plain", "no_model", event.text)
    # The lesson's memory_created is caused by the reflection, in the same commit.
    [created] = env.rows("SELECT id, causation_id, actor FROM events WHERE kind = 'memory_created' AND subject_id = ?", lesson_id)
    assert created[1:] == (event.id, "process:reflection") and created[0] > event.id
    job = get_job(env.store.reader(), done.ctx.job.id)
    assert (job.status, job.outputs["event"], job.model_calls) == ("succeeded", event.id, [])


def test_a_second_reflection_reviews_only_the_new_period_and_does_not_repeat_the_lesson(env: Env) -> None:
    for proposition in ("deploy one lands", "deploy two lands", "deploy three lands"):
        env.miss(proposition)
    first = env.reflect()
    env.miss("deploy four lands")
    hit = env.predict("the cache stays warm", "cache", 0.6)
    env.outcome(hit, "hit")

    second = env.reflect()

    period = second.data["period"]
    assert period["after_event"] == first.data["period"]["through_event"] and period["from"] == first.data["period"]["to"]
    assert second.data["previous"] == first.event.id and ("event", first.event.id) in refs(second.event)
    assert (second.outputs["counts"]["predictions_resolved"], second.outputs["counts"]["misses"]) == (2, 1)
    assert second.outputs["lessons"] == [] and second.data["lessons"] == []
    [known] = second.data["patterns"]
    assert (known["status"], known["failures"], known["in_period"], known["lesson"], known["memory"]) == (
        "known", 4, 1, None, first.outputs["lessons"][0]
    )
    assert second.outputs["summary"] == "1 prediction miss on deploy; 1 known pattern recurred; no new lesson"
    assert f"Known pattern: 4 failures on deploy within 30 days, 1 of them this period; its lesson stands (memory #{known['memory']})." in second.event.text
    assert env.rows("SELECT count(*) FROM memories WHERE kind = 'procedural'") == [(1,)]
    assert env.rows("SELECT count(*) FROM reflection_patterns") == [(1,)]


def test_failures_count_across_short_periods_but_not_unconfident_or_old_ones(env: Env) -> None:
    env.miss("deploy a lands")
    env.miss("deploy b lands")
    assert env.reflect().data["patterns"] == []  # two failures are not yet a pattern
    env.miss("deploy c lands", confidence=0.3)  # the mind expected this miss: not a failure
    assert env.reflect().data["patterns"] == []
    env.miss("deploy d lands", confidence=0.6)  # expected to come true, not confidently
    done = env.reflect()
    [pattern] = done.data["patterns"]
    assert (pattern["status"], pattern["failures"], pattern["in_period"], pattern["confident_misses"]) == ("new", 3, 1, 2)
    assert pattern["lesson"] == (
        "Lesson: 3 prediction misses (2 confident) on deploy within 30 days, each resting on a single source."
        " Seek an independent source before raising confidence on deploy."
    )
    # Failures older than the lookback (and already reviewed) no longer count.
    env.miss("cache a warms", "cache")
    env.miss("cache b warms", "cache")
    env.reflect()
    env.clock.advance(31 * DAY)
    env.miss("cache c warms", "cache")
    late = env.reflect()
    assert late.data["patterns"] == [] and late.data["lookback"]["from"] == late.data["period"]["from"]
    assert late.data["lookback"]["days"] == 32  # 31 days and a few minutes, counted in whole days


def test_operator_corrections_on_well_sourced_beliefs_teach_checking_with_an_operator(env: Env) -> None:
    for n in range(3):
        proposition = f"invoice run {n} is correct"
        env.observe("ledger", proposition, "billing")
        result = env.observe("audit", proposition, "billing")
        belief = result.perception.beliefs[0]
        env.turn(Correction(belief, "the totals were wrong", confidence=0.1))
    done = env.reflect()
    [pattern] = done.data["patterns"]
    assert (pattern["corrections"], pattern["misses"], pattern["single_source"]) == (3, 0, 0)
    assert pattern["lesson"] == (
        "Lesson: 3 operator corrections on billing within 30 days. Check beliefs about billing with an operator before relying on them."
    )
    assert done.outputs["summary"] == "3 corrections; 1 new lesson"


# findings ------------------------------------------------------------------------------


def test_corrections_rejections_status_changes_goals_contradictions_and_calibration(env: Env) -> None:
    green = env.observe("ci", "the build is green", "build").perception.beliefs[0]
    env.observe("qa", "the build is green", "build", stance="contradicts")
    assert get_belief(env.store.reader(), green).status == "contested"
    assert get_belief(env.store.reader(), green).confidence == 0.18
    env.turn(Correction(green, "I looked at the dashboard", confidence=0.1))
    drains = env.observe("ops", "the queue drains", "queue").perception.beliefs[0]
    env.turn(Correction(drains, "it never drained", status="rejected"))
    goal = env.turn(GoalStimulus(title="ship v2")).perception.goals[0]
    env.turn(GoalStimulus(goal=goal, status="completed"))
    warm = env.predict("the cache stays warm", "cache", 0.6)
    env.outcome(warm, "hit")
    env.miss("the deploy lands", confidence=0.9)

    done = env.reflect()
    data = done.data

    corrections = data["corrections"]
    assert (corrections["count"], corrections["effects"]) == (2, {"lowered": 1, "rejected": 1})
    lowered, rejected = corrections["items"]
    assert (lowered["belief"], lowered["status"], lowered["confidence"]["to"], lowered["by"], lowered["reason"]) == (
        green, {"from": "contested", "to": "pinned"}, 0.1, "operator", "I looked at the dashboard"
    )
    assert (rejected["belief"], rejected["effect"], rejected["status_now"]) == (drains, "rejected", "rejected")
    assert (data["rejected"]["count"], data["rejected"]["by"]) == (2, {"operator": 1, "outcome": 1})
    contested = data["contested"]
    assert (contested["count"], contested["still_contested"], contested["items"][0]["belief"]) == (1, 0, green)
    transitions = data["status_changes"]["transitions"]
    assert transitions == {"active->contested": 1, "active->rejected": 2, "contested->pinned": 1}
    assert data["goals_completed"]["count"] == 1 and data["goals_completed"]["items"][0]["title"] == "ship v2"
    predictions = data["predictions"]
    assert (predictions["resolved"], predictions["hits"], predictions["confident_misses"], predictions["mean_error"]) == (2, 1, 1, 0.65)
    worst = predictions["items"][0]
    assert (worst["subject"], worst["stated"], worst["result"], worst["error"], worst["confident_miss"]) == ("deploy", 0.9, "miss", 0.9, True)
    # Brier: ((0.6 - 1)² + (0.9 - 0)²) / 2, for the period and (all of it) overall.
    period, overall = data["calibration"]["period"], data["calibration"]["overall"]
    assert period["brier"] == overall["brier"] == 0.485 and period["resolved"] == overall["resolved"] == 2
    assert [(b["low"], b["count"], b["hits"]) for b in period["bins"] if b["count"]] == [(0.6, 1, 1), (0.9, 1, 0)]
    counts = done.outputs["counts"]
    assert (counts["corrections"], counts["rejected"], counts["contested"], counts["goals_completed"], counts["patterns"]) == (2, 2, 1, 1, 0)
    # Everything reviewed is cited; the plain prose says it.
    cited = {i for t, i in refs(done.event) if t == "event"}
    assert {lowered["event"], rejected["event"], contested["items"][0]["event"], data["goals_completed"]["items"][0]["event"]} <= cited
    text = done.event.text
    for line in (
        "Operator corrections: 2 (1 rejected and 1 lowered), on build (1) and queue (1).",
        "Rejected beliefs: 2 (1 after a missed prediction and 1 by an operator).",
        "Contradictions: 1 belief became contested, none still is.",
        "Goals completed: 1: “ship v2”.",
        "Calibration: Brier 0.48 over 2 predictions this period, Brier 0.48 over 2 predictions overall.",
    ):
        assert line in text, text
    assert done.outputs["summary"] == "1 prediction miss on deploy; 2 corrections; 1 belief contested; 1 goal completed; no new lesson"


def test_an_empty_period_says_nothing_happened(env: Env) -> None:
    gateway, provider = env.gateway({"narrate": ["I did a lot."]})
    first = env.reflect(gateway)
    assert first.event.text == (
        "I reflected on what happened from 2026-01-01 00:00 UTC to 2026-01-01 00:00 UTC: nothing happened that calls for reflection."
        " No prediction was resolved, no belief was rejected, corrected or changed status, and no goal was completed."
    )
    assert set(first.outputs["counts"].values()) == {0} | {first.outputs["counts"]["events"]}
    assert (first.data["rendered_by"], first.data["reason"]) == ("plain", "empty_period")
    assert first.outputs["summary"] == "nothing to reflect on since 2026-01-01 00:00 UTC" and first.event.refs == ()
    assert provider is not None and provider.requests == []
    second = env.reflect(gateway)
    assert second.data["period"]["after_event"] == first.data["period"]["through_event"]
    assert refs(second.event) == [("event", first.event.id)] and "nothing happened" in second.event.text


# rewording -----------------------------------------------------------------------------


def some_history(env: Env) -> None:
    warm = env.predict("the cache stays warm", "cache", 0.6)
    env.outcome(warm, "hit")
    env.miss("the deploy lands", confidence=0.9)


def test_the_narrate_model_may_reword_the_prose_but_never_the_findings(env: Env) -> None:
    some_history(env)
    job = env.start()
    before = env.findings()
    plain = render(before)
    reworded = " ".join(line.removeprefix("I reflected on ") for line in plain.splitlines()[1:]) + " I reflected on it."
    gateway, provider = env.gateway({"narrate": [reworded]})

    done = env.reflect(gateway, job=job)

    assert (done.data["rendered_by"], done.data["reason"], done.outputs["rendered_by"]) == ("model", None, "model")
    assert done.event.text == reworded and done.data["plain"] == plain and done.data["model"] == HAIKU
    [call] = done.ctx.model_calls
    assert done.data["model_call"] == call and ("model_call", call) in refs(done.event)
    assert get_job(env.store.reader(), done.ctx.job.id).model_calls == [call]
    assert provider is not None and [r.role for r in provider.requests] == ["narrate"] and plain in provider.requests[0].text()
    # The findings are those of the review, to the last item.
    stored = {k: v for k, v in done.data.items() if k in before.to_json()}
    assert stored == json.loads(json.dumps(before.to_json()))


def test_a_rewording_that_adds_content_is_refused_and_the_plain_prose_kept(env: Env) -> None:
    some_history(env)
    gateway, _ = env.gateway({"narrate": ["I failed badly 4 times at the deploy and I worry."]})
    job = env.start()
    plain = render(env.findings())
    done = env.reflect(gateway, job=job)
    assert done.event.text == done.data["plain"] == plain
    assert (done.data["rendered_by"], done.data["reason"]) == ("plain", "unsupported_content")
    assert done.data["unsupported"] == ["4", "failed", "badly", "times", "worry"]
    assert "failed" in done.data["detail"] and len(done.ctx.model_calls) == 1
    assert ("model_call", done.ctx.model_calls[0]) in refs(done.event)


@pytest.mark.parametrize("case", ["no_calls", "no_model", "model_error"])
def test_without_a_call_left_or_a_model_the_prose_stays_plain_and_says_why(env: Env, case: str) -> None:
    some_history(env)
    script: dict[str, Any] | None = {"narrate": ["I reflected."]}
    if case == "no_model":
        script = None
    elif case == "model_error":
        script = {"narrate": [{"fault": "overloaded"}]}
    gateway, provider = env.gateway(script)
    done = env.reflect(gateway, model_calls=0 if case == "no_calls" else 1)
    assert (done.data["rendered_by"], done.data["reason"]) == ("plain", case) and done.data["detail"]
    assert done.event.text == done.data["plain"]
    if case == "model_error":  # a failed call is in the ledger, on the job and cited
        assert len(done.ctx.model_calls) == 1 and ("model_call", done.ctx.model_calls[0]) in refs(done.event)
    else:
        assert done.ctx.model_calls == [] and (provider is None or provider.requests == [])


# the timeline, determinism, limits -----------------------------------------------------


def test_the_timeline_from_a_lesson_reaches_the_reflection_and_the_failures(env: Env) -> None:
    for proposition in ("deploy one lands", "deploy two lands", "deploy three lands"):
        env.miss(proposition)
    done = env.reflect()
    [created] = env.rows("SELECT id FROM events WHERE kind = 'memory_created' AND subject_id = ?", done.outputs["lessons"][0])
    graph = walk(env.store.reader(), created[0])
    kinds = {n.kind for n in graph.nodes}
    assert {"reflection", "prediction_resolved", "outcome", "mode_changed"} <= kinds
    edges = {(e.source, e.target, e.kind) for e in graph.edges}
    assert (done.event.id, created[0], "caused") in edges
    assert {(r, done.event.id, "cited") for r in resolved_events(env)} <= edges


def history(env: Env) -> None:
    for proposition in ("deploy one lands", "deploy two lands", "deploy three lands"):
        env.miss(proposition)
    green = env.observe("ci", "the build is green", "build").perception.beliefs[0]
    env.observe("qa", "the build is green", "build", stance="contradicts")
    env.turn(Correction(green, "checked by hand", confidence=0.3))
    env.outcome(env.predict("the cache stays warm", "cache", 0.7), "hit")


def test_the_same_history_gives_the_same_findings(tmp_path: Path) -> None:
    outputs = []
    for name in ("a.db", "b.db"):
        env = Env(tmp_path / name)
        try:
            history(env)
            assert env.findings().to_json() == env.findings().to_json()
            done = env.reflect()
            outputs.append((done.outputs, done.event.text, done.data, refs(done.event)))
        finally:
            env.close()
    assert outputs[0] == outputs[1]


def test_refs_are_capped_at_64_with_the_most_important_first(env: Env) -> None:
    now = env.clock.now()

    def bulk(db: Any) -> None:
        for n in range(70):
            cause = append(db, EventDraft("ada", "prediction", "operator", text="p"), now).id
            prediction, _ = make_prediction(
                db, mind="ada", proposition=f"job {n} finishes", subject=f"job {n}", confidence=0.6, due_at=now + 60, brought_by=cause, now=now
            )
            outcome = append(db, EventDraft("ada", "outcome", "operator", text="hit"), now).id
            resolve_prediction(db, prediction_id=prediction.id, result="hit", brought_by=outcome, now=now)

    env.store.writer.run_sync(bulk)
    for proposition in ("deploy one lands", "deploy two lands", "deploy three lands"):
        env.miss(proposition)
    done = env.reflect()
    cited = refs(done.event)
    # 70 hits, 3 misses and the 3 rejections they brought; the failures come first, then the
    # rejections, then the hits by error and id: the 12 newest hits are left out.
    assert len(cited) == 64 and done.data["cited"] == {"refs": 64, "candidates": 76}
    resolved = resolved_events(env)
    rejections = [e["event"] for e in done.data["rejected"]["items"]]
    assert {("event", e) for e in [*resolved[-3:], *rejections, *resolved[:58]]} == set(cited)
    assert done.data["predictions"]["resolved"] == 73 and len(done.data["predictions"]["items"]) == 50


def test_the_lookback_starts_at_the_first_event_of_its_day(env: Env) -> None:
    ids = []
    for day in range(5):
        ids.append(env.store.writer.run_sync(lambda db: append(db, EventDraft("ada", "message", "user:a", text="hi"), START + day * DAY)).id)
    db = env.store.reader()
    through = ids[-1]
    assert reflection.first_event_since(db, "ada", iso(START + 2 * DAY), through) == ids[2]
    assert reflection.first_event_since(db, "ada", iso(START + 2 * DAY - 1), through) == ids[2]
    assert reflection.first_event_since(db, "ada", iso(START + 9 * DAY), through) == through + 1
    assert reflection.first_event_since(db, "ada", iso(START - DAY), through) < ids[0]  # mind_created


def test_the_prose_describes_five_patterns_and_counts_the_rest(env: Env) -> None:
    def pattern(n: int) -> reflection.Pattern:
        return reflection.Pattern(
            key=f"failures:s{n}", subject=f"s{n}", status="new", failures=3, in_period=3, misses=3, confident_misses=3,
            rejected=0, corrections=0, single_source=0, days=30, events=(),
        )

    findings = replace(env.findings(), patterns=tuple(pattern(n) for n in range(7)))
    lines = render(findings).splitlines()
    assert sum(line.startswith("New pattern: ") for line in lines) == 5
    assert lines[-1] == "2 more patterns (2 new, 0 known), on s5 and s6."
    assert pattern(0).lesson == (
        "Lesson: 3 confident prediction misses on s0 within 30 days. State lower confidence on s0 until predictions about it come true."
    )
