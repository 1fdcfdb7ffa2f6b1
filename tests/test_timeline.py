"""The causal walk (noemad.timeline) and the link checks of noemad.events.append.

Every test builds a small, hand-drawn graph of events in a real store on
tmp_path and asserts on exact ids, edges and counts. Links only ever point to
earlier events (they must exist when the event is written), so ids grow in
the order the helpers are called.
"""

from __future__ import annotations

import json
from dataclasses import fields
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noemad.errors import EventNotFound, InvalidInput, InvalidLink
from noemad.events import Event, EventDraft, Ref, append, get_events
from noemad.minds import create_mind
from noemad.store import Store
from noemad.store.guard import unrecorded
from noemad.timeline import MAX_EVENTS, MAX_HOPS, Node, Timeline, WalkLimits, to_dot, walk
from noemad.wire import dump

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class World:
    """A store plus helpers that write minds, events and the rows refs point at."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def mind(self, name: str) -> int:
        """Create a mind; return the id of its `mind_created` event."""

        def job(db: Any) -> int:
            create_mind(db, name, {}, NOW, "test")
            (event_id,) = db.execute("SELECT max(id) FROM events WHERE mind = ?", [name]).fetchone()
            return int(event_id)

        return self.store.writer.run_sync(job)

    def event(
        self,
        mind: str,
        kind: str = "note",
        *,
        cause: int | None = None,
        parents: Sequence[int] = (),
        refs: Sequence[Ref] = (),
        subject: Ref | None = None,
        cycle: str | None = None,
        text: str | None = None,
    ) -> int:
        draft = EventDraft(
            mind=mind,
            kind=kind,
            actor="test",
            text=text,
            cycle_id=cycle,
            causation_id=cause,
            parents=tuple(parents),
            refs=tuple(refs),
            subject=subject,
        )
        return self.store.writer.run_sync(lambda db: append(db, draft, NOW).id)

    def _insert(self, sql: str, params: list[Any]) -> int:
        def job(db: Any) -> int:
            unrecorded("a graph built by hand: rows for events to cite, not changes a mind made")
            return int(db.execute(sql, params).lastrowid)

        return self.store.writer.run_sync(job)

    def belief(self, mind: str, proposition: str = "the sky is blue") -> int:
        return self._insert(
            "INSERT INTO beliefs (mind, proposition, created_at) VALUES (?, ?, ?)", [mind, proposition, "2026-01-01T00:00:00.000Z"]
        )

    def memory(self, mind: str, text: str = "it rained") -> int:
        return self._insert(
            "INSERT INTO memories (mind, kind, text, created_at) VALUES (?, 'episodic', ?, ?)",
            [mind, text, "2026-01-01T00:00:00.000Z"],
        )

    def model_call(self, mind: str, role: str = "planner", model: str = "claude-test") -> int:
        return self._insert(
            "INSERT INTO model_calls (mind, role, model, outcome, input_tokens, output_tokens, at)"
            " VALUES (?, ?, ?, 'ok', 120, 30, ?)",
            [mind, role, model, "2026-01-01T00:00:00.000Z"],
        )

    def walk(self, event_id: int, **limits: int) -> Timeline:
        return walk(self.store.reader(), event_id, WalkLimits(**limits) if limits else None)

    def counts(self) -> tuple[int, int, int]:
        db = self.store.reader()
        return tuple(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("events", "event_parents", "event_refs"))  # type: ignore[return-value]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    store = Store(tmp_path / "n.db")
    try:
        yield World(store)
    finally:
        store.close()


def event_of(node: Node) -> Event:
    """The stored event a node of the walk is."""
    return Event(**{f.name: getattr(node, f.name) for f in fields(Event)})


def node_ids(tl: Timeline) -> list[int]:
    return [n.id for n in tl.nodes]


def hops(tl: Timeline) -> dict[int, int]:
    return {n.id: n.hop for n in tl.nodes}


def edges(tl: Timeline) -> list[tuple[int, int, str]]:
    return [(e.source, e.target, e.kind) for e in tl.edges]


def reached(tl: Timeline) -> dict[int, tuple[int | None, str | None]]:
    return {n.id: (n.reached_from, n.reached_by) for n in tl.nodes}


# --- branching -----------------------------------------------------------------


def test_branching_one_cause_many_consequences_and_many_parents(world: World) -> None:
    born = world.mind("alpha")
    a = world.event("alpha", cause=born)
    b = world.event("alpha", cause=a)
    c = world.event("alpha", cause=a)
    d = world.event("alpha", cause=a)
    e = world.event("alpha", cause=b, parents=[d, c])
    assert [born, a, b, c, d, e] == list(range(born, born + 6))

    all_edges = [
        (born, a, "caused"),
        (a, b, "caused"),
        (a, c, "caused"),
        (a, d, "caused"),
        (b, e, "caused"),
        (c, e, "parent"),
        (d, e, "parent"),
    ]

    back = world.walk(e)
    assert back.root == e
    assert node_ids(back) == [born, a, b, c, d, e]
    assert hops(back) == {born: -3, a: -2, b: -1, c: -1, d: -1, e: 0}
    assert reached(back) == {
        born: (a, "caused"),
        a: (b, "caused"),  # b, c and d all lead to a by `caused`: the lowest id wins
        b: (e, "caused"),
        c: (e, "parent"),
        d: (e, "parent"),
        e: (None, None),
    }
    assert edges(back) == all_edges
    assert not back.truncation.truncated

    fwd = world.walk(a)
    assert node_ids(fwd) == [born, a, b, c, d, e]
    assert hops(fwd) == {born: -1, a: 0, b: 1, c: 1, d: 1, e: 2}
    assert reached(fwd)[e] == (b, "caused")  # caused beats parent
    assert edges(fwd) == all_edges
    assert dump(fwd)["truncation"] == {"truncated": False, "by": [], "omitted_back": 0, "omitted_forward": 0}

    # From a middle branch: causes only up the chain, consequences only down it;
    # the siblings c and d are neither (nothing links b to them).
    mid = world.walk(b)
    assert node_ids(mid) == [born, a, b, e]
    assert edges(mid) == [(born, a, "caused"), (a, b, "caused"), (b, e, "caused")]


def test_event_parents_are_stored_once_in_order(world: World) -> None:
    born = world.mind("alpha")
    a = world.event("alpha", cause=born)
    b = world.event("alpha", cause=born)
    c = world.event("alpha", parents=[b, a, b])
    tl = world.walk(c)
    node = tl.nodes[-1]
    assert node.id == c and node.parents == (a, b)
    assert node.causation_id is None
    assert edges(tl) == [(born, a, "caused"), (born, b, "caused"), (a, c, "parent"), (b, c, "parent")]


# --- cyclic-looking links, beliefs and memories -------------------------------


def test_cyclic_looking_links_visit_each_node_once_and_each_edge_once(world: World) -> None:
    born = world.mind("alpha")
    a = world.event("alpha", cause=born)
    x = world.belief("alpha")
    b = world.event("alpha", "belief_formed", cause=a, subject=Ref("belief", x))
    # c is caused by a, has b as parent, and cites both a (directly) and b's belief:
    # four links from two events, which must not make anything appear twice.
    c = world.event("alpha", cause=a, parents=[b], refs=[Ref("event", a), Ref("belief", x)])

    expected_edges = [
        (born, a, "caused"),
        (a, b, "caused"),
        (a, c, "caused"),
        (a, c, "cited"),
        (b, c, "parent"),
        (b, c, "cited"),
    ]
    for root in (born, a, b, c):
        tl = world.walk(root)
        assert node_ids(tl) == sorted(set(node_ids(tl))), root
        assert len(tl.edges) == len(set(tl.edges)), root

    from_c = world.walk(c)
    assert node_ids(from_c) == [born, a, b, c]
    assert hops(from_c) == {born: -2, a: -1, b: -1, c: 0}
    assert reached(from_c)[a] == (c, "caused")
    assert reached(from_c)[b] == (c, "parent")  # parent ranks before cited
    assert edges(from_c) == expected_edges
    cited_via = {(e.source, e.target): dump(e).get("via") for e in from_c.edges if e.kind == "cited"}
    assert cited_via == {(a, c): None, (b, c): {"type": "belief", "id": x}}

    from_a = world.walk(a)
    assert node_ids(from_a) == [born, a, b, c]
    assert hops(from_a) == {born: -1, a: 0, b: 1, c: 1}  # c is one hop from a, not two via b
    assert edges(from_a) == expected_edges

    from_born = world.walk(born)
    assert hops(from_born) == {born: 0, a: 1, b: 2, c: 2}


def test_belief_ref_reaches_its_writers_but_not_later_ones(world: World) -> None:
    born = world.mind("alpha")
    x = world.belief("alpha")
    w1 = world.event("alpha", "belief_formed", cause=born, subject=Ref("belief", x))
    w2 = world.event("alpha", "belief_revised", subject=Ref("belief", x))  # no cause: only the belief links it
    citer = world.event("alpha", "decided", refs=[Ref("belief", x)])
    w3 = world.event("alpha", "belief_revised", subject=Ref("belief", x))  # written after the citing event
    late = world.event("alpha", "decided", refs=[Ref("belief", x)])

    tl = world.walk(citer)
    assert node_ids(tl) == [born, w1, w2, citer]
    assert w3 not in node_ids(tl)
    assert hops(tl) == {born: -2, w1: -1, w2: -1, citer: 0}
    assert [dump(e) for e in tl.edges] == [
        {"from": born, "to": w1, "kind": "caused"},
        {"from": w1, "to": citer, "kind": "cited", "via": {"type": "belief", "id": x}},
        {"from": w2, "to": citer, "kind": "cited", "via": {"type": "belief", "id": x}},
    ]

    # Forward from a writer: the events citing its belief after it, and only those.
    from_w3 = world.walk(w3)
    assert node_ids(from_w3) == [w3, late]
    assert edges(from_w3) == [(w3, late, "cited")]
    from_w1 = world.walk(w1)
    assert node_ids(from_w1) == [born, w1, citer, late]
    assert edges(from_w1) == [(born, w1, "caused"), (w1, citer, "cited"), (w1, late, "cited")]

    # The later citer reaches all three writers.
    assert edges(world.walk(late)) == [
        (born, w1, "caused"),
        (w1, late, "cited"),
        (w2, late, "cited"),
        (w3, late, "cited"),
    ]


def test_memory_ref_reaches_its_writer_and_a_belief_of_the_same_id_does_not(world: World) -> None:
    born = world.mind("alpha")
    m = world.memory("alpha")
    b = world.belief("alpha")
    assert m == b == 1  # same id, different tables: the ref type must keep them apart
    wm = world.event("alpha", "memory_written", subject=Ref("memory", m))
    wb = world.event("alpha", "belief_formed", subject=Ref("belief", b))
    citer = world.event("alpha", refs=[Ref("memory", m)])
    tl = world.walk(citer)
    assert node_ids(tl) == [wm, citer]
    assert [dump(e) for e in tl.edges] == [{"from": wm, "to": citer, "kind": "cited", "via": {"type": "memory", "id": m}}]
    assert wb not in node_ids(world.walk(citer))
    assert node_ids(world.walk(wb)) == [wb]
    assert born not in node_ids(tl)


# --- cycles of cognition and correlation groups --------------------------------


def test_cross_cycle_links_and_correlation_groups(world: World) -> None:
    born = world.mind("alpha")
    e1 = world.event("alpha", "perceived", cause=born, cycle="c1")
    e2 = world.event("alpha", "decided", cause=e1, cycle="c1")
    lone = world.event("alpha", "mused", cycle="c1")  # same cycle, no link: not on the walk
    e3 = world.event("alpha", "perceived", cause=e2, cycle="c2")
    e4 = world.event("alpha", "acted", cause=e3, parents=[e1], cycle="c2")
    outside = world.event("alpha", "reply", cause=e4)

    tl = world.walk(e4)
    assert node_ids(tl) == [born, e1, e2, e3, e4, outside]
    assert lone not in node_ids(tl)
    assert tl.groups == [
        {"cycle_id": "c1", "label": "correlation", "events": [e1, e2]},
        {"cycle_id": "c2", "label": "correlation", "events": [e3, e4]},
    ]
    # The groups are labels, never edges: only written links appear.
    assert edges(tl) == [
        (born, e1, "caused"),
        (e1, e2, "caused"),
        (e1, e4, "parent"),
        (e2, e3, "caused"),
        (e3, e4, "caused"),
        (e4, outside, "caused"),
    ]
    assert all(lone not in (e.source, e.target) for e in tl.edges)
    assert hops(tl)[e1] == -1  # reached through the cross-cycle parent, not three causes back

    alone = world.walk(lone)
    assert node_ids(alone) == [lone]
    assert alone.edges == []
    assert alone.groups == [{"cycle_id": "c1", "label": "correlation", "events": [lone]}]


def test_groups_are_ordered_by_their_first_event(world: World) -> None:
    world.mind("alpha")
    a = world.event("alpha", cycle="zz")
    b = world.event("alpha", cause=a, cycle="aa")
    c = world.event("alpha", cause=b, cycle="zz")
    tl = world.walk(c)
    assert [(g["cycle_id"], g["events"]) for g in tl.groups] == [("zz", [a, c]), ("aa", [b])]


# --- model calls as artefacts -------------------------------------------------


def test_model_calls_are_artefacts_on_their_node_not_hops(world: World) -> None:
    born = world.mind("alpha")
    mc1 = world.model_call("alpha", "planner", "claude-a")
    mc2 = world.model_call("alpha", "critic", "claude-b")
    a = world.event("alpha", "thought", cause=born, refs=[Ref("model_call", mc2), Ref("model_call", mc1)])
    other = world.event("alpha", "thought", refs=[Ref("model_call", mc1)])  # shares a model call, no link to a

    tl = world.walk(a)
    assert node_ids(tl) == [born, a]
    assert other not in node_ids(tl)
    assert edges(tl) == [(born, a, "caused")]
    node_a = tl.nodes[1]
    assert [(c["id"], c["role"], c["model"], c["outcome"], c["mind"]) for c in node_a.model_calls] == [
        (mc1, "planner", "claude-a", "ok", "alpha"),
        (mc2, "critic", "claude-b", "ok", "alpha"),
    ]
    assert node_a.model_calls[0]["input_tokens"] == 120
    assert tl.nodes[0].model_calls == []
    js = dump(tl)
    assert [c["id"] for c in js["nodes"][1]["model_calls"]] == [mc1, mc2]
    assert js["nodes"][0]["model_calls"] == []


# --- limits and truncation ----------------------------------------------------


def _chain(world: World, mind: str, length: int) -> list[int]:
    ids = [world.event(mind, "step")]
    for _ in range(length - 1):
        ids.append(world.event(mind, "step", cause=ids[-1]))
    return ids


def test_default_hop_limit_is_six_each_way(world: World) -> None:
    world.mind("alpha")
    c = _chain(world, "alpha", 15)
    tl = world.walk(c[7])
    assert node_ids(tl) == c[1:14]
    assert hops(tl)[c[1]] == -MAX_HOPS and hops(tl)[c[13]] == MAX_HOPS
    assert dump(tl.truncation) == {"truncated": True, "by": ["hops"], "omitted_back": 1, "omitted_forward": 1}
    assert dump(tl)["limits"] == {"back": 6, "forward": 6, "limit": 200, "max_hops": 6, "max_events": 200}

    # Exactly six back to the first event: nothing left out on that side.
    tl = world.walk(c[6], back=6, forward=6)
    assert node_ids(tl) == c[0:13]
    assert (tl.truncation.omitted_back, tl.truncation.omitted_forward) == (0, 1)

    # Exactly six each way and nothing beyond: not truncated.
    world.mind("beta")
    b = _chain(world, "beta", 13)
    tl = world.walk(b[6])
    assert node_ids(tl) == b
    assert dump(tl.truncation) == {"truncated": False, "by": [], "omitted_back": 0, "omitted_forward": 0}


def test_lowered_hop_limits_cut_each_direction_and_count_what_is_left(world: World) -> None:
    world.mind("alpha")
    c = _chain(world, "alpha", 10)
    # Fan out past the forward bound so the omitted count is more than one.
    extra = [world.event("alpha", "step", cause=c[8]) for _ in range(3)]

    tl = world.walk(c[5], back=2, forward=3)
    assert node_ids(tl) == [c[3], c[4], c[5], c[6], c[7], c[8]]
    assert tl.truncation.by_hops and not tl.truncation.by_limit
    assert (tl.truncation.omitted_back, tl.truncation.omitted_forward) == (1, 4)  # c2; c9 and the three extras
    assert dump(tl)["limits"] == {"back": 2, "forward": 3, "limit": 200, "max_hops": 6, "max_events": 200}
    assert edges(tl) == [(c[i], c[i + 1], "caused") for i in range(3, 8)]

    only_back = world.walk(c[5], back=6, forward=0)
    assert node_ids(only_back) == c[0:6]
    assert dump(only_back.truncation) == {"truncated": True, "by": ["hops"], "omitted_back": 0, "omitted_forward": 1}

    only_fwd = world.walk(c[5], back=0, forward=6)
    assert node_ids(only_fwd) == c[5:] + extra
    assert dump(only_fwd.truncation) == {"truncated": True, "by": ["hops"], "omitted_back": 1, "omitted_forward": 0}

    # A bound with nothing behind it does not count: c0 has no cause.
    start = world.walk(c[0], back=0, forward=1)
    assert node_ids(start) == [c[0], c[1]]
    assert (start.truncation.omitted_back, start.truncation.omitted_forward) == (0, 1)


def test_event_limit_cuts_at_lowest_ids_and_counts_the_rest(world: World) -> None:
    world.mind("alpha")
    cause = world.event("alpha", "seed")
    root = world.event("alpha", "hub", cause=cause)
    fan = [world.event("alpha", "leaf", cause=root) for _ in range(5)]
    deeper = world.event("alpha", "leaf2", cause=fan[0])

    tl = world.walk(root, limit=4)
    # Backward first at each hop, then forward; lower ids first within a hop.
    assert node_ids(tl) == [cause, root, fan[0], fan[1]]
    assert dump(tl.truncation) == {"truncated": True, "by": ["limit"], "omitted_back": 0, "omitted_forward": 3}
    assert deeper not in node_ids(tl)
    assert edges(tl) == [(cause, root, "caused"), (root, fan[0], "caused"), (root, fan[1], "caused")]

    # A limit of 1 leaves out both sides of the first hop and says so for each.
    tl = world.walk(root, limit=1)
    assert node_ids(tl) == [root]
    assert tl.edges == []
    assert dump(tl.truncation) == {"truncated": True, "by": ["limit"], "omitted_back": 1, "omitted_forward": 5}

    # Exactly enough room: everything fits, nothing is truncated.
    tl = world.walk(root, limit=8)
    assert node_ids(tl) == [cause, root, *fan, deeper]
    assert not tl.truncation.truncated

    # One short: the last hop's only event is left out.
    tl = world.walk(root, limit=7)
    assert node_ids(tl) == [cause, root, *fan]
    assert dump(tl.truncation) == {"truncated": True, "by": ["limit"], "omitted_back": 0, "omitted_forward": 1}


def test_limit_and_hops_both_reported(world: World) -> None:
    world.mind("alpha")
    c = _chain(world, "alpha", 5)
    fan = [world.event("alpha", "leaf", cause=c[2]) for _ in range(3)]
    tl = world.walk(c[2], back=1, limit=4)
    # hop 1 back: c1 (c0 lies past the bound); hop 1 forward: c3 and the fan, room for two.
    assert node_ids(tl) == [c[1], c[2], c[3], fan[0]]
    t = tl.truncation
    assert (t.by_hops, t.by_limit) == (False, True)
    assert (t.omitted_back, t.omitted_forward) == (0, 2)

    tl = world.walk(c[2], back=1, forward=1)
    assert dump(tl.truncation) == {"truncated": True, "by": ["hops"], "omitted_back": 1, "omitted_forward": 1}


def test_default_event_limit_is_two_hundred(world: World) -> None:
    world.mind("alpha")

    def job(db: Any) -> tuple[int, list[int]]:
        hub = append(db, EventDraft(mind="alpha", kind="hub", actor="test"), NOW).id
        leaves = [append(db, EventDraft(mind="alpha", kind="leaf", actor="test", causation_id=hub), NOW).id for _ in range(250)]
        return hub, leaves

    hub, leaves = world.store.writer.run_sync(job)
    tl = world.walk(hub)
    assert len(tl.nodes) == MAX_EVENTS
    assert node_ids(tl) == [hub, *leaves[:199]]
    assert dump(tl.truncation) == {"truncated": True, "by": ["limit"], "omitted_back": 0, "omitted_forward": 51}
    assert len(tl.edges) == 199


def test_walk_of_a_missing_event_is_not_found(world: World) -> None:
    world.mind("alpha")
    with pytest.raises(EventNotFound):
        world.walk(999)


# --- determinism --------------------------------------------------------------


def test_two_walks_give_identical_json(world: World) -> None:
    born = world.mind("alpha")
    x = world.belief("alpha")
    mc = world.model_call("alpha")
    a = world.event("alpha", cause=born, cycle="c1", subject=Ref("belief", x))
    b = world.event("alpha", cause=a, cycle="c1", refs=[Ref("model_call", mc)])
    c = world.event("alpha", cause=a, parents=[b], refs=[Ref("belief", x), Ref("event", born)], cycle="c2")
    d = world.event("alpha", cause=c, parents=[a, b])
    for root in (born, a, b, c, d):
        first = json.dumps(dump(world.walk(root)), sort_keys=False)
        second = json.dumps(dump(world.walk(root)), sort_keys=False)
        assert first == second
        assert to_dot(world.walk(root)) == to_dot(world.walk(root))
    js = dump(world.walk(d))
    assert [n["id"] for n in js["nodes"]] == [born, a, b, c, d]
    assert [(e["from"], e["to"], e["kind"]) for e in js["edges"]] == [
        (born, a, "caused"),
        (born, c, "cited"),
        (a, b, "caused"),
        (a, c, "caused"),
        (a, c, "cited"),
        (a, d, "parent"),
        (b, c, "parent"),
        (b, d, "parent"),
        (c, d, "caused"),
    ]


# --- WalkLimits ---------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"back": MAX_HOPS + 1},
        {"back": -1},
        {"forward": MAX_HOPS + 1},
        {"forward": -1},
        {"limit": MAX_EVENTS + 1},
        {"limit": 0},
        {"limit": -5},
    ],
)
def test_walk_limits_reject_out_of_range(kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidInput):
        WalkLimits(**kwargs)


def test_walk_limits_accept_the_range() -> None:
    assert WalkLimits() == WalkLimits(MAX_HOPS, MAX_HOPS, MAX_EVENTS) == WalkLimits(6, 6, 200)
    assert WalkLimits(back=0, forward=0, limit=1).limit == 1


# --- append's link checks -----------------------------------------------------


@pytest.fixture
def two_minds(world: World) -> dict[str, int]:
    """alpha and beta, each with an event, a belief, a memory and a model call."""
    ids: dict[str, int] = {}
    for name in ("alpha", "beta"):
        ids[f"{name}.born"] = world.mind(name)
        ids[f"{name}.belief"] = world.belief(name)
        ids[f"{name}.memory"] = world.memory(name)
        ids[f"{name}.call"] = world.model_call(name)
    return ids


def _bad_drafts(ids: dict[str, int]) -> list[tuple[str, dict[str, Any], str]]:
    beta_born = ids["beta.born"]
    return [
        ("missing cause", {"causation_id": 9999}, "event 9999 does not exist"),
        ("missing parent", {"parents": (ids["alpha.born"], 9998)}, "event 9998 does not exist"),
        ("missing event ref", {"refs": (Ref("event", 9997),)}, "event 9997 does not exist"),
        ("missing belief ref", {"refs": (Ref("belief", 9996),)}, "belief 9996 does not exist"),
        ("missing memory ref", {"refs": (Ref("memory", 9995),)}, "memory 9995 does not exist"),
        ("missing model call", {"refs": (Ref("model_call", 9994),)}, "model call 9994 does not exist"),
        ("missing subject", {"subject": Ref("belief", 9993)}, "belief 9993 does not exist"),
        ("foreign cause", {"causation_id": beta_born}, f"event {beta_born} belongs to mind 'beta'"),
        ("foreign parent", {"parents": (beta_born,)}, f"event {beta_born} belongs to mind 'beta'"),
        ("foreign event ref", {"refs": (Ref("event", beta_born),)}, "belongs to mind 'beta'"),
        ("foreign belief ref", {"refs": (Ref("belief", ids["beta.belief"]),)}, "belongs to mind 'beta'"),
        ("foreign memory ref", {"refs": (Ref("memory", ids["beta.memory"]),)}, "belongs to mind 'beta'"),
        ("foreign model call", {"refs": (Ref("model_call", ids["beta.call"]),)}, "belongs to mind 'beta'"),
        ("foreign subject", {"subject": Ref("memory", ids["beta.memory"])}, "belongs to mind 'beta'"),
        ("subject an event", {"subject": Ref("event", ids["alpha.born"])}, "subject is a memory or a belief"),
        ("unknown ref type", {"refs": (Ref("thing", 1),)}, "ref type 'thing'"),  # type: ignore[arg-type]
        ("too many parents", {"parents": tuple(range(1, 66))}, "at most 64"),
    ]


def test_append_refuses_bad_links_and_stores_nothing(world: World, two_minds: dict[str, int]) -> None:
    before = world.counts()
    assert before == (2, 0, 0)
    for name, links, message in _bad_drafts(two_minds):
        draft = EventDraft(mind="alpha", kind="bad", actor="test", **links)
        with pytest.raises(InvalidLink, match=message.replace("(", r"\(")) as info:
            world.store.writer.run_sync(lambda db, d=draft: append(db, d, NOW))
        assert info.value.status == 422, name
        assert world.counts() == before, name

    # A refused append inside a larger job rolls the whole job back: the valid
    # event written before it is gone too.
    def job(db: Any) -> None:
        ok = append(db, EventDraft(mind="alpha", kind="ok", actor="test", causation_id=two_minds["alpha.born"]), NOW)
        append(db, EventDraft(mind="alpha", kind="bad", actor="test", parents=(ok.id, 9999)), NOW)

    with pytest.raises(InvalidLink):
        world.store.writer.run_sync(job)
    assert world.counts() == before


def test_append_accepts_links_within_its_mind(world: World, two_minds: dict[str, int]) -> None:
    born = two_minds["alpha.born"]
    e = world.event(
        "alpha",
        cause=born,
        parents=[born],
        refs=[
            Ref("event", born),
            Ref("belief", two_minds["alpha.belief"]),
            Ref("memory", two_minds["alpha.memory"]),
            Ref("model_call", two_minds["alpha.call"]),
        ],
        subject=Ref("belief", two_minds["alpha.belief"]),
    )
    assert world.counts() == (3, 1, 4)
    node = world.walk(e).nodes[-1]
    assert node.id == e
    assert node.refs == (
        Ref("belief", two_minds["alpha.belief"]),
        Ref("event", born),
        Ref("memory", two_minds["alpha.memory"]),
        Ref("model_call", two_minds["alpha.call"]),
    )
    assert node.subject == Ref("belief", two_minds["alpha.belief"])


# --- Graphviz -----------------------------------------------------------------


def test_to_dot_has_clusters_nodes_and_labelled_edges(world: World) -> None:
    born = world.mind("alpha")
    x = world.belief("alpha")
    mc = world.model_call("alpha", "planner", "claude-x")
    a = world.event("alpha", "perceived", cause=born, cycle="c1", text='a "quoted"\nline')
    w = world.event("alpha", "belief_formed", cause=a, cycle="c1", subject=Ref("belief", x), refs=[Ref("model_call", mc)])
    c = world.event("alpha", "acted", cause=a, parents=[w], refs=[Ref("belief", x)], cycle="c2", text="x" * 60)

    dot = to_dot(world.walk(c))
    lines = dot.splitlines()
    assert lines[0] == "digraph timeline {" and lines[-1] == "}"
    assert dot.endswith("}\n")
    assert "  subgraph cluster_0 {" in lines
    assert '    label="cycle c1 (correlation)"; style=dashed;' in lines
    assert "  subgraph cluster_1 {" in lines
    assert '    label="cycle c2 (correlation)"; style=dashed;' in lines
    assert "subgraph cluster_2" not in dot
    for member in (a, w, c):
        assert f"    e{member};" in lines
    assert f'  e{born} -> e{a} [label="caused", style=solid];' in lines
    assert f'  e{a} -> e{w} [label="caused", style=solid];' in lines
    assert f'  e{a} -> e{c} [label="caused", style=solid];' in lines
    assert f'  e{w} -> e{c} [label="parent", style=dashed];' in lines
    assert f'  e{w} -> e{c} [label="cited", style=dotted];' in lines
    assert sum(" -> " in line for line in lines) == 5
    node_c = next(line for line in lines if line.startswith(f"  e{c} [label="))
    assert node_c.endswith(", penwidth=2];")  # the root stands out
    assert "x" * 39 + "…" in node_c and "x" * 40 not in node_c
    node_w = next(line for line in lines if line.startswith(f"  e{w} [label="))
    assert f"model call #{mc} planner claude-x" in node_w
    assert "penwidth" not in node_w
    node_a = next(line for line in lines if line.startswith(f"  e{a} [label="))
    assert node_a == f'  e{a} [label="#{a} perceived\\ntest\\na \\"quoted\\" line"];'


# --- the walk's own reads -----------------------------------------------------


def test_walk_events_equal_those_get_events_reads(world: World) -> None:
    """The walk builds its events from the links it loads for its edges: they must be get_events' own."""
    born = world.mind("alpha")
    x = world.belief("alpha")
    m = world.memory("alpha")  # cited, but no event wrote it: a ref without an edge
    mc1 = world.model_call("alpha")
    mc2 = world.model_call("alpha")
    w1 = world.event("alpha", "belief_formed", cause=born, subject=Ref("belief", x))
    w2 = world.event("alpha", "belief_revised", cause=w1, subject=Ref("belief", x))

    def job(db: Any) -> int:
        draft = EventDraft(
            mind="alpha",
            kind="decided",
            actor="test",
            text="go",
            channel="chat",
            data={"why": ["a", 1], "n": None},
            cycle_id="c1",
            causation_id=w2,
            parents=(w2, born, w1),
            refs=(Ref("model_call", mc2), Ref("belief", x), Ref("event", born), Ref("memory", m), Ref("model_call", mc1)),
        )
        return append(db, draft, NOW).id

    e = world.store.writer.run_sync(job)
    after = world.event("alpha", cause=e, parents=[w1], cycle="c1")
    for root in (born, w1, w2, e, after):
        tl = world.walk(root)
        stored = get_events(world.store.reader(), node_ids(tl))
        assert [event_of(n) for n in tl.nodes] == [stored[i] for i in node_ids(tl)], root
        assert all(isinstance(n, Event) and event_of(n).__dict__ == vars(stored[n.id]) for n in tl.nodes), root
        assert [dump(n) for n in tl.nodes] == [
            {**dump(stored[n.id]), "hop": n.hop, "reached_from": n.reached_from, "reached_by": n.reached_by, "model_calls": n.model_calls}
            for n in tl.nodes
        ], root

    tl = world.walk(e)
    node = next(n for n in tl.nodes if n.id == e)
    assert node.parents == (born, w1, w2)
    # The belief once, though two events wrote it before e; refs in (type, id) order.
    assert node.refs == (Ref("belief", x), Ref("event", born), Ref("memory", m), Ref("model_call", mc1), Ref("model_call", mc2))
    assert node.data == {"why": ["a", 1], "n": None}
    assert (node.text, node.channel, node.cycle_id, node.causation_id) == ("go", "chat", "c1", w2)
    assert [c["id"] for c in node.model_calls] == [mc1, mc2]
    assert [(s, t, k, v) for s, t, k, v in ((x_.source, x_.target, x_.kind, x_.via) for x_ in tl.edges) if t == e] == [
        (born, e, "parent", None),
        (born, e, "cited", None),
        (w1, e, "parent", None),
        (w1, e, "cited", Ref("belief", x)),
        (w2, e, "caused", None),
        (w2, e, "parent", None),
        (w2, e, "cited", Ref("belief", x)),
    ]
    assert [(g["cycle_id"], g["events"]) for g in tl.groups] == [("c1", [e, after])]


