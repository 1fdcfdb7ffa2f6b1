"""An episode's terms: the Snowball stems of its content words, its speaker prefix dropped.

An episode's text starts with who it is from ("alice said on cli: ...",
"observed from sensor-1: ...", "bob asserted: ..."): everything up to the
first ": " is that *speaker prefix*, and it is dropped (`strip_speaker`), so
a speaker's name or channel alone never makes episodes alike. The rest is
cut into content words (`noemad.words.content_words`: lower-cased
runs of letters and digits of two characters or more, stop-words and the
pieces contractions leave dropped: "I'll" is no "ll", "qu'il" no "qu")
and each is given its Snowball English stem. An episode's *terms* are its
distinct stems.

A run's episodes are cut in bulk (`term_table`): the distinct bodies at
once, each distinct word stemmed once, into a `TermTable`, numpy arrays of
each body's terms that clustering and planning count with no Python object
per episode. `episode_terms` gives the same terms as tuples.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain, count, repeat

import numpy as np
from numpy.typing import NDArray

from noemad.words import NOT_CONTENT, WORD, content_words, expand_negations, snowball_stems

Ints = NDArray[np.int64]
# Each body's length: a list, or a TermTable's column (an ndarray is no Sequence)
Lengths = Sequence[int] | Ints


def strip_speaker(text: str) -> str:
    """An episode's text without its speaker prefix (everything up to the first ": "), or the text if it has none."""
    head, sep, rest = text.partition(": ")
    return rest if sep else head


def terms(text: str) -> list[str]:
    """The Snowball stems of an episode's content words, its prefix stripped, in order, repeats kept."""
    return snowball_stems(content_words(strip_speaker(text)))


Terms = tuple[str, ...]  # an episode's distinct terms, in order of first appearance


_SEPARATOR = "\x00"  # between two bodies in the text cut at once; no word, and no term
_JOINER = f" {_SEPARATOR} "
# ASCII text is cut by a translation and a split: every ASCII character that is not a letter or a digit becomes a
# space (what `WORD` matches, for ASCII), but the separator, which stays a word of its own.
_ASCII_WORDS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum() and c != _SEPARATOR})
_WORD_OR_SEPARATOR = re.compile(WORD.pattern + "|" + _SEPARATOR)


def _bodies(texts: Iterable[str]) -> list[str]:
    return [rest if sep else head for head, sep, rest in map(str.partition, texts, repeat(": "))]


def _words(distinct: Sequence[str]) -> list[str] | None:
    """The words of these bodies, lower-cased, in order, with a separator between two bodies; None if a body holds the separator."""
    joined = _JOINER.join(distinct)
    if joined.count(_SEPARATOR) != len(distinct) - 1:
        return None
    # Lower-cased at once: the same as body by body for ASCII, whose letters each lower alone (some others, such as a
    # final sigma, lower by what is around them).
    joined = joined.lower() if joined.isascii() else _JOINER.join(map(str.lower, distinct))
    joined = expand_negations(joined)
    return joined.translate(_ASCII_WORDS).split() if joined.isascii() else _WORD_OR_SEPARATOR.findall(joined)


def _stems(words: Collection[str]) -> dict[str, str]:
    """content word -> its term (interned stem), for the content words among these distinct words: stemmed in one call.

    A number (ASCII digits) is its own stem: Snowball's rules change letters
    only. A month of readings holds thousands of distinct numbers, which
    are most of its vocabulary and would be most of the stemming.
    """
    content = [w for w in words if len(w) > 1 and w not in NOT_CONTENT]
    numbers = [w for w in content if w.isdigit() and w.isascii()]
    found = dict(zip(numbers, map(sys.intern, numbers)))
    wording = [w for w in content if w not in found] if found else content
    found.update(zip(wording, map(sys.intern, snowball_stems(wording))))
    return found


