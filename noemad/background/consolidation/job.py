"""The consolidation job (`run`): find the clusters off the loop, then word them one at a time and write them a few at a time.

Loading (`select`), tokenising (`tokenise`) and clustering (`clustering`)
run in a worker thread on a reader, while another reads, from the moment
the episodes' stimuli are read (before their texts), who each episode is
from and on which day, which clustering waits for once it has counted
the pairs. Then clusters are taken largest first:
planned in a worker thread (`proposition.plan`, no reads), worded on the
loop if a model call is left (`generalise.word`), and written together
with the clusters before it once they hold WRITE_EPISODES episodes, as one
writer job (`recording.write_clusters`; at most WRITE_AHEAD queued at once,
so other writes interleave). If such a job fails (a NoemaError), its
clusters are written one by one: one that fails is listed in `failed` and
the others go on. Then the
`consolidation` event, written when nothing was clustered too, and then
saying so.
"""

from __future__ import annotations

import asyncio
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
from numpy.typing import NDArray

from noemad.background.consolidation.clustering import Authors, Cluster, Pairs, cluster_table
from noemad.background.consolidation.generalise import REFUSALS, Wording, word
from noemad.background.consolidation.proposition import SPEAKERS_NAMED, Episodes, Plan, plan
from noemad.background.consolidation.recording import ClusterWrite, Skipped, Written, record, write_clusters
from noemad.background.consolidation.select import UNKNOWN_SPEAKER, Window, load_speakers, load_window, load_written_by
from noemad.background.consolidation.tokenise import TableTerms, TermTable, term_table
from noemad.background.jobs import JobContext, start_event
from noemad.clock import iso, span_seconds
from noemad.errors import InvalidInput, NoemaError
from noemad.wire import dump

DEFAULT_WINDOW = "30d"
DEFAULT_MIN_EPISODES = 3
# Clusters are written a few at a time, together (`write_clusters`), in writer jobs of at least WRITE_EPISODES
# episodes (or the last clusters): enough that their rows are stored in order, few enough that the writer is held
# about 0.3 s at most (2 cores); at most WRITE_AHEAD jobs are queued at once.
WRITE_EPISODES = 32_768
WRITE_AHEAD = 2


@dataclass
class _Found:
    """What the off-loop stages found: the episodes considered, their terms, the clusters and their episodes' speakers."""

    window: Window
    terms: TermTable
    clusters: list[Cluster]
    speakers: dict[int, str]  # stimulus event id -> speaker
    written_by: dict[int, int]  # episode id -> its memory_created, for episodes with no stimulus
    cause: int | None  # the job's start event
    pairs: Pairs  # what became of the pairs of terms, for the summary
    _columns: tuple[NDArray[Any], ...] | None = None

    def terms_of(self, c: Cluster) -> TableTerms:
        return self.terms.of(c.members)

    def columns(self) -> tuple[NDArray[Any], ...]:
        """The window's ids, texts, created and stimuli as arrays, made once: a cluster's are taken by one index each."""
        if self._columns is None:
            w = self.window
            self._columns = (np.asarray(w.ids, dtype=np.int64), *(np.array(c, dtype=object) for c in (w.texts, w.created, w.stimuli)))
        return self._columns


@dataclass
class _Settled:
    """The job's outputs for the clusters written so far, in their order: each batch's are made as it settles.

    So the first batch's (the first `dump` builds its adapter) are made while
    the next batch is written, not after the last.
    """

    clusters: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    clustered: int = 0  # episodes in the clusters written
    count: int = 0  # clusters settled

    def add(self, p: Plan, w: Wording, result: Written | Skipped | NoemaError) -> None:
        """One cluster's outcome."""
        self.count += 1
        if isinstance(result, Written):
            self.clustered += len(p.episodes)
            self.clusters.append(
                {
                    "belief": result.belief,
                    "memory": result.memory,
                    "episodes": len(p.episodes),
                    "proposition": w.text,
                    **dump(w),
                    "plain": p.plain,
                    "terms": p.shown_terms,
                    "pair": list(p.cluster.pair),
                    "association": {
                        "cosine": round(p.cluster.cosine, 4), "lift": round(p.cluster.lift, 4),
                        "share": round(p.cluster.share, 4), "by": p.cluster.by,
                    },
                    "subject": p.subject,
                    "confidence": result.confidence,
                    "speakers": dict(p.speakers[:SPEAKERS_NAMED * 3]),
                    "first": p.first,
                    "last": p.last,
                    "belief_event": result.belief_event,
                    "memory_event": result.memory_event,
                }
            )
        elif isinstance(result, Skipped):
            self.skipped.append({"cluster": p.index, "episodes": len(p.episodes), "proposition": w.text, "belief": result.belief, "why": result.reason})
        else:
            self.failed.append({"cluster": p.index, "episodes": len(p.episodes), "error": result.detail})


def _load(ctx: JobContext, start: float, end: float, stimuli: Future[list[int | None]]) -> Window:
    """The episodes to consider, on a reader in a worker thread; their stimuli handed to `stimuli` as soon as read."""
    ctx.progress(0.02, "loading episodes")
    return load_window(ctx.store.reader(), ctx.mind, start, end, stimuli.set_result)


