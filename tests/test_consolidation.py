"""Consolidation: recurring episodes become an inference belief and a semantic memory; operators may reject them.

In process, on a real store with the real writer: stimuli are stored and
perceived as a mind's turn perceives them (an episode per stimulus, at an
explicit time), and consolidation runs as a job does (a `jobs` row, a
JobContext, the model gateway with the scripted provider or none).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noemad.background import consolidation
from noemad.background.consolidation import (
    EPISODE_WEIGHT,
    Cluster,
    cluster,
    episode_terms,
    plain_proposition,
    reject,
    strip_speaker,
    terms,
    who,
)
from noemad.background.jobs import JobContext, finish_job, get_job, start_job
from noemad.clock import ManualClock, parse_iso
from evidence_rows import Row, add_one
from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.trust import set_trust
from noemad.cognition.confidence import Item, confidence
from noemad.cognition.memory.reads import get_memory
from noemad.cognition.memory.writing import write_memory
from noemad.cognition.perceive import perceive
from noemad.config.files import parse_config
from noemad.config.schedules import ConsolidationSchedule
from noemad.errors import Conflict, InvalidInput, InvalidLink
from noemad.events import Event, EventDraft, Ref, append, get_event, list_events
from noemad.minds import create_mind
from noemad.models.gateway import ModelGateway
from noemad.models.scripted import ScriptedProvider
from noemad.stimuli import Message, Observation
from noemad.store import Store
from noemad.timeline import walk

NOW = parse_iso("2026-02-01T00:00:00Z")
DAY = 86_400.0
SCRIPTED = '[models]\nprovider = "scripted"\n'

# Demo scenario 3: alice tells the mind seven things over a week; five are about selecting Go.
GO = (
    "I'll select Go for the new parser",
    "the coffee machine on floor two is broken again",
    "Selected Go again for the metrics service",
    "we select Go for the importer too",
    "lunch at noon on Friday?",
    "Go is what I select for the scheduler",
    "select Go for the CLI rewrite, as usual",
)
GO_PLAIN = (
    'alice repeatedly mentioned select and go (5 episodes, 2026-01-20 to 2026-01-26),'
    ' e.g. "I\'ll select Go for the new parser".'
)


@dataclass
class Consolidated:
    """One consolidation job's outputs, its summary event and the context it ran in."""

    outputs: dict[str, Any]
    event: Event
    ctx: JobContext
    progress: list[tuple[float, str]]

    @property
    def clusters(self) -> list[dict[str, Any]]:
        return self.outputs["clusters"]


class Env:
    """Minds ada and bob on a real store; stimuli are perceived into episodes at explicit times."""

    def __init__(self, path: Path) -> None:
        self.store = Store(path)
        self.clock = ManualClock(NOW)
        for mind in ("ada", "bob"):
            self.store.writer.run_sync(lambda db, mind=mind: create_mind(db, mind, {}, NOW - 60 * DAY, "operator"))
        self.turns = 0

    def close(self) -> None:
        self.store.close()

    def perceive(self, stimulus: Any, at: float, mind: str = "ada") -> int:
        """Store a stimulus and perceive it at `at`; the episode's id."""
        self.turns += 1
        cycle = f"{mind}/{self.turns}"

        def job(db: Any) -> int:
            stored = append(db, stimulus.draft(mind), at)
            return perceive(db, mind, [stored], cycle, at).episodes[0]

        return self.store.writer.run_sync(job)

    def say(self, text: str, at: float, author: str = "alice", mind: str = "ada") -> int:
        return self.perceive(Message(author, text), at, mind)

    def go(self, start: float = NOW - 12 * DAY) -> list[int]:
        """Demo scenario 3, one message a day from `start`; the ids of the five Go episodes."""
        ids = [self.say(text, start + i * DAY) for i, text in enumerate(GO)]
        return [i for i, text in zip(ids, GO) if "go" in text.lower().split()]

    def gateway(self, script: dict[str, Any] | None = None) -> tuple[ModelGateway, ScriptedProvider | None]:
        cfg = parse_config(SCRIPTED if script is not None else "[models]\n", "noemad.toml").config
        provider = ScriptedProvider(script) if script is not None else None
        return ModelGateway(config=lambda: cfg, clock=self.clock, writer=self.store.writer, provider=provider), provider

    def consolidate(
        self, gateway: ModelGateway | None = None, mind: str = "ada", **schedule: Any
    ) -> Consolidated:
        """Run consolidation as a job runs it: start the job, run the service, finish the job."""
        now = self.clock.now()
        job = self.store.writer.run_sync(
            lambda db: start_job(db, mind=mind, kind="consolidation", trigger="operator", actor="operator", inputs={}, now=now)
        )
        progress: list[tuple[float, str]] = []
        ctx = JobContext(
            job=job, store=self.store, clock=self.clock, gateway=gateway or self.gateway()[0],
            settings=ConsolidationSchedule(**schedule), on_progress=lambda f, s: progress.append((f, s)),
        )
        outputs = asyncio.run(consolidation.run(ctx))
        self.store.writer.run_sync(
            lambda db: finish_job(db, job.id, outputs=outputs, error=None, model_calls=ctx.model_calls, now=self.clock.now())
        )
        assert json.loads(json.dumps(outputs)) == outputs  # JSON-able, as the job row stores it
        self.clock.advance(60)
        return Consolidated(outputs, get_event(self.store.reader(), outputs["event"]), ctx, progress)

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return self.store.reader().execute(sql, list(params)).fetchall()

    def episodes(self, mind: str = "ada") -> list[tuple[Any, ...]]:
        return self.rows("SELECT * FROM memories WHERE mind = ? AND kind = 'episodic' ORDER BY id", mind)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path / "n.db")
    yield e
    e.close()


