"""Every table is read and written through its owner.

`noemad.store.owners.OWNERS` names one owning module per table. Every
module under `noemad/` is parsed with `ast`; every string literal in it
(f-string parts included) is searched for SQL naming a table (`FROM`,
`JOIN`, `INTO`, `UPDATE`, `DELETE FROM`, `TABLE <name>`). A module other
than the table's owner (or a migration in `store/migrations/`) that names
it fails the test, unless it is listed below with why, like the layers
test. An exception that no longer happens fails too, so the list cannot
outlive its reason.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from noemad.store.migrations import migrations
from noemad.store.owners import OWNERS
from test_layers import module_name  # one way to name a module from its path, for both architecture tests

ROOT = Path(__file__).resolve().parents[1]

SQL = re.compile(r"\b(FROM|JOIN|INTO|UPDATE|DELETE\s+FROM|TABLE(?:\s+IF\s+(?:NOT\s+)?EXISTS)?)\s+([a-z_]+)\b", re.IGNORECASE)
READS = {"FROM", "JOIN"}

# The event log (the events and the links written with them) may be read by
# SQL anywhere; only its owner writes it. A row of the log never changes once
# appended (archiving removes whole rows through
# `events.remove_archived`), so a reader cannot see a half-made state the owner
# guards; what the owner keeps whole is the writing: links checked, tallies
# kept, ids handed out in order. Readers filter by their own kinds, and a
# query per reader in noemad.events would move SQL without adding a guarantee.
OPEN_READS: dict[str, str] = {
    "events": "the append-only log every record cites; written only by noemad.events",
    "event_parents": "an event's parents, written with it and never changed",
    "event_refs": "what an event cites, written with it and never changed",
}

# Known foreign SQL, (module, table) -> why it is still there.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("noemad.archive.file", "event_cuts"): "the archive file's own table of that name, in the file, not the store",
    # The window's one indexed query (active episodes of the window no consolidation has generalised yet) joins
    # memory's tables with consolidation's own marks, so it belongs to neither owner alone; split between them it
    # would take a second pass over the window on the path bench/consolidation.py times (not tried yet).
    ("noemad.background.consolidation.select", "consolidations"): "the consolidation window's one query (above)",
    ("noemad.background.consolidation.select", "memories"): "the consolidation window's one query (above)",
    ("noemad.background.consolidation.select", "memory_links"): "the consolidation window's one query (above)",
    # `beliefs --at` over 10,000 beliefs: each belief's columns that never change (proposition, subject, kind, creation)
    # beside its state then, sorted and cut in SQL; as two queries the state of every belief reaches Python to be
    # joined and sorted there, twice the time bench/asof.py allows.
    ("noemad.cognition.beliefs.queries", "belief_history"): "beliefs --at's one query (above)",
    ("noemad.store.transfer", "sqlite_sequence"): "an import's new ids start after every id the store ever handed out, deleted rows' too",
    ("noemad.store.backup", "minds"): "counts the minds in the backup file it just wrote, on its own connection; the store is below noemad.minds",
}

# A table named by a variable (`f"DELETE FROM {table}"`) hides from the check
# above, so the modules that do it are listed too, each with why. Matched on
# SQL keywords as the code writes them (capitals), so prose is left alone.
DYNAMIC_SQL = re.compile(r"\b(FROM|JOIN|INTO|UPDATE|TABLE(?: IF NOT EXISTS)?|DELETE FROM)\s+$")
DYNAMIC: dict[str, str] = {
    "noemad.archive.file": "makes and fills the archive file's own copies of the log's tables (read from the log, open to readers)",
    "noemad.events": "checks that a ref names a stored row of its mind, in the table of its type: the schema has no foreign key for a ref",
    "noemad.store.transfer": "copies one mind's rows of every table keyed by mind, read from the schema, into a mind file and"
    " out of one, row for row (ids moved by one offset per table): what a row means stays its owner's, and a new table travels"
    " without a second list to keep in step (tests/test_transfer.py checks its id columns are declared)",
    "noemad.minds": "deleting a mind deletes its rows from every table keyed by it, children first",
}


@dataclass(frozen=True)
class Use:
    module: str
    table: str
    verb: str  # FROM, JOIN, INTO, UPDATE, DELETE FROM or TABLE
    line: int


def tables() -> set[str]:
    """The tables and views the migrations make (FTS shadow tables belong to their virtual table)."""
    db = Database(memory=True)
    migrations.apply(db)
    rows = db.execute("PRAGMA main.table_list").fetchall()
    return {name for _, name, kind, *_ in rows if kind != "shadow" and name != "sqlite_schema"}


def uses(module: str, source: str, known: set[str]) -> list[Use]:
    """Every SQL mention of a table in `known` among the string literals of `source`."""
    found: list[Use] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in SQL.finditer(node.value):
                if match.group(2) in known:
                    verb = " ".join(match.group(1).upper().split()[:2]).removesuffix(" IF")
                    found.append(Use(module, match.group(2), verb, node.lineno))
    return sorted(found, key=lambda u: u.line)


def owns(owner: str, module: str) -> bool:
    """Whether `module` is the owner, or a module of the owner's package (one owner, its code split into modules a reader finds by name)."""
    return module == owner or module.startswith(owner + ".")


