"""A cluster's plan: key terms, representative, speakers and the plain proposition it is believed as.

- *Key terms*: the cluster's pair (or its one term) first, then other terms in at least half
  (KEY_SHARE) of its episodes, most frequent first, at most MAX_KEY_TERMS.
- *Representative*: the episode holding the most key terms, then the
  shortest text, then the first in code-point order, then the earliest,
  then the lowest id.
- *Speakers*: from the stimulus each episode records (`select.load_speakers`).
- *Plain proposition* (`plain_proposition`), e.g.::

      alice repeatedly mentioned select and go (5 episodes, 2026-01-02 to 2026-01-08), e.g. "I'll select Go for the new parser".

  the key terms the representative holds, as it spells them (lower-cased)
  and in its order; up to three speakers (most episodes first, then "and N
  others"); the dates of the first and last episode; the representative
  without its prefix (at most MAX_QUOTE characters). The subject is the
  pair as spelt there, in term order ("go select"), or the one term.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, overload

import numpy as np
from numpy.typing import NDArray

from noemad.background.consolidation.clustering import Cluster
from noemad.background.consolidation.tokenise import Lengths, TableTerms, TermSets, strip_speaker
from noemad.cognition.beliefs.model import check_proposition
from noemad.cognition.narrative.phrasing import clip
from noemad.words import content_words, snowball_stems

KEY_SHARE = 0.5  # a key term is in at least this share of the cluster's episodes
MAX_KEY_TERMS = 6
MAX_QUOTE = 160  # characters of the representative episode quoted in the proposition
MAX_NAME = 40  # characters of a speaker's name in the proposition
SPEAKERS_NAMED = 3
PROMPT_EPISODES = 20  # episodes a plan orders for the model's prompt, most representative first


class EpisodeInfo(NamedTuple):
    """What a cluster's proposition and evidence need of one episode."""

    id: int
    text: str
    created_at: str
    speaker: str
    brought_by: int  # the stimulus event, or the episode's memory_created event


@dataclass(frozen=True)
class Episodes(Sequence[EpisodeInfo]):
    """A cluster's episodes as parallel columns, in id order; an EpisodeInfo is made only for one asked for.

    Columns, not a row per episode: a cluster holds up to tens of thousands
    of episodes, and only its representative and the few shown to a model
    are ever needed one by one (the writes take the columns).
    """

    ids: Sequence[int]
    texts: Sequence[str]
    created: Sequence[str]
    speakers: Sequence[str]
    brought_by: Sequence[int]

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> EpisodeInfo: ...
    @overload
    def __getitem__(self, i: slice) -> list[EpisodeInfo]: ...
    def __getitem__(self, i: int | slice) -> EpisodeInfo | list[EpisodeInfo]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return EpisodeInfo(self.ids[i], self.texts[i], self.created[i], self.speakers[i], self.brought_by[i])



@dataclass(frozen=True)
class Plan:
    """A cluster ready to word and write."""

    index: int
    cluster: Cluster
    episodes: Episodes  # in id order
    key_terms: tuple[str, ...]  # stems
    words: dict[str, str]  # stem -> the word the representative spells it with, in the order it does
    representative: EpisodeInfo
    ordered: tuple[EpisodeInfo, ...]  # most representative first, at most PROMPT_EPISODES
    speakers: tuple[tuple[str, int], ...]  # (speaker, episodes), most first
    plain: str
    subject: str
    first: str  # created_at of the first episode
    last: str  # and of the last

    @property
    def shown_terms(self) -> list[str]:
        """The key terms the representative holds, as it spells them, in its order."""
        return list(self.words.values())


def join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def who(speakers: Sequence[tuple[str, int]]) -> str:
    """Up to SPEAKERS_NAMED speakers, most episodes first: "alice", "alice and bob", "alice, bob and 3 others"."""
    names = [clip(name, MAX_NAME) for name, _ in speakers]
    if len(names) <= SPEAKERS_NAMED:
        return join(names)
    rest = len(names) - (SPEAKERS_NAMED - 1)
    return join([*names[: SPEAKERS_NAMED - 1], f"{rest} others"])


def plain_proposition(
    speakers: Sequence[tuple[str, int]], shown_terms: Sequence[str], count: int, first: str, last: str, quote: str
) -> str:
    """The deterministic sentence a cluster is believed as, unless a model words it (see the module docstring)."""
    when = f"on {first[:10]}" if first[:10] == last[:10] else f"{first[:10]} to {last[:10]}"
    return (
        f"{who(speakers)} repeatedly mentioned {join(list(shown_terms))} ({count} episodes, {when}),"
        f' e.g. "{clip(quote, MAX_QUOTE)}".'
    )


