"""Consolidation: recurring episodes become a generalisation, an inference belief and a semantic memory.

One run (`run`, a consolidation job) takes the mind's episodes of the last
`window` (30 days) that are not consolidated yet, finds the clusters of
episodes that recur, and for each cluster of at least `min_episodes` (3)
writes a belief and a semantic memory that say the same. Episodes are never
modified: the semantic memory's links to them (`memory_links`) and its row in
`consolidations` (its job) say they are consolidated; the view `consolidated`
lists them, an episode a row.
An operator may reject a generalisation (`reject`).

The package, in the order a run takes it:

| module        | holds                                                                           |
|---------------|---------------------------------------------------------------------------------|
| `select`      | the SQL reads: the episodes to consider, each clustered episode's speaker        |
| `tokenise`    | an episode's terms: speaker prefix dropped, content words, Snowball stems; a run's as a `TermTable` (arrays) |
| `clustering`  | the pure algorithm: frequent associated pairs of terms (lift, or a share of the window's or a speaker's episodes), taken greedily; counted in numpy |
| `proposition` | a cluster's key terms, representative, speakers and plain proposition            |
| `generalise`  | asking the summarise model for a generalisation, through the wording guard      |
| `recording`   | the writes: a cluster's belief, semantic memory and consolidations row; the event |
| `job`         | `run`: the stages, cluster by cluster, and the job's outputs                     |
| `rejection`   | `reject`: the operator's rejection of a generalisation                           |
"""

from noemad.background.consolidation.clustering import (
    LIFT_FLOOR, MAX_TERMS, MIN_COSINE, MIN_DAYS, MIN_LIFT, MIN_OCCASIONS, MIN_SHARE, Authors, Cluster, Pairs, cluster, cluster_table,
)
from noemad.background.consolidation.generalise import GENERALISING_WORDS, SYSTEM, Wording, prompt_text, unsupported, word
from noemad.background.consolidation.job import DEFAULT_MIN_EPISODES, DEFAULT_WINDOW, run, summary
from noemad.background.consolidation.proposition import EpisodeInfo, Episodes, Plan, plain_proposition, plan, who
from noemad.background.consolidation.recording import ACTOR, EPISODE_WEIGHT, KIND, ClusterWrite, Skipped, Written, record, write_clusters
from noemad.background.consolidation.rejection import DEFAULT_REASON, REJECTED, generalisation_belief, reject
from noemad.background.consolidation.select import Window, load_episodes, load_speakers, load_window
from noemad.background.consolidation.tokenise import TermTable, Terms, episode_terms, strip_speaker, term_table, terms

__all__ = [
    "ACTOR", "DEFAULT_MIN_EPISODES", "DEFAULT_REASON", "DEFAULT_WINDOW", "EPISODE_WEIGHT", "GENERALISING_WORDS", "KIND",
    "LIFT_FLOOR", "MAX_TERMS", "MIN_COSINE", "MIN_DAYS", "MIN_LIFT", "MIN_OCCASIONS", "MIN_SHARE", "Authors", "Pairs", "REJECTED", "SYSTEM", "Cluster", "ClusterWrite", "EpisodeInfo", "Episodes", "Plan", "Skipped",
    "TermTable", "Terms", "Window", "Wording", "Written", "cluster", "cluster_table", "episode_terms", "generalisation_belief", "load_episodes", "load_speakers", "load_window",
    "plain_proposition", "plan", "prompt_text", "record", "reject", "run", "strip_speaker", "summary", "term_table", "terms",
    "unsupported", "who", "word", "write_clusters",
]