def test_walk_reads_in_one_transaction_and_leaves_none_open(world: World) -> None:
    born = world.mind("alpha")
    a = world.event("alpha", cause=born)
    db = world.store.reader()
    assert node_ids(world.walk(a)) == [born, a]
    assert not db.conn.in_transaction
    with pytest.raises(EventNotFound):
        world.walk(9999)
    assert not db.conn.in_transaction

    # In a transaction the caller holds, the walk reads within it and leaves it open.
    db.execute("BEGIN")
    try:
        assert node_ids(walk(db, a)) == [born, a]
        assert db.conn.in_transaction
    finally:
        db.execute("ROLLBACK")

    # On the writer, inside a job: the walk sees the job's own event, not yet committed.
    def job(wdb: Any) -> tuple[int, list[int]]:
        b = append(wdb, EventDraft(mind="alpha", kind="note", actor="test", causation_id=a), NOW).id
        return b, node_ids(walk(wdb, a))

    b, ids = world.store.writer.run_sync(job)
    assert ids == [born, a, b]
    assert node_ids(world.walk(a)) == [born, a, b]


def test_walk_seeks_its_steps_ids_and_builds_no_temporary_index_of_them(world: World) -> None:
    """Each query of a walk scans its step's ids and seeks each one.

    `id IN (ids)` made SQLite build a temporary index of the ids for every branch
    of a query before looking anything up: at 1M events that was an eighth of a
    walk's instructions, and held the walk above 1.5x the same-rows baseline of
    bench/timeline.py. Every statement the walk runs is traced and planned again.
    """
    born = world.mind("alpha")
    call = world.model_call("alpha")
    belief = world.belief("alpha")
    wrote = world.event("alpha", "belief_formed", cause=born, subject=Ref("belief", belief))
    a = world.event("alpha", "thought", cause=born, parents=[wrote], refs=[Ref("model_call", call), Ref("belief", belief)])
    world.event("alpha", "acted", cause=a, refs=[Ref("event", wrote)])
    db = world.store.reader()
    ran: list[str] = []
    db.conn.set_trace_callback(ran.append)  # the statements with their values written in
    try:
        tl = walk(db, a)
    finally:
        db.conn.set_trace_callback(None)
    assert tl.nodes[[n.id for n in tl.nodes].index(a)].model_calls[0]["id"] == call  # the ledger's query ran too
    planned = {sql: [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql)] for sql in ran if sql.lstrip().upper().startswith(("WITH", "SELECT"))}
    assert len(planned) >= 5, ran  # events, their links, links out, model calls, cuts
    assert {sql: plan for sql, plan in planned.items() if any("LIST SUBQUERY" in step for step in plan)} == {}


