"""Consolidation: recurring episodes become a generalisation, an inference belief and a semantic memory.

One run (`run`, a consolidation job) takes the mind's episodes of the last
`window` (30 days) that are not consolidated yet, finds the clusters of
episodes that recur, and for each cluster of at least `min_episodes` (3)
writes a belief and a semantic memory that say the same. Episodes are never
modified: that one is consolidated is recorded beside it (`consolidated`).

Episodes
--------
The mind's active episodic memories created within `window` before now
(both ends included) with no `consolidated` row, in id order.

Terms
-----
An episode's text starts with who it is from ("alice said on cli: ...",
"observed from sensor-1: ...", "bob asserted: ..."): everything up to the
first ": " is that *speaker prefix*, and it is dropped (`strip_speaker`), so
a speaker's name or channel alone never makes episodes alike. The rest is
cut into content words (`noemad.words.content_words`: lower-cased
runs of letters and digits of two characters or more, stop-words dropped)
and each is given its Snowball English stem. An episode's *terms* are its
distinct stems.

Clustering: frequent associated pairs, taken greedily
-----------------------------------------------------
A generalisation rests on two terms that recur *together*: "select" and
"go" in "I'll select Go for the parser", "Selected Go again for the metrics
service", ... One shared term is only a topic; two that keep appearing
together are a habit. The algorithm (`cluster`):

1. *Document frequency.* df(t) = episodes whose terms hold t. Terms with
   df < min_episodes cannot be shared by a cluster and are dropped.
2. *Bounded terms.* Each episode keeps at most MAX_TERMS (12) of its
   remaining terms: those with the highest df, ties by the term. (A long
   message still costs at most 66 pairs.)
3. *Pairs.* support(a, b) = episodes that kept both a and b. A pair is a
   *candidate* when all three hold:
   - support >= min_episodes;
   - cosine = support / sqrt(df(a) x df(b)) >= MIN_COSINE (0.4): the two
     terms mostly occur together. Cosine is null-invariant (unrelated
     episodes added to the window do not change it), so a habit is found
     the same among 10 episodes as among 100,000; and a term that occurs
     everywhere does not pair with a rare one by accident;
   - lift = support x max(N, LIFT_FLOOR) / (df(a) x df(b)) >= MIN_LIFT
     (1.5), N the number of episodes: the terms occur together more often
     than they would by chance. Two independent common words ("please" and
     "thanks", each in 40% of the episodes) have a cosine near 0.4 but a
     lift near 1. A window of fewer than LIFT_FLOOR (200) episodes is
     measured as if it held 200: a handful of episodes, most about one
     thing, cannot show independence either way, and the cosine and
     min_episodes decide. The price: a pattern in more than two thirds of
     a large window cannot show a lift of 1.5 and is not consolidated.
4. *Greedy.* Repeatedly take the candidate with the most episodes not yet
   in a cluster (ties: the higher cosine, then the pair in term order);
   if those episodes number at least min_episodes they become a cluster
   and leave every other candidate; else the candidate is dropped. A
   candidate whose count fell since it was queued is queued again with its
   new count (counts only fall, so the first candidate found with an
   up-to-date count is the greatest: the result is that of the eager
   greedy). Episodes in no cluster are left for a later run.

What it does not tell apart: a fixed expression used in varied episodes
("last night", "next week") recurs together as a habit does, and becomes a
cluster if it passes the thresholds.

Everything is a function of the episodes' terms: ties are broken by terms,
never by ids or row order, so the same episodes give the same clusters in
whatever order they were stored (a test shuffles them). Cost, for N
episodes of at most MAX_TERMS kept terms each: tokenising and stemming
O(text); df and pair counting O(N x MAX_TERMS^2), in C (`Counter` over
`itertools.combinations`); postings O(N x MAX_TERMS); the greedy
O(P log P + sum over the candidates taken or requeued of the smaller
posting set), P the candidates, and each episode leaves the postings once.
So about linear in N. Memory: the texts, one tuple of interned stems per
episode, the pair counts and the postings. bench/consolidation.py measures
time and peak memory from 10,000 to 300,000 episodes.

Each cluster
------------
- *Key terms*: the cluster's pair first, then other terms in at least half
  (KEY_SHARE) of its episodes, most frequent first, at most MAX_KEY_TERMS.
- *Representative*: the episode holding the most key terms, then the
  shortest text, then the first text in code-point order, then the
  earliest, then the lowest id.
- *Speakers*: an episode's speaker comes from the stimulus it records
  (memories.event_id): a message's `author`, an observation's or
  assertion's `source`, else the event's actor ("unknown" for an episode
  with no stimulus).
- *Plain proposition* (`plain_proposition`), e.g.::

      alice repeatedly mentioned select and go (5 episodes, 2026-01-02 to 2026-01-08), e.g. "I'll select Go for the new parser".

  with the key terms the representative holds, as it spells them
  (lower-cased) and in its order; up to three speakers (most episodes
  first, then "and N others"); the dates of the first and last episode;
  and the representative without its prefix (at most MAX_QUOTE
  characters). The subject is the pair as spelt there, in term order
  ("go select").
- *Model wording*: while the run has model calls left (`model_calls`, 8),
  the `summarise` role is asked for a one-sentence generalisation of each
  cluster, largest first, given at most PROMPT_EPISODES episodes (most
  representative first) and the pair's words. The answer is used only if
  it is *supported* (`unsupported` returns what is not):
    * one sentence (no ". ", "! ", "? " or line break inside), of at most
      MAX_GENERALISATION (200) characters, not cut short by max_tokens;
    * it mentions both terms of the cluster's pair;
    * each of its content words has a stem found in the cluster's
      episodes (any of them, not only those shown), in its speakers'
      names, or among GENERALISING_WORDS (often, usually, repeatedly,
      prefers, ...: words that generalise without adding a fact);
    * each number in it (digits with inner . : , / -) appears in an episode.
  An unsupported answer is discarded, listed in the outputs' `discarded`
  (cluster, text, `why` as a list, `reason` as one line, model_call), and
  the plain proposition is used. No model, a refusal (budget,
  hold, pause) or an error also leave the plain proposition, with the
  reason (`reason`: no_calls, no_model, budget, held, refused,
  model_error, unsupported; `detail` says more); after a refusal no
  further call is asked for, and the clusters left get the same reason.
  Every call made or refused is recorded on the job (`ctx.record_call`).

Writing
-------
Clusters are taken one at a time, largest first: planned in a worker
thread (the speakers and stimuli of its episodes read then), worded on the
loop if a model call is left, and queued as one writer job (atomic; at
most WRITE_AHEAD queued at once, so other writes interleave and commits
are grouped):

1. the inference belief, through `beliefs.add_evidence_many`: one item per
   episode, stance support, weight EPISODE_WEIGHT (0.3), source the
   episode's speaker, credibility the mind's trust in the speaker, brought
   by the episode's stimulus event (or its memory_created event if it has
   none). Items of one speaker count with the single-source discount
   (noemad.cognition.confidence). One `belief_created` event (or
   `belief_updated`, if the proposition was already believed), actor
   `process:consolidation`, caused by the job's `mode_changed` start event,
   citing the model call that worded it (if any) and the episodes, the
   first by id up to 64 refs in all: the timeline walks from it to the
   episodes' memory_created events and on to their stimuli.
   A proposition whose belief an operator rejected is not consolidated
   again: the cluster is skipped (listed in `skipped`) and its episodes
   are left as they are.
2. the semantic memory (`memory.write_memory`): the proposition, derived
   from every episode; its memory_created event is caused by the belief's
   event (which is how `reject` finds the belief) and cites the first 63
   episodes by id.
3. a `consolidated` row per episode: the job and the semantic memory.

A cluster that fails to write (a NoemaError) is listed in `failed` and the
others go on. Then the `consolidation` event (one writer job): actor
`process:consolidation`, caused by the job's start event, text the summary
sentence, data the outputs (the job's id included; `clusters` cut to the
first MAX_EVENT_CLUSTERS with `clusters_total`), citing each cluster's
belief and memory, in cluster order, at most 64 refs. It is written when
nothing was clustered too, and then says so.

Rejecting
---------
`reject` (a writer job, `noemactl consolidate reject MEMORY_ID`): only a
semantic memory consolidation wrote (one with `consolidated` rows pointing
to it) can be rejected. It writes a `generalisation_rejected` event
(actor the operator, text the reason or DEFAULT_REASON if it is blank,
citing the memory and its belief, data the memory, the belief, the
episodes' count and the reason); then, caused by it, the memory is
retracted (`memory_retracted`) and the belief set `rejected` by a
correction (`belief_updated`, confidence 0): a rejected belief records
later evidence without being moved by it. The belief is found through the
recorded link: the event that caused the memory's memory_created event is
the belief's. The episodes are
untouched and stay consolidated: were they freed, the next run would find
the same cluster and write the generalisation the operator just rejected.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import math
import re
import sys
from collections import Counter, deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, combinations, repeat
from typing import Any, Literal, NamedTuple

from sqlite_utils import Database

from noemad.background.jobs import JobContext, start_event
from noemad.clock import iso, span_seconds
from noemad.cognition.beliefs import NewEvidence, add_evidence_many, check_proposition, correct, normalise
from noemad.cognition.memory import MAX_REASON, get_memory, retract, write_memory
from noemad.cognition.narrative import refusal_reason, unquote
from noemad.words import content_words, snowball_stems
from noemad.errors import Conflict, InvalidInput, ModelError, NoemaError
from noemad.events import Event, EventDraft, Ref, append

# --- thresholds (see the module docstring) -------------------------------------------

MAX_TERMS = 12  # terms an episode keeps for pair counting
MIN_COSINE = 0.4  # support / sqrt(df(a) df(b)) of a candidate pair
MIN_LIFT = 1.5  # support x max(N, LIFT_FLOOR) / (df(a) df(b)) of a candidate pair
LIFT_FLOOR = 200  # a smaller window is measured as if it held this many episodes
KEY_SHARE = 0.5  # a key term is in at least this share of the cluster's episodes
MAX_KEY_TERMS = 6
MAX_QUOTE = 160  # characters of the representative episode quoted in the proposition
MAX_NAME = 40  # characters of a speaker's name in the proposition
SPEAKERS_NAMED = 3
EPISODE_WEIGHT = 0.3  # weight of one episode as evidence
MAX_REFS = 64  # what one event may cite
MAX_EVENT_CLUSTERS = 64  # clusters listed in the consolidation event's data
WRITE_AHEAD = 8  # cluster writes queued on the writer at once

# Model wording.
PROMPT_EPISODES = 20
PROMPT_EPISODE_CHARS = 300
MAX_GENERALISATION = 200  # characters
MAX_ANSWER_TOKENS = 120
# Words a generalisation may use though no episode does: they say how often or
# how habitually, or name the act of choosing, without adding a fact.
GENERALISING_WORDS = frozenset(
    """
    often usually repeatedly regularly frequently generally typically consistently habitually mostly commonly
    tends tend tended keeps keep kept again times many several recurring recurrently habit habits pattern
    user users prefers prefer preferred preference favours favour favors favor likes like
    chooses choose chose chosen picks pick picked selects select selected uses use used
    """.split()
)

ACTOR = "process:consolidation"
KIND = "consolidation"  # the summary event
REJECTED = "generalisation_rejected"
UNKNOWN_SPEAKER = "unknown"
DEFAULT_WINDOW = "30d"
DEFAULT_MIN_EPISODES = 3

_SENTENCE_BREAK = re.compile(r"[.!?]+[\"')\]]*\s+\S|\n")
_NUMBER = re.compile(r"\d+(?:[.:,/-]\d+)*")

WordedBy = Literal["plain", "model"]
REFUSALS = ("no_model", "budget", "held", "refused")  # reasons a call was not made


# --- terms ------------------------------------------------------------------------------


def strip_speaker(text: str) -> str:
    """An episode's text without its speaker prefix (everything up to the first ": "), or the text if it has none."""
    head, sep, rest = text.partition(": ")
    return rest if sep else head


