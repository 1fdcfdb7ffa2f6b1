"""Clustering: frequent associated pairs of terms, taken greedily (pure: terms in, clusters out).

A generalisation rests on two terms that recur *together*: "select" and
"go" in "I'll select Go for the parser", "Selected Go again for the metrics
service", ... One shared term is only a topic; two that keep appearing
together are a habit. `cluster`:

1. *Document frequency.* df(t) = episodes whose terms hold t. Terms with
   df < min_episodes cannot be shared by a cluster and are dropped.
2. *Bounded terms.* Each episode keeps at most MAX_TERMS of its remaining
   terms: those with the highest df, ties by the term (at most 66 pairs).
3. *Pairs.* support(a, b) = episodes that kept both. A pair is a
   *candidate* when support >= min_episodes; cosine = support /
   sqrt(df(a) x df(b)) >= MIN_COSINE (null-invariant: unrelated episodes
   added to the window do not change it); and lift = support x max(N,
   LIFT_FLOOR) / (df(a) x df(b)) >= MIN_LIFT (the terms occur together more
   often than by chance; "please" and "thanks", each in 40% of the
   episodes, have a cosine near 0.4 but a lift near 1). A window of fewer
   than LIFT_FLOOR episodes is measured as if it held LIFT_FLOOR. The price:
   a pattern in more than two thirds of a large window is not consolidated.
4. *Greedy.* Repeatedly take the candidate with the most episodes not yet
   in a cluster (ties: the higher cosine, then the pair in term order); if
   they number at least min_episodes they become a cluster and leave every
   other candidate; else the candidate is dropped. A candidate whose count
   fell since it was queued is queued again with its new count (counts only
   fall, so the result is that of the eager greedy). Episodes in no cluster
   are left for a later run.

A fixed expression used in varied episodes ("last night") recurs as a habit
does, and becomes a cluster if it passes the thresholds.

Ties are broken by terms, never by ids or row order, so the same episodes
give the same clusters in whatever order they were stored. Cost, for N
episodes: df and pair counting O(N x MAX_TERMS^2), in C; postings
O(N x MAX_TERMS); the greedy O(P log P + the smaller posting set of each
candidate taken or requeued), and each episode leaves the postings once.
So about linear in N (bench/consolidation.py measures it).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import chain, combinations

from noemad.errors import InvalidInput

MAX_TERMS = 12  # terms an episode keeps for pair counting
MIN_COSINE = 0.4  # support / sqrt(df(a) df(b)) of a candidate pair
MIN_LIFT = 1.5  # support x max(N, LIFT_FLOOR) / (df(a) df(b)) of a candidate pair
LIFT_FLOOR = 200  # a smaller window is measured as if it held this many episodes


@dataclass(frozen=True)
class Cluster:
    """Episodes (by index in the input) that share a candidate pair of terms."""

    pair: tuple[str, str]
    members: tuple[int, ...]  # ascending indices
    cosine: float
    lift: float


def cluster(term_sets: Sequence[Collection[str]], min_episodes: int) -> list[Cluster]:
    """Clusters of the episodes whose terms are `term_sets`, in the order they were taken (see the module docstring).

    Terms are numbered in term order (so comparing numbers compares terms
    and every tie breaks as it would on the terms), and the pairs of each
    distinct set of kept terms are counted once, times the episodes that
    kept it: what the docstring describes, with less hashing.
    """
    if min_episodes < 2:
        raise InvalidInput(f"a cluster needs at least 2 episodes, not {min_episodes}")
    n = len(term_sets)
    if n < min_episodes:
        return []
    df_by_term: Counter[str] = Counter(chain.from_iterable(term_sets))
    vocabulary = sorted(t for t, c in df_by_term.items() if c >= min_episodes)
    number = {t: i for i, t in enumerate(vocabulary)}
    df = [df_by_term[t] for t in vocabulary]
    del df_by_term
    frequent = set(vocabulary)

    def keep(s: Collection[str]) -> tuple[int, ...]:
        k = sorted(map(number.__getitem__, frequent.intersection(s)))
        if len(k) > MAX_TERMS:  # the most frequent, ties by term; in term order
            k = sorted(sorted(k, key=lambda t: (-df[t], t))[:MAX_TERMS])
        return tuple(k)

    try:  # episodes said again (the same terms) are kept once
        keeps = {s: keep(s) for s in set(term_sets)}  # type: ignore[arg-type]
        kept = list(map(keeps.__getitem__, term_sets))
        del keeps
    except TypeError:  # unhashable sets of terms: one by one
        kept = list(map(keep, term_sets))
    shapes = Counter(kept)  # episodes that kept the same terms share their pairs
    pairs: Counter[tuple[int, int]] = Counter(chain.from_iterable(combinations(k, 2) for k, times in shapes.items() if times == 1))
    for k, times in shapes.items():
        if times > 1:
            for pair in combinations(k, 2):
                pairs[pair] += times
    del shapes

    floor = max(n, LIFT_FLOOR)
    queue: list[tuple[int, float, int, int]] = []
    lifts: dict[tuple[int, int], float] = {}
    for (a, b), support in pairs.items():
        if support < min_episodes:
            continue
        product = df[a] * df[b]
        cosine = support / math.sqrt(product)
        lift = support * floor / product
        if cosine >= MIN_COSINE and lift >= MIN_LIFT:
            queue.append((-support, -cosine, a, b))
            lifts[(a, b)] = lift
    del pairs
    if not queue:
        return []

    wanted = {t for _, _, a, b in queue for t in (a, b)}
    postings: dict[int, set[int]] = {t: set() for t in wanted}
    for i, k in enumerate(kept):
        for t in wanted.intersection(k):
            postings[t].add(i)

    heapq.heapify(queue)
    clusters: list[Cluster] = []
    while queue:
        neg_support, neg_cosine, a, b = heapq.heappop(queue)
        members = postings[a] & postings[b]
        count = len(members)
        if count < min_episodes:
            continue
        if count < -neg_support:
            heapq.heappush(queue, (-count, neg_cosine, a, b))
            continue
        clusters.append(Cluster((vocabulary[a], vocabulary[b]), tuple(sorted(members)), -neg_cosine, lifts[(a, b)]))
        for i in members:  # each episode leaves the postings once
            for t in kept[i]:
                posting = postings.get(t)
                if posting is not None:
                    posting.discard(i)
    return clusters
