"""The schema, as sqlite-utils migrations applied in order at start-up.

Every table carries the mind it belongs to, so a mind can move between hosts
by exporting its rows. Links between events are rows, written with the event
and never inferred later.
"""

from __future__ import annotations

import json
import sqlite3

from sqlite_utils import Database, Migrations

from noemad.words import index_stems

migrations = Migrations("noemad")

REF_TYPES = ("event", "memory", "belief", "model_call")

# Each table's owning module: the one module that runs SQL on it (writing it in
# the same transaction as the event that records the change); every other
# module calls that module's functions. An owner may be a package (beliefs, memory):
# its modules share its tables, split so a reader finds each by name. tests/test_owners.py checks the source
# against this map, and that every table the migrations make is in it.
OWNERS: dict[str, str] = {
    "_sqlite_migrations": "noemad.store.schema",  # sqlite-utils' record of the migrations applied
    "sqlite_sequence": "noemad.store.schema",  # SQLite's own AUTOINCREMENT counters: nobody reads them
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


def newest_migration(conn: sqlite3.Connection) -> str:
    """The name of the last of noemad's migrations applied to the database of `conn` ("" if none)."""
    row = conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = 'noemad' ORDER BY rowid DESC LIMIT 1").fetchone()
    return str(row[0]) if row else ""


def _run(db: Database, script: str) -> None:
    # Not executescript(): it commits first, which would break the migration's
    # transaction (a failed migration must leave nothing behind). Statements
    # are cut where sqlite3 says one is complete, so triggers stay whole.
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete statement in migration: {statement.strip()[:80]}")


@migrations()
def m001_foundation(db: Database) -> None:
    _run(
        db,
        """
        CREATE TABLE minds (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            settings TEXT NOT NULL DEFAULT '{}',
            mode TEXT NOT NULL DEFAULT 'idle'
        );
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            cycle_id TEXT,
            causation_id INTEGER REFERENCES events(id) ON DELETE CASCADE,
            actor TEXT NOT NULL,
            channel TEXT,
            text TEXT,
            data TEXT NOT NULL DEFAULT '{}',
            subject_type TEXT,
            subject_id INTEGER,
            at TEXT NOT NULL
        );
        CREATE INDEX events_mind_id ON events(mind, id);
        CREATE INDEX events_mind_kind_id ON events(mind, kind, id);
        CREATE INDEX events_causation ON events(causation_id) WHERE causation_id IS NOT NULL;
        CREATE INDEX events_cycle ON events(cycle_id) WHERE cycle_id IS NOT NULL;
        CREATE INDEX events_subject ON events(subject_type, subject_id, id) WHERE subject_type IS NOT NULL;

        CREATE TABLE event_parents (
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            parent_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            mind TEXT NOT NULL,
            PRIMARY KEY (event_id, parent_id)
        ) WITHOUT ROWID;
        CREATE INDEX event_parents_parent ON event_parents(parent_id, event_id);

        CREATE TABLE event_refs (
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            ref_type TEXT NOT NULL CHECK (ref_type IN ('event', 'memory', 'belief', 'model_call')),
            ref_id INTEGER NOT NULL,
            mind TEXT NOT NULL,
            PRIMARY KEY (event_id, ref_type, ref_id)
        ) WITHOUT ROWID;
        CREATE INDEX event_refs_target ON event_refs(ref_type, ref_id, event_id);

        -- Filled by noemad.models; here so refs to model calls can be checked.
        CREATE TABLE model_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            role TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            latency_ms REAL,
            outcome TEXT NOT NULL,
            error_category TEXT,
            cost_usd REAL NOT NULL DEFAULT 0,
            at TEXT NOT NULL
        );
        CREATE INDEX model_calls_mind ON model_calls(mind, id);

        -- Memories and beliefs are written by the cognitive cycle; the events
        -- that write or change one name it as their subject.
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX memories_mind ON memories(mind, id);
        CREATE TABLE beliefs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            proposition TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX beliefs_mind ON beliefs(mind, id);
        """
    )


@migrations()
def m002_model_call_details(db: Database) -> None:
    _run(
        db,
        """
        ALTER TABLE model_calls ADD COLUMN provider TEXT NOT NULL DEFAULT '';
        ALTER TABLE model_calls ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE model_calls ADD COLUMN stop_reason TEXT;
        ALTER TABLE model_calls ADD COLUMN retry_after REAL;
        ALTER TABLE model_calls ADD COLUMN detail TEXT;
        CREATE INDEX model_calls_budget ON model_calls(mind, role, at);
        """,
    )


@migrations()
def m003_beliefs_and_memory(db: Database) -> None:
    _run(
        db,
        """
        ALTER TABLE memories ADD COLUMN importance REAL NOT NULL DEFAULT 0.5;
        ALTER TABLE memories ADD COLUMN last_access TEXT;
        ALTER TABLE memories ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE memories ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
        ALTER TABLE memories ADD COLUMN event_id INTEGER REFERENCES events(id) ON DELETE SET NULL;
        CREATE INDEX memories_event ON memories(event_id) WHERE event_id IS NOT NULL;
        CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='id', tokenize='porter unicode61');
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TABLE memory_links (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            derived_from INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            mind TEXT NOT NULL,
            PRIMARY KEY (memory_id, derived_from)
        ) WITHOUT ROWID;
        CREATE INDEX memory_links_from ON memory_links(derived_from);

        ALTER TABLE beliefs ADD COLUMN subject TEXT NOT NULL DEFAULT '';
        ALTER TABLE beliefs ADD COLUMN proposition_key TEXT NOT NULL DEFAULT '';
        ALTER TABLE beliefs ADD COLUMN kind TEXT NOT NULL DEFAULT 'observation';
        ALTER TABLE beliefs ADD COLUMN confidence REAL NOT NULL DEFAULT 0;
        ALTER TABLE beliefs ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
        ALTER TABLE beliefs ADD COLUMN updated_at TEXT;
        CREATE INDEX beliefs_subject ON beliefs(mind, subject);
        -- Partial: rows written before propositions had keys (or by hand) do not collide.
        CREATE UNIQUE INDEX beliefs_key ON beliefs(mind, proposition_key) WHERE proposition_key != '';
        CREATE TABLE evidence (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            belief_id INTEGER NOT NULL REFERENCES beliefs(id) ON DELETE CASCADE,
            stance TEXT NOT NULL CHECK (stance IN ('support', 'contradict')),
            weight REAL NOT NULL,
            credibility REAL NOT NULL,
            source TEXT NOT NULL,
            kind TEXT NOT NULL,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            at TEXT NOT NULL
        );
        CREATE INDEX evidence_belief ON evidence(belief_id);
        CREATE TABLE trust (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            source TEXT NOT NULL,
            value REAL NOT NULL CHECK (value BETWEEN 0 AND 1),
            updated_at TEXT NOT NULL,
            PRIMARY KEY (mind, source)
        ) WITHOUT ROWID;
        """,
    )


@migrations()
def m004_goals_and_predictions(db: Database) -> None:
    # Goals and predictions are written by the cognitive cycle (perception of
    # `goal`, `prediction` and `outcome` stimuli; the mind's own goals), each
    # change with the event that records it. `event_id` is the event that
    # created the row; a prediction's `resolved_event_id` is its
    # `prediction_resolved`. Due times are ISO text as `clock.iso` writes it
    # (fixed width, so text order is time order).
    _run(
        db,
        """
        CREATE TABLE goals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            title TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'abandoned')),
            progress REAL NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 1),
            origin TEXT NOT NULL CHECK (origin IN ('operator', 'mind')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            event_id INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        CREATE INDEX goals_mind ON goals(mind, status, id);
        CREATE INDEX goals_active ON goals(mind, id) WHERE status = 'active';

        CREATE TABLE predictions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            proposition TEXT NOT NULL,
            subject TEXT NOT NULL,
            stated_confidence REAL NOT NULL CHECK (stated_confidence BETWEEN 0 AND 1),
            due_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'hit', 'miss')),
            belief_id INTEGER REFERENCES beliefs(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            resolved_at TEXT,
            observed TEXT,
            event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            resolved_event_id INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        CREATE INDEX predictions_mind ON predictions(mind, status, id);
        CREATE INDEX predictions_open_due ON predictions(mind, due_at, id) WHERE status = 'open';
        CREATE INDEX predictions_belief ON predictions(belief_id) WHERE belief_id IS NOT NULL;
        """,
    )


@migrations()
def m005_notifications(db: Database) -> None:
    # Written by noemad.cognition.notifications after a cycle, each change
    # with its event: `event_id` is the `notification` that created the row,
    # `last_event_id` the latest `notification` or `notification_suppressed`
    # (a repeat within the cooldown), `acked_event_id` the
    # `notification_acked`. `values` holds the values that fired the rule.
    _run(
        db,
        """
        CREATE TABLE notifications (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            rule TEXT NOT NULL,
            key TEXT NOT NULL,
            title TEXT NOT NULL,
            "values" TEXT NOT NULL DEFAULT '{}',
            count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1),
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acked')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            acked_at TEXT,
            event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            last_event_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            acked_event_id INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        CREATE INDEX notifications_key ON notifications(mind, key, status);
        CREATE INDEX notifications_mind ON notifications(mind, status, id);
        """,
    )


@migrations()
def m006_belief_status_index(db: Database) -> None:
    # Metacognition asks every cycle for contested beliefs left alone for a
    # day and for rejected hypotheses by subject: both by status and age.
    _run(db, "CREATE INDEX beliefs_status ON beliefs(mind, status, updated_at);\n")


@migrations()
def m007_memory_terms(db: Database) -> None:
    # Retrieval drops terms found in half a mind's memories (no bm25 weight,
    # all of the cost); this keeps their document counts (see
    # noemad.cognition.memory). Filled here for memories already stored, with
    # noemad.words.index_stems: the one definition of what is counted.
    _run(
        db,
        """
        CREATE TABLE memory_terms (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            term TEXT NOT NULL,
            docs INTEGER NOT NULL,
            PRIMARY KEY (mind, term)
        ) WITHOUT ROWID;
        """,
    )
    counts: dict[tuple[str, str], int] = {}
    for mind, text in db.execute("SELECT mind, text FROM memories"):
        for stem in ["", *index_stems(text)]:
            counts[(mind, stem)] = counts.get((mind, stem), 0) + 1
    db.conn.executemany("INSERT INTO memory_terms (mind, term, docs) VALUES (?, ?, ?)", [(m, t, n) for (m, t), n in counts.items()])


@migrations()
def m008_background_jobs(db: Database) -> None:
    # Reflection and consolidation runs. At most one running job of a kind per
    # mind: the partial unique index makes an overlap impossible, not just unlikely.
    # `after_event` is the mind's newest event when the job started: the
    # scheduler skips a mind with nothing new since (see scheduler.py).
    # `consolidated` marks episodes beside them (episodes are never modified);
    # `reflection_patterns` remembers each pattern a mind has learnt a lesson
    # from, so a lesson is written once. `schedule_pauses` is host state (a
    # global pause per job kind that survives restarts), not a mind's.
    _run(
        db,
        """
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('reflection', 'consolidation')),
            trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'operator')),
            actor TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
            progress REAL NOT NULL DEFAULT 0,
            stage TEXT NOT NULL DEFAULT '',
            started_at TEXT NOT NULL,
            finished_at TEXT,
            inputs TEXT NOT NULL DEFAULT '{}',
            outputs TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            model_calls TEXT NOT NULL DEFAULT '[]',
            after_event INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX jobs_mind ON jobs(mind, kind, id);
        CREATE UNIQUE INDEX jobs_one_running ON jobs(mind, kind) WHERE status = 'running';
        CREATE TABLE consolidated (
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            into_memory INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            at TEXT NOT NULL
        );
        CREATE INDEX consolidated_mind ON consolidated(mind, into_memory);
        CREATE TABLE reflection_patterns (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            key TEXT NOT NULL,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, key)
        ) WITHOUT ROWID;
        CREATE TABLE schedule_pauses (
            kind TEXT PRIMARY KEY CHECK (kind IN ('reflection', 'consolidation')),
            paused_at TEXT NOT NULL,
            actor TEXT NOT NULL
        );
        CREATE INDEX memories_mind_kind_created ON memories(mind, kind, created_at);
        """,
    )


@migrations()
def m009_gate_rules(db: Database) -> None:
    # Each mind's wake rules, written by noemad.rules.table with a
    # `gate_rules_changed` event each. `body` is the rule in its one JSON
    # shape, read back by the one validator (a row that no longer reads is
    # left out and named, the others work); `notes` the clamp notes it was
    # read with. `position` orders a mind's rules (0 is asked first).
    # `gate_minds` holds each mind's default behaviour and whether its rules
    # were written yet (the config seeds only a mind whose rules never were).
    _run(
        db,
        """
        CREATE TABLE gate_rules (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            body TEXT NOT NULL,
            notes TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (mind, name)
        ) WITHOUT ROWID;
        CREATE INDEX gate_rules_order ON gate_rules(mind, position);
        CREATE TABLE gate_minds (
            mind TEXT PRIMARY KEY REFERENCES minds(name) ON DELETE CASCADE,
            default_behaviour TEXT NOT NULL DEFAULT '{"always":{}}',
            seeded_at TEXT NOT NULL
        );
        """,
    )


@migrations()
def m010_gate_sleep(db: Database) -> None:
    # A mind's sleep and self-wake, written by noemad.gate.sleep with their
    # events, read back at start-up (the gate keeps them in memory). One row
    # per mind, deleted when it holds neither. Times are ISO text.
    _run(
        db,
        """
        CREATE TABLE gate_sleep (
            mind TEXT PRIMARY KEY REFERENCES minds(name) ON DELETE CASCADE,
            until TEXT,
            note TEXT,
            self_wake_at TEXT,
            self_wake_cause INTEGER REFERENCES events(id) ON DELETE SET NULL
        );
        """,
    )


@migrations()
def m011_token_ratios(db: Database) -> None:
    # Written by noemad.models.ratios after model calls built on a window:
    # each mind's calibrated characters-per-token ratio per model, and the
    # anchor (first event) of each role's last answered window with the
    # chunk size it was cut at, so the next window keeps its cached prefix.
    _run(
        db,
        """
        CREATE TABLE token_ratios (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            model TEXT NOT NULL,
            chars_per_token REAL NOT NULL,
            samples INTEGER NOT NULL DEFAULT 0,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, model)
        ) WITHOUT ROWID;
        CREATE TABLE window_anchors (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            role TEXT NOT NULL,
            anchor_id INTEGER REFERENCES events(id) ON DELETE SET NULL,
            chunk_chars INTEGER NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, role)
        ) WITHOUT ROWID;
        """,
    )


@migrations()
def m012_memory_tags(db: Database) -> None:
    # A memory's tags (a JSON array of names), set by an operator (noemactl
    # remember --tag, the API); written by noemad.cognition.memory. The turn
    # hands the tags of what it recalled to governance as evidence.
    _run(db, "ALTER TABLE memories ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';")


@migrations()
def m014_model_call_actor(db: Database) -> None:
    # Who a model call was made for, when an operator's request caused it
    # (`operator:alice` for the calls of a job they ran); null for the mind's
    # own calls. Written by noemad.ledger.
    _run(db, "ALTER TABLE model_calls ADD COLUMN actor TEXT;")


@migrations()
def m015_fluent_evidence(db: Database) -> None:
    # Metacognition's fluent_without_evidence check looks, every cycle, for
    # the beliefs given support by model output or notes lately (written by
    # noemad.cognition.beliefs.evidence, outside perception: a reply's own claims).
    # Such items are few among many: a partial index finds them without
    # reading the rest.
    _run(db, "CREATE INDEX evidence_fluent ON evidence(mind, at) WHERE kind IN ('model_output', 'note') AND stance = 'support';")


@migrations()
def m016_archive(db: Database) -> None:
    # Archiving (noemad.archive): old events move to an archive file of their
    # own, and what stays behind says where its links were cut.
    # `archives` is one row per run (owned by noemad.archive.cuts);
    # `event_cuts` names, for a kept event, each linked event that is now in
    # an archive (cause side: it linked to it; consequence side: it was
    # linked from it); `archived_tally` counts a mind's archived events by
    # kind (owned by noemad.events) so counts that number things (cycles)
    # go on from where they were.
    # Archiving deletes events: every column that points at one gets the
    # index its foreign-key action needs, or each delete would scan the table.
    _run(
        db,
        """
        CREATE TABLE archives (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            path TEXT NOT NULL,
            before TEXT NOT NULL,
            actor TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            events INTEGER NOT NULL DEFAULT 0,
            first_id INTEGER,
            last_id INTEGER,
            cuts INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX archives_mind ON archives(mind, id);
        CREATE TABLE event_cuts (
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            archived_id INTEGER NOT NULL,
            link TEXT NOT NULL CHECK (link IN ('caused', 'parent', 'cited')),
            side TEXT NOT NULL CHECK (side IN ('cause', 'consequence')),
            archive_id INTEGER NOT NULL REFERENCES archives(id) ON DELETE CASCADE,
            PRIMARY KEY (event_id, archived_id, link, side)
        ) WITHOUT ROWID;
        CREATE TABLE archived_tally (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            events INTEGER NOT NULL,
            PRIMARY KEY (mind, kind)
        ) WITHOUT ROWID;
        CREATE INDEX evidence_event ON evidence(event_id);
        CREATE INDEX goals_event ON goals(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX predictions_event ON predictions(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX predictions_resolved_event ON predictions(resolved_event_id) WHERE resolved_event_id IS NOT NULL;
        CREATE INDEX notifications_event ON notifications(event_id) WHERE event_id IS NOT NULL;
        CREATE INDEX notifications_last_event ON notifications(last_event_id) WHERE last_event_id IS NOT NULL;
        CREATE INDEX notifications_acked_event ON notifications(acked_event_id) WHERE acked_event_id IS NOT NULL;
        """,
    )


@migrations()
def m017_consolidations(db: Database) -> None:
    # Consolidation wrote a `consolidated` row per episode (its job and the
    # generalisation it went into) beside the memory_links row that already
    # links the two: the same fact twice, a third of a run's rows. Now one
    # row per generalisation names its job, and `consolidated` is a view
    # giving the rows it held (one per episode), for readers and operators.
    # Every consolidated row had its link; one written otherwise gets it here.
    _run(
        db,
        """
        CREATE TABLE consolidations (
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            at TEXT NOT NULL
        );
        INSERT INTO consolidations (memory_id, mind, job_id, at)
            SELECT into_memory, min(mind), min(job_id), min(at) FROM consolidated GROUP BY into_memory;
        INSERT OR IGNORE INTO memory_links (memory_id, derived_from, mind) SELECT into_memory, memory_id, mind FROM consolidated;
        DROP TABLE consolidated;
        CREATE VIEW consolidated (memory_id, mind, job_id, into_memory, at) AS
            SELECT l.derived_from, c.mind, c.job_id, c.memory_id, c.at FROM consolidations c JOIN memory_links l ON l.memory_id = c.memory_id;
        """,
    )


@migrations()
def m018_event_cuts_mind(db: Database) -> None:
    # Every table is keyed by mind, so that one mind's rows can be exported,
    # moved and sharded on their own: `event_cuts` (m016) was the exception,
    # reaching its mind only through its archive run. Each cut takes its
    # run's mind; the table is made anew because a NOT NULL column cannot be
    # added to rows that already exist.
    _run(
        db,
        """
        CREATE TABLE event_cuts_keyed (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            archived_id INTEGER NOT NULL,
            link TEXT NOT NULL CHECK (link IN ('caused', 'parent', 'cited')),
            side TEXT NOT NULL CHECK (side IN ('cause', 'consequence')),
            archive_id INTEGER NOT NULL REFERENCES archives(id) ON DELETE CASCADE,
            PRIMARY KEY (event_id, archived_id, link, side)
        ) WITHOUT ROWID;
        INSERT INTO event_cuts_keyed (mind, event_id, archived_id, link, side, archive_id)
            SELECT a.mind, c.event_id, c.archived_id, c.link, c.side, c.archive_id FROM event_cuts c JOIN archives a ON a.id = c.archive_id;
        DROP TABLE event_cuts;
        ALTER TABLE event_cuts_keyed RENAME TO event_cuts;
        CREATE INDEX event_cuts_mind ON event_cuts(mind, archive_id);
        """,
    )


@migrations()
def m019_withdrawn_evidence(db: Database) -> None:
    # An item of evidence may be withdrawn: metacognition's counter-evidence
    # when the warning that added it no longer holds (a second independent
    # source arrived). The row stays, with the event that withdrew it, and
    # no longer counts (written by noemad.cognition.beliefs.evidence). Stores from
    # before read as they were: nothing is withdrawn. Each cycle looks for
    # the standing counter-evidence of the beliefs it changed: a partial
    # index holds just those few rows.
    _run(
        db,
        """
        ALTER TABLE evidence ADD COLUMN withdrawn_by INTEGER;
        CREATE INDEX evidence_standing_counter ON evidence(belief_id) WHERE source = 'metacognition' AND stance = 'contradict' AND withdrawn_by IS NULL;
        """,
    )


@migrations()
def m020_belief_history(db: Database) -> None:
    # Each belief's state after every event that changed it (written by
    # noemad.cognition.belief_history with the event): what `beliefs --at`
    # and `belief --history` read, one index probe per belief instead of a
    # walk over the log. Keyed by belief then event, without a rowid, so a
    # belief's history is one run of the table's own b-tree; `moved` marks
    # the rows whose confidence or status differ from the row before (most
    # of a well-evidenced belief's items change neither). Filled here from the belief events already stored:
    # their data gives the confidence and status after each, and how the
    # standing evidence counts moved (an item's stance, a batch's counts,
    # the stances of the items a withdrawal names).
    _run(
        db,
        """
        CREATE TABLE belief_history (
            belief_id INTEGER NOT NULL,
            event_id INTEGER NOT NULL,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            confidence REAL NOT NULL,
            status TEXT NOT NULL,
            support INTEGER NOT NULL,
            contradict INTEGER NOT NULL,
            moved INTEGER NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (belief_id, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX belief_history_mind ON belief_history(mind, event_id);
        """,
    )
    counts: dict[int, tuple[int, int]] = {}
    last: dict[int, tuple[float, str]] = {}
    rows = db.conn.execute(  # read as inserted: a long history is never held whole
        "SELECT id, mind, subject_id, data, at FROM events WHERE subject_type = 'belief'"
        " AND kind IN ('belief_created', 'belief_updated') ORDER BY id"
    )
    for event_id, mind, belief_id, raw, at in rows:
        data = json.loads(raw or "{}")
        support, contradict = counts.get(belief_id, (0, 0))
        batch = data.get("evidence")
        if isinstance(batch, dict):
            support, contradict = support + int(batch.get("support") or 0), contradict + int(batch.get("contradict") or 0)
        elif data.get("stance") in ("support", "contradict"):
            support, contradict = support + (data["stance"] == "support"), contradict + (data["stance"] == "contradict")
        withdrawn = data.get("withdrawn")
        if isinstance(withdrawn, list) and withdrawn:
            marks = ",".join("?" * len(withdrawn))
            for (stance,) in db.execute(f"SELECT stance FROM evidence WHERE id IN ({marks})", withdrawn).fetchall():
                support, contradict = support - (stance == "support"), contradict - (stance == "contradict")
        counts[belief_id] = (support, contradict)
        state = (float((data.get("confidence") or {}).get("to") or 0.0), str((data.get("status") or {}).get("to") or "active"))
        moved = last.get(belief_id) != state
        last[belief_id] = state
        db.execute(
            "INSERT INTO belief_history (event_id, mind, belief_id, confidence, status, support, contradict, moved, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [event_id, mind, belief_id, *state, support, contradict, int(moved), at],
        )


@migrations()
def m021_connectors(db: Database) -> None:
    # What connectors bring in and send out (issue 21). `connector_cursors`:
    # each connector's place in its source (Matrix's `since`), written by
    # noemad.inbox in the same transaction as the stimuli it brought, so a
    # crash loses or doubles nothing. `remote_ids`: what the source called
    # each stimulus (a Matrix event id), with its room and thread, so a reply
    # can answer it there and a later edit or redaction find it; unique per
    # connector, which also refuses a message brought in twice. `deliveries`:
    # the outbox, one row per reply (or notification) and connector, written
    # by noemad.outbox in the same transaction as the event it delivers and
    # changed with the event of each attempt. Times are ISO text.
    _run(
        db,
        """
        CREATE TABLE connector_cursors (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            connector TEXT NOT NULL,
            cursor TEXT,
            at TEXT NOT NULL,
            PRIMARY KEY (mind, connector)
        ) WITHOUT ROWID;
        CREATE TABLE remote_ids (
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            connector TEXT NOT NULL,
            remote_id TEXT NOT NULL,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            room TEXT,
            thread TEXT,
            PRIMARY KEY (mind, connector, remote_id)
        ) WITHOUT ROWID;
        CREATE INDEX remote_ids_event ON remote_ids(event_id);
        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            mind TEXT NOT NULL REFERENCES minds(name) ON DELETE CASCADE,
            event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
            connector TEXT NOT NULL,
            what TEXT NOT NULL CHECK (what IN ('reply', 'notification')),
            room TEXT,
            thread TEXT,
            in_reply_to TEXT,
            status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'given_up')),
            attempts INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            next_at TEXT NOT NULL,
            give_up_at TEXT NOT NULL,
            last_error TEXT,
            remote_id TEXT,
            done_at TEXT,
            UNIQUE (event_id, connector)
        );
        CREATE INDEX deliveries_pending ON deliveries(mind, connector, next_at) WHERE status = 'pending';
        CREATE INDEX deliveries_mind ON deliveries(mind, connector, status);
        """,
    )