def terms(text: str) -> list[str]:
    """The Snowball stems of an episode's content words, its prefix stripped, in order, repeats kept."""
    return snowball_stems(content_words(strip_speaker(text)))


Terms = tuple[str, ...]  # an episode's distinct terms, in order of first appearance


def episode_terms(texts: Iterable[str]) -> list[Terms]:
    """Each episode's distinct terms (the tokenising stage of a run).

    Tuples of interned strings: a stem shared by a thousand episodes is
    stored once, and a tuple takes a third of a set's memory.
    """
    intern = sys.intern
    return [tuple(dict.fromkeys(map(intern, snowball_stems(content_words(strip_speaker(text)))))) for text in texts]


# --- clustering ---------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    """Episodes (by index in the input) that share a candidate pair of terms."""

    pair: tuple[str, str]
    members: tuple[int, ...]  # ascending indices
    cosine: float
    lift: float


def _trim(kept: list[str], df: Counter[str]) -> list[str]:
    """At most MAX_TERMS of an episode's terms: the most frequent, ties by term; in term order."""
    return sorted(sorted(kept, key=lambda t: (-df[t], t))[:MAX_TERMS])


def cluster(term_sets: Sequence[Collection[str]], min_episodes: int) -> list[Cluster]:
    """Clusters of the episodes whose terms are `term_sets`, in the order they were taken (see the module docstring)."""
    if min_episodes < 2:
        raise InvalidInput(f"a cluster needs at least 2 episodes, not {min_episodes}")
    n = len(term_sets)
    if n < min_episodes:
        return []
    df: Counter[str] = Counter(chain.from_iterable(term_sets))
    frequent = {t for t, c in df.items() if c >= min_episodes}
    kept = [sorted(frequent.intersection(s)) for s in term_sets]
    for i, k in enumerate(kept):
        if len(k) > MAX_TERMS:
            kept[i] = _trim(k, df)
    pairs: Counter[tuple[str, str]] = Counter(chain.from_iterable(map(combinations, kept, repeat(2))))

    floor = max(n, LIFT_FLOOR)
    queue: list[tuple[int, float, str, str]] = []
    lifts: dict[tuple[str, str], float] = {}
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
    postings: dict[str, set[int]] = {t: set() for t in wanted}
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
        clusters.append(Cluster((a, b), tuple(sorted(members)), -neg_cosine, lifts[(a, b)]))
        for i in members:  # each episode leaves the postings once
            for t in kept[i]:
                posting = postings.get(t)
                if posting is not None:
                    posting.discard(i)
    return clusters


