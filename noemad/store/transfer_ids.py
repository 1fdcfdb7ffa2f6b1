"""Where a mind's rows hold ids: what an export shifts so that its links survive the move to another store.

Ids are global to a store (one AUTOINCREMENT sequence per table, shared by
every mind), so a mind's rows cannot keep their ids on another host. An
export writes each id space (a table with an integer `id`) counted from 1
(the mind's smallest id in it becomes 1); an import adds the target store's
largest id of that space. Every column and JSON value that names a row of a
space is shifted with it, so every link and citation lands on the same row.

The declarations below are checked by tests/test_transfer.py against the
schema: a new column that looks like an id (an `id`, a `*_id`, or a foreign
key) must be declared here as an id or as plain, and a new table keyed by
`mind` is exported unless `NOT_EXPORTED` says why not.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

# Tables that do not travel, and why. Every other table with a `mind` column (and `minds`) is exported.
NOT_EXPORTED: dict[str, str] = {
    "_sqlite_migrations": "the store's own record of its migrations",
    "sqlite_sequence": "the store's own id counters",
    "schedule_pauses": "host state: a pause of a job kind for every mind on the host",
    "memories_fts": "the full-text index of memories, rebuilt by its trigger as each memory is written",
    "consolidated": "a view over consolidations and memory_links",
}

# (table, column) -> the id space (table) its value names. Each space's own `id` column is implied.
ID_COLUMNS: dict[tuple[str, str], str] = {
    ("events", "causation_id"): "events",
    ("event_parents", "event_id"): "events",
    ("event_parents", "parent_id"): "events",
    ("event_refs", "event_id"): "events",
    ("memories", "event_id"): "events",
    ("memory_links", "memory_id"): "memories",
    ("memory_links", "derived_from"): "memories",
    ("evidence", "belief_id"): "beliefs",
    ("evidence", "event_id"): "events",
    ("evidence", "withdrawn_by"): "events",
    ("deliveries", "event_id"): "events",
    ("remote_ids", "event_id"): "events",
    ("belief_history", "belief_id"): "beliefs",
    ("belief_history", "event_id"): "events",
    ("goals", "event_id"): "events",
    ("predictions", "belief_id"): "beliefs",
    ("predictions", "event_id"): "events",
    ("predictions", "resolved_event_id"): "events",
    ("notifications", "event_id"): "events",
    ("notifications", "last_event_id"): "events",
    ("notifications", "acked_event_id"): "events",
    ("jobs", "after_event"): "events",
    ("consolidations", "memory_id"): "memories",
    ("consolidations", "job_id"): "jobs",
    ("reflection_patterns", "memory_id"): "memories",
    ("reflection_patterns", "job_id"): "jobs",
    ("gate_sleep", "self_wake_cause"): "events",
    ("window_anchors", "anchor_id"): "events",
    ("archives", "first_id"): "events",
    ("archives", "last_id"): "events",
    ("event_cuts", "event_id"): "events",
    ("event_cuts", "archived_id"): "events",
    ("event_cuts", "archive_id"): "archives",
}

# An archive file's own tables (written by noemad.archive.file; carried by `export --with-archives`) that hold
# ids beyond the store's columns. Its events, event_parents, event_refs, model_calls and event_cuts are the
# store's tables of that name (their declarations above apply).
ID_COLUMNS.update(
    {("memory_events", "memory_id"): "memories", ("memory_events", "event_id"): "events", ("archive_runs", "archive"): "archives"}
)
# Columns holding an archive file's path (the store's archive runs; an archive file's cuts into earlier ones): a
# file made with --with-archives writes `{archive:N}` for its Nth archive file, and an import the file it writes.
PATH_COLUMNS: frozenset[tuple[str, str]] = frozenset({("archives", "path"), ("event_cuts", "archive_path")})
# Columns whose whole value may be the mind's name (an archive file says whose it is).
NAME_COLUMNS: frozenset[tuple[str, str]] = frozenset({("archive_info", "value")})

# (table, column) -> (the column saying what kind of row it names, that kind -> space).
_REF_SPACES = {"event": "events", "memory": "memories", "belief": "beliefs", "model_call": "model_calls"}
TYPED_COLUMNS: dict[tuple[str, str], tuple[str, dict[str, str]]] = {
    ("events", "subject_id"): ("subject_type", _REF_SPACES),
    ("event_refs", "ref_id"): ("ref_type", _REF_SPACES),
}

# Text columns that begin with the mind's name (a cycle is `ada/12`): a file holds `{mind}/12`, and an import
# writes the name the mind gets there, so two minds never share a cycle id.
NAMED_COLUMNS: frozenset[tuple[str, str]] = frozenset({("events", "cycle_id")})
MIND = "{mind}"

# Integer columns that look like ids but are not (counts, positions), so the schema check passes them.
PLAIN_COLUMNS: frozenset[tuple[str, str]] = frozenset(
    {
        ("archives", "events"), ("archives", "cuts"), ("belief_history", "support"), ("belief_history", "contradict"), ("belief_history", "moved"), ("deliveries", "attempts"), ("archived_tally", "events"), ("gate_rules", "position"), ("memories", "access_count"),
        ("memory_terms", "docs"), ("notifications", "count"), ("token_ratios", "samples"), ("window_anchors", "chunk_chars"),
        *(("model_calls", f"{c}_tokens") for c in ("input", "output", "cache_read", "cache_write", "cache_write_1h")),
    }
)

# JSON held in text columns: (table, column) -> {a kind of row (fnmatch pattern, "*" for every row): paths}.
# A path is keys joined by dots; `[]` after a key walks the list under it; `{ref}` at the end names a list of
# `{"type", "id"}` objects, `{text}` a string (or list of them) that names rows in text (see TEXT_REF). Each
# other path names an id of the space beside it.
_PRED = (("belief", "beliefs"), ("event", "events"), ("prediction", "predictions"))
EVENT_DATA: dict[str, tuple[tuple[str, str], ...]] = {
    "attention": (
        ("candidates[].detail.belief", "beliefs"), ("candidates[].refs", "{ref}"), ("candidates[].key", "{text}"),
        ("candidates[].detail.ref", "{text}"),
    ),
    "belief_created": (("evidence_id", "evidence"), ("evidence.first_id", "evidence"), ("evidence.last_id", "evidence"), ("prediction", "predictions")),
    "belief_updated": (("evidence_id", "evidence"), ("evidence.first_id", "evidence"), ("evidence.last_id", "evidence"), ("prediction", "predictions")),
    "consolidation": (
        ("beliefs[]", "beliefs"), ("memories[]", "memories"), ("job", "jobs"), ("model_call", "model_calls"),
        ("clusters[].belief", "beliefs"), ("clusters[].belief_event", "events"), ("clusters[].memory", "memories"),
        ("clusters[].memory_event", "events"), ("clusters[].model_call", "model_calls"),
    ),
    "delivery": (("delivery", "deliveries"),),
    "cycle_completed": (("beliefs[]", "beliefs"), ("winners[]", "{text}")),
    "cycle_started": (("held_back[].stimuli[]", "events"),),
    "events_archived": (("archive", "archives"), ("first_id", "events"), ("last_id", "events")),
    "generalisation_rejected": (("memory", "memories"), ("belief", "beliefs")),
    "goal_*": (("goal", "goals"),),
    "job_finished": (("job", "jobs"),),
    "memory_created": (("derived_from", "memories"), ("derived_from[]", "memories")),
    "memory_retrieved": (("scores[].id", "memories"),),
    "metacognition": (("belief", "beliefs"), ("ref", "{text}")),
    "mode_changed": (("job", "jobs"),),
    "narrative_updated": (("previous", "events"),),
    "narrative_rephrased": (("narrative", "events"), ("model_call", "model_calls")),
    "notification*": (
        ("notification", "notifications"), ("values.belief", "beliefs"), ("values.prediction", "predictions"), ("key", "{text}"),
        ("values.ref", "{text}"),
    ),
    "outcome": (("prediction", "predictions"),),
    "prediction_*": (("belief", "beliefs"), ("prediction", "predictions")),
    "reflection": (
        ("job", "jobs"), ("model_call", "model_calls"), ("previous", "events"), ("lessons[]", "memories"), ("lookback.first_event", "events"),
        ("patterns[].episodes[]", "memories"), ("patterns[].events[]", "events"), ("patterns[].memory", "memories"),
        ("period.after_event", "events"), ("period.through_event", "events"),
        *((f"{part}.items[].{key}", space) for part in ("predictions", "rejected", "status_changes") for key, space in _PRED),
    ),
    "reply": (("in_reply_to", "events"),),
}
JOB_OUTPUTS: dict[str, tuple[tuple[str, str], ...]] = {
    "reflection": (
        ("event", "events"), ("model_call", "model_calls"), ("previous", "events"), ("lessons[]", "memories"),
        ("patterns[].memory", "memories"), ("period.after_event", "events"), ("period.through_event", "events"),
    ),
    "consolidation": (
        ("event", "events"), ("beliefs[]", "beliefs"), ("memories[]", "memories"), ("clusters[].belief", "beliefs"),
        ("clusters[].belief_event", "events"), ("clusters[].memory", "memories"), ("clusters[].memory_event", "events"),
        ("clusters[].model_call", "model_calls"),
    ),
}
# (table, JSON column) -> (the column naming the row's kind, or "" for one set of paths; kind pattern -> paths).
# Events' data is written compact (noemad.events.append); the others with json.dumps' default separators.
COMPACT_JSON = frozenset({("events", "data")})
JSON_COLUMNS: dict[tuple[str, str], tuple[str, Mapping[str, tuple[tuple[str, str], ...]]]] = {
    ("events", "data"): ("kind", EVENT_DATA),
    ("jobs", "outputs"): ("kind", JOB_OUTPUTS),
    ("jobs", "model_calls"): ("", {"*": (("[]", "model_calls"),)}),
    ("notifications", "values"): ("", {"*": (("belief", "beliefs"), ("prediction", "predictions"), ("ref", "{text}"))}),
}
# Text columns that name rows as TEXT_REF does (a notification's key holds the warning's ref).
TEXT_COLUMNS: frozenset[tuple[str, str]] = frozenset({("notifications", "key")})

# How text names a row: a warning's ref (`belief:12`), an attention key (`belief:000000000012:000000000034`, the
# belief and the event that changed it; `event:000000000007`, `goal:…`, `prediction:…`), a notification's key
# (`warning:single_source:belief:12`); `mind:NAME` names the mind. Numbers keep their zero padding.
TEXT_REF = re.compile(r"\b(belief|event|memory|goal|prediction|notification):(\d+)(?::(\d+))?|\bmind:(\{mind\}|[a-z0-9][a-z0-9_.-]*)")
_TEXT_SPACES = {"belief": "beliefs", "event": "events", "memory": "memories", "goal": "goals", "prediction": "predictions", "notification": "notifications"}

Shift = Callable[[str, int], int]
"""(space, id) -> the id it becomes."""


def renamer(old: str, new: str) -> Callable[[str], str]:
    """A function giving a NAMED_COLUMNS or NAME_COLUMNS value with its leading mind name `old` made `new`."""
    prefix = old + "/"

    def renamed(value: str) -> str:
        return new + value[len(old):] if value.startswith(prefix) or value == old else value

    return renamed


def paths_for(patterns: Mapping[str, tuple[tuple[str, str], ...]], kind: str) -> tuple[tuple[str, str], ...]:
    """The JSON id paths of a row of `kind` (every pattern it matches)."""
    found: list[tuple[str, str]] = []
    for pattern, paths in patterns.items():
        if pattern == kind or fnmatch.fnmatchcase(kind, pattern):
            found.extend(paths)
    return tuple(found)


def shift_text(text: str, shift: Shift, rename: Callable[[str], str]) -> str:
    """`text` with the rows it names (TEXT_REF) shifted, and `mind:NAME` renamed."""

    def one(match: re.Match[str]) -> str:
        if match.group(4) is not None:
            return "mind:" + rename(match.group(4))
        kind, first, second = match.group(1), match.group(2), match.group(3)
        moved = f"{kind}:{_padded(first, shift(_TEXT_SPACES[kind], int(first)))}"
        if second is not None:  # only an attention key's belief names a second row: the event that changed it
            moved += ":" + (_padded(second, shift("events", int(second))) if kind == "belief" else second)
        return moved

    return TEXT_REF.sub(one, text) if ":" in text else text


def _padded(was: str, value: int) -> str:
    return str(value).zfill(len(was)) if was.startswith("0") and len(was) > 1 else str(value)


def shift_json(text: str, paths: tuple[tuple[str, str], ...], shift: Shift, compact: bool, rename: Callable[[str], str] = str) -> str:
    """`text` (JSON) with the ids at `paths` shifted; the same text when it holds none.

    Written back as its writer wrote it (sorted keys; `compact`: no spaces), so
    the bytes of a value whose ids move by nothing do not change.
    """
    if not paths or not text:
        return text
    # Only the paths whose first key is in the text can hold an id (most rows: none, and then it is not even read).
    plan = [(steps, space) for key, steps, space in _plan(paths) if not key or key in text]
    if not plan:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    changed = False
    for steps, space in plan:
        changed |= _walk(value, steps, space, shift, rename)
    if not changed:
        return text
    return (_COMPACT if compact else _SPACED).encode(value)


# Encoders made once (json.dumps makes one a call), writing as json.dumps(value, sort_keys=True[, separators]) does.
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_SPACED = json.JSONEncoder(sort_keys=True)
_PLANS: dict[tuple[tuple[str, str], ...], tuple[tuple[str, list[str], str], ...]] = {}


def _plan(paths: tuple[tuple[str, str], ...]) -> tuple[tuple[str, list[str], str], ...]:
    """Each path's first key as the JSON text writes it (`""` when the path starts at the top: "[]"), its steps, and its space; one per set of paths."""
    plan = _PLANS.get(paths)
    if plan is None:
        plan = _PLANS[paths] = tuple(
            (f'"{key}"' if (key := path.split(".", 1)[0].removesuffix("[]")) else "", [p for p in path.split(".") if p] if path != "[]" else ["[]"], space)
            for path, space in paths
        )
    return plan


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0  # 0 and null mean "none"


