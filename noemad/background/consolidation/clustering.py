"""Clustering: frequent associated pairs of terms, then one speaker's habitual terms, taken greedily (pure: terms in, clusters out).

A generalisation rests on two terms that recur *together*: "select" and
"go" in "I'll select Go for the parser", "Selected Go again for the metrics
service", ... or on one term that one speaker keeps using whatever the
verbs around it ("wrote the importer in Go", "went with Go for the CLI").
A term many speakers use now and then, or one speaker on a day or two, is
only a topic. `cluster`:

1. *Document frequency.* df(t) = episodes whose terms hold t. Terms with
   df < min_episodes cannot be shared by a cluster and are dropped.
2. *Bounded terms.* Each episode keeps at most MAX_TERMS of its remaining
   terms: those with the highest df, ties by the term (at most 66 pairs).
3. *Pairs.* support(a, b) = episodes that kept both. A pair is a
   *candidate* when support >= min_episodes and the two terms are
   *associated*, by either of two tests:
   - *lift*: the terms are mostly together, cosine = support /
     sqrt(df(a) x df(b)) >= MIN_COSINE (null-invariant: unrelated episodes
     added to the window do not change it), and together more often than
     chance would put them, lift = support x max(N, LIFT_FLOOR) / (df(a) x
     df(b)) >= MIN_LIFT ("please" and "thanks", each in 40% of the
     episodes, have a cosine near 0.4 but a lift near 1: merely common
     words). A window of fewer than LIFT_FLOOR episodes is measured as if it
     held LIFT_FLOOR.
   - *prevalence*: the pair is in at least MIN_SHARE (half) of the window's
     episodes, or of one speaker's (and in min_episodes of them). Lift
     cannot see a habit that is most of what is said: a pair's lift is at
     most max(N, LIFT_FLOOR) / max(df(a), df(b)), so once one of its terms is
     in two thirds of the window ("we select Go" in most episodes, "we
     select Rust" in others) it fails however faithfully the terms go
     together, and the larger the window, the surer (a small window is
     measured as LIFT_FLOOR). A share does not decay as the window grows: a
     habit in most of a speaker's episodes is one at 150 episodes and at
     100,000. (Cosine need not be asked: a pair in half of some episodes
     has a cosine of at least 0.5 within them.) Because it does not test
     against chance, a pair that is only prevalent must also *recur*: its
     episodes come from at least MIN_OCCASIONS occasions (an occasion: one
     speaker on one UTC day), so one burst from one speaker (a pasted log)
     is not a habit. Who said each episode and when is `Authors`; without
     it every episode is its own speaker and occasion, so only the window's
     share counts.
4. *Greedy.* Repeatedly take the candidate with the most episodes not yet
   in a cluster (ties: the higher cosine, then the pair in term order); if
   they number at least min_episodes (and, for a pair that is only
   prevalent, come from MIN_OCCASIONS occasions) they become a cluster and
   leave every other candidate; else the candidate is dropped. A candidate whose count
   fell since it was queued is queued again with its new count (counts only
   fall, so the result is that of the eager greedy). Episodes in no cluster
   are left for a later run. So a habit in most episodes is taken before
   fillers of a few.
5. *One term.* Then, for the episodes no pair took: a term in at least
   MIN_SHARE of one speaker's episodes (and min_episodes of them), used on
   at least MIN_DAYS distinct UTC days, is a habit of that speaker's on its
   own. Each such term's cluster is its habitual speakers' episodes that
   hold it, taken greedily as pairs are (most first, ties by the term).
   Pairs come first: a pair says more than one of its terms. Without
   `Authors` no speaker is known, and no single term clusters.

A fixed expression used in varied episodes ("last night") recurs as a habit
does, and becomes a cluster if it passes the thresholds.

Ties are broken by terms, never by ids or row order, so the same episodes
give the same clusters in whatever order they were stored. Cost, for N
episodes of S distinct sets of terms: df, the bounded terms and the pair
counts are numpy array operations over the S sets (each weighted by the
episodes that have it), O(S x MAX_TERMS^2) with no Python loop per set;
postings O(N x MAX_TERMS), also in numpy; each speaker's counts of terms
(for prevalence) O(N x MAX_TERMS) in numpy, and the pairs only prevalence
might associate (both terms in most of one speaker's episodes: few) are
counted exactly from their postings; the greedy O(P log P + the smaller
posting set of each candidate taken or requeued), an episode taken being
set aside rather than removed from every posting. So about linear in N
(bench/consolidation.py measures it).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from noemad.background.consolidation.tokenise import TermTable, table_of
from noemad.errors import InvalidInput

MAX_TERMS = 12  # terms an episode keeps for pair counting
MIN_COSINE = 0.4  # support / sqrt(df(a) df(b)) of a candidate pair
MIN_LIFT = 1.5  # support x max(N, LIFT_FLOOR) / (df(a) df(b)) of a candidate pair
LIFT_FLOOR = 200  # a smaller window is measured as if it held this many episodes
MIN_SHARE = 0.5  # a prevalent pair is in at least this share of the window's episodes, or of one speaker's
MIN_OCCASIONS = 2  # occasions (speaker, day) a pair associated only by prevalence recurs on
MIN_DAYS = 3  # distinct days on which a speaker uses a term that is a habit of its own


By = Literal["lift", "window", "speaker", "term"]


@dataclass(frozen=True)
class Cluster:
    """Episodes (by index in the input) that share a candidate pair of terms, or one term that is a speaker's habit."""

    pair: tuple[str, ...]  # two terms; one for a term that is a habit of its own (by "term")
    members: tuple[int, ...]  # ascending indices
    cosine: float  # 1.0 for one term
    lift: float  # for one term, its lift with itself: max(N, LIFT_FLOOR) / df
    share: float  # of the window's episodes the pair is in; for `by` speaker or term, of that speaker's (the largest)
    by: By = "lift"  # the test: lift, prevalence in the window or in a speaker's episodes, or one term's habit


