"""Archiving: a mind's old events move out of the store into an archive file, and what stays says where it was cut.

A store grows by about seven events per stimulus (README, "Store"). An
operator archives a mind's events older than a span (`noemactl archive MIND
--older-than 180d`); they are copied into a SQLite file of their own under
the data directory, one a month (the same tables, so the causal walk runs on
it as on the store), then deleted from the store. Nothing the mind still stands on goes:

- pinned (`select.py`): events live rows point at (a belief's evidence, a
  goal's, a prediction's, a notification's event, a sleep's self-wake cause,
  a window anchor), the history of every belief and of every memory that is
  not an episode, and stimuli no cycle has taken yet;
- whole cycles: a cycle goes only if all its events go;
- never younger than the mind's consolidation window (or a day), which the
  mind still reads.

Where a kept event linked to an archived one, or was linked from one, a cut
(`cuts.py`) names the archived event, the kind of link and the archive: the
timeline shows it where the walk stops. A count that numbers things (cycles)
counts archived events too (`noemad.events.archived_counts`).

The run goes newest chunk first (`run.py`): links only point to older events,
so an archived chunk's own links into older ones stay whole in the archive
file. Each chunk is one writer job: the file is written and synced first,
then the store's rows go with an `events_archived` event; a chunk that fails
leaves the store as it was (a second run copies it again, over itself).
"""
