"""A mind's memories: writing them, retracting them, and retrieving them.

Every stimulus becomes an *episodic* memory; *semantic* and *procedural*
memories come from consolidation, reflection and operators. A memory may be
derived from others (`memory_links`). Memories are never edited: the text of a
row never changes, and a retraction is an event (`memory_retracted`) plus a
status. The only other columns that change are the access bookkeeping
(`last_access`, `access_count`), and only on retrieval, recorded by the
`memory_retrieved` event written in the same job.

Writing helpers (`write_memory`, `retrieve`, `retract`) are writer jobs: run
them on the writer (`store.writer.run_sync(lambda db: ...)`), which wraps each
job in a savepoint, so a job that raises leaves nothing behind. They check
their inputs before they write anything all the same.

Retrieval
---------

The query text is cut into words (runs of letters and digits, as FTS5's
unicode61 tokenizer cuts them), lower-cased; stop-words and one-character
words are dropped, duplicates too, and at most `MAX_TERMS` are kept. Each term
is quoted as an FTS5 string and the terms are OR-ed, so no user text ever
reaches MATCH as syntax: `NEAR`, `OR`, `*`, `-`, quotes and parentheses are
only words or separators. A query with no terms left matches nothing.

A term found in at least half of the mind's memories (and in more than
`COMMON_MIN_DOCS` of them) is dropped before the search: with n of N
documents holding it, bm25's IDF ln((N - n + 0.5) / (n + 0.5)) is not
positive, so FTS5 weighs it 1e-6 and it cannot tell memories apart, yet it
would make nearly every memory a candidate and cost a bm25 score each (a
mind told "hello" ten thousand times would score ten thousand memories every
cycle). n and N come from `memory_terms`, which `write_memory` keeps: per
mind, the number of memories each stem occurs in (porter stems of content
words, as FTS5's porter tokenizer stores them) and, under the empty term,
the number of memories. FTS5's own vocabulary table cannot serve: it counts
a term's documents by reading its whole posting list. Below
`COMMON_MIN_DOCS` every term is kept, so small minds rank as plain bm25 does.

The candidates are the max(CANDIDATES, limit) best matches by FTS5 bm25
(CANDIDATES = 50; ties by id) among the mind's active memories not
excluded. Each candidate gets

    score = W_REL x relevance + W_REC x recency + W_IMP x importance

    relevance  = r / max(r over the candidates), r = -bm25 (bm25 is <= 0 in
                 FTS5, lower is better); 1 for all if every r is 0
    recency    = 0.5 ** (age / RECENCY_HALF_LIFE), age = now - (last_access or
                 created_at) in clock seconds, never below 0
    importance = as stored at write time (see `importance`)

with W_REL = 0.5, W_REC = 0.25, W_IMP = 0.25 and RECENCY_HALF_LIFE = 7 days
(close to the Generative Agents decay of 0.995 per hour, a half-life of about
5.8 days). All three components are in [0, 1], so the score is too.
Relevance carries half the weight because the candidates were chosen by it;
recency and importance together weigh as much, so a fresh or important
memory overtakes a somewhat better but stale, minor match, and among equal
matches the fresher, then the more important, comes first. Results are
ordered by score, highest first, ties broken by the lower id (the memory
written first), and the top `limit` are returned.

Everything is a function of the store and the arguments (`now` included), so
the same store and the same query give the same memories and the same scores.
One caveat: bm25's IDF and average length are those of the whole FTS table,
i.e. of every mind on the host, so the raw bm25 of a mind's memory shifts
slightly if other minds' memories change; normalising within the candidates
removes most, not all, of that.

Retrieval that returns anything updates `last_access` (to `now`) and
`access_count` of each returned memory and appends one `memory_retrieved`
event (actor `process:retrieval`) citing each returned memory in rank order,
in the same job. Retrieval that finds nothing writes nothing. `rank` gives
the same answer without any of those writes (for previews and benchmarks);
`search` is the operator's read-only full-text search.

This package owns the `memories`, `memories_fts`, `memory_terms` and
`memory_links` tables. Its modules:

- `model`: what a memory is, the limits and weights above, the checks on what callers give;
- `importance`: a memory's importance, estimated when it is written;
- `terms`: a query cut into terms, the common ones dropped;
- `writing`: memories written (one or many, with their links) and retracted;
- `retrieval`: `rank` and `retrieve`;
- `reads`: by id, listed, as of an event, `search`, and what archiving keeps.
"""