def expected_confidence(sources: Sequence[str], trust: float = 0.6) -> float:
    return confidence([Item("support", EPISODE_WEIGHT, trust, s) for s in sources])


# --- demo scenario 3: the user repeatedly selects Go ------------------------------------


def test_repeatedly_selecting_go_becomes_one_inference_belief_and_one_semantic_memory(env: Env) -> None:
    go = env.go()
    bob = [env.say(t, NOW - 3 * DAY + i, author="bob") for i, t in enumerate(("the build is red", "deploy on Friday"))]
    before = env.episodes()

    done = env.consolidate()

    [c] = done.clusters
    assert (c["episodes"], c["worded_by"], c["reason"], c["terms"], c["pair"]) == (5, "plain", "no_model", ["select", "go"], ["go", "select"])
    assert c["proposition"] == c["plain"] == GO_PLAIN
    assert done.outputs["episodes"] == 9 and done.outputs["clustered"] == 5 and done.outputs["left"] == 4
    assert done.outputs["summary"] == "1 generalisation from 5 of 9 episodes; 4 left for later"
    assert (done.outputs["beliefs"], done.outputs["memories"]) == ([c["belief"]], [c["memory"]])

    # The belief: an inference, one item per episode at weight 0.3 from alice, with the single-source discount.
    belief = get_belief(env.store.reader(), c["belief"])
    assert (belief.kind, belief.status, belief.proposition, belief.subject) == ("inference", "active", GO_PLAIN, "go select")
    assert [(e.stance, e.weight, e.credibility, e.source, e.kind) for e in belief.evidence] == [("support", 0.3, 0.6, "alice", "inference")] * 5
    stimuli = {r[0] for r in env.rows("SELECT event_id FROM memories WHERE id IN (%s)" % ",".join(map(str, go)))}
    assert {e.event_id for e in belief.evidence} == stimuli  # each item brought by the message its episode records
    assert belief.confidence == expected_confidence(["alice"] * 5) == pytest.approx(0.3112, abs=5e-4)
    assert belief.confidence < expected_confidence(["a", "b", "c", "d", "e"])
    assert c["confidence"] == belief.confidence

    # The semantic memory says the same and is derived from each episode.
    memory = get_memory(env.store.reader(), c["memory"])
    assert (memory.kind, memory.text, memory.derived_from, memory.status) == ("semantic", GO_PLAIN, tuple(go), "active")
    assert env.rows("SELECT memory_id, job_id, into_memory FROM consolidated ORDER BY memory_id") == [
        (i, done.ctx.job.id, memory.id) for i in go
    ]
    # Episodes are never modified; bob's and the unrelated ones are left for later.
    assert env.episodes() == before
    assert not set(bob) & {r[0] for r in env.rows("SELECT memory_id FROM consolidated")}

    # The events: belief_created caused by the job's start, memory_created caused by it, the summary last.
    created = get_event(env.store.reader(), c["belief_event"])
    start = [e for e in list_events(env.store.reader(), "ada", kinds=["mode_changed"]) if e.data.get("job") == done.ctx.job.id][0]
    assert (created.kind, created.actor, created.causation_id, created.text) == ("belief_created", "process:consolidation", start.id, GO_PLAIN)
    assert created.refs == tuple(Ref("memory", i) for i in go)
    assert created.data["evidence"]["count"] == 5 and created.data["sources"] == {"alice": {"items": 5, "credibility": 0.6}}
    written = get_event(env.store.reader(), c["memory_event"])
    assert (written.kind, written.causation_id, written.data["derived_from"]) == ("memory_created", created.id, 5)
    assert (done.event.kind, done.event.actor, done.event.text, done.event.causation_id) == (
        "consolidation", "process:consolidation", done.outputs["summary"], start.id,
    )
    assert done.event.refs == (Ref("belief", belief.id), Ref("memory", memory.id))
    assert done.event.data["job"] == done.ctx.job.id and done.event.data["clusters"] == done.clusters
    assert get_job(env.store.reader(), done.ctx.job.id).outputs == done.outputs

    # Progress went through each stage to the end.
    stages = [s for _, s in done.progress]
    assert stages[0] == "loading episodes" and "clustering 9 episodes" in stages and stages[-1] == "recording"
    assert "writing 1/1" in stages

    # A second run finds nothing new: the episodes are consolidated, the rest still do not recur.
    again = env.consolidate()
    assert again.clusters == [] and again.outputs["episodes"] == 4
    assert again.outputs["summary"] == "no generalisation: no two terms recur together in 3 or more of the 4 episodes; all are left for later"
    assert again.event.kind == "consolidation" and again.event.refs == ()


