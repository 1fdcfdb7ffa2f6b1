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
        ("archives", "events"), ("archives", "cuts"), ("archived_tally", "events"), ("gate_rules", "position"), ("memories", "access_count"),
        ("memory_terms", "docs"), ("notifications", "count"), ("token_ratios", "samples"), ("window_anchors", "chunk_chars"),
        *(("model_calls", f"{c}_tokens") for c in ("input", "output", "cache_read", "cache_write", "cache_write_1h")),
    }
)

# JSON held in text columns: (table, column) -> {a kind of row (fnmatch pattern, "*" for every row): paths}.
# A path is keys joined by dots; `[]` after a key walks the list under it; `{ref}` at the end names a list of
# `{"type", "id"}` objects. Each path names an id of the space beside it.
_PRED = (("belief", "beliefs"), ("event", "events"), ("prediction", "predictions"))
EVENT_DATA: dict[str, tuple[tuple[str, str], ...]] = {
    "attention": (("candidates[].detail.belief", "beliefs"), ("candidates[].refs", "{ref}")),
    "belief_created": (("evidence_id", "evidence"), ("evidence.first_id", "evidence"), ("evidence.last_id", "evidence"), ("prediction", "predictions")),
    "belief_updated": (("evidence_id", "evidence"), ("evidence.first_id", "evidence"), ("evidence.last_id", "evidence"), ("prediction", "predictions")),
    "consolidation": (
        ("beliefs[]", "beliefs"), ("memories[]", "memories"), ("job", "jobs"), ("model_call", "model_calls"),
        ("clusters[].belief", "beliefs"), ("clusters[].belief_event", "events"), ("clusters[].memory", "memories"),
        ("clusters[].memory_event", "events"), ("clusters[].model_call", "model_calls"),
    ),
    "cycle_completed": (("beliefs[]", "beliefs"),),
    "cycle_started": (("held_back[].stimuli[]", "events"),),
    "events_archived": (("archive", "archives"), ("first_id", "events"), ("last_id", "events")),
    "generalisation_rejected": (("memory", "memories"), ("belief", "beliefs")),
    "goal_*": (("goal", "goals"),),
    "job_finished": (("job", "jobs"),),
    "memory_created": (("derived_from", "memories"), ("derived_from[]", "memories")),
    "memory_retrieved": (("scores[].id", "memories"),),
    "metacognition": (("belief", "beliefs"),),
    "mode_changed": (("job", "jobs"),),
    "narrative_updated": (("previous", "events"),),
    "narrative_rephrased": (("narrative", "events"), ("model_call", "model_calls")),
    "notification*": (("notification", "notifications"), ("values.belief", "beliefs"), ("values.prediction", "predictions")),
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
    ("notifications", "values"): ("", {"*": (("belief", "beliefs"), ("prediction", "predictions"))}),
}

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


def shift_json(text: str, paths: tuple[tuple[str, str], ...], shift: Shift, compact: bool) -> str:
    """`text` (JSON) with the ids at `paths` shifted; the same text when it holds none.

    Written back as its writer wrote it (sorted keys; `compact`: no spaces), so
    the bytes of a value whose ids move by nothing do not change.
    """
    if not paths or not text or not any(_may_hold(text, path) for path, _ in paths):
        return text  # none of the paths' keys is there: no need to read it (most rows)
    try:
        value = json.loads(text)
    except ValueError:
        return text
    changed = False
    for path, space in paths:
        changed |= _walk(value, [p for p in path.split(".") if p] if path != "[]" else ["[]"], space, shift)
    if not changed:
        return text
    return json.dumps(value, sort_keys=True, separators=(",", ":") if compact else None)


def _may_hold(text: str, path: str) -> bool:
    """Whether the JSON `text` may hold `path`: its first key is in it (a path from the top, "[]", always may)."""
    key = path.split(".", 1)[0].removesuffix("[]")
    return not key or f'"{key}"' in text


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0  # 0 and null mean "none"


def _walk(node: Any, steps: list[str], space: str, shift: Shift) -> bool:
    """Shift the ids `steps` lead to under `node`, in place; whether any changed."""
    if not steps:
        return False
    step, rest = steps[0], steps[1:]
    if step == "[]":  # the node itself is a list of ids (or of things holding them)
        if not rest:
            return _shift_list(node, space, shift)
        return any([_walk(item, rest, space, shift) for item in node]) if isinstance(node, list) else False  # a list: every item walked
    if not isinstance(node, dict):
        return False
    many = step.endswith("[]")
    key = step.removesuffix("[]")
    if key not in node:
        return False
    if space == "{ref}" and not rest:
        return _shift_refs(node[key], shift)
    if many:
        if not isinstance(node[key], list):
            return False
        if not rest:
            return _shift_list(node[key], space, shift)
        return any([_walk(item, rest, space, shift) for item in node[key]])  # a list, not a generator: every item is walked
    if rest:
        return _walk(node[key], rest, space, shift)
    if _is_id(node[key]):
        node[key] = shift(space, node[key])
        return True
    return False


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
