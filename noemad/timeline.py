"""The causal walk: from one event back to its causes and forward to its consequences.

Edges come only from links written with the events: `caused` (causation_id),
`parent` (event parents) and `cited` (evidence refs; a ref to a memory or
belief reaches the events that wrote or changed it before the citing event).
Nothing is inferred: no link, no edge. Events of one cognitive cycle are
grouped, and the group is labelled correlation, not causation. Model calls an
event cites are artefacts on its node, not hops.

The walk is breadth-first and alternates directions hop by hop so causes and
consequences share the event limit fairly; within a hop, lower ids come first.
A walk cut short says by what (hops, limit) and how many events it left out
at the cut. Where a link leads to an event that was archived (noemad.archive),
the walk stops there and says so: its `cuts` name the archived event, the
link and the archive file. A walk inside an archive file (`archive` set)
stops the same way at links to events outside the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import starmap
from typing import Annotated, Any, Literal

from sqlite_utils import Database
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from noemad.archive.cuts import OUTSIDE, Cut, cuts_of
from noemad.errors import InvalidInput
from noemad.events import EVENT_COLUMNS, Event, Ref, event_fields, get_event
from noemad.ledger import calls as ledger_calls
from noemad.wire import HIDDEN, OMIT_NONE, computed, renamed, wire

EdgeKind = Literal["caused", "parent", "cited"]
MAX_HOPS = 6
MAX_EVENTS = 200
_KIND_ORDER = {"caused": 0, "parent": 1, "cited": 2}


@wire
@dataclass(frozen=True)
class WalkLimits:
    """How far one walk may go, and this daemon's bounds on it.

    `max_hops` and `max_events` are `[timeline]` in noemad.toml (at most 6
    and 200); a walk may ask for less, never more, and the answer carries
    them so a client can say how much further a walk could go.
    """

    back: int = MAX_HOPS
    forward: int = MAX_HOPS
    limit: int = MAX_EVENTS
    max_hops: int = MAX_HOPS
    max_events: int = MAX_EVENTS

    def __post_init__(self) -> None:
        if not (1 <= self.max_hops <= MAX_HOPS and 1 <= self.max_events <= MAX_EVENTS):
            raise InvalidInput(f"the walk's bounds are at most {MAX_HOPS} hops and {MAX_EVENTS} events")
        for name, value, low, top, setting in (
            ("back", self.back, 0, self.max_hops, "max_hops"),
            ("forward", self.forward, 0, self.max_hops, "max_hops"),
            ("limit", self.limit, 1, self.max_events, "max_events"),
        ):
            if not low <= value <= top:
                bound = f"this daemon's [timeline] {setting}" if top < (MAX_HOPS if setting == "max_hops" else MAX_EVENTS) else "the most a walk goes"
                raise InvalidInput(f"{name} must be from {low} to {top} ({bound}), not {value}")


@wire
@dataclass(frozen=True)
class Edge:
    """A link from cause to consequence."""

    source: Annotated[int, renamed("from")]
    target: Annotated[int, renamed("to")]
    kind: EdgeKind
    via: Annotated[Ref | None, OMIT_NONE] = None
    """The memory or belief a `cited` edge passes through (absent on other edges)."""


@wire
@dataclass(frozen=True)
class Node(Event):
    """An event on the walk: how far from the root and how it was reached."""

    hop: int
    """Hops from the root: negative for causes, positive for consequences."""
    reached_from: int | None = None
    reached_by: EdgeKind | None = None
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    """The model calls the event cites, as their model_calls rows."""


class Group(TypedDict):
    """The events of one cognitive cycle: grouped, and the group labelled correlation, not causation."""

    cycle_id: str
    label: Literal["correlation"]
    events: list[int]


@wire
@dataclass(frozen=True)
class Truncation:
    """Whether and where the walk was cut, and how many events it left out there."""

    by_hops: Annotated[bool, HIDDEN] = False
    by_limit: Annotated[bool, HIDDEN] = False
    omitted_back: int = 0
    omitted_forward: int = 0

    @computed
    @property
    def truncated(self) -> bool:
        return self.by_hops or self.by_limit

    @computed
    @property
    def by(self) -> list[Literal["hops", "limit"]]:
        """What cut the walk short."""
        return [name for name, hit in (("hops", self.by_hops), ("limit", self.by_limit)) if hit]  # type: ignore[misc]


@wire
@dataclass(frozen=True)
class Timeline:
    """A causal walk around one event."""

    root: int
    nodes: list[Node]
    edges: list[Edge]
    groups: list[Group]
    truncation: Truncation
    limits: WalkLimits
    cuts: list[Cut] = field(default_factory=list)
    """Where a link of an event on the walk leads into an archive (or, in an archive, out of it): the walk stops there."""
    archive: Annotated[str | None, OMIT_NONE] = None
    """The archive file this walk ran in, when the root event is archived."""


# --- reading links ------------------------------------------------------------
#
# A step's ids are bound as one JSON array, not as an IN list of `?` marks: the
# statement text then never changes, so sqlite3 prepares it once per connection
# and keeps it in its statement cache. With marks every list length is a new
# text, parsed and planned again, which cost about as much as running it.
# Each query joins the step to the table, the step the outer loop (CROSS JOIN:
# scan the step, seek each id), rather than asking `id IN step`: the IN form
# built a temporary index of the step for every branch of a query before
# looking anything up (12-20% of each query's time at 1M events). A step's ids
# are distinct, so the join returns the same rows.

_CAUSED, _PARENT, _CITED = (_KIND_ORDER[k] for k in ("caused", "parent", "cited"))
_KINDS: tuple[EdgeKind, ...] = ("caused", "parent", "cited")  # by kind order

_STEP = "WITH step(id) AS (SELECT value FROM json_each(?))"

_EVENTS_SQL = f"{_STEP} SELECT {', '.join('e.' + c.strip() for c in EVENT_COLUMNS.split(','))} FROM step CROSS JOIN events e ON e.id = step.id"

# The links written with the step's events, as rows (event, type, id, writer):
# parents with type NULL, then every ref, a memory or belief ref once per event
# that wrote or changed it before the citing one (writer; NULL if none). They
# make the events' parents and refs, and every link into the events but
# `caused`, which is the events row's causation_id.
_WRITTEN_LINKS_SQL = f"""{_STEP}
SELECT p.event_id, NULL, p.parent_id, NULL FROM step CROSS JOIN event_parents p ON p.event_id = step.id
UNION ALL
SELECT r.event_id, r.ref_type, r.ref_id, w.id FROM step CROSS JOIN event_refs r ON r.event_id = step.id
  LEFT JOIN events w ON r.ref_type IN ('memory', 'belief')
   AND w.subject_type = r.ref_type AND w.subject_id = r.ref_id AND w.id < r.event_id