def test_nothing_to_consolidate_is_said_and_recorded(env: Env) -> None:
    done = env.consolidate()
    assert done.outputs["episodes"] == 0 and done.clusters == [] and done.outputs["beliefs"] == []
    assert done.event.text == done.outputs["summary"] == "nothing to consolidate: no episodes of the last 30d are left unconsolidated"


def test_the_timeline_walks_from_the_belief_back_to_the_episodes_and_their_messages(env: Env) -> None:
    go = env.go()
    done = env.consolidate()
    [c] = done.clusters
    timeline = walk(env.store.reader(), c["belief_event"])
    reached = {n.id for n in timeline.nodes}
    db = env.store.reader()
    episode_events = {r[0] for r in env.rows("SELECT id FROM events WHERE kind = 'memory_created' AND subject_id IN (%s)" % ",".join(map(str, go)))}
    messages = {get_memory(db, i).event_id for i in go}
    assert episode_events <= reached and messages <= reached
    cited = {(e.source, e.via) for e in timeline.edges if e.kind == "cited" and e.target == c["belief_event"]}
    assert {via for _, via in cited} == {Ref("memory", i) for i in go}
    # ... and forward from a message to the generalisation and the run's summary.
    forward = walk(db, min(messages))
    assert {c["belief_event"], c["memory_event"], done.event.id} <= {n.id for n in forward.nodes}


def test_a_cluster_of_more_than_63_episodes_cites_the_first_and_keeps_every_link(env: Env) -> None:
    services = [f"service{n}" for n in range(70)]
    ids = [env.say(f"I'll select Go for {s}", NOW - 20 * DAY + i * 600) for i, s in enumerate(services)]
    [c] = env.consolidate().clusters
    assert c["episodes"] == 70
    memory = get_memory(env.store.reader(), c["memory"])
    assert memory.derived_from == tuple(ids)
    assert len(get_belief(env.store.reader(), c["belief"]).evidence) == 70
    created = get_event(env.store.reader(), c["belief_event"])
    assert created.refs == tuple(Ref("memory", i) for i in ids[:64]) and created.data["evidence"]["count"] == 70
    written = get_event(env.store.reader(), c["memory_event"])
    assert written.refs == tuple(Ref("memory", i) for i in ids[:63]) and written.data["derived_from"] == 70
    assert len(env.rows("SELECT * FROM consolidated")) == 70
    assert get_belief(env.store.reader(), c["belief"]).confidence == expected_confidence(["alice"] * 70)


def test_sources_are_the_speakers_and_their_trust_is_the_credibility(env: Env) -> None:
    env.store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="bob", value=0.9, now=NOW - 30 * DAY, actor="operator"))
    for i, author in enumerate(("alice", "bob", "alice", "carol", "bob")):
        env.say(f"select Go for job {i}", NOW - 5 * DAY + i * 60, author=author)
    env.perceive(Observation("ci", "nightly: select Go for the runner"), NOW - DAY)
    [c] = env.consolidate().clusters
    belief = get_belief(env.store.reader(), c["belief"])
    assert sorted((e.source, e.credibility) for e in belief.evidence) == [
        ("alice", 0.6), ("alice", 0.6), ("bob", 0.9), ("bob", 0.9), ("carol", 0.6), ("ci", 0.6),
    ]
    expected = confidence([Item("support", 0.3, e.credibility, e.source) for e in belief.evidence])
    assert belief.confidence == expected
    assert c["speakers"] == {"alice": 2, "bob": 2, "carol": 1, "ci": 1}
    assert c["proposition"].startswith("alice, bob and 2 others repeatedly mentioned select, go and job (6 episodes,")


def test_many_clusters_the_summary_cites_the_first_64_and_lists_them_all(env: Env) -> None:
    for n in range(35):
        for k in range(3):
            env.say(f"alpha{n} beta{n} note {k}", NOW - 10 * DAY + n * 600 + k)
    done = env.consolidate()
    assert len(done.clusters) == 35 and done.outputs["clustered"] == 105
    assert len(done.event.refs) == 64 and done.event.data["clusters_total"] == 35 and len(done.event.data["clusters"]) == 35
    firsts = [(Ref("belief", c["belief"]), Ref("memory", c["memory"])) for c in done.clusters[:32]]
    assert set(done.event.refs) == {r for pair in firsts for r in pair}
    # Equal clusters are taken in term order: alpha0 beta0, alpha1 beta1, alpha10 beta10, ...
    assert [c["pair"] for c in done.clusters[:3]] == [["alpha0", "beta0"], ["alpha1", "beta1"], ["alpha10", "beta10"]]


