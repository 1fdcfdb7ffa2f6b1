"""The writes of a consolidation: each cluster (belief, semantic memory, consolidations row), then the event.

`write_clusters` (a writer job for one or more clusters, atomic), for each:

1. the inference belief, through `beliefs.add_evidence_bulk`: one item per
   episode, stance support, weight EPISODE_WEIGHT, source the episode's
   speaker, credibility the mind's trust in the speaker, brought by the
   episode's stimulus event. One `belief_created` event (or
   `belief_updated`), actor `process:consolidation`, caused by the job's
   start event, citing the model call that worded it (if any) and the
   episodes, the first by id up to MAX_REFS in all. A proposition whose
   belief an operator rejected is not consolidated again (`Skipped`).
2. the semantic memory (`memory.write_memories`), derived from every episode;
   its memory_created event is caused by the belief's event (which is how
   `reject` finds the belief).
3. the memory's `consolidations` row: the job that made it. Its links to
   the episodes are what mark them consolidated (the view `consolidated`
   lists them, an episode a row).

`record` writes the run's `consolidation` event: caused by the job's start
event, text the summary, data the outputs (`clusters` cut to the first
MAX_EVENT_CLUSTERS, with `clusters_total`), citing each cluster's belief
and memory, at most MAX_REFS refs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.background.consolidation.proposition import Episodes
from noemad.clock import iso
from noemad.cognition.beliefs.bulk import EvidenceColumns, Evidenced, add_evidence_bulk
from noemad.cognition.beliefs.queries import find_by_proposition
from noemad.cognition.confidence import Stance
from noemad.cognition.memory.writing import NewMemory, write_memories
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


@dataclass(frozen=True)
class ClusterWrite:
    """A cluster to write: its proposition (worded or plain), subject and episodes, and the model call that worded it."""

    proposition: str
    subject: str
    episodes: Episodes  # in id order: their ids, speakers and brought_by columns are written
    model_call: int | None = None


def write_clusters(
    db: Database, *, mind: str, job_id: int, clusters: Sequence[ClusterWrite], cause: int | None, now: float, actor: str = ACTOR
) -> list[Written | Skipped]:
    """Write clusters (a writer job; atomic): each one's belief, semantic memory and consolidations row (the module docstring).

    Together: the items of evidence of all in one statement, the links of
    all in another (`beliefs.add_evidence_bulk`, `memory.write_memories`),
    which stores tens of thousands of episodes' rows in about half the time
    a cluster at a time takes. The beliefs' events come first, in the
    clusters' order, then the memories'.
    """
    results: list[Written | Skipped | None] = [None] * len(clusters)
    todo: list[int] = []
    for k, c in enumerate(clusters):
        same = find_by_proposition(db, mind, c.proposition)
        if same is not None and same.status == "rejected":
            results[k] = Skipped(same.id, f"belief {same.id} says the same and an operator rejected it")
        else:
            todo.append(k)
    if todo:
        added = add_evidence_bulk(
            db, mind=mind, kind="inference", batches=[_evidenced(clusters[k]) for k in todo], now=now, actor=actor, cause=cause
        )
        memories = write_memories(
            db, mind=mind, now=now, actor=actor, cycle_id=None,
            memories=[NewMemory("semantic", clusters[k].proposition, cause=a.event.id, derived_from=clusters[k].episodes.ids) for k, a in zip(todo, added)],
        )
        db.conn.executemany(
            "INSERT INTO consolidations (memory_id, mind, job_id, at) VALUES (?, ?, ?, ?)",
            [(memory.id, mind, job_id, iso(now)) for memory, _ in memories],
        )
        for k, a, (memory, memory_event) in zip(todo, added, memories):
            results[k] = Written(a.belief_id, memory.id, a.confidence, a.event.id, memory_event.id)
    return [r for r in results if r is not None]


def _evidenced(c: ClusterWrite) -> Evidenced:
    """A cluster's items of evidence: one per episode, its speaker's, brought by its stimulus; citing the model call and episodes."""
    ids, speakers, brought_by = c.episodes.ids, c.episodes.speakers, c.episodes.brought_by
    refs = [Ref("model_call", c.model_call)] if c.model_call is not None else []
    refs.extend(Ref("memory", memory_id) for memory_id in ids[: MAX_REFS - len(refs)])
    # Given as columns: there are tens of thousands, and no row need be built for each.
    n = len(ids)
    support: tuple[Stance] = ("support",)  # declared, so that its n-fold copy keeps the stance's literal type
    items = EvidenceColumns(support * n, (EPISODE_WEIGHT,) * n, speakers, brought_by, (None,) * n)
    return Evidenced(c.proposition, c.subject, items, refs)


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


def episodes_in(db: Database, memory_id: int) -> int:
    """How many episodes consolidation folded into `memory_id` (0: consolidation did not write it)."""
    (count,) = db.execute("SELECT count(*) FROM consolidated WHERE into_memory = ?", [memory_id]).fetchone()
    return int(count)
