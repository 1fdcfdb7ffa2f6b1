"""The usage ledger: one `model_calls` row per call, made, failed or refused.

Rows are append-only records, like events; events cite them as refs (a
model call is an artefact on the timeline node that used it). The ledger
sits with the records, below the models that write it, so the causal walk
reads the calls it cites here rather than reaching up into `models/`.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from sqlite_utils import Database

from noemad.clock import iso
from noemad.wire import OMIT_NONE, wire

Outcome = Literal["ok", "error", "refused", "cancelled"]

# Who the calls made in this context are for: set by whoever runs work an
# operator asked for (the job runner, for a job run now; a mind's actor, for a
# turn an operator's stimulus woke), read when a call is recorded. A context variable, because the calls are made deep inside the
# work (reflection's wording, consolidation's summaries) by code that need not know.
ON_BEHALF_OF: ContextVar[str | None] = ContextVar("noemad_model_calls_on_behalf_of", default=None)


class Tokens(Protocol):
    """The tokens of one call, as `noemad.models.types.Usage` holds them (the ledger is below the models)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def cache_read_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...
    @property
    def cache_write_1h_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...


@dataclass(frozen=True)
class CallRecord:
    """What the ledger keeps of one call."""

    mind: str
    role: str
    model: str
    provider: str
    outcome: Outcome
    usage: Tokens
    cost_usd: float
    at: float
    latency_ms: float | None = None
    error_category: str | None = None
    detail: str | None = None
    stop_reason: str | None = None
    retry_after: float | None = None
    actor: str | None = None
    """The operator whose request caused the call (`operator:alice`); None for the mind's own."""


def record(db: Database, rec: CallRecord) -> int:
    """Append one row (a writer job); returns its id."""
    cur = db.execute(
        "INSERT INTO model_calls (mind, role, model, provider, input_tokens, cache_read_tokens, cache_write_tokens,"
        " cache_write_1h_tokens, output_tokens, latency_ms, outcome, error_category, cost_usd, stop_reason,"
        " retry_after, detail, at, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            rec.mind,
            rec.role,
            rec.model,
            rec.provider,
            rec.usage.input_tokens,
            rec.usage.cache_read_tokens,
            rec.usage.cache_write_tokens,
            rec.usage.cache_write_1h_tokens,
            rec.usage.output_tokens,
            rec.latency_ms,
            rec.outcome,
            rec.error_category,
            rec.cost_usd,
            rec.stop_reason,
            rec.retry_after,
            rec.detail,
            iso(rec.at),
            rec.actor,
        ],
    )
    return int(cur.lastrowid or 0)


def calls(db: Database, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The `model_calls` rows of `ids`, by id; ids not stored are left out."""
    # The ids are bound as one JSON array: the statement text never changes, so
    # sqlite3 prepares it once per connection (see the timeline's walk).
    # Joined (each id seeked), not `id IN (...)`, which built a temporary index of the ids first. An id
    # given twice gives its row twice, and the dict keeps it once.
    cur = db.execute("SELECT m.* FROM json_each(?) j CROSS JOIN model_calls m ON m.id = j.value", ["[" + ",".join(map(str, ids)) + "]"])
    cols = [c[0] for c in cur.description]
    return {row[0]: dict(zip(cols, row)) for row in cur}


def cited_rows(db: Database, event_ids: Sequence[int]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The whole `model_calls` rows that the events `event_ids` cite, with the column names: what an archive file copies."""
    cur = db.execute(
        "WITH s(id) AS (SELECT value FROM json_each(?)) SELECT * FROM model_calls"
        " WHERE id IN (SELECT ref_id FROM event_refs WHERE ref_type = 'model_call' AND event_id IN s)",
        [json.dumps(list(event_ids))],
    )
    return [c[0] for c in cur.description], cur.fetchall()


def spent_since(db: Database, mind: str, role: str, since: float) -> tuple[int, float]:
    """Tokens and dollars a mind spent on a role since `since` (epoch seconds)."""
    tokens, dollars = db.execute(
        "SELECT coalesce(sum(input_tokens + cache_read_tokens + cache_write_tokens + output_tokens), 0),"
        " coalesce(sum(cost_usd), 0) FROM model_calls WHERE mind = ? AND role = ? AND at >= ?",
        [mind, role, iso(since)],
    ).fetchone()
    return int(tokens), float(dollars)


GROUPS = {"role": "role", "model": "model", "day": "substr(at, 1, 10)", "mind": "mind"}
UsageGroup = Literal["role", "model", "day", "mind"]


@wire
@dataclass(frozen=True)
class UsageRow:
    """Spend of one group: calls by outcome, tokens four ways, dollars and the cache hit rate; then the group's key."""

    calls: int
    ok: int
    failed: int
    refused: int
    cancelled: int
    """Calls cancelled before they answered (e.g. a judge call a turn or its timeout cancelled)."""
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float
    cache_hit_rate: float | None
    """Cache reads over all input tokens; null with no input."""
    # The group's key, under the name of what the rows are grouped by: the one set (a column that is never null).
    role: Annotated[str | None, OMIT_NONE] = None
    """The role the calls were made for (grouped by role; absent otherwise)."""
    model: Annotated[str | None, OMIT_NONE] = None
    """The model called (grouped by model; absent otherwise)."""
    day: Annotated[str | None, OMIT_NONE] = None
    """The UTC day, YYYY-MM-DD (grouped by day; absent otherwise)."""
    mind: Annotated[str | None, OMIT_NONE] = None
    """The mind the calls were made for (grouped by mind; absent otherwise)."""


def usage(db: Database, mind: str | None, by: UsageGroup, since: float | None) -> list[UsageRow]:
    """Spend grouped by role, model, day or mind, with call counts by outcome and the cache hit rate.

    Each role is its own row: the reply judge's calls are the `judge` role's,
    never counted with the `respond` calls of the mind's turns. Cancelled
    calls (a judge call a turn or its timeout cancelled, a reply the daemon
    stopped) are counted apart from failures.
    """
    key = GROUPS[by]
    where, params = [], []
    if mind is not None:
        where.append("mind = ?")
        params.append(mind)
    if since is not None:
        where.append("at >= ?")
        params.append(iso(since))
    sql = (
        f"SELECT {key} AS key, count(*), sum(outcome = 'ok'), sum(outcome = 'error'), sum(outcome = 'refused'),"
        " sum(outcome = 'cancelled'), sum(input_tokens), sum(cache_read_tokens), sum(cache_write_tokens), sum(output_tokens), sum(cost_usd)"
        f" FROM model_calls {'WHERE ' + ' AND '.join(where) if where else ''} GROUP BY key ORDER BY key"
    )
    rows = []
    for key_value, calls, ok, failed, refused, cancelled, inp, read, write, out, dollars in db.execute(sql, params):
        total_input = inp + read + write
        rows.append(
            UsageRow(
                calls=calls,
                ok=ok,
                failed=failed,
                refused=refused,
                cancelled=cancelled,
                input_tokens=inp,
                cache_read_tokens=read,
                cache_write_tokens=write,
                output_tokens=out,
                cost_usd=round(dollars, 6),
                cache_hit_rate=round(read / total_input, 4) if total_input else None,
                **{by: key_value},
            )
        )
    return rows