def test_a_cluster_that_fails_to_write_is_reported_and_the_others_are_written(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    env.go()
    for n in range(3):
        env.say(f"deploy failed on main, build {n}", NOW - 2 * DAY + n * 60, author="ci")
    real = consolidation.write_clusters
    asked: list[int] = []

    def flaky(db: Any, **kwargs: Any) -> Any:
        asked.append(len(kwargs["clusters"]))
        if any("deploy" in c.proposition for c in kwargs["clusters"]):
            raise InvalidInput("this cluster cannot be written")
        return real(db, **kwargs)

    monkeypatch.setattr(consolidation.job, "write_clusters", flaky)  # the job calls it by its module's name
    done = env.consolidate()
    [c] = done.clusters
    assert c["terms"] == ["select", "go"] and done.outputs["failed"] == [{"cluster": 1, "episodes": 3, "error": "this cluster cannot be written"}]
    assert done.outputs["summary"] == "1 generalisation from 5 of 10 episodes; 5 left for later"
    assert env.rows("SELECT count(*) FROM consolidated") == [(5,)] and env.rows("SELECT count(*) FROM beliefs") == [(1,)]
    assert asked == [2, 1, 1]  # both together, refused; then each alone


# --- which episodes --------------------------------------------------------------------


def test_episodes_older_than_the_window_are_left_out(env: Env) -> None:
    old = [env.say(f"select Go for old thing {i}", NOW - 31 * DAY + i) for i in range(5)]
    new = [env.say(f"select Go for new thing {i}", NOW - 2 * DAY + i) for i in range(2)]
    done = env.consolidate()
    assert done.outputs["episodes"] == 2 and done.clusters == []
    assert env.rows("SELECT count(*) FROM consolidated") == [(0,)]
    wider = env.consolidate(window="40d")
    [c] = wider.clusters
    assert get_memory(env.store.reader(), c["memory"]).derived_from == tuple(old + new)


def test_min_episodes_decides_how_many_make_a_cluster(env: Env) -> None:
    for i in range(3):
        env.say(f"select Go for thing {i}", NOW - DAY + i)
    assert env.consolidate(min_episodes=4).clusters == []
    [c] = env.consolidate(min_episodes=3).clusters
    assert c["episodes"] == 3 and env.consolidate(min_episodes=2).clusters == []


def test_retracted_episodes_and_other_minds_are_left_out(env: Env) -> None:
    ids = [env.say(f"select Go for thing {i}", NOW - DAY + i) for i in range(3)]
    for i in range(3):
        env.say(f"select Go for thing {i}", NOW - DAY + i, mind="bob")
    from noemad.cognition.memory.writing import retract

    env.store.writer.run_sync(lambda db: retract(db, memory_id=ids[0], reason="wrong", now=NOW - 1, actor="operator"))
    assert env.consolidate().clusters == []
    [c] = env.consolidate(mind="bob").clusters
    assert c["episodes"] == 3


def test_speaker_names_and_channels_alone_do_not_make_a_cluster(env: Env) -> None:
    for i, text in enumerate(("the build is red", "lunch at noon", "my cat is asleep", "rain again today", "new laptop arrived")):
        env.say(text, NOW - DAY + i)
    assert env.consolidate().clusters == []
    assert strip_speaker("alice said on cli: I picked Go: again") == "I picked Go: again"
    assert strip_speaker("no prefix here") == "no prefix here"
    assert terms("alice said on cli: Selected Go again for the metrics services") == ["select", "go", "metric", "servic"]


def test_the_same_episodes_stored_in_another_order_give_the_same_generalisations(tmp_path: Path) -> None:
    messages = [(text, i * DAY) for i, text in enumerate(GO)]
    messages += [(f"deploy failed on main, build {n}", 9 * DAY + n * 3600) for n in range(4)]
    messages += [(f"deploy failed on main at {n} pm", 11 * DAY + n * 3600) for n in range(2)]
    outcomes = []
    for seed in range(3):
        shuffled = messages[:]
        random.Random(seed).shuffle(shuffled)
        e = Env(tmp_path / f"{seed}.db")
        try:
            for text, offset in shuffled:
                e.say(text, NOW - 20 * DAY + offset)
            done = e.consolidate()
            db = e.store.reader()
            outcomes.append(
                [
                    (c["proposition"], c["terms"], c["confidence"], sorted(get_memory(db, i).text for i in get_memory(db, c["memory"]).derived_from))
                    for c in done.clusters
                ]
            )
        finally:
            e.close()
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert [len(c[3]) for c in outcomes[0]] == [6, 5]  # deploy failures, then Go


@settings(max_examples=60, deadline=None)
@given(
    episodes=st.lists(st.sets(st.sampled_from("go select deploy fail main build cat lunch rain coffee".split()), max_size=5), max_size=40),
    seed=st.integers(0, 1000),
    min_episodes=st.integers(2, 4),
)
def test_clusters_do_not_depend_on_the_order_of_the_episodes(episodes: list[set[str]], seed: int, min_episodes: int) -> None:
    order = list(range(len(episodes)))
    random.Random(seed).shuffle(order)
    first = cluster(episodes, min_episodes)
    second = cluster([episodes[i] for i in order], min_episodes)

    def canonical(found: list[Cluster], index: Sequence[int]) -> list[tuple[tuple[str, str], list[int]]]:
        return [(c.pair, sorted(index[m] for m in c.members)) for c in found]

    assert canonical(first, range(len(episodes))) == canonical(second, order)
    taken = [m for c in first for m in c.members]
    assert len(taken) == len(set(taken))  # an episode is in one cluster at most
    for c in first:
        assert len(c.members) >= min_episodes and all(set(c.pair) <= episodes[m] for m in c.members)


def test_the_clustering_thresholds() -> None:
    # Two terms that occur together cluster; one shared term alone does not.
    together = [{"select", "go", f"x{i}"} for i in range(3)]
    assert [(c.pair, c.members) for c in cluster(together, 3)] == [(("go", "select"), (0, 1, 2))]
    assert cluster([{"go", f"x{i}"} for i in range(5)], 3) == []
    # A pair that mostly appears apart is no habit (cosine below 0.4): "go" in 20 episodes, "cat" in 20, together in 3.
    apart = [{"go", "cat"}] * 3 + [{"go", f"a{i}"} for i in range(17)] + [{"cat", f"b{i}"} for i in range(17)]
    assert cluster(apart, 3) == []
    # Two common words that co-occur by chance do not cluster in a large window (lift below 1.5) ...
    rng = random.Random(7)
    chance = [{w for w in ("please", "thanks") if rng.random() < 0.6} | {f"w{i}"} for i in range(1000)]
    assert cluster(chance, 3) == []
    # ... but a few episodes mostly about one thing do (a small window is measured as if it held 200).
    assert len(cluster([{"select", "go"}] * 5 + [{"lunch"}], 3)) == 1
    # The greedy takes the pair with the most episodes first; an episode goes to one cluster.
    big = [{"deploy", "fail", "main"}] * 6 + [{"deploy", "fail"}] * 2 + [{"select", "go", "main"}] * 4
    found = cluster(big, 3)
    assert [(c.pair, len(c.members)) for c in found] == [(("deploy", "fail"), 8), (("go", "select"), 4)]
    with pytest.raises(InvalidInput):
        cluster(big, 1)


def test_terms_strip_the_prefix_and_stem_with_snowball() -> None:
    assert episode_terms(["observed from sensor-1: Temperatures rising in the kitchen", "bob asserted: kitchen temperature rises"]) == [
        ("temperatur", "rise", "kitchen"),
        ("kitchen", "temperatur", "rise"),
    ]


def test_plain_propositions_name_speakers_terms_dates_and_a_quote() -> None:
    assert who([("alice", 3)]) == "alice"
    assert who([("alice", 3), ("bob", 1)]) == "alice and bob"
    assert who([("a", 3), ("b", 2), ("c", 1)]) == "a, b and c"
    assert who([("a", 3), ("b", 2), ("c", 1), ("d", 1)]) == "a, b and 2 others"
    text = plain_proposition([("ci", 4)], ["build", "fail"], 4, "2026-01-02T10:00:00.000Z", "2026-01-02T11:00:00.000Z", "x" * 300)
    assert text.startswith('ci repeatedly mentioned build and fail (4 episodes, on 2026-01-02), e.g. "xxx')
    assert text.endswith('…".') and len(text) < 250


# --- model wording --------------------------------------------------------------------


def test_a_supported_generalisation_from_the_model_is_used_and_its_call_recorded(env: Env) -> None:
    go = env.go()
    answer = "alice repeatedly selects Go for new services."
    gateway, provider = env.gateway({"summarise": [answer]})
    done = env.consolidate(gateway)
    [c] = done.clusters
    assert (c["worded_by"], c["proposition"], c["plain"]) == ("model", answer, GO_PLAIN)
    [call] = done.ctx.model_calls
    assert c["model_call"] == call and done.outputs["discarded"] == []
    assert get_job(env.store.reader(), done.ctx.job.id).model_calls == [call]
    belief = get_belief(env.store.reader(), c["belief"])
    assert belief.proposition == answer == get_memory(env.store.reader(), c["memory"]).text
    created = get_event(env.store.reader(), c["belief_event"])
    assert Ref("model_call", call) in created.refs and len(created.refs) == 6
    # The prompt gave the episodes without their prefixes, and the shared words.
    assert provider is not None
    [request] = provider.requests
    assert request.role == "summarise" and "- alice, 2026-01-20: I'll select Go for the new parser" in request.text()
    assert "They share the words: go and select." in request.text() and "lunch" not in request.text()
    assert request.text().count("\n- alice, ") == len(go) == 5


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("alice prefers Rust for every parser.", ["it does not mention 'go'", "it does not mention 'select'", "no episode says 'rust', 'every'"]),
        ("alice selects Go. She never uses Python.", ["it is more than one sentence", "no episode says 'never', 'python'"]),
        ("alice selected Go 12 times for the parser.", ["no episode has the number 12"]),
        ("alice selects Go " + "again " * 40, ["it is 256 characters long, more than 200"]),
    ],
)
def test_an_unsupported_generalisation_is_discarded_recorded_and_the_plain_one_kept(env: Env, answer: str, why: list[str]) -> None:
    env.go()
    gateway, _ = env.gateway({"summarise": [answer]})
    done = env.consolidate(gateway)
    [c] = done.clusters
    assert (c["worded_by"], c["reason"], c["proposition"]) == ("plain", "unsupported", GO_PLAIN)
    [call] = done.ctx.model_calls
    [discarded] = done.outputs["discarded"]
    text = " ".join(answer.split())
    assert discarded == {"cluster": 0, "text": text, "why": why, "model_call": call, "reason": discarded["reason"]}
    assert discarded["reason"].startswith(f'"{text[:50]}') and discarded["reason"].endswith("; ".join(why))
    assert c["detail"] == "; ".join(why)
    assert Ref("model_call", call) not in get_event(env.store.reader(), c["belief_event"]).refs
    assert done.event.data["discarded"] == [discarded]