@dataclass
class Pairs:
    """What became of the pairs of a run, for saying why nothing (or little) was generalised.

    `recurring`: pairs kept together by at least min_episodes episodes;
    `apart`: of those, the ones neither test associates whose terms mostly
    appear apart (cosine); `by_chance`: the others neither test associates;
    `one_occasion`: candidates associated only by prevalence whose episodes
    came from fewer than MIN_OCCASIONS occasions.
    """

    recurring: int = 0
    apart: int = 0
    by_chance: int = 0
    one_occasion: int = 0


Ints = NDArray[np.int64]
DENSE_PAIRS = 1 << 22  # vocabularies up to 2,048 frequent terms count pairs in one dense array (32 MiB at most)


@dataclass(frozen=True)
class Authors:
    """Who each episode is from and on which UTC day, as numbers, one each per episode in the input's order."""

    speaker: Ints
    day: Ints

    @classmethod
    def of(cls, speakers: Sequence[Hashable], days: Sequence[Hashable]) -> Authors:
        """Speakers and days given as anything hashable (names, "2026-01-02"), numbered in order of appearance."""
        return cls(_numbered(speakers), _numbered(days))

    def occasions(self, members: Collection[int]) -> int:
        """The distinct (speaker, day) of these episodes."""
        at = np.fromiter(members, dtype=np.int64, count=len(members))
        return _distinct(self.speaker[at] * (int(self.day.max(initial=0)) + 1) + self.day[at])

    def episodes(self) -> Ints:
        """Each speaker's episodes in the window, by speaker number."""
        return np.bincount(self.speaker)


def _distinct(values: Ints) -> int:
    """How many distinct values there are: `len(np.unique(values))` without its first call's import of numpy.ma (12 ms)."""
    if not len(values):
        return 0
    ordered = np.sort(values)
    return 1 + int(np.count_nonzero(ordered[1:] != ordered[:-1]))


def _numbered(values: Sequence[Hashable]) -> Ints:
    number: dict[Hashable, int] = {}
    return np.fromiter((number.setdefault(v, len(number)) for v in values), dtype=np.int64, count=len(values))


