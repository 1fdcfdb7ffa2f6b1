"""What a memory is, the limits and weights retrieval and writing use, and the checks on what callers give."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlite_utils import Database

from noemad.errors import InvalidInput, InvalidLink
from noemad.wire import wire

# Ids are bound as one JSON array: the statement text never changes, so it is
# prepared once per connection (see noemad.timeline).
IDS_SQL = "(SELECT value FROM json_each(?))"


MemoryKind = Literal["episodic", "semantic", "procedural"]
MemoryStatus = Literal["active", "retracted"]
KINDS: tuple[str, ...] = ("episodic", "semantic", "procedural")
STATUSES: tuple[str, ...] = ("active", "retracted")

MAX_TEXT = 100_000  # characters in one memory
MAX_REASON = 2_000  # characters in a retraction's reason
# An event names at most 64 refs (noemad.events); one is kept for the event a
# memory records, so a memory_created event always fits. A memory may be
# derived from any number of memories (every link is kept in memory_links);
# its memory_created event cites the first MAX_DERIVED_FROM of them by id.
MAX_DERIVED_FROM = 63
MAX_LIMIT = 64  # memories one retrieval returns: the memory_retrieved event cites each
MAX_LIST = 1_000  # rows one listing or search returns

# Scoring (see the module docstring).
W_REL = 0.5
W_REC = 0.25
W_IMP = 0.25
RECENCY_HALF_LIFE = 7 * 86_400.0  # seconds
CANDIDATES = 50  # bm25 candidates scored per retrieval
MAX_TERMS = 32  # query terms kept; bounds the cost of one MATCH
COMMON_MIN_DOCS = 200  # a term is pruned as common only when in more memories than this
RETRIEVAL_ACTOR = "process:retrieval"

# Importance (see `importance`).
KIND_BASE: dict[str, float] = {"episodic": 0.3, "semantic": 0.55, "procedural": 0.6}
SPECIFICITY_WEIGHT = 0.25
LENGTH_SATURATION = 30  # content words at which the length term reaches 1
DETAIL_SATURATION = 5  # numbers and proper names at which the detail term reaches 1


@wire
@dataclass(frozen=True)
class Memory:
    """A stored memory.

    `event_id` is the event the memory records (an episodic memory's
    stimulus), if any; the event that wrote the memory is the one whose
    subject it is. `derived_from` is in id order.
    """

    id: int
    mind: str
    kind: MemoryKind
    text: str
    importance: float
    created_at: str
    last_access: str | None
    access_count: int
    status: MemoryStatus
    event_id: int | None
    derived_from: tuple[int, ...] = ()
    tags: tuple[str, ...] = ()
    """Names an operator gave it (`noemactl remember --tag`); the tags of what a turn recalled are governance evidence."""


@wire
@dataclass(frozen=True)
class ScoredMemory:
    """A retrieved memory with its score and the three components of it."""

    memory: Memory
    score: float
    relevance: float
    recency: float
    importance: float


def preview(text: str, width: int = 80) -> str:
    """The first line of `text`, cut to `width` characters: what a timeline node shows."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


MAX_TAGS = 20
_TAG = re.compile(r"[\w][\w.:\-]{0,63}")


def checked_tags(values: Iterable[str]) -> tuple[str, ...]:
    """Tags as given, each once, in order; `InvalidInput` for one that is not a short name."""
    names = tuple(dict.fromkeys(values))
    for name in names:
        if not isinstance(name, str) or not _TAG.fullmatch(name):
            raise InvalidInput(f"a memory tag is a name of letters, digits, '.', ':' or '-' (at most 64), such as legal; not {name!r:.60}")
    if len(names) > MAX_TAGS:
        raise InvalidInput(f"a memory has at most {MAX_TAGS} tags, not {len(names)}")
    return names


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InvalidInput(f"a memory's kind is one of {', '.join(KINDS)}, not {kind!r}")


def check_limit(limit: int, top: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= top:
        raise InvalidInput(f"limit must be a whole number between 1 and {top}, not {limit!r}")


def check_importance(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"importance must be a number between 0 and 1, not {value!r}")
    return float(value)


def as_id(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} takes integer ids, not {value!r}")
    return value


def as_ids(values: Iterable[Any], what: str) -> tuple[int, ...]:
    """Distinct integer ids in ascending order, or `InvalidInput` names the first that is not one."""
    values = list(values)
    if not set(map(type, values)) <= {int}:  # checked one by one only to say which
        for value in values:
            as_id(value, what)
    return tuple(sorted(set(values)))


def not_linked(db: Database, mind: str, ids: Sequence[int]) -> InvalidLink:
    """Why some of `ids` (ascending) could not be linked: the first that is missing or another mind's."""
    owners = dict(db.execute(f"SELECT id, mind FROM memories WHERE id IN {IDS_SQL}", [json.dumps(list(ids))]).fetchall())
    for memory_id in ids:
        owner = owners.get(memory_id)
        if owner is None:
            return InvalidLink(f"memory {memory_id} does not exist; a memory is derived only from stored memories")
        if owner != mind:
            return InvalidLink(
                f"memory {memory_id} belongs to mind {owner!r}, not {mind!r}; a memory is derived only from its own mind's memories"
            )
    return InvalidLink(f"some of the {len(ids)} memories named could not be linked")


def event_minds(db: Database, ids: Iterable[Any]) -> dict[int, str]:
    """The mind of each event of `ids` that exists (values that are no id are left out): for `check_event_of` on several at once."""
    wanted = sorted({i for i in ids if isinstance(i, int) and not isinstance(i, bool)})
    if not wanted:
        return {}
    return dict(db.execute(f"SELECT id, mind FROM events WHERE id IN {IDS_SQL}", [json.dumps(wanted)]).fetchall())


def check_event_of(db: Database, mind: str, event_id: int, what: str, minds: Mapping[int, str] | None = None) -> None:
    """`InvalidLink` unless event `event_id` exists and is `mind`'s; `minds`: `event_minds` read for it already."""
    if minds is not None:
        owner = minds.get(event_id)
    else:
        row = db.execute("SELECT mind FROM events WHERE id = ?", [event_id]).fetchone()
        owner = None if row is None else row[0]
    if owner is None:
        raise InvalidLink(f"{what}: event {event_id} does not exist; link only to what is stored")
    if owner != mind:
        raise InvalidLink(f"{what}: event {event_id} belongs to mind {owner!r}, not {mind!r}; link only within a mind")