def test_the_run_makes_at_most_its_model_calls(env: Env) -> None:
    env.go()
    for n in range(3):
        env.say(f"deploy failed on main, build {n}", NOW - 2 * DAY + n * 60, author="ci")
    gateway, provider = env.gateway({"summarise": {"default": "ci repeatedly reports that the deploy failed on main."}})
    one = env.consolidate(gateway, model_calls=1)
    # The largest cluster is worded first (the answer does not fit it); the next finds no call left.
    assert [(c["episodes"], c["worded_by"], c["reason"]) for c in one.clusters] == [(5, "plain", "unsupported"), (3, "plain", "no_calls")]
    assert len(one.ctx.model_calls) == 1 and provider is not None and len(provider.requests) == 1
    assert one.clusters[1]["detail"] == "the run's 1 model calls are used"


def test_after_a_refusal_no_further_call_is_asked_for(env: Env) -> None:
    env.go()
    for n in range(3):
        env.say(f"deploy failed on main, build {n}", NOW - 2 * DAY + n * 60, author="ci")
    cfg = parse_config(SCRIPTED + "[budgets.summarise]\ntokens_per_day = 10\n", "noemad.toml").config
    provider = ScriptedProvider({"summarise": {"default": "alice repeatedly selects Go."}})
    gateway = ModelGateway(config=lambda: cfg, clock=env.clock, writer=env.store.writer, provider=provider)
    done = env.consolidate(gateway)
    assert [(c["worded_by"], c["reason"]) for c in done.clusters] == [("plain", "budget"), ("plain", "budget")]
    assert done.clusters[1]["detail"].startswith("not asked: an earlier call was refused")
    [call] = done.ctx.model_calls  # the refusal is in the ledger and on the job; nothing reached the provider
    assert provider.requests == [] and env.rows("SELECT outcome FROM model_calls") == [("refused",)]