"""

# Every link out of the step's events, as rows (consequence, kind order, cause).
_LINKS_OUT_SQL = f"""{_STEP}
SELECT e.id, {_CAUSED}, e.causation_id FROM step CROSS JOIN events e ON e.causation_id = step.id
UNION ALL
SELECT p.event_id, {_PARENT}, p.parent_id FROM step CROSS JOIN event_parents p ON p.parent_id = step.id
UNION ALL
SELECT r.event_id, {_CITED}, r.ref_id FROM step CROSS JOIN event_refs r ON r.ref_type = 'event' AND r.ref_id = step.id
UNION ALL
SELECT r.event_id, {_CITED}, w.id FROM step CROSS JOIN events w ON w.id = step.id
  JOIN event_refs r ON r.ref_type = w.subject_type AND r.ref_id = w.subject_id AND r.event_id > w.id
 WHERE w.subject_type IS NOT NULL
"""

# A link, shaped as its edge's sort key: (source, target, kind order, via type,
# via id). A link without a via has via type _NO_VIA and via id 0, so it sorts
# as the walk always sorted it (as if via ("event", 0)).
_Link = tuple[int, int, int, str, int]
_NO_VIA = "event"


def _json_ids(ids: Iterable[int]) -> str:
    """`ids` as the JSON array `_STEP` reads."""
    return "[" + ",".join(map(str, ids)) + "]"


class _Loaded:
    """The walk's events, each loaded once together with every link into it.

    An event's incoming links are its causation_id, parents and refs, which
    loading it reads anyway: a step toward causes then needs no query of its
    own, and the edges among the walk's events are the loaded links whose
    source is on the walk. (Links out of an event are not written with it, so
    a step toward consequences has its own query.)
    """

    def __init__(self) -> None:
        # Each event as its fields (event_fields): a node is made of them once the walk
        # knows its hop, with no Event made and copied first.
        self.events: dict[int, dict[str, Any]] = {}
        self.into: dict[int, list[_Link]] = {}  # event id -> every link into it
        self.model_calls: dict[int, list[int]] = {}  # event id -> the model calls it cites

    def load(self, db: Database, ids: Sequence[int]) -> None:
        """Load those of `ids` not loaded yet; ids that are not stored are left out."""
        ids = [i for i in ids if i not in self.events]
        if not ids:
            return
        step = _json_ids(ids)
        into: dict[int, list[_Link]] = {}
        parents: dict[int, list[int]] = {}
        refs: dict[int, dict[tuple[str, int], None]] = {}  # ordered sets: a ref comes once per writer
        link: _Link
        for target, ref_type, source, writer in db.execute(_WRITTEN_LINKS_SQL, [step]):
            if ref_type is None:
                parents.setdefault(target, []).append(source)
                link = (source, target, _PARENT, _NO_VIA, 0)
            else:
                refs.setdefault(target, {})[ref_type, source] = None
                if ref_type == "event":
                    link = (source, target, _CITED, _NO_VIA, 0)
                elif writer is not None:
                    link = (writer, target, _CITED, ref_type, source)
                elif ref_type == "model_call":
                    self.model_calls.setdefault(target, []).append(source)
                    continue  # an artefact on the node, not a link
                else:
                    continue  # a memory or belief no event wrote before this one: no link
            into.setdefault(target, []).append(link)
        for row in db.execute(_EVENTS_SQL, [step]):
            event_id, causation_id = row[0], row[9]
            links = self.into[event_id] = into.get(event_id, [])
            if causation_id is not None:
                links.append((causation_id, event_id, _CAUSED, _NO_VIA, 0))
            self.events[event_id] = event_fields(
                row,
                tuple(sorted(parents[event_id])) if event_id in parents else (),
                tuple(starmap(_ref, sorted(refs[event_id]))) if event_id in refs else (),
            )


def _links_out_of(db: Database, ids: Sequence[int]) -> Iterator[tuple[int, int, int]]:
    """Every link out of `ids`, as (consequence, kind order, cause)."""
    return db.execute(_LINKS_OUT_SQL, [_json_ids(ids)])


@contextmanager
def _one_snapshot(db: Database) -> Iterator[None]:
    """Run the walk's queries in one read transaction, unless the caller has one open.

    A reader is in autocommit mode: each query would otherwise see the store
    as of its own start and take the read lock again.
    """
    if db.conn.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("ROLLBACK")  # nothing was written: this only ends the snapshot


# --- the walk ---------------------------------------------------------------


def walk(db: Database, event_id: int, limits: WalkLimits | None = None, *, archive: str | None = None) -> Timeline:
    """Walk the causal links around `event_id` within `limits`; in the archive file `archive` when given (db is it)."""
    limits = limits or WalkLimits()
    with _one_snapshot(db):
        loaded = _Loaded()
        loaded.load(db, [event_id])
        if event_id not in loaded.events:
            get_event(db, event_id)  # raises EventNotFound, with its hint
        hops, reached, truncation = _reach(db, loaded, event_id, limits)
        ids = sorted(hops)
        loaded.load(db, ids)  # the events no step toward causes has loaded
        # In an archive, a link can lead out of the file (to an event the store kept, or an older archive's).
        outside = [i for i in ids if i not in loaded.events]
        if outside:
            for gone in outside:
                del hops[gone]
            ids = sorted(hops)
        edges = _edges_among(loaded, ids)
        calls = _model_calls(db, loaded.model_calls)
        nodes = [_node(loaded.events[i], hops[i], reached.get(i), calls.get(i, [])) for i in ids]
        cuts = cuts_of(db, ids, in_file=archive is not None) + [_outside(gone, reached[gone]) for gone in outside]
    groups: dict[str, list[int]] = {}
    for node in nodes:
        if node.cycle_id:
            groups.setdefault(node.cycle_id, []).append(node.id)
    return Timeline(
        root=event_id,
        nodes=nodes,
        edges=edges,
        groups=[
            Group(cycle_id=cycle, label="correlation", events=members)
            for cycle, members in sorted(groups.items(), key=lambda kv: kv[1][0])
        ],
        truncation=truncation,
        limits=limits,
        cuts=sorted(cuts, key=lambda c: (c.event, c.archived, c.link, c.side)),
        archive=archive,
    )


def _outside(gone: int, how: tuple[int, EdgeKind]) -> Cut:
    """A link out of an archive file, as a cut at the event it was reached from."""
    source, kind = how
    # Reached toward causes when the event reached from lies nearer the root on the cause side.
    side = "cause" if gone < source else "consequence"
    return Cut(event=source, archived=gone, link=kind, side=side, archive=0, path=OUTSIDE)  # type: ignore[arg-type]


def _reach(
    db: Database, loaded: _Loaded, root: int, limits: WalkLimits
) -> tuple[dict[int, int], dict[int, tuple[int, EdgeKind]], Truncation]:
    """The breadth-first walk: each event's signed hop, how it was reached, and where it was cut."""
    hops: dict[int, int] = {root: 0}
    reached: dict[int, tuple[int, EdgeKind]] = {}
    frontier = {-1: [root], 1: [root]}  # direction -> ids reached at the last hop
    bound = {-1: limits.back, 1: limits.forward}
    omitted = {-1: 0, 1: 0}
    by_limit = by_hops = False

    for hop in range(1, MAX_HOPS + 2):
        for direction in (-1, 1):
            ids = frontier[direction]
            if not ids:
                continue
            if direction < 0:
                loaded.load(db, ids)
                best = _nearest_cause(loaded.into, ids, hops)
            else:
                best = _nearest_new(_links_out_of(db, ids), hops)
            fresh = sorted(best)
            if hop > bound[direction]:
                # Only counted: these lie one hop past the bound.
                if fresh:
                    by_hops = True
                    omitted[direction] += len(fresh)
                frontier[direction] = []
                continue
            room = limits.limit - len(hops)
            taken, left = fresh[:room], fresh[room:]
            if left:
                by_limit = True
                omitted[direction] += len(left)
            for new in taken:
                hops[new] = direction * hop
                order, old = best[new]
                reached[new] = (old, _KINDS[order])
            frontier[direction] = taken
        if by_limit:
            # The limit is reached: nothing more is taken either way. Both
            # directions of this hop have been looked at, so what each left
            # out at the cut is counted.
            break
    return hops, reached, Truncation(by_hops, by_limit, omitted[-1], omitted[1])


