"""Beliefs and the evidence behind them.

A belief is a proposition about a subject, held with a confidence computed
from its evidence (`noemad.cognition.confidence`). Subjects and propositions
are normalised (case, spacing, punctuation, leading articles) so that "one
subject" and "the same proposition" are decidable. Status: `active`;
`contested` when strong evidence stands on both sides; `rejected` and
`pinned` by operators — a pinned or rejected belief records new evidence but
its confidence is not moved by it until an operator sets it `active` again.

Every change is a `belief_created` or `belief_updated` event, caused by what
brought the change and citing what it rests on, written in the same
transaction as the change; its data is a `BeliefChange`. This package owns
the `beliefs` and `evidence` tables (a source's trust, which sets an item's
credibility, is `noemad.cognition.trust`'s): other modules read them through
the functions here and change them only by calling them. Its modules:

- `model`: what a belief and an item of evidence are, and how a proposition is keyed;
- `change`: `BeliefChange`, the data of every belief event;
- `bulk`: items of evidence added, an event per belief: the one way in, for many items over many propositions (consolidation) or one;
- `evidence`: one item added (through `bulk`, its event naming the item), or items withdrawn;
- `corrections`: an operator's correction, and a missed prediction rejecting its hypothesis;
- `recording`: what every change shares: the confidence recomputed, the event and the belief's history written;
- `queries`: the reads other modules need.
"""