# --- propositions -------------------------------------------------------------------


class EpisodeInfo(NamedTuple):
    """What a cluster's proposition and evidence need of one episode (a named tuple: one per clustered episode)."""

    id: int
    text: str
    created_at: str
    speaker: str
    brought_by: int  # the stimulus event, or the episode's memory_created event


@dataclass(frozen=True)
class Plan:
    """A cluster ready to word and write."""

    index: int
    cluster: Cluster
    episodes: tuple[EpisodeInfo, ...]  # in id order
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


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def who(speakers: Sequence[tuple[str, int]]) -> str:
    """Up to SPEAKERS_NAMED speakers, most episodes first: "alice", "alice and bob", "alice, bob and 3 others"."""
    names = [_clip(name, MAX_NAME) for name, _ in speakers]
    if len(names) <= SPEAKERS_NAMED:
        return _join(names)
    rest = len(names) - (SPEAKERS_NAMED - 1)
    return _join([*names[: SPEAKERS_NAMED - 1], f"{rest} others"])


def plain_proposition(
    speakers: Sequence[tuple[str, int]], shown_terms: Sequence[str], count: int, first: str, last: str, quote: str
) -> str:
    """The deterministic sentence a cluster is believed as, unless a model words it (see the module docstring)."""
    when = f"on {first[:10]}" if first[:10] == last[:10] else f"{first[:10]} to {last[:10]}"
    return (
        f"{who(speakers)} repeatedly mentioned {_join(list(shown_terms))} ({count} episodes, {when}),"
        f' e.g. "{_clip(quote, MAX_QUOTE)}".'
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


def plan(index: int, found: Cluster, episodes: Sequence[EpisodeInfo], term_sets: Sequence[Collection[str]]) -> Plan:
    """Key terms, representative, speakers and plain proposition of one cluster.

    `episodes` and `term_sets` are the cluster's, in the order of `found.members`.
    """
    size = len(episodes)
    counts: Counter[str] = Counter(chain.from_iterable(term_sets))
    a, b = found.pair
    others = sorted((t for t, c in counts.items() if t not in found.pair and c >= KEY_SHARE * size), key=lambda t: (-counts[t], t))
    key_terms = (a, b, *others[: MAX_KEY_TERMS - 2])
    keys = set(key_terms)

    def rank(i: int) -> tuple[int, int, str, str, int]:
        e = episodes[i]
        body = strip_speaker(e.text)
        return (-len(keys.intersection(term_sets[i])), len(body), body, e.created_at, e.id)

    order = heapq.nsmallest(PROMPT_EPISODES, range(size), key=rank)  # the keys are unique (ids): a total order
    representative = episodes[order[0]]
    words = _spellings(representative.text, key_terms)
    by_speaker = Counter(e.speaker for e in episodes)
    speakers = tuple(sorted(by_speaker.items(), key=lambda kv: (-kv[1], kv[0])))
    first, last = min(e.created_at for e in episodes), max(e.created_at for e in episodes)
    text = plain_proposition(speakers, list(words.values()), size, first, last, strip_speaker(representative.text))
    proposition, _ = check_proposition(text, "x")  # cleaned exactly as the belief stores it
    subject = " ".join(words.get(t, t) for t in found.pair)
    return Plan(
        index=index,
        cluster=found,
        episodes=tuple(sorted(episodes, key=lambda e: e.id)),
        key_terms=key_terms,
        words=words,
        representative=representative,
        ordered=tuple(episodes[i] for i in order),
        speakers=speakers,
        plain=proposition,
        subject=subject,
        first=first,
        last=last,
    )


# --- model wording ------------------------------------------------------------------

SYSTEM = (
    "You generalise from a mind's episodes: things said to it or observed by it that recur. Answer with one sentence,"
    f" at most {MAX_GENERALISATION} characters, stating the habit or regularity the episodes share, as a general"
    " statement about who said or observed them. Use only words, names and numbers found in the episodes, plus words"
    " such as often, usually, repeatedly, regularly or prefers; include the shared words you are given. Add no facts,"
    " opinions or hedges. Answer with the sentence only."
)

_GENERALISING_STEMS = frozenset(snowball_stems(sorted(GENERALISING_WORDS)))


def prompt_text(p: Plan) -> str:
    """The user turn asking for a cluster's generalisation."""
    lines = [
        f"- {e.speaker}, {e.created_at[:10]}: {_clip(strip_speaker(e.text), PROMPT_EPISODE_CHARS)}" for e in p.ordered
    ]
    shown = f"{len(p.ordered)} shown" if len(p.ordered) < len(p.episodes) else "all shown"
    pair = [p.words.get(t, t) for t in p.cluster.pair]
    return (
        f"Episodes ({len(p.episodes)} in all, {shown}):\n" + "\n".join(lines) + f"\n\nThey share the words: {_join(pair)}."
        "\nOne sentence:"
    )


def unsupported(answer: str, p: Plan, term_sets: Sequence[Collection[str]]) -> list[str]:
    """Why `answer` is not a supported generalisation of the cluster; [] if it is (see the module docstring).

    `term_sets` are the terms of all of the cluster's episodes.
    """
    problems: list[str] = []
    text = answer.strip()
    if not text:
        return ["the answer is empty"]
    if len(text) > MAX_GENERALISATION:
        problems.append(f"it is {len(text)} characters long, more than {MAX_GENERALISATION}")
    if _SENTENCE_BREAK.search(text):
        problems.append("it is more than one sentence")
    words = content_words(text)
    stems = snowball_stems(words)
    have = set(stems)
    for t in p.cluster.pair:
        if t not in have:
            problems.append(f"it does not mention {p.words.get(t, t)!r}")
    known = set().union(*term_sets)
    names = set(snowball_stems(content_words(" ".join(name for name, _ in p.speakers))))
    extra: list[str] = []
    for word, stem in zip(words, stems):
        if word.isdigit():
            continue  # numbers are checked whole below
        if stem not in known and stem not in names and stem not in _GENERALISING_STEMS and word not in extra:
            extra.append(word)
    if extra:
        problems.append("no episode says " + ", ".join(repr(w) for w in extra[:8]) + (", …" if len(extra) > 8 else ""))
    numbers = set(_NUMBER.findall(" ".join(strip_speaker(e.text) for e in p.episodes)))
    missing = [n for n in dict.fromkeys(_NUMBER.findall(text)) if n not in numbers]
    if missing:
        problems.append("no episode has the number " + ", ".join(missing[:8]))
    return problems


@dataclass
class Wording:
    """How a cluster's proposition was worded, and why it stayed plain if it did."""

    text: str
    worded_by: WordedBy = "plain"
    reason: str | None = None  # why plain: no_calls, no_model, budget, held, refused, model_error, truncated, unsupported
    detail: str | None = None
    call_id: int | None = None
    discarded: dict[str, Any] | None = None  # the unsupported answer and why

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"worded_by": self.worded_by}
        if self.reason:
            out["reason"] = self.reason
        if self.detail:
            out["detail"] = self.detail
        if self.call_id is not None:
            out["model_call"] = self.call_id
        return out