def episode_terms(texts: Iterable[str]) -> list[Terms]:
    """Each episode's distinct terms (the tokenising stage of a run): `terms` without repeats.

    Tuples of interned strings: a stem shared by a thousand episodes is
    stored once, and a tuple takes a third of a set's memory. The same words
    and stems as `terms`, cut in bulk: a body said again (a sensor's reading,
    a repeated request) is cut once; the distinct bodies, lower-cased, are
    joined by a separator and cut in one pass (a translation and a split when
    they are ASCII, else `WORD`); each distinct word is stemmed once, all in
    one call; then the terms are parted at the separators.
    """
    bodies = _bodies(texts)
    found: dict[str, Terms | None] = dict.fromkeys(bodies)
    distinct = list(found)
    words = _words(distinct)
    if words is None:  # a body holds the separator: cut one by one
        found.update(zip(distinct, map(_cut, distinct)))
        return list(map(found.__getitem__, bodies))  # type: ignore[arg-type]
    term_of = _stems(set(words))
    term_of[_SEPARATOR] = _SEPARATOR
    cut = list(filter(None, map(term_of.get, words)))  # the terms, in order, with a separator after each body but the last
    out: list[Terms] = []
    start = 0
    at = cut.index
    for _ in range(len(distinct) - 1):
        end = at(_SEPARATOR, start)
        out.append(tuple(dict.fromkeys(cut[start:end])))
        start = end + 1
    if distinct:
        out.append(tuple(dict.fromkeys(cut[start:])))
    found.update(zip(distinct, out))
    return list(map(found.__getitem__, bodies))  # type: ignore[arg-type]


def _cut(body: str) -> Terms:
    """One body's distinct terms."""
    return tuple(dict.fromkeys(snowball_stems(content_words(body))))


@dataclass(frozen=True)
class TermTable:
    """The terms of many episodes as arrays: what clustering and planning count, with no tuple made per episode.

    Episodes whose bodies (prefix dropped) are the same share a *body*; a
    body's distinct terms are its *entries*, (body, term) pairs sorted by
    body then term. Terms are numbered in term order, so comparing numbers
    compares terms.
    """

    names: list[str]  # term number -> term
    bodies: int
    body_of: Ints  # episode -> its body
    entry_body: Ints
    entry_term: Ints
    body_length: Ints | None = None  # body -> its length in characters, when made from texts

    def __len__(self) -> int:
        return len(self.body_of)

    def of(self, episodes: Sequence[int]) -> TableTerms:
        """The terms of these episodes (a cluster's), as a plan counts them."""
        return TableTerms(self, episodes)

    def bodies_of(self, episodes: Sequence[int]) -> tuple[Ints, Ints, Ints]:
        """The distinct bodies of these episodes (ascending), how many of the episodes have each, and each episode's place among them."""
        of = self.body_of[np.asarray(episodes, dtype=np.int64)]
        ranked = np.sort(of)
        firsts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if len(ranked) else np.zeros(0, dtype=np.int64)
        bodies = ranked[firsts]
        return bodies, np.diff(np.r_[firsts, len(ranked)]), np.searchsorted(bodies, of)

    @cached_property
    def _entry_starts(self) -> Ints:
        """Where each body's entries start, and after the last body's, where they end: made once, then read per plan."""
        starts = np.zeros(self.bodies + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.entry_body, minlength=self.bodies), out=starts[1:])
        return starts

    def entries_of(self, bodies: Ints) -> tuple[Ints, Ints]:
        """The indices of these (ascending) bodies' entries, body by body, and how many each body has."""
        starts = self._entry_starts[bodies]
        sizes = self._entry_starts[bodies + 1] - starts
        return np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum())), sizes


@dataclass(frozen=True)
class TableTerms:
    """Some episodes' terms (a cluster's, in its order), read from a TermTable: the work is that of their own entries."""

    table: TermTable
    episodes: Sequence[int]

    @cached_property
    def _bodies(self) -> tuple[Ints, Ints, Ints, Ints, Ints]:
        """The episodes' distinct bodies, how many have each, each episode's place among them, and the bodies' entries
        and how many each has: found once for a plan's counts and hits (a sort of the episodes' bodies each)."""
        bodies, times, place = self.table.bodies_of(self.episodes)
        entries, sizes = self.table.entries_of(bodies)
        return bodies, times, place, entries, sizes

    def counts(self) -> Counter[str]:
        """term -> how many of the episodes hold it."""
        _, times, _, entries, sizes = self._bodies
        count = np.bincount(self.table.entry_term[entries], weights=np.repeat(times, sizes))
        found = np.flatnonzero(count)
        names = self.table.names
        return Counter(dict(zip(map(names.__getitem__, found.tolist()), count[found].astype(np.int64).tolist())))

    def hits(self, keys: Collection[str]) -> list[int]:
        """How many of `keys` each episode holds, in their order."""
        names = self.table.names
        numbers = [i for i in (bisect_left(names, k) for k in set(keys)) if i < len(names) and names[i] in keys]
        bodies, _, place, entries, sizes = self._bodies
        is_key = np.isin(self.table.entry_term[entries], numbers)
        per_body = np.bincount(np.repeat(np.arange(len(bodies)), sizes), weights=is_key, minlength=len(bodies))
        return per_body[place].astype(np.int64).tolist()  # type: ignore[no-any-return]

    def body_lengths(self) -> Ints | None:
        """Each episode's body's length, if the table knows it."""
        length = self.table.body_length
        return None if length is None else length[self.table.body_of[np.asarray(self.episodes, dtype=np.int64)]]

    def union(self) -> set[str]:
        """Every term of the episodes."""
        entries = self._bodies[3]
        return set(map(self.table.names.__getitem__, set(self.table.entry_term[entries].tolist())))


