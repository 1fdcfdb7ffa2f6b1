"""Event payloads are a typed contract.

Every event kind read outside the module that writes it has one payload
class there: `to_data()` is what the event stores, `of(event)` reads a
stored event back. Each test here drafts an event from a payload, stores it
through `events.append`, and reads it back: the payload survives, and the
stored JSON is byte for byte what the writers stored before payloads
existed (the literals were taken from events the old writers wrote), so
existing databases read the same.

The last tests parse every module of `noemad` and check that none reads an
event's data by hand (`X.data[...]`, `X.data.get(...)`) or with SQL
`json_extract`, outside the module that owns it; the few known exceptions
are listed with why. Which module runs SQL on which table is checked in
tests/test_owners.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noemad.cognition.actions import ActionDenied
from noemad.cognition.beliefs.change import BeliefChange, EvidenceBatch
from noemad.cognition.goals import GoalChange
from noemad.cognition.metacognition import MetacognitionWarning
from noemad.cognition.predictions import Resolution
from noemad.events import Event, EventDraft, append, get_event
from noemad.minds import ModeChange, create_mind
from noemad.stimuli import (
    Assertion,
    Claim,
    Correction,
    GoalStimulus,
    Message,
    Observation,
    OutcomeStimulus,
    PredictionStimulus,
    named,
    of,
)
from noemad.store import Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: create_mind(db, "ada", {}, 1.0, "operator"))
    yield s
    s.close()


def stored(store: Store, draft: EventDraft) -> tuple[Event, str]:
    """The event as read back from the store, and its data column as stored."""
    written = store.writer.run_sync(lambda db: append(db, draft, 1000.0))
    db = store.reader()
    (raw,) = db.execute("SELECT data FROM events WHERE id = ?", [written.id]).fetchone()
    return get_event(db, written.id), raw


# Stimuli: the stimulus classes are their own payloads. ---------------------------

STIMULI: list[tuple[Any, str]] = [
    (Message("alice", "hello ada", "discord:g:c", ("ada",)), '{"author":"alice","mentions":["ada"]}'),
    (
        Observation("ci", "build green", {"salience": 0.97}, Claim("The build is green", "build")),
        '{"claim":{"proposition":"The build is green","stance":"supports","subject":"build"},"data":{"salience":0.97},"source":"ci"}',
    ),
    (Observation("ci", "plain"), '{"source":"ci"}'),
    (
        Assertion("bob", Claim("The build is green", "build", "contradicts")),
        '{"claim":{"proposition":"The build is green","stance":"contradicts","subject":"build"},"source":"bob"}',
    ),
    (Correction(belief=1, reason="I checked", status="pinned", confidence=0.4), '{"belief":1,"confidence":0.4,"status":"pinned"}'),
    (GoalStimulus(title="ship it"), '{"title":"ship it"}'),
    (GoalStimulus(goal=1, status="completed", note="done"), '{"goal":1,"note":"done","status":"completed"}'),
    (
        PredictionStimulus("deploy works", "deploy", 0.9, 1045.0),
        '{"confidence":0.9,"due_at":"1970-01-01T00:17:25.000Z","proposition":"deploy works","subject":"deploy"}',
    ),
    (OutcomeStimulus(prediction=1, result="miss", observed="it failed"), '{"observed":"it failed","prediction":1,"result":"miss"}'),
]


@pytest.mark.parametrize(("stimulus", "raw"), STIMULI, ids=lambda v: type(v).__name__ if not isinstance(v, str) else "")
def test_a_stimulus_round_trips_through_its_event(store: Store, stimulus: Any, raw: str) -> None:
    event, stored_raw = stored(store, stimulus.draft("ada"))
    assert stored_raw == raw
    assert type(stimulus).of(event) == stimulus
    assert of(event) == stimulus


def test_a_stimulus_without_its_author_or_source_reads_as_its_actor(store: Store) -> None:
    """Events stored without the name read as readers always read them: the actor stands in."""
    message, _ = stored(store, EventDraft("ada", "message", "user:zoe", channel="cli", text="hi"))
    observation, _ = stored(store, EventDraft("ada", "observation", "source:probe", text="up"))
    assert Message.of(message).author == "user:zoe" and Message.of(message).mentions == ()
    assert Observation.of(observation).source == "source:probe" and Observation.of(observation).claim is None
    assert named(message) is None and named(stored(store, Message("ann", "x").draft("ada"))[0]) == "ann"


def test_a_payload_refuses_an_event_of_another_kind(store: Store) -> None:
    event, _ = stored(store, Message("alice", "hi").draft("ada"))
    with pytest.raises(ValueError, match="is a 'message', not 'observation'"):
        Observation.of(event)
    with pytest.raises(ValueError, match="not 'belief_created' or 'belief_updated'"):
        BeliefChange.of(event)


# The cognition payloads. ---------------------------------------------------------------

PAYLOADS: list[tuple[str, Any, str]] = [
    (
        "belief_created",
        BeliefChange(0.0, 0.95, "active", "active", evidence_id=1, stance="support", weight=1.0, credibility=0.95, source="ci"),
        '{"confidence":{"from":0.0,"to":0.95},"credibility":0.95,"evidence_id":1,"source":"ci","stance":"support",'
        '"status":{"from":"active","to":"active"},"weight":1.0}',
    ),
    (
        "belief_updated",
        BeliefChange(
            0.4, 0.4, "pinned", "pinned", held="the belief is pinned; evidence is recorded but does not move it",
            evidence_id=7, stance="contradict", weight=1.0, credibility=0.95, source="eve",
        ),
        '{"confidence":{"from":0.4,"to":0.4},"credibility":0.95,"evidence_id":7,'
        '"held":"the belief is pinned; evidence is recorded but does not move it","source":"eve","stance":"contradict",'
        '"status":{"from":"pinned","to":"pinned"},"weight":1.0}',
    ),
    (
        "belief_updated",
        BeliefChange(0.494, 0.4, "active", "pinned", correction=True, reason="I checked"),
        '{"confidence":{"from":0.494,"to":0.4},"correction":true,"reason":"I checked","status":{"from":"active","to":"pinned"}}',
    ),
    (
        "belief_updated",
        BeliefChange(
            0.0, 0.0, "contested", "rejected", rejected_by="outcome", prediction=1,
            reason="a hypothesis whose prediction missed is rejected; outcomes are decisive for hypotheses",
        ),
        '{"confidence":{"from":0.0,"to":0.0},"prediction":1,"reason":"a hypothesis whose prediction missed is rejected;'
        ' outcomes are decisive for hypotheses","rejected_by":"outcome","status":{"from":"contested","to":"rejected"}}',
    ),
    (
        "belief_created",
        BeliefChange(
            0.0, 0.246, "active", "active", evidence=EvidenceBatch(2, 11, 12, 1, 1),
            sources={"s1": {"credibility": 0.6, "items": 1}, "s2": {"credibility": 0.6, "items": 1}}, sources_total=2,
        ),
        '{"confidence":{"from":0.0,"to":0.246},"evidence":{"contradict":1,"count":2,"first_id":11,"last_id":12,"support":1},'
        '"sources":{"s1":{"credibility":0.6,"items":1},"s2":{"credibility":0.6,"items":1}},"sources_total":2,'
        '"status":{"from":"active","to":"active"}}',
    ),
    (
        "belief_updated",
        BeliefChange(0.75, 0.9975, "active", "active", withdrawn=(3,), check="single_source", lifted_by=4,
                     reason="single_source lifted: sensor-2 supports “the reactor is hot” too"),
        '{"check":"single_source","confidence":{"from":0.75,"to":0.9975},"lifted_by":4,'
        '"reason":"single_source lifted: sensor-2 supports \\u201cthe reactor is hot\\u201d too","status":{"from":"active","to":"active"},"withdrawn":[3]}',
    ),
    ("action_denied", ActionDenied("wake_add_rule", "a rule of bad shape"), '{"action":"wake_add_rule","reason":"a rule of bad shape"}'),
    ("action_denied", ActionDenied("shell"), '{"action":"shell"}'),
    (
        "metacognition",
        MetacognitionWarning("single_source", "belief:4", "counter_evidence", 0.7, {"belief": 4, "source": "ci"}),
        '{"belief":4,"check":"single_source","effect":"counter_evidence","ref":"belief:4","salience":0.7,"source":"ci"}',
    ),
    (
        "goal_completed",
        GoalChange(1, "ship it", 0.0, 1.0, "active", "completed", note="done"),
        '{"goal":1,"note":"done","progress":{"from":0.0,"to":1.0},"status":{"from":"active","to":"completed"},"title":"ship it"}',
    ),
    (
        "goal_progressed",
        GoalChange(2, "write docs", 0.25, 0.5, "active", "active"),
        '{"goal":2,"progress":{"from":0.25,"to":0.5},"status":{"from":"active","to":"active"},"title":"write docs"}',
    ),
    (
        "prediction_resolved",
        Resolution(1, "miss", "deploy works", "deploy", 0.9, "1970-01-01T00:17:25.000Z", True, "it failed", 2, 0.81),
        '{"belief":2,"due_at":"1970-01-01T00:17:25.000Z","late":true,"observed":"it failed","prediction":1,'
        '"proposition":"deploy works","result":"miss","squared_error":0.81,"stated_confidence":0.9,"subject":"deploy"}',
    ),
    ("mode_changed", ModeChange("idle", "reflecting", job=1), '{"from":"idle","job":1,"to":"reflecting"}'),
    ("mode_changed", ModeChange("reflecting", "paused"), '{"from":"reflecting","to":"paused"}'),
]


@pytest.mark.parametrize(("kind", "payload", "raw"), PAYLOADS, ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "")
def test_a_payload_round_trips_through_its_event(store: Store, kind: str, payload: Any, raw: str) -> None:
    event, stored_raw = stored(store, EventDraft("ada", kind, "process:test", data=payload.to_data()))
    assert stored_raw == raw
    assert type(payload).of(event) == payload


def test_a_belief_change_says_who_moved_the_belief() -> None:
    assert BeliefChange(0.5, 0.4, "active", "pinned", correction=True, reason="r").by == "operator"
    assert BeliefChange(0.5, 0.0, "active", "rejected", rejected_by="outcome", prediction=1).by == "outcome"
    evidence = BeliefChange(0.5, 0.6, "active", "active", evidence_id=1)
    assert evidence.by == "evidence" and not evidence.status_changed


# The owners' queries. ---------------------------------------------------------------------


def test_status_changes_are_corrections_and_moves_of_status_only(store: Store) -> None:
    from noemad.cognition.beliefs.corrections import correct
    from noemad.cognition.beliefs.evidence import add_evidence
    from noemad.cognition.beliefs.queries import status_changes

    cause, _ = stored(store, Observation("ci", "green").draft("ada"))
    belief, created = store.writer.run_sync(
        lambda db: add_evidence(db, mind="ada", proposition="the build is green", subject="build", kind="observation",
                                stance="support", weight=1.0, source="ci", brought_by=cause.id, now=1.0, actor="process:test")
    )
    _, pinned = store.writer.run_sync(
        lambda db: correct(db, belief_id=belief.id, status="pinned", confidence_value=0.3, reason="checked",
                           brought_by=cause.id, now=2.0, actor="operator")
    )
    changes = status_changes(store.reader(), "ada", 0, pinned.id)
    assert [(c.event, c.belief, c.status_now, c.change.by) for c in changes] == [(pinned.id, belief.id, "pinned", "operator")]
    assert changes[0].change == BeliefChange.of(pinned) and changes[0].proposition == "the build is green"
    assert created.id not in [c.event for c in changes]  # evidence that moved no status is not a change


def test_speakers_are_the_named_author_or_source_else_the_actor(store: Store) -> None:
    from noemad.stimuli import speakers

    said, _ = stored(store, Message("alice", "hi").draft("ada"))
    seen, _ = stored(store, Observation("ci", "green").draft("ada"))
    blank, _ = stored(store, EventDraft("ada", "observation", "source:probe", text="up", data={"source": "  "}))
    assert speakers(store.reader(), [said.id, seen.id, blank.id, 999_999], "unknown") == {
        said.id: "alice", seen.id: "ci", blank.id: "source:probe"
    }


# The rule, checked over the source. ----------------------------------------------------

# Modules that write event kinds others read: each may read its own kinds' data.
WRITERS = {
    "noemad/stimuli.py": "message, observation, assertion, correction, goal, prediction, outcome",
    "noemad/cognition/beliefs/": "belief_created, belief_updated, trust_changed",  # a package: each of its modules
    "noemad/cognition/metacognition.py": "metacognition",
    "noemad/cognition/goals.py": "goal_created, goal_progressed, goal_completed, goal_abandoned",
    "noemad/cognition/predictions.py": "prediction_made, prediction_resolved",
    "noemad/minds.py": "mind_created, settings_changed, mode_changed",
}

# (module, function) that read event data by hand outside a payload's module, and why.
DATA_READS: dict[tuple[str, str], str] = {
    ("noemad/cognition/narrative/stored.py", "latest"): "narrative_rephrased is written in the narrative package itself (rephrase.py)",
    ("noemad/background/reflection/job.py", "run"): "the reflection package reads back its own `reflection` event (written in recording.py)",
}

# Modules other than the writers above that query event data with json_extract, and why.
JSON_EXTRACT: dict[str, str] = {}

def _writer(path: str) -> bool:
    """Whether `path` is a writer's module, or a module of a writer's package (a key ending in /)."""
    return any(path == w or (w.endswith("/") and path.startswith(w)) for w in WRITERS)


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text(), str(p))) for p in sorted((ROOT / "noemad").rglob("*.py"))]


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """Every node with the name of the function (or class) it sits in; '' at module level."""

    def walk(node: ast.AST, name: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else name
            yield inner, child
            yield from walk(child, inner)

    return walk(tree, "")


def _reads_data(node: ast.AST) -> bool:
    """`X.data[...]`, `X.data.get(...)` / `.items()` / `.keys()` / `.values()`, or `d = X.data`, on anything but `self.data`."""
    if isinstance(node, ast.Subscript):
        target = node.value
    elif isinstance(node, ast.Assign):
        target = node.value
    elif isinstance(node, ast.Attribute) and node.attr in ("get", "items", "keys", "values"):
        target = node.value
    else:
        return False
    return (
        isinstance(target, ast.Attribute)
        and target.attr == "data"
        and not (isinstance(target.value, ast.Name) and target.value.id in ("self", "cls"))
    )


def _strings(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def test_event_data_is_read_only_through_payloads() -> None:
    found: dict[tuple[str, str], int] = {}
    for path, tree in _modules():
        if _writer(path):
            continue
        for function, node in _functions(tree):
            if _reads_data(node):
                found[(path, function)] = getattr(node, "lineno", 0)
    unexpected = {k: v for k, v in found.items() if k not in DATA_READS}
    assert not unexpected, f"read event data through the kind's payload (its writer's `Payload.of(event)`): {unexpected}"
    stale = set(DATA_READS) - set(found)
    assert not stale, f"no longer read by hand; drop from DATA_READS: {sorted(stale)}"


def test_only_a_kinds_writer_queries_its_data_with_json_extract() -> None:
    found = {path for path, tree in _modules() if not _writer(path) and any("json_extract" in s for s in _strings(tree))}
    assert found <= set(JSON_EXTRACT), f"ask the writer of the kind for the query (as stimuli.stored_outcome does): {found - set(JSON_EXTRACT)}"
    assert not set(JSON_EXTRACT) - found, f"no longer used; drop from JSON_EXTRACT: {set(JSON_EXTRACT) - found}"