async def word(ctx: JobContext, p: Plan, term_sets: Sequence[Collection[str]]) -> Wording:
    """Ask the summarise role for a cluster's generalisation; keep it only if supported. Never raises a ModelError."""
    from noemad.models import Block, Prompt, Turn

    prompt = Prompt(
        role="summarise",
        mind=ctx.mind,
        system=(Block(SYSTEM),),
        messages=(Turn.user(prompt_text(p)),),
        max_tokens=MAX_ANSWER_TOKENS,
    )
    try:
        response = await ctx.gateway.complete(prompt)
    except ModelError as exc:
        ctx.record_call(exc.call_id)
        return Wording(p.plain, reason=refusal_reason(exc), detail=exc.detail, call_id=exc.call_id)
    ctx.record_call(response.call_id)
    answer = " ".join(unquote(response.text).split())
    if response.stop_reason == "max_tokens":
        why = ["the model ran out of tokens before it finished"]
    else:
        why = unsupported(answer, p, term_sets)
    if why:
        return Wording(
            p.plain,
            reason="unsupported",
            detail="; ".join(why),
            call_id=response.call_id,
            discarded={
                "cluster": p.index,
                "text": _clip(answer, 400),
                "why": why,
                "reason": f'"{_clip(answer, 120)}": ' + "; ".join(why),  # the line a human reads
                "model_call": response.call_id,
            },
        )
    proposition, _ = check_proposition(answer, "x")
    return Wording(proposition, "model", call_id=response.call_id)