def _walk(node: Any, steps: list[str], space: str, shift: Shift, rename: Callable[[str], str] = str) -> bool:
    """Shift the ids `steps` lead to under `node`, in place; whether any changed."""
    if not steps:
        return False
    step, rest = steps[0], steps[1:]
    if step == "[]":  # the node itself is a list of ids (or of things holding them)
        if not rest:
            return _shift_list(node, space, shift)
        return any([_walk(item, rest, space, shift, rename) for item in node]) if isinstance(node, list) else False  # a list: every item walked
    if not isinstance(node, dict):
        return False
    many = step.endswith("[]")
    key = step.removesuffix("[]")
    if key not in node:
        return False
    if space == "{ref}" and not rest:
        return _shift_refs(node[key], shift)
    if space == "{text}" and not rest:
        return _shift_texts(node, key, many, shift, rename)
    if many:
        if not isinstance(node[key], list):
            return False
        if not rest:
            return _shift_list(node[key], space, shift)
        return any([_walk(item, rest, space, shift, rename) for item in node[key]])  # a list, not a generator: every item is walked
    if rest:
        return _walk(node[key], rest, space, shift, rename)
    if _is_id(node[key]):
        node[key] = shift(space, node[key])
        return True
    return False


def _shift_texts(node: dict[str, Any], key: str, many: bool, shift: Shift, rename: Callable[[str], str]) -> bool:
    """Shift the rows the string (or, `many`, the list of strings) at `node[key]` names; whether any changed."""
    value = node[key]
    moved: Any
    if many and isinstance(value, list):
        moved = [shift_text(v, shift, rename) if isinstance(v, str) else v for v in value]
    elif not many and isinstance(value, str):
        moved = shift_text(value, shift, rename)
    else:
        return False
    node[key] = moved
    return bool(moved != value)


def _shift_list(items: Any, space: str, shift: Shift) -> bool:
    if not isinstance(items, list):
        return False
    changed = False
    for i, item in enumerate(items):
        if _is_id(item):
            items[i] = shift(space, item)
            changed = True
    return changed


def _shift_refs(items: Any, shift: Shift) -> bool:
    changed = False
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("type") in _REF_SPACES and _is_id(item.get("id")):
            item["id"] = shift(_REF_SPACES[item["type"]], item["id"])
            changed = True
    return changed