def test_with_no_calls_or_no_model_the_proposition_is_plain_and_says_why(env: Env, tmp_path: Path) -> None:
    env.go()
    gateway, provider = env.gateway({"summarise": ["alice repeatedly selects Go."]})
    done = env.consolidate(gateway, model_calls=0)
    [c] = done.clusters
    assert (c["worded_by"], c["reason"]) == ("plain", "no_calls") and provider is not None and provider.requests == []
    assert done.ctx.model_calls == [] and env.rows("SELECT count(*) FROM model_calls") == [(0,)]

    other = Env(tmp_path / "other.db")
    try:
        other.go()
        [c] = other.consolidate().clusters  # no model configured
        assert (c["worded_by"], c["reason"]) == ("plain", "no_model") and other.rows("SELECT count(*) FROM model_calls") == [(0,)]
    finally:
        other.close()


def test_a_model_error_leaves_the_plain_proposition_and_is_on_the_job(env: Env) -> None:
    env.go()
    gateway, _ = env.gateway({"summarise": [{"fault": "overloaded"}]})
    done = env.consolidate(gateway)
    [c] = done.clusters
    assert (c["worded_by"], c["reason"], c["proposition"]) == ("plain", "model_error", GO_PLAIN)
    assert len(done.ctx.model_calls) == 1 and c["model_call"] == done.ctx.model_calls[0]


# --- rejecting ---------------------------------------------------------------------------


def test_rejecting_a_generalisation_retracts_its_memory_rejects_its_belief_and_leaves_the_episodes(env: Env) -> None:
    go = env.go()
    [c] = env.consolidate().clusters
    before = env.episodes()

    event = env.store.writer.run_sync(lambda db: reject(db, memory_id=c["memory"], reason="alice only tried Go", now=NOW, actor="operator"))

    assert (event.kind, event.actor, event.text) == ("generalisation_rejected", "operator", "alice only tried Go")
    assert set(event.refs) == {Ref("memory", c["memory"]), Ref("belief", c["belief"])}
    assert event.data == {"memory": c["memory"], "belief": c["belief"], "episodes": 5, "reason": "alice only tried Go"}
    db = env.store.reader()
    assert get_memory(db, c["memory"]).status == "retracted"
    belief = get_belief(db, c["belief"])
    assert (belief.status, belief.confidence) == ("rejected", 0.0)
    assert env.episodes() == before
    assert len(env.rows("SELECT * FROM consolidated")) == 5  # still consolidated: not clustered into the same again
    caused = {e.kind for e in list_events(db, "ada") if e.causation_id == event.id}
    assert caused == {"memory_retracted", "belief_updated"}

    # Rejected is pinned: later evidence is recorded but does not move it.
    stimulus = env.store.writer.run_sync(lambda db: append(db, EventDraft("ada", "observation", "source:ci", text="x"), NOW))
    after, _ = env.store.writer.run_sync(
        lambda db: add_evidence(db, mind="ada", proposition=GO_PLAIN, subject="go", kind="inference", stance="support",
                                weight=1.0, source="ci", brought_by=stimulus.id, now=NOW, actor="test")
    )
    assert (after.status, after.confidence) == ("rejected", 0.0)
    # The episodes are not consolidated again: only the two unrelated ones are left.
    assert env.consolidate().outputs["episodes"] == len(GO) - len(go) == 2