# --- reading ------------------------------------------------------------------------

_EPISODES_SQL = """
SELECT m.id, m.text
  FROM memories m
 WHERE m.mind = ? AND m.kind = 'episodic' AND m.created_at >= ? AND m.created_at <= ? AND m.status = 'active'
   AND NOT EXISTS (SELECT 1 FROM consolidated c WHERE c.memory_id = m.id)
 ORDER BY m.id
"""

# The speaker and the event that brought each episode: its stimulus, or (for an
# episode with none) the memory_created event that wrote it.
_DETAILS_SQL = """
SELECT m.id, m.created_at, e.actor, json_extract(e.data, '$.author'), json_extract(e.data, '$.source'),
       coalesce(m.event_id, (SELECT w.id FROM events w WHERE w.subject_type = 'memory' AND w.subject_id = m.id ORDER BY w.id LIMIT 1))
  FROM memories m LEFT JOIN events e ON e.id = m.event_id
 WHERE m.id IN (SELECT value FROM json_each(?))
"""


def load_episodes(db: Database, mind: str, start: float, end: float) -> tuple[list[int], list[str]]:
    """Ids and texts of the mind's episodes to consolidate (see the module docstring), in id order."""
    rows = db.execute(_EPISODES_SQL, [mind, iso(start), iso(end)]).fetchall()
    return [r[0] for r in rows], [r[1] for r in rows]


