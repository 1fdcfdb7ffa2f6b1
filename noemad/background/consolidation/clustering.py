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
   *candidate* when support >= min_episodes, cosine = support /
   sqrt(df(a) x df(b)) >= MIN_COSINE (null-invariant: unrelated episodes
   added to the window do not change it), and the two terms are
   *associated*, by either of two tests:
   - *lift* = support x max(N, LIFT_FLOOR) / (df(a) x df(b)) >= MIN_LIFT:
     the terms occur together more often than chance would put them
     together ("please" and "thanks", each in 40% of the episodes, have a
     cosine near 0.4 but a lift near 1: merely common words). A window of
     fewer than LIFT_FLOOR episodes is measured as if it held LIFT_FLOOR.
   - *consistency* = support / max(df(a), df(b)) >= MIN_CONSISTENCY: each
     term comes with the other nearly every time either appears. Lift cannot
     see this habit when it is everywhere: a pair can have a lift of at most
     max(N, LIFT_FLOOR) / max(df(a), df(b)), so a pair in more than 1 /
     MIN_LIFT (two thirds) of a large window fails the lift test however
     faithfully its terms go together — the more consistent the habit, the
     surer it was to be missed. A pair in every episode is the strongest
     habit there is, not noise. Chance alone passes this test only when both
     terms are each in at least 90% of the window, and then the pair is what
     the window is about. Because it does not test against chance, a pair
     that passes only by consistency must also *recur*: its episodes come
     from at least MIN_OCCASIONS occasions (an occasion: one speaker on one
     UTC day; `occasions` counts them), so one burst from one speaker (a
     pasted log) is not a habit. Without `occasions` every episode is its
     own occasion.
4. *Greedy.* Repeatedly take the candidate with the most episodes not yet
   in a cluster (ties: the higher cosine, then the pair in term order); if
   they number at least min_episodes (and, for a pair associated only by
   consistency, come from MIN_OCCASIONS occasions) they become a cluster and
   leave every other candidate; else the candidate is dropped. A candidate whose count
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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import chain, combinations

from noemad.errors import InvalidInput

MAX_TERMS = 12  # terms an episode keeps for pair counting
MIN_COSINE = 0.4  # support / sqrt(df(a) df(b)) of a candidate pair
MIN_LIFT = 1.5  # support x max(N, LIFT_FLOOR) / (df(a) df(b)) of a candidate pair
LIFT_FLOOR = 200  # a smaller window is measured as if it held this many episodes
MIN_CONSISTENCY = 0.9  # support / max(df(a), df(b)): the terms come together nearly every time
MIN_OCCASIONS = 2  # occasions (speaker, day) a pair associated only by consistency recurs on


@dataclass(frozen=True)
class Cluster:
    """Episodes (by index in the input) that share a candidate pair of terms."""

    pair: tuple[str, str]
    members: tuple[int, ...]  # ascending indices
    cosine: float
    lift: float
    consistency: float = 1.0  # support / max(df(a), df(b)) when the pair was queued

    @property
    def by(self) -> str:
        """The association test the pair passed: lift, else consistency."""
        return "lift" if self.lift >= MIN_LIFT else "consistency"


@dataclass
class Pairs:
    """What became of the pairs of a run, for saying why nothing (or little) was generalised.

    `recurring`: pairs kept together by at least min_episodes episodes;
    `apart`: of those, the ones whose terms mostly appear apart (cosine);
    `by_chance`: the ones neither test associates (lift, consistency);
    `one_occasion`: candidates associated only by consistency whose episodes
    came from fewer than MIN_OCCASIONS occasions.
    """

    recurring: int = 0
    apart: int = 0
    by_chance: int = 0
    one_occasion: int = 0


def cluster(
    term_sets: Sequence[Collection[str]],
    min_episodes: int,
    occasions: Callable[[Collection[int]], int] | None = None,
    pairs_seen: Pairs | None = None,
) -> list[Cluster]:
    """Clusters of the episodes whose terms are `term_sets`, in the order they were taken (see the module docstring).

    `occasions(indices)` counts the distinct occasions of those episodes
    (None: each is its own). `pairs_seen`, when given, is filled in with
    what became of the pairs.

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
    seen = pairs_seen if pairs_seen is not None else Pairs()
    queue: list[tuple[int, float, int, int]] = []
    measures: dict[tuple[int, int], tuple[float, float]] = {}  # (lift, consistency)
    for (a, b), support in pairs.items():
        if support < min_episodes:
            continue
        seen.recurring += 1
        product = df[a] * df[b]
        cosine = support / math.sqrt(product)
        if cosine < MIN_COSINE:
            seen.apart += 1
            continue
        lift = support * floor / product
        consistency = support / max(df[a], df[b])
        if lift >= MIN_LIFT or consistency >= MIN_CONSISTENCY:
            queue.append((-support, -cosine, a, b))
            measures[(a, b)] = (lift, consistency)
        else:
            seen.by_chance += 1
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
        lift, consistency = measures[(a, b)]
        if lift < MIN_LIFT and (count if occasions is None else occasions(members)) < MIN_OCCASIONS:
            seen.one_occasion += 1  # a habit that never recurred: one burst from one speaker
            continue
        clusters.append(Cluster((vocabulary[a], vocabulary[b]), tuple(sorted(members)), -neg_cosine, lift, consistency))
        for i in members:  # each episode leaves the postings once
            for t in kept[i]:
                posting = postings.get(t)
                if posting is not None:
                    posting.discard(i)
    return clusters
