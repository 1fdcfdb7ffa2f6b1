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
episodes of S distinct sets of terms: df, the bounded terms and the pair
counts are numpy array operations over the S sets (each weighted by the
episodes that have it), O(S x MAX_TERMS^2) with no Python loop per set;
postings O(N x MAX_TERMS), also in numpy; the greedy O(P log P + the smaller
posting set of each candidate taken or requeued), an episode taken being
set aside rather than removed from every posting. So about linear in N
(bench/consolidation.py measures it).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from noemad.background.consolidation.tokenise import TermTable, table_of
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


Ints = NDArray[np.int64]
DENSE_PAIRS = 1 << 22  # vocabularies up to 2,048 frequent terms count pairs in one dense array (32 MiB at most)


def cluster(
    term_sets: Sequence[Collection[str]],
    min_episodes: int,
    occasions: Callable[[Collection[int]], int] | None = None,
    pairs_seen: Pairs | None = None,
) -> list[Cluster]:
    """Clusters of the episodes whose terms are `term_sets`, in the order they were taken (see the module docstring).

    `occasions(indices)` counts the distinct occasions of those episodes
    (None: each is its own). `pairs_seen`, when given, is filled in with
    what became of the pairs. (A run clusters its episodes' `TermTable`
    with `cluster_table`; this is the same for sets of terms.)
    """
    if min_episodes < 2:
        raise InvalidInput(f"a cluster needs at least 2 episodes, not {min_episodes}")
    keys: Sequence[Hashable] = term_sets  # type: ignore[assignment]
    try:  # episodes with the same terms share a body
        number = dict.fromkeys(keys)
    except TypeError:  # unhashable sets of terms (sets, lists): as tuples
        keys = [tuple(s) for s in term_sets]
        number = dict.fromkeys(keys)
    shapes = list(number)
    number.update(zip(shapes, range(len(shapes))))
    body_of = np.fromiter(map(number.__getitem__, keys), dtype=np.int64, count=len(keys))
    return cluster_table(table_of(body_of, shapes), min_episodes, occasions, pairs_seen)  # type: ignore[arg-type]


def cluster_table(
    table: TermTable,
    min_episodes: int,
    occasions: Callable[[Collection[int]], int] | None = None,
    pairs_seen: Pairs | None = None,
) -> list[Cluster]:
    """`cluster` of the episodes whose terms `table` holds (see the module docstring).

    Each body is counted once, weighted by the episodes that have it, and
    the counting is done on arrays (`_kept_terms`, `_pair_support`): what
    the docstring describes, with no Python loop per episode or per pair.
    """
    if min_episodes < 2:
        raise InvalidInput(f"a cluster needs at least 2 episodes, not {min_episodes}")
    n = len(table)
    if n < min_episodes:
        return []
    weight = np.bincount(table.body_of, minlength=table.bodies)  # episodes per body
    vocabulary, df, entry_set, entry_term = _kept_terms(table, weight, min_episodes)
    if not vocabulary:
        return []
    a, b, support = _pair_support(entry_set, entry_term, weight, len(vocabulary), min_episodes)

    floor = max(n, LIFT_FLOOR)
    seen = pairs_seen if pairs_seen is not None else Pairs()
    seen.recurring += len(support)
    # The measures as the scalar code computed them: an int product, true divisions, correctly rounded in float64.
    product = df[a] * df[b]
    cosine = support / np.sqrt(product.astype(np.float64))
    lift = (support * floor).astype(np.float64) / product.astype(np.float64)
    consistency = support / np.maximum(df[a], df[b])
    close = cosine >= MIN_COSINE
    associated = close & ((lift >= MIN_LIFT) | (consistency >= MIN_CONSISTENCY))
    seen.apart += int(np.count_nonzero(~close))
    seen.by_chance += int(np.count_nonzero(close & ~associated))
    if not associated.any():
        return []
    qa, qb, qs = a[associated].tolist(), b[associated].tolist(), support[associated].tolist()
    qc, ql, qk = cosine[associated].tolist(), lift[associated].tolist(), consistency[associated].tolist()
    queue = [(-s, -c, x, y) for s, c, x, y in zip(qs, qc, qa, qb)]
    measures = {(x, y): (lf, k) for x, y, lf, k in zip(qa, qb, ql, qk)}  # (lift, consistency)

    postings = _postings(table.body_of, weight, entry_set, entry_term, sorted(set(qa) | set(qb)))
    heapq.heapify(queue)
    clusters: list[Cluster] = []
    taken: set[int] = set()  # episodes in a cluster: set aside, not removed from every posting
    while queue:
        neg_support, neg_cosine, x, y = heapq.heappop(queue)
        members = postings[x] & postings[y]
        if taken:
            members -= taken
        count = len(members)
        if count < min_episodes:
            continue
        if count < -neg_support:
            heapq.heappush(queue, (-count, neg_cosine, x, y))
            continue
        lift_xy, consistency_xy = measures[(x, y)]
        if lift_xy < MIN_LIFT and (count if occasions is None else occasions(members)) < MIN_OCCASIONS:
            seen.one_occasion += 1  # a habit that never recurred: one burst from one speaker
            continue
        clusters.append(Cluster((vocabulary[x], vocabulary[y]), tuple(sorted(members)), -neg_cosine, lift_xy, consistency_xy))
        taken |= members
    return clusters