def _speaker(actor: str | None, author: Any, source: Any) -> str:
    for value in (author, source):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return actor or UNKNOWN_SPEAKER


def load_details(db: Database, ids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
    """id -> (created_at, speaker, brought_by) of these episodes."""
    out: dict[int, tuple[str, str, int]] = {}
    for memory_id, created_at, actor, author, source, brought_by in db.execute(_DETAILS_SQL, [json.dumps(list(ids))]):
        out[memory_id] = (created_at, _speaker(actor, author, source), brought_by)
    return out


# --- writing ------------------------------------------------------------------------


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
    episodes: Sequence[tuple[int, str, int]],
    model_call: int | None,
    cause: int | None,
    now: float,
    actor: str = ACTOR,
) -> Written | Skipped:
    """Write one cluster (a writer job; atomic): the belief, the semantic memory, the consolidated rows.

    `episodes` are (memory id, speaker, brought_by) in id order. See the
    module docstring for what each write holds.
    """
    row = db.execute(
        "SELECT id, status FROM beliefs WHERE mind = ? AND proposition_key = ? AND proposition_key != ''", [mind, normalise(proposition)]
    ).fetchone()
    if row is not None and row[1] == "rejected":
        return Skipped(row[0], f"belief {row[0]} says the same and an operator rejected it")
    refs = [Ref("model_call", model_call)] if model_call is not None else []
    refs.extend(Ref("memory", memory_id) for memory_id, _, _ in episodes[: MAX_REFS - len(refs)])
    added = add_evidence_many(
        db,
        mind=mind,
        proposition=proposition,
        subject=subject,
        kind="inference",
        items=[NewEvidence("support", EPISODE_WEIGHT, speaker, brought_by) for _, speaker, brought_by in episodes],
        now=now,
        actor=actor,
        cause=cause,
        cites=refs,
    )
    memory, memory_event = write_memory(
        db,
        mind=mind,
        kind="semantic",
        text=proposition,
        now=now,
        actor=actor,
        cause=added.event.id,
        cycle_id=None,
        derived_from=[memory_id for memory_id, _, _ in episodes],
    )
    at = iso(now)
    db.conn.executemany(
        "INSERT INTO consolidated (memory_id, mind, job_id, into_memory, at) VALUES (?, ?, ?, ?, ?)",
        [(memory_id, mind, job_id, memory.id, at) for memory_id, _, _ in episodes],
    )
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