def _nearest_new(steps: Iterable[tuple[int, int, int]], seen: dict[int, int]) -> dict[int, tuple[int, int]]:
    """For each event one step away and not seen yet, how it is reached: (kind order, from).

    `steps` are (new, kind order, from); of several, the lowest kind order wins, then the lowest from.
    """
    best: dict[int, tuple[int, int]] = {}
    for new, order, old in steps:
        if new not in seen:
            known = best.get(new)
            if known is None or (order, old) < known:
                best[new] = (order, old)
    return best


def _nearest_cause(into: dict[int, list[_Link]], ids: Sequence[int], seen: dict[int, int]) -> dict[int, tuple[int, int]]:
    """`_nearest_new` one step toward causes: over the loaded links into `ids`, whose sources are the new events.

    Read straight off the links, with no (new, kind order, from) tuple made for each.
    """
    best: dict[int, tuple[int, int]] = {}
    for target in ids:
        for source, _, order, _, _ in into.get(target, ()):
            if source not in seen:
                known = best.get(source)
                if known is None or (order, target) < known:
                    best[source] = (order, target)
    return best


def _edges_among(loaded: _Loaded, ids: Sequence[int]) -> list[Edge]:
    """Every link between two of `ids` (all loaded), in (source, target, kind, via) order."""
    included = set(ids)
    into = loaded.into
    # An event's links are loaded once, and are distinct rows (primary keys):
    # no link comes twice.
    keys = sorted([link for i in ids for link in into.get(i, ()) if link[0] in included])
    edges: list[Edge] = []
    for source, target, order, via_type, via_id in keys:
        edge = _new(Edge)
        _set(edge, "__dict__", {"source": source, "target": target, "kind": _KINDS[order], "via": None if via_type == _NO_VIA else _ref(via_type, via_id)})
        edges.append(edge)
    return edges