def _speakers(ctx: JobContext, stimuli: Future[list[int | None]], window: Future[Window]) -> tuple[dict[int, str], Authors]:
    """Who each of the window's stimuli is from, and each episode's speaker and UTC day as numbers.

    On another worker thread's reader, from the moment the episodes'
    stimuli are read (`stimuli`; their texts are read after them): while
    the texts are read, tokenised and their pairs counted (SQLite reads
    without the interpreter lock). An episode with no stimulus (or one
    not found) is the unknown speaker's.
    """
    try:
        speakers = load_speakers(ctx.store.reader(), {s for s in stimuli.result() if s is not None})
    finally:
        ctx.store.drop_reader()  # this thread is the run's own: it ends with it
    episodes = window.result()
    names = [UNKNOWN_SPEAKER if s is None else speakers.get(s, UNKNOWN_SPEAKER) for s in episodes.stimuli]
    return speakers, Authors.of(names, [c[:10] for c in episodes.created])


def _find(ctx: JobContext, window: Window, min_episodes: int, speakers: Future[tuple[dict[int, str], Authors]]) -> _Found:
    """Tokenise and cluster, then read what the clustered episodes need: on a reader in a worker thread.

    Who said what (`speakers`, read on another thread) is waited for only
    once the pairs are counted.
    """
    db = ctx.store.reader()
    ctx.progress(0.1, f"clustering {len(window.ids):,} episodes")
    terms = term_table(window.texts)
    pairs = Pairs()
    clusters = cluster_table(terms, min_episodes, lambda: speakers.result()[1], pairs)
    stimuli = window.stimuli
    written_by = load_written_by(db, [window.ids[i] for c in clusters for i in c.members if stimuli[i] is None])
    return _Found(window, terms, clusters, speakers.result()[0], written_by, start_event(db, ctx.mind, ctx.job.id), pairs)


def _plan(found: _Found, index: int) -> Plan:
    """Plan one cluster, in a worker thread (while the writer writes the clusters before it): its episodes as columns."""
    c = found.clusters[index]
    members = np.asarray(c.members, dtype=np.int64)
    ids, texts, created, stimuli = (column[members].tolist() for column in found.columns())
    speakers = list(map(found.speakers.get, stimuli, repeat(UNKNOWN_SPEAKER)))  # None (no stimulus) is no key: unknown
    brought_by: list[int | None] = stimuli
    if None in stimuli:
        brought_by = [found.written_by.get(i) if s is None else s for i, s in zip(ids, stimuli)]
    episodes = Episodes(ids, texts, created, speakers, brought_by)  # type: ignore[arg-type]
    return plan(index, c, episodes, found.terms_of(c))


def summary(considered: int, clustered: int, clusters: int, min_episodes: int, window: str, pairs: Pairs | None = None) -> str:
    """The run in one sentence; with no generalisation, why (from `pairs`, what became of the pairs of terms)."""
    if considered == 0:
        return f"nothing to consolidate: no episodes of the last {window} are left unconsolidated"
    if clusters == 0:
        if pairs is None or pairs.recurring == 0:
            return (
                f"no generalisation: no two terms recur together in {min_episodes} or more of the {considered:,} episodes;"
                " all are left for later"
            )
        why = [
            f"{count:,} {what}"
            for count, what in (
                (pairs.apart, "mostly apart"),
                (pairs.by_chance, "no more together than chance"),
                (pairs.one_occasion, "from one speaker on one day"),
            )
            if count
        ]
        plural = "s of terms recur" if pairs.recurring != 1 else " of terms recurs"
        return (
            f"no generalisation: {pairs.recurring:,} pair{plural} together in {min_episodes} or more of the {considered:,} episodes,"
            f" but none is a habit ({', '.join(why)}); all are left for later"
        )
    return (
        f"{clusters:,} generalisation{'s' if clusters != 1 else ''} from {clustered:,} of {considered:,} episodes;"
        f" {considered - clustered:,} left for later"
    )