# --- the job ------------------------------------------------------------------------


@dataclass
class _Found:
    """What the off-loop stages found: the episodes considered, their terms and the clusters."""

    ids: list[int]
    texts: list[str]
    term_sets: list[Terms]
    clusters: list[Cluster]
    cause: int | None  # the job's start event

    def terms_of(self, c: Cluster) -> list[Terms]:
        return [self.term_sets[i] for i in c.members]


def _find(ctx: JobContext, start: float, end: float, min_episodes: int) -> _Found:
    """Load, tokenise and cluster, on a reader in a worker thread."""
    db = ctx.store.reader()
    ctx.progress(0.02, "loading episodes")
    ids, texts = load_episodes(db, ctx.mind, start, end)
    ctx.progress(0.1, f"clustering {len(ids):,} episodes")
    term_sets = episode_terms(texts)
    clusters = cluster(term_sets, min_episodes)
    return _Found(ids, texts, term_sets, clusters, start_event(db, ctx.mind, ctx.job.id))


def _plan(ctx: JobContext, found: _Found, index: int) -> Plan:
    """Plan one cluster, on a reader in a worker thread (while the writer writes the clusters before it)."""
    c = found.clusters[index]
    details = load_details(ctx.store.reader(), [found.ids[i] for i in c.members])
    episodes = [EpisodeInfo(found.ids[i], found.texts[i], *details[found.ids[i]]) for i in c.members]
    return plan(index, c, episodes, found.terms_of(c))