def test_only_an_unrejected_generalisation_can_be_rejected(env: Env) -> None:
    go = env.go()
    [c] = env.consolidate().clusters
    operator_memory, _ = env.store.writer.run_sync(
        lambda db: write_memory(db, mind="ada", kind="semantic", text="alice likes Go", now=NOW, actor="operator", cause=None,
                                cycle_id=None, derived_from=go)
    )
    count = len(env.rows("SELECT * FROM events"))
    for memory_id in (go[0], operator_memory.id):
        with pytest.raises(InvalidInput, match="consolidation did not write"):
            env.store.writer.run_sync(lambda db: reject(db, memory_id=memory_id, reason="no", now=NOW, actor="operator"))
    with pytest.raises(InvalidInput, match="at most 2,000 characters"):
        env.store.writer.run_sync(lambda db: reject(db, memory_id=c["memory"], reason="x" * 2001, now=NOW, actor="operator"))
    env.store.writer.run_sync(lambda db: reject(db, memory_id=c["memory"], reason="", now=NOW, actor="operator"))
    with pytest.raises(Conflict, match="already retracted"):
        env.store.writer.run_sync(lambda db: reject(db, memory_id=c["memory"], reason="again", now=NOW, actor="operator"))
    assert len(env.rows("SELECT * FROM events")) == count + 3
    assert env.rows("SELECT text FROM events WHERE kind = 'generalisation_rejected'") == [("rejected by an operator",)]


def test_a_generalisation_an_operator_rejected_is_not_written_again(env: Env) -> None:
    for i in range(3):
        env.say("select Go for the parser", NOW - DAY + i)
    [c] = env.consolidate().clusters
    env.store.writer.run_sync(lambda db: reject(db, memory_id=c["memory"], reason="no", now=NOW, actor="operator"))
    for i in range(3):  # the same episodes again: the same plain proposition
        env.say("select Go for the parser", NOW - DAY + i)
    done = env.consolidate()
    assert done.clusters == [] and done.outputs["clustered"] == 0
    [skipped] = done.outputs["skipped"]
    assert skipped["belief"] == c["belief"] and "rejected" in skipped["why"]


# --- add_evidence_bulk ---------------------------------------------------------------------


def test_many_items_of_evidence_make_one_belief_event(env: Env) -> None:
    events = [env.store.writer.run_sync(lambda db, i=i: append(db, EventDraft("ada", "message", "user:alice", text=str(i)), NOW)).id for i in range(4)]
    items = [Row("support", 0.3, "alice", events[0]), Row("support", 0.3, "alice", events[1]),
             Row("contradict", 0.5, "bob", events[2], credibility=0.9)]

    added = env.store.writer.run_sync(
        lambda db: add_one(db, mind="ada", proposition="Alice picks Go", subject="go", kind="inference", items=items,
                                     now=NOW, actor="test", cause=events[3], cites=[Ref("event", events[0])])
    )
    belief, event = get_belief(env.store.reader(), added.belief_id), added.event
    assert (added.created, added.confidence, added.status) == (True, belief.confidence, "active")
    assert (added.first, added.last) == (belief.evidence[0].id, belief.evidence[-1].id)
    assert event.kind == "belief_created" and event.causation_id == events[3] and event.refs == (Ref("event", events[0]),)
    assert [(e.stance, e.weight, e.credibility, e.source, e.event_id) for e in belief.evidence] == [
        ("support", 0.3, 0.6, "alice", events[0]), ("support", 0.3, 0.6, "alice", events[1]), ("contradict", 0.5, 0.9, "bob", events[2]),
    ]
    assert belief.confidence == confidence(e.item() for e in belief.evidence)
    ids = [e.id for e in belief.evidence]
    assert event.data["evidence"] == {"count": 3, "first_id": ids[0], "last_id": ids[-1], "support": 2, "contradict": 1}
    assert event.data["sources"] == {"alice": {"items": 2, "credibility": 0.6}, "bob": {"items": 1, "credibility": 0.9}}
    assert event.data["confidence"] == {"from": 0.0, "to": belief.confidence}

    more = env.store.writer.run_sync(
        lambda db: add_one(db, mind="ada", proposition="alice picks go!", subject="go", kind="inference",
                                     items=[Row("support", 0.3, "carol", events[3])], now=NOW, actor="test", cause=None)
    )
    again, updated = get_belief(env.store.reader(), more.belief_id), more.event
    assert not more.created and more.confidence == again.confidence
    assert again.id == belief.id and updated.kind == "belief_updated" and len(again.evidence) == 4
    assert updated.data["confidence"] == {"from": belief.confidence, "to": again.confidence}
    assert updated.data["evidence"]["count"] == 1