async def run(ctx: JobContext) -> dict[str, Any]:
    """One consolidation of `ctx.mind` (see the module docstring). Returns the job's outputs.

    Outputs: `summary`, `window` (from, to, span), `min_episodes`, `episodes`
    (considered), `clustered`, `left`, `clusters` (per cluster: belief,
    memory, episodes, proposition, worded_by and why, terms, pair, subject,
    confidence, speakers, first and last), `beliefs`, `memories`,
    `discarded` (unsupported model answers and why), `skipped`, `failed`,
    `event` (the consolidation event).
    """
    settings = ctx.settings
    window = str(getattr(settings, "window", DEFAULT_WINDOW))
    min_episodes = int(getattr(settings, "min_episodes", DEFAULT_MIN_EPISODES))
    span = span_seconds(window)
    if span is None:
        raise InvalidInput(f"the consolidation window must be a span such as 30d, not {window!r}")
    now = ctx.now()
    start = now - span
    # Off the loop: tokenising and clustering a busy month takes a good part of a second; the episodes' speakers
    # are read meanwhile on another thread, from the moment their stimuli are read (before their texts: once the
    # whole window was read, that read outlasted tokenising), and clustering waits for them once the pairs are counted.
    stimuli: Future[list[int | None]] = Future()
    read: Future[Window] = Future()
    reading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="consolidation-speakers")
    speakers = reading.submit(_speakers, ctx, stimuli, read)
    reading.shutdown(wait=False)  # the read goes on; its thread ends with it
    try:
        considered = await ctx.store.off_loop(lambda: _load(ctx, start, now, stimuli))
        read.set_result(considered)
        found = await ctx.store.off_loop(lambda: _find(ctx, considered, min_episodes, speakers))
    except BaseException as exc:
        for waited in (stimuli, read):  # the speakers' thread waits for them: it ends with this
            if not waited.done():
                waited.set_exception(exc)
        await asyncio.gather(asyncio.wrap_future(speakers), return_exceptions=True)  # a thread cannot be stopped: let it finish unheard
        raise
    total = len(found.clusters)

    wordings: list[Wording] = []
    settled = _Settled()
    pending: deque[tuple[list[tuple[Plan, Wording]], asyncio.Future[Any]]] = deque()
    batch: list[tuple[Plan, Wording]] = []  # planned, not yet submitted, and their episodes
    held = 0
    refused: Wording | None = None  # a refusal: the next call would be refused the same way, so none is asked

    def submit(clusters: list[tuple[Plan, Wording]]) -> asyncio.Future[Any]:
        return asyncio.wrap_future(ctx.store.writer.submit(_writer_job(ctx, clusters, found.cause)))

    async def settle_one() -> None:
        clusters, fut = pending.popleft()
        try:
            results: list[Written | Skipped | NoemaError] = list(await fut)
        except NoemaError as exc:
            if len(clusters) == 1:
                results = [exc]
            else:  # one of them cannot be written: write each alone, so the others are
                results = []
                for one in clusters:
                    try:
                        results.extend(await submit([one]))
                    except NoemaError as alone:
                        results.append(alone)
        for (p, w), result in zip(clusters, results):
            settled.add(p, w, result)
        ctx.progress(0.4 + 0.55 * settled.count / total, f"writing {settled.count}/{total}")

    try:
        for index in range(total):
            # Cluster by cluster: planning and wording them overlaps the writing of those before.
            p = await asyncio.to_thread(_plan, found, index)
            if refused is not None:
                w = Wording(p.plain, reason=refused.reason, detail=f"not asked: an earlier call was refused ({refused.detail})")
            elif ctx.calls_left > 0:
                ctx.progress(0.4 + 0.55 * settled.count / total, f"wording {index + 1}/{total}")
                w = await word(ctx, p, found.terms_of(p.cluster).union())
                if w.reason in REFUSALS:
                    refused = w
            else:
                w = Wording(p.plain, reason="no_calls", detail=f"the run's {getattr(ctx.settings, 'model_calls', 0)} model calls are used")
            wordings.append(w)
            batch.append((p, w))
            held += len(p.episodes)
            if held >= WRITE_EPISODES or index == total - 1:
                pending.append((batch, submit(batch)))
                batch, held = [], 0
                if len(pending) >= WRITE_AHEAD:
                    await settle_one()
        while pending:
            await settle_one()
    finally:
        # Wait for what is queued even when something failed, so nothing is written unreported.
        await asyncio.gather(*(fut for _, fut in pending), return_exceptions=True)

    clusters, clustered = settled.clusters, settled.clustered
    outputs: dict[str, Any] = {
        "summary": summary(len(found.window.ids), clustered, len(clusters), min_episodes, window, found.pairs),
        "window": {"from": iso(start), "to": iso(now), "span": window},
        "min_episodes": min_episodes,
        "episodes": len(found.window.ids),
        "clustered": clustered,
        "left": len(found.window.ids) - clustered,
        "clusters": clusters,
        "beliefs": [c["belief"] for c in clusters],
        "memories": [c["memory"] for c in clusters],
        "discarded": [w.discarded for w in wordings if w.discarded is not None],
        "skipped": settled.skipped,
        "failed": settled.failed,
    }
    ctx.progress(0.97, "recording")
    mind, job_id, cause = ctx.mind, ctx.job.id, found.cause
    event = await ctx.store.writer.run(lambda db: record(db, mind=mind, job_id=job_id, outputs=outputs, cause=cause, now=ctx.now()))
    outputs["event"] = event.id
    return outputs


def _writer_job(ctx: JobContext, clusters: list[tuple[Plan, Wording]], cause: int | None) -> Any:
    mind, job_id, now = ctx.mind, ctx.job.id, ctx.now()
    writes = [
        ClusterWrite(w.text, p.subject, p.episodes, w.call_id if w.worded_by == "model" else None) for p, w in clusters
    ]
    return lambda db: write_clusters(db, mind=mind, job_id=job_id, clusters=writes, cause=cause, now=now)