def summary(considered: int, clustered: int, clusters: int, min_episodes: int, window: str) -> str:
    """The run in one sentence."""
    if considered == 0:
        return f"nothing to consolidate: no episodes of the last {window} are left unconsolidated"
    if clusters == 0:
        return f"no generalisation: none of the {considered:,} episodes recur in a cluster of {min_episodes} or more; all are left for later"
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
    # Off the loop: tokenising and clustering a busy month takes a good part of a second.
    found = await asyncio.to_thread(_find, ctx, start, now, min_episodes)
    total = len(found.clusters)

    wordings: list[Wording] = []
    written: list[tuple[Plan, Wording, Written | Skipped | NoemaError]] = []
    pending: deque[tuple[Plan, Wording, asyncio.Future[Any]]] = deque()
    refused: Wording | None = None  # a refusal: the next call would be refused the same way, so none is asked

    async def settle_one() -> None:
        p, w, fut = pending.popleft()
        try:
            result: Written | Skipped | NoemaError = await fut
        except NoemaError as exc:  # this cluster is not written; the others go on
            result = exc
        written.append((p, w, result))
        ctx.progress(0.4 + 0.55 * len(written) / total, f"writing {len(written)}/{total}")

    try:
        for index in range(total):
            # Cluster by cluster: planning one (in a thread) overlaps the writing of those before it.
            p = await asyncio.to_thread(_plan, ctx, found, index)
            if refused is not None:
                w = Wording(p.plain, reason=refused.reason, detail=f"not asked: an earlier call was refused ({refused.detail})")
            elif ctx.calls_left > 0:
                ctx.progress(0.4 + 0.55 * len(written) / total, f"wording {index + 1}/{total}")
                w = await word(ctx, p, found.terms_of(p.cluster))
                if w.reason in REFUSALS:
                    refused = w
            else:
                w = Wording(p.plain, reason="no_calls", detail=f"the run's {getattr(ctx.settings, 'model_calls', 0)} model calls are used")
            wordings.append(w)
            job = _writer_job(ctx, p, w, [(e.id, e.speaker, e.brought_by) for e in p.episodes], found.cause)
            pending.append((p, w, asyncio.wrap_future(ctx.store.writer.submit(job))))
            if len(pending) >= WRITE_AHEAD:
                await settle_one()
        while pending:
            await settle_one()
    finally:
        # Wait for what is queued even when something failed, so nothing is written unreported.
        await asyncio.gather(*(fut for _, _, fut in pending), return_exceptions=True)

    clusters: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    clustered = 0
    for p, w, result in written:
        if isinstance(result, Written):
            clustered += len(p.episodes)
            clusters.append(
                {
                    "belief": result.belief,
                    "memory": result.memory,
                    "episodes": len(p.episodes),
                    "proposition": w.text,
                    **w.to_json(),
                    "plain": p.plain,
                    "terms": p.shown_terms,
                    "pair": list(p.cluster.pair),
                    "association": {"cosine": round(p.cluster.cosine, 4), "lift": round(p.cluster.lift, 4)},
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
            skipped.append({"cluster": p.index, "episodes": len(p.episodes), "proposition": w.text, "belief": result.belief, "why": result.reason})
        else:
            failed.append({"cluster": p.index, "episodes": len(p.episodes), "error": result.detail})
    outputs: dict[str, Any] = {
        "summary": summary(len(found.ids), clustered, len(clusters), min_episodes, window),
        "window": {"from": iso(start), "to": iso(now), "span": window},
        "min_episodes": min_episodes,
        "episodes": len(found.ids),
        "clustered": clustered,
        "left": len(found.ids) - clustered,
        "clusters": clusters,
        "beliefs": [c["belief"] for c in clusters],
        "memories": [c["memory"] for c in clusters],
        "discarded": [w.discarded for w in wordings if w.discarded is not None],
        "skipped": skipped,
        "failed": failed,
    }
    ctx.progress(0.97, "recording")
    mind, job_id, cause = ctx.mind, ctx.job.id, found.cause
    event = await ctx.store.writer.run(lambda db: record(db, mind=mind, job_id=job_id, outputs=outputs, cause=cause, now=ctx.now()))
    outputs["event"] = event.id
    return outputs


def _writer_job(ctx: JobContext, p: Plan, w: Wording, episodes: list[tuple[int, str, int]], cause: int | None) -> Any:
    mind, job_id, now = ctx.mind, ctx.job.id, ctx.now()
    model_call = w.call_id if w.worded_by == "model" else None
    return lambda db: write_cluster(
        db, mind=mind, job_id=job_id, proposition=w.text, subject=p.subject, episodes=episodes,
        model_call=model_call, cause=cause, now=now,
    )


# --- rejecting ------------------------------------------------------------------------

DEFAULT_REASON = "rejected by an operator"


def generalisation_belief(db: Database, memory_id: int) -> int | None:
    """The belief a consolidated memory states: the subject of the event that caused its memory_created event."""
    row = db.execute(
        "SELECT cause.subject_id FROM events created JOIN events cause ON cause.id = created.causation_id"
        " WHERE created.subject_type = 'memory' AND created.subject_id = ? AND created.kind = 'memory_created'"
        " AND cause.subject_type = 'belief' ORDER BY created.id LIMIT 1",
        [memory_id],
    ).fetchone()
    return None if row is None else int(row[0])


def reject(db: Database, *, memory_id: int, reason: str, now: float, actor: str) -> Event:
    """Reject a generalisation consolidation made (a writer job; see the module docstring). Returns the `generalisation_rejected` event.

    `InvalidInput` if the memory is not one consolidation wrote, `Conflict`
    if it was already rejected or retracted; nothing is written then.
    """
    memory = get_memory(db, memory_id)
    reason = " ".join((reason or "").split()) or DEFAULT_REASON
    if len(reason) > MAX_REASON:
        raise InvalidInput(f"a rejection's reason holds at most {MAX_REASON:,} characters, not {len(reason):,}")
    (episodes,) = db.execute("SELECT count(*) FROM consolidated WHERE mind = ? AND into_memory = ?", [memory.mind, memory.id]).fetchone()
    if memory.kind != "semantic" or episodes == 0:
        raise InvalidInput(
            f"memory {memory.id} is a {memory.kind} memory consolidation did not write, so it is no generalisation to reject;"
            " retract it instead, or name a memory listed in a consolidation job's clusters (`noemactl jobs show JOB`)"
        )
    if memory.status == "retracted":
        raise Conflict(f"generalisation {memory.id} is already retracted; nothing was changed")
    belief_id = generalisation_belief(db, memory.id)
    refs = [Ref("memory", memory.id)] + ([Ref("belief", belief_id)] if belief_id is not None else [])
    event = append(
        db,
        EventDraft(
            mind=memory.mind,
            kind=REJECTED,
            actor=actor,
            text=reason,
            refs=refs,
            data={"memory": memory.id, "belief": belief_id, "episodes": episodes, "reason": reason},
        ),
        now,
    )
    retract(db, memory_id=memory.id, reason=reason, now=now, actor=actor, cause=event.id)
    if belief_id is not None:
        correct(db, belief_id=belief_id, status="rejected", confidence_value=None, reason=reason, brought_by=event.id, now=now, actor=actor)
    return event