# Node(...), Edge(...) and Ref(...) would set their fields one object.__setattr__
# at a time (they are frozen dataclasses); giving a new object its whole __dict__
# makes the same object for a fraction of it, as event_from_row does. None of
# them has a __post_init__ to skip. Written out where each is made, with no
# helper call between: a walk makes several hundred.
_new = object.__new__
_set = object.__setattr__


def _ref(ref_type: str, ref_id: int) -> Ref:
    obj = _new(Ref)
    _set(obj, "__dict__", {"type": ref_type, "id": ref_id})
    return obj


def _node(fields: dict[str, Any], hop: int, reached: tuple[int, EdgeKind] | None, calls: list[dict[str, Any]]) -> Node:
    """The event of `fields` (event_fields) as a node of the walk; `reached` is (from, by) for any but the start. Takes `fields` over."""
    reached_from, reached_by = reached or (None, None)
    fields["hop"] = hop
    fields["reached_from"] = reached_from
    fields["reached_by"] = reached_by
    fields["model_calls"] = calls
    node = _new(Node)
    _set(node, "__dict__", fields)
    return node


def _model_calls(db: Database, cited: dict[int, list[int]]) -> dict[int, list[dict[str, Any]]]:
    """For each event that cites model calls, their rows in id order (its refs' order)."""
    if not cited:
        return {}
    calls = ledger_calls(db, {call for calls in cited.values() for call in calls})
    return {event: [calls[i] for i in sorted(ids) if i in calls] for event, ids in cited.items()}