def cluster(
    term_sets: Sequence[Collection[str]],
    min_episodes: int,
    authors: Authors | None = None,
    pairs_seen: Pairs | None = None,
) -> list[Cluster]:
    """Clusters of the episodes whose terms are `term_sets`, in the order they were taken (see the module docstring).

    `authors`: who said each episode and when (None: each is its own
    speaker and occasion). `pairs_seen`, when given, is filled in with
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
    return cluster_table(table_of(body_of, shapes), min_episodes, authors, pairs_seen)  # type: ignore[arg-type]


def cluster_table(
    table: TermTable,
    min_episodes: int,
    authors: Authors | Callable[[], Authors] | None = None,
    pairs_seen: Pairs | None = None,
) -> list[Cluster]:
    """`cluster` of the episodes whose terms `table` holds (see the module docstring).

    Each body is counted once, weighted by the episodes that have it, and
    the counting is done on arrays (`_kept_terms`, `_pair_support`,
    `_habitual_terms`): what the docstring describes, with no Python loop
    per episode or per pair. `authors` may be a function that gives them:
    it is called once the pairs are counted, so a caller can read who said
    what meanwhile.
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
    if callable(authors):
        authors = authors()

    floor = max(n, LIFT_FLOOR)
    seen = pairs_seen if pairs_seen is not None else Pairs()
    seen.recurring += len(support)
    # The measures as the scalar code computed them: an int product, true divisions, correctly rounded in float64.
    product = df[a] * df[b]
    cosine = support / np.sqrt(product.astype(np.float64))
    lift = (support * floor).astype(np.float64) / product.astype(np.float64)
    share = support / n
    close = cosine >= MIN_COSINE
    by_lift = close & (lift >= MIN_LIFT)
    in_window = ~by_lift & (share >= MIN_SHARE)
    # A pair whose terms are each in most of one speaker's episodes may be in most of them together: counted exactly
    # (few are). And the (speaker, term) habits are step 5's.
    maybe = np.zeros(len(support), dtype=bool)
    per_speaker = np.zeros(0, dtype=np.int64)
    habit_speaker = habit_term = habit_count = np.zeros(0, dtype=np.int64)
    if authors is not None:
        per_speaker = authors.episodes()
        v = len(vocabulary)
        habit_speaker, habit_term, habit_count = _habitual_terms(table.body_of, entry_set, entry_term, authors.speaker, per_speaker, v, min_episodes)
        maybe = np.isin(a * v + b, _pairs_within(habit_speaker, habit_term, v)) & ~by_lift & ~in_window
    wanted = by_lift | in_window | maybe
    terms = set(a[wanted].tolist()) | set(b[wanted].tolist()) | set(habit_term.tolist())
    postings = _postings(table.body_of, weight, entry_set, entry_term, sorted(terms))
    chosen = np.flatnonzero(by_lift | in_window).tolist()
    by: dict[int, tuple[By, float]] = dict(zip(chosen, zip(np.where(by_lift, "lift", "window")[chosen].tolist(), share[chosen].tolist())))
    if authors is not None:
        for i in np.flatnonzero(maybe).tolist():
            mine = _speaker_share(postings[int(a[i])] & postings[int(b[i])], authors, per_speaker, min_episodes)
            if mine:
                by[i] = ("speaker", mine)
    associated = np.zeros(len(support), dtype=bool)
    associated[list(by)] = True
    seen.apart += int(np.count_nonzero(~close & ~associated))
    seen.by_chance += int(np.count_nonzero(close & ~associated))
    chosen = sorted(by)
    qa, qb, qs = a[chosen].tolist(), b[chosen].tolist(), support[chosen].tolist()
    qc, ql = cosine[chosen].tolist(), lift[chosen].tolist()
    queue = [(-s, -c, x, y) for s, c, x, y in zip(qs, qc, qa, qb)]
    measures = {(x, y): (lf, *by[i]) for x, y, lf, i in zip(qa, qb, ql, chosen)}  # (lift, by, share)

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
        lift_xy, by_xy, share_xy = measures[(x, y)]
        if by_xy != "lift" and (count if authors is None else authors.occasions(members)) < MIN_OCCASIONS:
            seen.one_occasion += 1  # a habit that never recurred: one burst from one speaker
            continue
        clusters.append(Cluster((vocabulary[x], vocabulary[y]), tuple(sorted(members)), -neg_cosine, lift_xy, share_xy, by_xy))
        taken |= members
    if authors is not None and len(habit_term):
        # Step 5: a term in most of one speaker's episodes, on MIN_DAYS days, for the episodes no pair took.
        one = {t: float(floor / df[t]) for t in set(habit_term.tolist())}
        clusters += _take_terms(habit_speaker, habit_term, habit_count, per_speaker, postings, authors, vocabulary, one, min_episodes, taken)
    return clusters


