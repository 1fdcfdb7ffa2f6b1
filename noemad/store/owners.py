"""Each table's owning module: the one module that runs SQL on it.

The owner writes its table in the same transaction as the event that records
the change; every other module calls the owner's functions. An owner may be a
package (beliefs, memory): its modules share its tables, split so a reader
finds each by name. tests/test_owners.py checks the source against this map,
and that every table the migrations (`noemad.store.migrations`) make is in it.
"""

from __future__ import annotations

OWNERS: dict[str, str] = {  # table -> the module (or package) that owns it
    "_sqlite_migrations": "noemad.store.migrations",  # sqlite-utils' record of the migrations applied
    "sqlite_sequence": "noemad.store.migrations",  # SQLite's own AUTOINCREMENT counters: nobody reads them
    "minds": "noemad.minds",
    "events": "noemad.events",
    "event_parents": "noemad.events",
    "event_refs": "noemad.events",
    "archived_tally": "noemad.events",
    "archives": "noemad.archive.cuts",
    "event_cuts": "noemad.archive.cuts",
    "model_calls": "noemad.ledger",
    "token_ratios": "noemad.models.ratios",
    "window_anchors": "noemad.models.ratios",
    "gate_rules": "noemad.rules.table",
    "gate_minds": "noemad.rules.table",
    "gate_sleep": "noemad.gate.sleep",
    "beliefs": "noemad.cognition.beliefs",
    "evidence": "noemad.cognition.beliefs",
    "belief_history": "noemad.cognition.belief_history",
    "trust": "noemad.cognition.trust",
    "goals": "noemad.cognition.goals",
    "predictions": "noemad.cognition.predictions",
    "notifications": "noemad.cognition.notifications",
    "memories": "noemad.cognition.memory",
    "memories_fts": "noemad.cognition.memory",
    "memory_terms": "noemad.cognition.memory",
    "memory_links": "noemad.cognition.memory",
    "jobs": "noemad.background.jobs",
    "schedule_pauses": "noemad.background.jobs",
    "reflection_patterns": "noemad.background.reflection.patterns",
    "consolidations": "noemad.background.consolidation.recording",
    "consolidated": "noemad.background.consolidation.recording",
    "connector_cursors": "noemad.inbox",
    "remote_ids": "noemad.inbox",
    "deliveries": "noemad.outbox",
}