def foreign(found: list[Use]) -> list[Use]:
    """The uses in `found` by a module that does not own the table."""
    return [
        u
        for u in found
        if not owns(OWNERS[u.table], u.module) and not owns("noemad.store.migrations", u.module)
        and not (u.table in OPEN_READS and u.verb in READS)
    ]


def dynamic(source: str) -> list[int]:
    """The lines of `source` where an f-string names a table by a variable after an SQL keyword."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for before, value in zip(node.values, node.values[1:]):
                if isinstance(before, ast.Constant) and isinstance(value, ast.FormattedValue) and DYNAMIC_SQL.search(str(before.value)):
                    lines.append(node.lineno)
    return sorted(lines)


def project_uses() -> list[Use]:
    known = tables()
    found: list[Use] = []
    for path in sorted((ROOT / "noemad").rglob("*.py")):
        found += uses(module_name(path), path.read_text(), known)
    return found


def test_every_table_has_one_owner() -> None:
    made = tables()
    assert sorted(made - set(OWNERS)) == [], "name the new table's owner in noemad.store.owners.OWNERS"
    assert sorted(set(OWNERS) - made) == [], "these tables are gone; drop them from OWNERS"
    missing = sorted(
        {m for m in OWNERS.values() if not ROOT.joinpath(*m.split(".")).with_suffix(".py").is_file() and not ROOT.joinpath(*m.split("."), "__init__.py").is_file()}
    )
    assert missing == [], "each owner is a module or a package"


def test_only_a_tables_owner_names_it_in_sql() -> None:
    found = foreign(project_uses())
    unexpected = sorted({f"{u.module} (line {u.line}): {u.verb} {u.table}, owned by {OWNERS[u.table]}" for u in found if (u.module, u.table) not in EXCEPTIONS})
    assert unexpected == [], "call the owner's functions instead (or add an owner function for what you need)"
    stale = sorted(set(EXCEPTIONS) - {(u.module, u.table) for u in found})
    assert stale == [], f"these exceptions no longer happen; remove them from EXCEPTIONS: {stale}"


def test_tables_named_by_a_variable_only_where_listed() -> None:
    found = {module_name(p): dynamic(p.read_text()) for p in sorted((ROOT / "noemad").rglob("*.py"))}
    found = {m: lines for m, lines in found.items() if lines}
    unexpected = {m: lines for m, lines in found.items() if m not in DYNAMIC}
    assert unexpected == {}, "name the table in the SQL (so the ownership check sees it), or list the module in DYNAMIC with why"
    stale = sorted(set(DYNAMIC) - set(found))
    assert stale == [], f"these modules no longer name tables by a variable; remove them from DYNAMIC: {stale}"
    assert dynamic("t = 'x'\nq = f'DELETE FROM {t} WHERE 1'\np = f'a note from {t}'\n") == [2]


def test_only_beliefs_runs_sql_on_its_tables() -> None:
    # Kept from test_payloads: the beliefs tables have no exceptions at all.
    found = {(u.module, u.table) for u in foreign(project_uses()) if u.table in ("beliefs", "evidence", "trust")}
    assert found == set(), f"read and change beliefs and evidence through the cognition/beliefs package, trust through cognition/trust.py: {found}"


def test_the_check_sees_every_verb_and_f_strings() -> None:
    source = (
        "A = 'SELECT x FROM predictions p JOIN memories m ON 1'\n"
        "def f(t):\n    db.execute(f'UPDATE jobs SET a = {t}')\n    db.execute('delete from   minds WHERE 1')\n"
        "B = 'INSERT INTO goals VALUES (1)'\n"
        "C = 'CREATE TABLE IF NOT EXISTS events (id)'\n"
        "D = 'SELECT 1 FROM events'\n"
        "E = 'this is FROM nowhere INTO notable'\n"
    )
    found = foreign(uses("noemad.example", source, tables()))
    assert [(u.verb, u.table, u.line) for u in found] == [
        ("FROM", "predictions", 1),
        ("JOIN", "memories", 1),
        ("UPDATE", "jobs", 3),
        ("DELETE FROM", "minds", 4),
        ("INTO", "goals", 5),
        ("TABLE", "events", 6),
    ]


def test_a_package_owner_shares_its_tables_with_its_modules_only() -> None:
    assert owns("noemad.cognition.beliefs", "noemad.cognition.beliefs")
    assert owns("noemad.cognition.beliefs", "noemad.cognition.beliefs.bulk")
    assert not owns("noemad.cognition.beliefs", "noemad.cognition.belief_history")
    assert not owns("noemad.cognition.beliefs", "noemad.cognition.beliefs_extra")