def _speaker_share(episodes: set[int], authors: Authors, per_speaker: Ints, min_episodes: int) -> float:
    """The largest share of a speaker's episodes these are, among speakers they are at least MIN_SHARE (and min_episodes) of; else 0."""
    said = np.bincount(authors.speaker[np.fromiter(episodes, dtype=np.int64, count=len(episodes))], minlength=len(per_speaker))
    habit = said >= np.maximum(min_episodes, MIN_SHARE * per_speaker)
    return float((said[habit] / per_speaker[habit]).max()) if habit.any() else 0.0


def _take_terms(
    habit_speaker: Ints, habit_term: Ints, habit_count: Ints, per_speaker: Ints, postings: dict[int, set[int]],
    authors: Authors, vocabulary: list[str], lift: dict[int, float], min_episodes: int, taken: set[int],
) -> list[Cluster]:
    """Step 5: clusters of one term each, from the (speaker, term) habits that recur on MIN_DAYS days; greedy as pairs are."""
    members: dict[int, set[int]] = {}
    share: dict[int, float] = {}
    for p, t, count in zip(habit_speaker.tolist(), habit_term.tolist(), habit_count.tolist()):
        held = np.fromiter(postings[t], dtype=np.int64, count=len(postings[t]))
        theirs = held[authors.speaker[held] == p]
        if _distinct(authors.day[theirs]) < MIN_DAYS:
            continue  # on a few days only: what they talked about then, not a habit
        members.setdefault(t, set()).update(theirs.tolist())
        share[t] = max(share.get(t, 0.0), count / int(per_speaker[p]))
    queue = [(-len(m - taken), vocabulary[t], t) for t, m in members.items()]
    heapq.heapify(queue)
    clusters: list[Cluster] = []
    while queue:
        neg_count, name, t = heapq.heappop(queue)
        left = members[t] - taken
        if len(left) < min_episodes:
            continue
        if len(left) < -neg_count:
            heapq.heappush(queue, (-len(left), name, t))
            continue
        clusters.append(Cluster((name,), tuple(sorted(left)), 1.0, lift[t], share[t], "term"))
        taken |= left
    return clusters


def _habitual_terms(
    body_of: Ints, entry_set: Ints, entry_term: Ints, speaker: Ints, per_speaker: Ints, v: int, min_episodes: int
) -> tuple[Ints, Ints, Ints]:
    """The (speaker, kept term) with the term in at least MIN_SHARE of the speaker's episodes and min_episodes, and how many.

    Sorted by speaker then term. Each episode's kept terms are spread out
    as (speaker, term) keys and counted in one bincount (over a dense
    speakers x terms array when it is small, else by sorting the keys).
    """
    # Each episode's kept terms, episode by episode: a body's entries are contiguous (sorted by body).
    body_size = np.bincount(entry_set, minlength=int(body_of.max(initial=-1)) + 1)
    body_start = np.cumsum(body_size) - body_size
    sizes = body_size[body_of]
    at = np.repeat(body_start[body_of] - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
    key = np.repeat(speaker, sizes) * v + entry_term[at]
    threshold = np.maximum(min_episodes, MIN_SHARE * per_speaker)
    if len(per_speaker) * v <= DENSE_PAIRS:
        dense = np.bincount(key, minlength=len(per_speaker) * v)
        keys = np.flatnonzero(dense >= np.repeat(threshold, v))
        counts = dense[keys]
    else:
        key = np.sort(key)
        firsts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, dtype=np.int64)
        keys, counts = key[firsts], np.diff(np.r_[firsts, len(key)])
        habit = counts >= threshold[keys // v]
        keys, counts = keys[habit], counts[habit]
    return keys // v, keys % v, counts.astype(np.int64)


def _pairs_within(speakers: Ints, terms: Ints, v: int) -> Ints:
    """The keys (a x v + b, a < b) of the pairs of terms one speaker holds both of, from (speaker, term) sorted by both."""
    starts = np.flatnonzero(np.r_[True, speakers[1:] != speakers[:-1]]) if len(speakers) else np.zeros(0, dtype=np.int64)
    keys: set[int] = set()
    for lo, hi in zip(starts.tolist(), np.r_[starts[1:], len(speakers)].tolist()):
        held = terms[lo:hi].tolist()
        keys.update(x * v + y for i, x in enumerate(held) for y in held[i + 1:])
    return np.fromiter(keys, dtype=np.int64, count=len(keys))


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