def _spellings(text: str, stems: Iterable[str]) -> dict[str, str]:
    """stem -> the first word of `text` (prefix stripped) with that stem, for the stems it holds."""
    wanted = set(stems)
    words = content_words(strip_speaker(text))
    out: dict[str, str] = {}
    for word, stem in zip(words, snowball_stems(words)):
        if stem in wanted and stem not in out:
            out[stem] = word
    return out


def _most_representative(episodes: Episodes, hits: Sequence[int], body_len: Lengths | None = None) -> list[int]:
    """Indices of the PROMPT_EPISODES most representative episodes, most first, given how many key terms each holds.

    The order: the most key terms, then the shortest body (prefix stripped),
    the first body in code-point order, the earliest, the lowest id (ids are
    unique: a total order). The first two are cheap and decide almost
    everything, so they are computed for every episode as one number, in
    numpy, and the whole key only for the episodes whose number is at most
    the PROMPT_EPISODES-th smallest (the others cannot come first).
    `body_len`, each body's length, when the caller knows it.
    """
    texts = episodes.texts
    if body_len is None:
        body_len = [len(strip_speaker(text)) for text in texts]
    held = np.asarray(hits, dtype=np.int64)
    length = np.asarray(body_len, dtype=np.int64)
    # (fewest key terms missing, shortest body) as one int: compared as the tuple would be
    rough = (held.max() - held) * (length.max() + 1) + length
    k = min(PROMPT_EPISODES, len(rough))
    cut = np.partition(rough, k - 1)[k - 1]
    created, ids = episodes.created, episodes.ids
    ranked = [(r, strip_speaker(texts[i]), created[i], ids[i], i) for i, r in zip(*map(np.ndarray.tolist, _at_most(rough, cut)))]
    ranked.sort()
    return [r[-1] for r in ranked[:PROMPT_EPISODES]]


def _at_most(rough: NDArray[np.int64], cut: np.int64) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The indices whose rough key is at most `cut`, and those keys."""
    chosen = np.flatnonzero(rough <= cut)
    return chosen, rough[chosen]


class ClusterTerms(Protocol):
    """The terms of a cluster's episodes, in its order, as a plan counts them (`TableTerms`, `TermSets`)."""

    def counts(self) -> Mapping[str, int]:
        """term -> how many of the episodes hold it."""
        ...

    def hits(self, keys: Collection[str]) -> list[int]:
        """How many of `keys` each episode holds."""
        ...

    def union(self) -> set[str]:
        """Every term of the episodes."""
        ...

    def body_lengths(self) -> Lengths | None:
        """Each episode's body's length (prefix stripped), if known."""
        ...


def plan(index: int, found: Cluster, episodes: Episodes, terms: ClusterTerms | Sequence[Collection[str]]) -> Plan:
    """Key terms, representative, speakers and plain proposition of one cluster.

    `episodes` and `terms` are the cluster's, in the order of `found.members`
    (id order); `terms` may be its episodes' sets of terms.
    """
    size = len(episodes)
    held = terms if isinstance(terms, (TableTerms, TermSets)) else TermSets(terms)  # type: ignore[arg-type]
    counts = held.counts()
    others = sorted((t for t, c in counts.items() if t not in found.pair and c >= KEY_SHARE * size), key=lambda t: (-counts[t], t))
    key_terms = (*found.pair, *others[: MAX_KEY_TERMS - len(found.pair)])

    order = _most_representative(episodes, held.hits(key_terms), held.body_lengths())
    representative = episodes[order[0]]
    words = _spellings(representative.text, key_terms)
    by_speaker = Counter(episodes.speakers)
    speakers = tuple(sorted(by_speaker.items(), key=lambda kv: (-kv[1], kv[0])))
    first, last = min(episodes.created), max(episodes.created)
    text = plain_proposition(speakers, list(words.values()), size, first, last, strip_speaker(representative.text))
    proposition, _ = check_proposition(text, "x")  # cleaned exactly as the belief stores it
    subject = " ".join(words.get(t, t) for t in found.pair)
    return Plan(
        index=index,
        cluster=found,
        episodes=episodes,
        key_terms=key_terms,
        words=words,
        representative=representative,
        ordered=tuple(map(episodes.__getitem__, order)),
        speakers=speakers,
        plain=proposition,
        subject=subject,
        first=first,
        last=last,
    )