def _kept_terms(table: TermTable, weight: Ints, min_episodes: int) -> tuple[list[str], Ints, Ints, Ints]:
    """Steps 1 and 2: the frequent terms in term order, their df, and each body's kept terms as (body, term) entries.

    The entries stay sorted by body then term; a body keeps at most
    MAX_TERMS terms, the most frequent, ties by term.
    """
    # Weights are whole numbers below 2**53: the float sums are exact.
    df_all = np.bincount(table.entry_term, weights=weight[table.entry_body], minlength=len(table.names)).astype(np.int64)
    frequent = df_all >= min_episodes
    vocabulary = [table.names[i] for i in np.flatnonzero(frequent).tolist()]
    if not vocabulary:
        empty = np.zeros(0, dtype=np.int64)
        return [], empty, empty, empty
    rank = np.cumsum(frequent) - 1  # a frequent term's number in the vocabulary: the order is kept
    keep = frequent[table.entry_term]
    entry_set, entry_term = table.entry_body[keep], rank[table.entry_term[keep]]
    df = df_all[frequent]
    sizes = np.bincount(entry_set, minlength=table.bodies)
    if sizes.max(initial=0) > MAX_TERMS:
        over = np.flatnonzero(sizes[entry_set] > MAX_TERMS)
        # Within each body: the most frequent first, ties by term; those past MAX_TERMS are dropped.
        order = over[np.lexsort((entry_term[over], -df[entry_term[over]], entry_set[over]))]
        groups = entry_set[order]
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        place = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        kept = np.ones(len(entry_set), dtype=bool)
        kept[order[place >= MAX_TERMS]] = False
        entry_set, entry_term = entry_set[kept], entry_term[kept]
    return vocabulary, df, entry_set, entry_term


def _pair_support(
    entry_set: Ints, entry_term: Ints, weight: Ints, v: int, min_episodes: int
) -> tuple[Ints, Ints, Ints]:
    """Step 3's counting: the pairs (a < b) of kept terms with support >= min_episodes, and that support.

    Bodies of k kept terms are taken together as a k-column matrix, so each
    size's pairs are two column gathers; the pairs' weights are summed by
    bincount over a x v + b, size by size into one dense array for a small
    vocabulary, else over the distinct keys of all sizes at once.
    """
    sizes = np.bincount(entry_set, minlength=len(weight))
    starts = np.cumsum(sizes) - sizes
    dense = np.zeros(v * v) if v * v <= DENSE_PAIRS else None
    keys, weights = [], []
    for k in range(2, int(sizes.max(initial=0)) + 1):
        of_size = np.flatnonzero(sizes == k)
        if not len(of_size):
            continue
        terms = entry_term[starts[of_size][:, None] + np.arange(k)]  # ascending within a row
        first, second = np.triu_indices(k, 1)
        key = (terms[:, first] * v + terms[:, second]).ravel()
        w = np.repeat(weight[of_size], len(first))
        if dense is not None:  # whole numbers below 2**53: the float sums are exact
            dense += np.bincount(key, weights=w, minlength=v * v)
        else:
            keys.append(key)
            weights.append(w)
    if dense is not None:
        found = np.flatnonzero(dense >= min_episodes)
        support = dense[found]
    elif keys:
        key, w = np.concatenate(keys), np.concatenate(weights)
        order = np.argsort(key, kind="stable")
        key, w = key[order], w[order]
        firsts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        counts = np.add.reduceat(w, firsts)
        recur = counts >= min_episodes
        found, support = key[firsts[recur]], counts[recur]
    else:
        found = support = np.zeros(0, dtype=np.int64)
    return found // v, found % v, support.astype(np.int64)


def _postings(body_of: Ints, weight: Ints, entry_set: Ints, entry_term: Ints, wanted: list[int]) -> dict[int, set[int]]:
    """term -> the episodes (indices) that kept it, for the `wanted` terms: each set's entries spread over its episodes."""
    is_wanted = np.zeros(int(entry_term.max(initial=-1)) + 1, dtype=bool)
    is_wanted[wanted] = True
    chosen = np.flatnonzero(is_wanted[entry_term])
    sets, terms = entry_set[chosen], entry_term[chosen]
    episodes = np.argsort(body_of, kind="stable")  # grouped by body, ascending within one
    first = np.cumsum(weight) - weight  # where each set's episodes start in `episodes`
    times = weight[sets]
    total = int(times.sum())
    spread = np.repeat(first[sets] - (np.cumsum(times) - times), times) + np.arange(total)
    episode, term = episodes[spread], np.repeat(terms, times)
    order = np.argsort(term, kind="stable")
    episode, term = episode[order], term[order]
    bounds = np.searchsorted(term, wanted + [len(is_wanted)])
    flat = episode.tolist()
    return {t: set(flat[lo:hi]) for t, lo, hi in zip(wanted, bounds.tolist(), bounds[1:].tolist())}
