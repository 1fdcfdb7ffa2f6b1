"""The writes of a consolidation: each cluster (belief, semantic memory, consolidations row), then the event.

`write_cluster` (one writer job per cluster, atomic):

1. the inference belief, through `beliefs.add_evidence_many`: one item per
   episode, stance support, weight EPISODE_WEIGHT, source the episode's
   speaker, credibility the mind's trust in the speaker, brought by the
   episode's stimulus event. One `belief_created` event (or
   `belief_updated`), actor `process:consolidation`, caused by the job's
   start event, citing the model call that worded it (if any) and the
   episodes, the first by id up to MAX_REFS in all. A proposition whose
   belief an operator rejected is not consolidated again (`Skipped`).
2. the semantic memory (`memory.write_memory`), derived from every episode;
   its memory_created event is caused by the belief's event (which is how
   `reject` finds the belief).
3. the memory's `consolidations` row: the job that made it. Its links to
   the episodes are what mark them consolidated (the view `consolidated`
   lists them, an episode a row).

`record` writes the run's `consolidation` event: caused by the job's start
event, text the summary, data the outputs (`clusters` cut to the first
MAX_EVENT_CLUSTERS, with `clusters_total`), citing each cluster's belief
and memory, at most MAX_REFS refs. (The beliefs row lookup is raw SQL on
`beliefs`, the owning module's table.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.background.consolidation.proposition import Episodes
from noemad.clock import iso
from noemad.cognition.beliefs import EvidenceColumns, add_evidence_many, find_by_proposition
from noemad.cognition.memory import write_memory
from noemad.events import Event, EventDraft, Ref, append

ACTOR = "process:consolidation"
KIND = "consolidation"  # the summary event
EPISODE_WEIGHT = 0.3  # weight of one episode as evidence
MAX_REFS = 64  # what one event may cite
MAX_EVENT_CLUSTERS = 64  # clusters listed in the consolidation event's data


@dataclass(frozen=True)
class Written:
    """What writing one cluster made."""

    belief: int
    memory: int
    confidence: float
    belief_event: int
    memory_event: int


@dataclass(frozen=True)
class Skipped:
    """A cluster not written: its proposition's belief was rejected by an operator."""

    belief: int
    reason: str


def write_cluster(
    db: Database,
    *,
    mind: str,
    job_id: int,
    proposition: str,
    subject: str,
    episodes: Episodes,
    model_call: int | None,
    cause: int | None,
    now: float,
    actor: str = ACTOR,
) -> Written | Skipped:
    """Write one cluster (a writer job; atomic): the belief, the semantic memory, its consolidations row.

    `episodes` are the cluster's, in id order (their ids, speakers and
    brought_by columns are written). See the module docstring for what each
    write holds.
    """
    same = find_by_proposition(db, mind, proposition)
    if same is not None and same.status == "rejected":
        return Skipped(same.id, f"belief {same.id} says the same and an operator rejected it")
    ids, speakers, brought_by = episodes.ids, episodes.speakers, episodes.brought_by
    refs = [Ref("model_call", model_call)] if model_call is not None else []
    refs.extend(Ref("memory", memory_id) for memory_id in ids[: MAX_REFS - len(refs)])
    # One item per episode, given as columns: there are tens of thousands, and no row need be built for each.
    n = len(ids)
    items = EvidenceColumns(("support",) * n, (EPISODE_WEIGHT,) * n, speakers, brought_by, (None,) * n)
    added = add_evidence_many(
        db,
        mind=mind,
        proposition=proposition,
        subject=subject,
        kind="inference",
        items=items,
        now=now,
        actor=actor,
        cause=cause,
        cites=refs,
    )
    memory, memory_event = write_memory(
        db, mind=mind, kind="semantic", text=proposition, now=now, actor=actor, cause=added.event.id, cycle_id=None, derived_from=ids
    )
    db.execute("INSERT INTO consolidations (memory_id, mind, job_id, at) VALUES (?, ?, ?, ?)", [memory.id, mind, job_id, iso(now)])
    return Written(added.belief_id, memory.id, added.confidence, added.event.id, memory_event.id)


def record(db: Database, *, mind: str, job_id: int, outputs: dict[str, Any], cause: int | None, now: float) -> Event:
    """Write the run's `consolidation` event (a writer job)."""
    refs: list[Ref] = []
    for c in outputs["clusters"]:
        refs.extend((Ref("belief", c["belief"]), Ref("memory", c["memory"])))
    data = {**outputs, "job": job_id, "clusters": outputs["clusters"][:MAX_EVENT_CLUSTERS], "clusters_total": len(outputs["clusters"])}
    return append(
        db,
        EventDraft(mind=mind, kind=KIND, actor=ACTOR, text=outputs["summary"], causation_id=cause, refs=refs[:MAX_REFS], data=data),
        now,
    )