def to_dot(timeline: Timeline) -> str:
    """The walk as a Graphviz digraph; one cluster per cognitive cycle, labelled correlation."""

    def label(node: Node) -> str:
        text = (node.text or "").replace("\n", " ")
        if len(text) > 40:
            text = text[:39] + "…"
        parts = [f"#{node.id} {node.kind}", node.actor]
        if text:
            parts.append(text)
        for call in node.model_calls:
            parts.append(f"model call #{call['id']} {call['role']} {call['model']}")
        escaped = (p.replace("\\", "\\\\").replace('"', '\\"') for p in parts)
        return '"' + "\\n".join(escaped) + '"'

    lines = ["digraph timeline {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    in_group: set[int] = set()
    for index, group in enumerate(timeline.groups):
        lines.append(f"  subgraph cluster_{index} {{")
        lines.append(f'    label={json.dumps("cycle " + group["cycle_id"] + " (correlation)")}; style=dashed;')
        for member in group["events"]:
            lines.append(f"    e{member};")
            in_group.add(member)
        lines.append("  }")
    for node in timeline.nodes:
        extra = ", penwidth=2" if node.id == timeline.root else ""
        lines.append(f"  e{node.id} [label={label(node)}{extra}];")
    styles = {"caused": "solid", "parent": "dashed", "cited": "dotted"}
    for edge in timeline.edges:
        lines.append(f'  e{edge.source} -> e{edge.target} [label="{edge.kind}", style={styles[edge.kind]}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