# --- against a brute-force reference ------------------------------------------

@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """Up to 30 events, each linked only to earlier ones; some write or cite one of 3 beliefs."""
    n = draw(st.integers(1, 30))
    specs: list[dict[str, Any]] = []
    for i in range(n):
        earlier = st.integers(0, i - 1) if i else st.nothing()
        specs.append(
            {
                "cause": draw(st.none() | earlier) if i else None,
                "parents": sorted(set(draw(st.lists(earlier, max_size=3)))) if i else [],
                "refs": sorted(set(draw(st.lists(earlier, max_size=2)))) if i else [],
                "cites": sorted(set(draw(st.lists(st.integers(0, 2), max_size=2)))),
                "writes": draw(st.none() | st.integers(0, 2)),
                "cycle": draw(st.none() | st.sampled_from(["c1", "c2", "c3"])),
            }
        )
    return specs, draw(st.integers(0, n - 1))


def _reference(specs: list[dict[str, Any]], root: int, back: int, forward: int) -> tuple[dict[int, int], set[tuple[int, int, str, int | None]], int, int]:
    """Shortest signed hop of every reachable event (by index), every edge among them, and the counts one hop past each bound."""
    links: set[tuple[int, int, str, int | None]] = set()
    for i, s in enumerate(specs):
        if s["cause"] is not None:
            links.add((s["cause"], i, "caused", None))
        links.update((p, i, "parent", None) for p in s["parents"])
        links.update((r, i, "cited", None) for r in s["refs"])
        for b in s["cites"]:
            links.update((w, i, "cited", b) for w in range(i) if specs[w]["writes"] == b)

    def distances(step: dict[int, set[int]], bound: int) -> tuple[dict[int, int], int]:
        dist, frontier = {root: 0}, [root]
        for hop in range(1, bound + 2):
            fresh = sorted({m for x in frontier for m in step.get(x, ()) if m not in dist})
            if hop > bound:
                return dist, len(fresh)
            dist.update((m, hop) for m in fresh)
            frontier = fresh
        return dist, 0

    up: dict[int, set[int]] = {}
    down: dict[int, set[int]] = {}
    for s, t, _, _ in links:
        up.setdefault(t, set()).add(s)
        down.setdefault(s, set()).add(t)
    anc, over_back = distances(up, back)
    desc, over_fwd = distances(down, forward)
    hop = {**{k: -v for k, v in anc.items()}, **desc}
    return hop, {e for e in links if e[0] in hop and e[1] in hop}, over_back, over_fwd


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs(), back=st.integers(0, MAX_HOPS), forward=st.integers(0, MAX_HOPS), limit=st.integers(1, 40))
def test_walk_matches_a_brute_force_reference(
    tmp_path_factory: pytest.TempPathFactory, graph: tuple[list[dict[str, Any]], int], back: int, forward: int, limit: int
) -> None:
    specs, root_index = graph
    store = Store(tmp_path_factory.mktemp("ref") / "n.db")
    try:

        def build(db: Any) -> tuple[list[int], list[int]]:
            create_mind(db, "alpha", {}, NOW, "test")
            beliefs = [
                int(db.execute("INSERT INTO beliefs (mind, proposition, created_at) VALUES ('alpha', ?, '')", [f"b{k}"]).lastrowid)
                for k in range(3)
            ]
            ids: list[int] = []
            for s in specs:
                draft = EventDraft(
                    mind="alpha",
                    kind="e",
                    actor="test",
                    cycle_id=s["cycle"],
                    causation_id=None if s["cause"] is None else ids[s["cause"]],
                    parents=[ids[p] for p in s["parents"]],
                    refs=[Ref("event", ids[r]) for r in s["refs"]] + [Ref("belief", beliefs[b]) for b in s["cites"]],
                    subject=None if s["writes"] is None else Ref("belief", beliefs[s["writes"]]),
                )
                ids.append(append(db, draft, NOW).id)
            return ids, beliefs

        ids, beliefs = store.writer.run_sync(build)
        index = {event_id: i for i, event_id in enumerate(ids)}
        db = store.reader()

        # Unbounded by the event limit: exactly the reference.
        tl = walk(db, ids[root_index], WalkLimits(back=back, forward=forward))
        hop, links, over_back, over_fwd = _reference(specs, root_index, back, forward)
        assert {index[n.id]: n.hop for n in tl.nodes} == hop
        got = {(index[e.source], index[e.target], e.kind, None if e.via is None else beliefs.index(e.via.id)) for e in tl.edges}
        assert got == links
        assert len(tl.edges) == len(links)
        assert (tl.truncation.omitted_back, tl.truncation.omitted_forward) == (over_back, over_fwd)
        assert tl.truncation.by_hops == bool(over_back or over_fwd) and not tl.truncation.by_limit
        for n in tl.nodes:  # each node was reached over a real edge from a node one hop nearer the root
            if n.reached_from is not None:
                src = next(m for m in tl.nodes if m.id == n.reached_from)
                assert abs(src.hop) == abs(n.hop) - 1
                pair = (n.reached_from, n.id) if n.hop > 0 else (n.id, n.reached_from)
                assert any((e.source, e.target, e.kind) == (*pair, n.reached_by) for e in tl.edges)
        groups: dict[str, list[int]] = {}
        for n in tl.nodes:
            if n.cycle_id:
                groups.setdefault(n.cycle_id, []).append(n.id)
        assert {g["cycle_id"]: g["events"] for g in tl.groups} == groups

        # With an event limit: a prefix of the same walk, never more than the limit.
        cut = walk(db, ids[root_index], WalkLimits(back=back, forward=forward, limit=limit))
        assert len(cut.nodes) <= limit
        assert all(hop[index[n.id]] == n.hop for n in cut.nodes)
        kept = {n.id for n in cut.nodes}
        assert all(e.source in kept and e.target in kept for e in cut.edges)
        assert cut.truncation.by_limit == (len(tl.nodes) > limit)
        if not cut.truncation.by_limit:
            assert dump(cut) == {**dump(tl), "limits": dump(cut)["limits"]}
        else:
            assert len(cut.nodes) == limit
            # No node left out is nearer the root than a node kept, on either side.
            for side in (-1, 1):
                kept_hops = [abs(n.hop) for n in cut.nodes if n.hop * side > 0]
                dropped = [abs(h) for i, h in hop.items() if h * side > 0 and ids[i] not in kept]
                if kept_hops and dropped:
                    assert min(dropped) >= max(kept_hops)
    finally:
        store.close()