def test_many_items_are_stored_in_order_with_their_credibility_or_their_sources_trust(env: Env) -> None:
    # Items alike (one weight, credibility from trust: consolidation's) and items that differ are stored the same way.
    env.store.writer.run_sync(lambda db: set_trust(db, mind="ada", source="bob", value=0.85, now=NOW, actor="operator"))
    events = [env.store.writer.run_sync(lambda db, i=i: append(db, EventDraft("ada", "message", "user:alice", text=str(i)), NOW)).id for i in range(6)]
    rng = random.Random(7)
    for proposition, items in (
        ("alike", [Row(rng.choice(["support", "contradict"]), 0.3, rng.choice(["alice", "bob"]), rng.choice(events)) for _ in range(40)]),
        ("varied", [Row("support", rng.choice([0.2, 1]), rng.choice(["alice", "bob"]), rng.choice(events),
                                credibility=rng.choice([None, 0.1, 1])) for _ in range(40)]),
    ):
        added = env.store.writer.run_sync(
            lambda db, p=proposition, i=items: add_one(db, mind="ada", proposition=p, subject="s", kind="inference", items=i,
                                                                 now=NOW, actor="test", cause=None)
        )
        belief = get_belief(env.store.reader(), added.belief_id)
        trusted = {"alice": 0.6, "bob": 0.85}
        assert [(e.stance, e.weight, e.credibility, e.source, e.event_id) for e in belief.evidence] == [
            (i.stance, float(i.weight), trusted[i.source] if i.credibility is None else float(i.credibility), i.source, i.brought_by) for i in items
        ]
        assert belief.confidence == added.confidence == confidence(e.item() for e in belief.evidence)


def test_many_items_are_checked_before_anything_is_written(env: Env) -> None:
    ours = env.store.writer.run_sync(lambda db: append(db, EventDraft("ada", "message", "user:alice", text="x"), NOW)).id
    theirs = env.store.writer.run_sync(lambda db: append(db, EventDraft("bob", "message", "user:alice", text="x"), NOW)).id
    count = len(env.rows("SELECT * FROM events"))

    def add(items: list[Row]) -> Any:
        return env.store.writer.run_sync(
            lambda db: add_one(db, mind="ada", proposition="p", subject="s", kind="inference", items=items, now=NOW, actor="t", cause=None)
        )

    for items, error in (
        ([], InvalidInput),
        ([Row("support", 1.5, "a", ours)], InvalidInput),
        ([Row("support", float("nan"), "a", ours)], InvalidInput),
        ([Row("support", 0.3, "a", ours, credibility=-0.1)], InvalidInput),
        ([Row("maybe", 0.3, "a", ours)], InvalidInput),  # type: ignore[arg-type]
        ([Row("support", 0.3, " ", ours)], InvalidInput),
        ([Row("support", 0.3, "a", theirs)], InvalidLink),
        ([Row("support", 0.3, "a", 99_999)], InvalidLink),
    ):
        with pytest.raises(error):
            add(items)
    assert len(env.rows("SELECT * FROM events")) == count and env.rows("SELECT count(*) FROM beliefs") == [(0,)]


def test_a_refused_batch_leaves_nothing_even_when_its_job_goes_on(env: Env) -> None:
    """Items' events are checked as they are inserted; a caller that catches the refusal and writes on finds nothing half-written."""
    ours = env.store.writer.run_sync(lambda db: append(db, EventDraft("ada", "message", "user:alice", text="x"), NOW)).id
    theirs = env.store.writer.run_sync(lambda db: append(db, EventDraft("bob", "message", "user:alice", text="x"), NOW)).id

    def job(db: Any) -> str:
        items = [Row("support", 0.3, "a", ours), Row("support", 0.3, "a", theirs)]
        try:
            add_one(db, mind="ada", proposition="p holds", subject="p", kind="inference", items=items, now=NOW, actor="t", cause=None)
        except InvalidLink as exc:
            append(db, EventDraft("ada", "note", "t", text="refused"), NOW)
            return str(exc)
        return "stored"

    assert env.store.writer.run_sync(job) == "evidence is brought only by events of mind 'ada'; 1 of the 2 events named are missing or another mind's"
    assert env.rows("SELECT count(*) FROM beliefs") == [(0,)] and env.rows("SELECT count(*) FROM evidence") == [(0,)]
    assert env.rows("SELECT text FROM events WHERE kind = 'note'") == [("refused",)]


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["support", "contradict"]),
            st.floats(0, 1),
            st.floats(0, 1),
            st.sampled_from(["a", "b"]),
        ),
        max_size=600,
    ),
)
def test_only_the_strongest_64_items_of_a_source_count_and_the_rest_change_nothing(rows: list[tuple[str, float, float, str]]) -> None:
    from noemad.cognition.beliefs.bulk import _items_that_count
    from noemad.cognition.confidence import contested

    every = [Item(*r) for r in rows]  # type: ignore[arg-type]
    counted = _items_that_count(Counter(rows))
    assert confidence(counted) == confidence(every) and contested(counted) == contested(every)