@dataclass(frozen=True)
class TermSets:
    """Some episodes' terms given as sets (or tuples) of terms, counted as TableTerms counts them."""

    sets: Sequence[Collection[str]]

    def counts(self) -> Counter[str]:
        return Counter(chain.from_iterable(map(set, self.sets)))

    def hits(self, keys: Collection[str]) -> list[int]:
        return list(map(len, map(set(keys).intersection, self.sets)))

    def union(self) -> set[str]:
        return set().union(*self.sets)

    def body_lengths(self) -> Lengths | None:
        return None  # sets hold no lengths: the plan measures the texts


def term_table(texts: Sequence[str]) -> TermTable:
    """The TermTable of these episodes' texts: the same terms as `episode_terms`, as arrays.

    Cut as `episode_terms` cuts, then every word is given its term's number
    in one pass, and the bodies are told apart by the separators between
    them (a running count), with no loop per body.
    """
    distinct, body_of = _first_seen(_bodies(texts))
    words = _words(distinct)
    length = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
    if words is None:  # a body holds the separator: cut one by one
        return replace(table_of(body_of, list(map(_cut, distinct))), body_length=length)
    spelt, word_of = _first_seen(words)  # every distinct word, and each word's among them
    term_of = _stems(spelt)
    names = sorted(set(term_of.values()))
    term_number = dict(zip(names, range(len(names))))
    code = {word: term_number[term] for word, term in term_of.items()}  # -1 for no content word
    code[_SEPARATOR] = -2
    codes = np.fromiter(map(code.get, spelt, repeat(-1)), dtype=np.int64, count=len(spelt))[word_of]
    body = np.cumsum(codes == -2)  # a word's body: the separators before it
    content = codes >= 0
    entry_body, entry_term = _distinct_entries(body[content], codes[content], len(names))
    return TermTable(names, len(distinct), body_of, entry_body, entry_term, length)


def _first_seen(values: Sequence[str]) -> tuple[list[str], Ints]:
    """The distinct values in order of first appearance, and each value's number among them.

    One pass with one hash of each value: each is numbered by where it first
    appears, then those places by their order (a dict of the distinct
    values first and a lookup of each after cost a fifth more).
    """
    at: dict[str, int] = {}
    first = np.fromiter(map(at.setdefault, values, count()), dtype=np.int64, count=len(values))
    rank = np.empty(len(values), dtype=np.int64)
    rank[np.fromiter(at.values(), dtype=np.int64, count=len(at))] = np.arange(len(at))
    return list(at), rank[first]


def table_of(body_of: Ints, terms_by_body: Sequence[Collection[str]]) -> TermTable:
    """The TermTable of bodies given their terms (repeats within a body counted once)."""
    names = sorted(set(chain.from_iterable(terms_by_body)))
    number = dict(zip(names, range(len(names))))
    flat = list(chain.from_iterable(terms_by_body))
    term = np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
    sizes = np.fromiter(map(len, terms_by_body), dtype=np.int64, count=len(terms_by_body))
    body = np.repeat(np.arange(len(terms_by_body), dtype=np.int64), sizes)
    entry_body, entry_term = _distinct_entries(body, term, len(names))
    return TermTable(names, len(terms_by_body), body_of, entry_body, entry_term)


def _distinct_entries(body: Ints, term: Ints, terms: int) -> tuple[Ints, Ints]:
    """(body, term) pairs sorted by body then term, each once."""
    if not len(body):
        return body, term
    key = np.sort(body * max(terms, 1) + term)
    key = key[np.r_[True, key[1:] != key[:-1]]]
    return key // max(terms, 1), key % max(terms, 1)
