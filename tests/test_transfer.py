"""A mind exported to one file and imported into another store (noemad.store.transfer, `noemactl export` / `import`).

In process: two engines, one per "host", each on its own home. The round trip
(export, import, export again) must give the same file content (checksum
and row counts), and the imported mind must answer as the exported one did,
ids aside. A file that is damaged, truncated, altered, from a newer noemad, or
for a name in use, and an import onto a full disk, are refused with nothing left.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from demo_inprocess import play_demo
from inprocess import InProcess, start_app
from sqlite_utils import Database

from noemad.store.migrations import migrations
from test_connectors import doubles, matrix_config  # noqa: F401 - doubles is a fixture
from noemad.store import Store
from noemad.store.connection import open_db
from noemad.store.transfer import exported_tables, import_mind
from noemad.store.transfer_ids import (
    ID_COLUMNS,
    JSON_COLUMNS,
    NOT_EXPORTED,
    PLAIN_COLUMNS,
    TEXT_COLUMNS,
    TEXT_REF,
    TYPED_COLUMNS,
    paths_for,
)


def _schema() -> sqlite3.Connection:
    db = Database(memory=True)
    migrations.apply(db)
    return db.conn


# --- what moves is read from the schema --------------------------------------------------------------------------------


def test_every_table_keyed_by_mind_is_exported_or_says_why_not() -> None:
    conn = _schema()
    listed = {name: kind for _, name, kind, *_ in conn.execute("PRAGMA main.table_list") if kind != "shadow" and name != "sqlite_schema"}
    keyed = {n for n in listed if n == "minds" or any(row[1] == "mind" for row in conn.execute(f'PRAGMA table_info("{n}")'))}
    exported = {t.name for t in exported_tables(conn)}
    assert exported == keyed - set(NOT_EXPORTED), "a table keyed by mind travels with it, or NOT_EXPORTED says why it does not"
    assert set(NOT_EXPORTED) <= set(listed), "NOT_EXPORTED names only tables the schema has"
    assert set(listed) - exported - set(NOT_EXPORTED) == set(), "every table either travels or says why it does not"


def test_every_integer_column_of_an_exported_table_is_declared_an_id_or_plain() -> None:
    conn = _schema()
    undeclared = []
    for table in exported_tables(conn):
        for _, column, kind, *_ in conn.execute(f'PRAGMA table_info("{table.name}")'):
            if kind.upper() != "INTEGER" or (column == "id" and table.space):
                continue
            if (table.name, column) not in ID_COLUMNS | TYPED_COLUMNS.keys() | PLAIN_COLUMNS:
                undeclared.append(f"{table.name}.{column}")
    assert undeclared == [], "declare each in noemad.store.transfer_ids: ID_COLUMNS (which table it names) or PLAIN_COLUMNS (a count)"
    assert set(ID_COLUMNS.values()) <= {t.name for t in exported_tables(conn) if t.space}


# Integer values in the demo's events' data (and jobs' outputs) that are counts, not ids, by (kind, path).
_ID_LIKE = re.compile(r"(^|\.)(id|\w+_id|\w+_event|belief|beliefs|memory|memories|prediction|goal|job|event|events|notification|archive|previous|narrative|model_call|in_reply_to|lessons|episodes|stimuli)(\[\])?$")
COUNTS = {
    ("cycle_completed", "episodes"), ("cycle_completed", "stimuli"), ("cycle_started", "stimuli"), ("consolidation", "episodes"),
    ("consolidation", "clusters[].episodes"), ("reflection", "counts.events"), ("reflection", "period.events"), ("events_archived", "events"),
    ("reflection", "counts.lessons"), ("consolidation", "counts.lessons"),
}


def _int_paths(value: Any, path: str = "") -> Iterator[str]:
    """The paths of the integers in `value`, and (marked with a leading `~`) of the strings naming rows as TEXT_REF reads."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _int_paths(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from _int_paths(item, path + "[]")
    elif isinstance(value, int) and not isinstance(value, bool):
        yield path
    elif isinstance(value, str) and TEXT_REF.search(value) and not value.startswith("mind:"):
        yield "~" + path


def _ids_in_data_are_declared(engine: InProcess) -> None:
    """Every integer in the events' data that looks like an id is declared one (or is a count): a new one fails here."""
    undeclared = set()
    db = engine.sup.store.reader()
    rows = [(JSON_COLUMNS["events", "data"][1], kind, data) for kind, data in db.execute("SELECT kind, data FROM events")]
    rows += [(JSON_COLUMNS["jobs", "outputs"][1], kind, data) for kind, data in db.execute("SELECT kind, outputs FROM jobs")]
    for patterns, kind, data in rows:
        declared = {p.replace("[]", "").removesuffix(".{ref}") for p, _ in paths_for(patterns, kind)}
        texts = {p.replace("[]", "") for p, space in paths_for(patterns, kind) if space == "{text}"}
        for path in _int_paths(json.loads(data)):
            if path.startswith("~"):  # a string naming rows: its path must be declared {text}
                if path[1:].replace("[]", "") not in texts:
                    undeclared.add((kind, path))
                continue
            bare = path.replace("[]", "")
            if _ID_LIKE.search(path) and bare not in declared and (kind, path) not in COUNTS and not any(bare.startswith(d + ".") for d in declared):
                undeclared.add((kind, path))
    assert undeclared == set(), "declare these in transfer_ids.EVENT_DATA (an id) or in COUNTS here (a count)"


# --- the round trip, in process ----------------------------------------------------------------------------------------


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[tuple[InProcess, InProcess]]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = start_app(tmp_path / "a")
    try:
        b = start_app(tmp_path / "b")
        try:
            yield a, b
        finally:
            b.stop()
    finally:
        a.stop()


def _ids_aside(text: str) -> str:
    return re.sub(r"\d+", "#", text)


def _views(engine: InProcess, mind: str, shown_as: str | None = None) -> list[str]:
    """What an operator reads of a mind, ids (every number) aside: API reads, the timeline of its newest events, its dashboard page.

    `shown_as`: the mind's name written as this one (a mind imported under another name).
    """

    def _ids_aside(text: str) -> str:
        return re.sub(r"\d+", "#", text.replace(f'"{mind}"', f'"{shown_as}"').replace(f"{mind}/", f"{shown_as}/") if shown_as else text)

    reads = [f"/minds/{mind}", f"/minds/{mind}/beliefs", f"/minds/{mind}/memories?limit=1000", f"/minds/{mind}/predictions",
             f"/minds/{mind}/notifications", f"/minds/{mind}/goals", f"/minds/{mind}/narrative", f"/minds/{mind}/trust",
             f"/minds/{mind}/events?limit=1000"]
    seen = []
    for read in reads:
        answer = engine.api("GET", read)
        assert answer.status_code == 200, (read, answer.text)
        seen.append(_ids_aside(answer.text))
    newest = engine.api("GET", f"/minds/{mind}/events?limit=1000").json()["events"]
    for event in newest[-5:]:
        chain = engine.api("GET", f"/events/{event['id']}/chain").json()
        nodes = {n["id"] for n in chain["nodes"]} if "nodes" in chain else set()
        assert all(engine.api("GET", f"/events/{n}").json()["mind"] == mind for n in list(nodes)[:20])
        seen.append(_ids_aside(json.dumps(chain, sort_keys=True)))
    page = engine.run(engine.client.get(f"/minds/{mind}"))
    assert page.status_code == 200
    html = re.sub(r" · up [^·]*·", " · up … ·", page.text)  # the daemon's uptime: the host's, not the mind's
    seen.append(_ids_aside(html.replace(mind, shown_as) if shown_as else html))
    return seen


def _manifest(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT key, value FROM manifest").fetchall())
    finally:
        conn.close()


def test_demo_minds_round_trip_to_the_same_content_and_answer_the_same(hosts: tuple[InProcess, InProcess], tmp_path: Path) -> None:
    a, b = hosts
    minds = play_demo(a)
    assert b.api("POST", "/minds", json={"name": "zed"}).status_code == 201
    for n in range(30):  # b's store holds rows already: every imported id must move
        b.api("POST", "/minds/zed/events", json={"kind": "message", "author": "bob", "text": f"note {n}"})
    b.settle("zed")
    for mind in minds:
        a.settle(mind)
        first, again = tmp_path / f"{mind}.noema", tmp_path / f"{mind}-again.noema"
        out = a.ctl("export", mind, str(first))
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"exported mind {mind}: ") and "sha256:" in out.stdout
        done = b.ctl("import", str(first))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"imported mind {mind}: ") and done.stdout.rstrip().endswith("checksum ok")
        b.settle(mind)
        assert b.ctl("export", mind, str(again)).returncode == 0
        before, after = _manifest(first), _manifest(again)
        assert after["checksum"] == before["checksum"], f"{mind}: the round trip changed the content"
        assert after["counts"] == before["counts"]
        assert _views(a, mind) == _views(b, mind), f"{mind} answers differently after the move"
        _cited_rows_are_the_minds(b, mind)
    _ids_in_data_are_declared(a)


def test_importing_twice_is_refused_and_as_gives_a_second_mind(hosts: tuple[InProcess, InProcess], tmp_path: Path) -> None:
    a, b = hosts
    assert a.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    a.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "the build is green"})
    a.settle("ada")
    file = tmp_path / "ada.noema"
    assert a.ctl("export", "ada", str(file)).returncode == 0
    assert oct(file.stat().st_mode & 0o777) == "0o600"
    assert b.ctl("import", str(file)).returncode == 0
    again = b.ctl("import", str(file))
    assert again.returncode != 0
    assert "a mind named 'ada' exists here already; import it under another name with --as NAME (nothing was imported)" in again.stderr
    events = b.api("GET", "/minds/ada/events?limit=1000").json()["events"]
    assert b.ctl("import", str(file), "--as", "ada2").returncode == 0
    twin = b.api("GET", "/minds/ada2/events?limit=1000").json()["events"]
    assert [e["text"] for e in twin] == [e["text"] for e in events]
    assert not {e["id"] for e in twin} & {e["id"] for e in events}
    assert b.api("GET", "/minds/ada/events?limit=1000").json()["events"] == events  # the first is untouched
    assert sorted(p.name for p in b.paths.data_dir.glob(".import-*")) == []


def _refused(b: InProcess, file: Path, *args: str) -> str:
    minds = b.api("GET", "/minds").json()
    total = b.sup.store.reader().execute("SELECT count(*) FROM events").fetchone()[0]
    out = b.ctl("import", str(file), *args)
    assert out.returncode != 0
    assert b.api("GET", "/minds").json() == minds, "a refused import leaves no mind behind"
    assert b.sup.store.reader().execute("SELECT count(*) FROM events").fetchone()[0] == total, "nor any event"
    assert list(b.paths.data_dir.glob(".import-*")) == []
    return out.stderr


@pytest.fixture
def exported(hosts: tuple[InProcess, InProcess], tmp_path: Path) -> tuple[InProcess, Path]:
    a, b = hosts
    assert a.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    for text in ("the build is green", "the deploy went out", "the build is red", "log: " + "x" * 60_000):
        a.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": text})
    a.settle("ada")
    file = tmp_path / "ada.noema"
    assert a.ctl("export", "ada", str(file)).returncode == 0
    return b, file


def test_an_altered_file_is_refused_by_its_checksum(exported: tuple[InProcess, Path]) -> None:
    b, file = exported
    conn = sqlite3.connect(file)
    conn.execute("UPDATE events SET text = 'the build is blue' WHERE text = 'the build is red'")
    conn.commit()
    conn.close()
    err = _refused(b, file)
    assert "the file does not match its checksum: it was changed or damaged since it was exported; nothing was imported" in err


def test_a_truncated_file_is_refused(exported: tuple[InProcess, Path]) -> None:
    b, file = exported
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])
    assert "the file is truncated" in _refused(b, file)
    file.write_bytes(data[:50])
    assert "is not a Noema mind file" in _refused(b, file)


def test_a_file_from_a_newer_noemad_is_refused(exported: tuple[InProcess, Path]) -> None:
    b, file = exported
    conn = sqlite3.connect(file)
    conn.execute("UPDATE manifest SET value = '99' WHERE key = 'format_version'")
    conn.commit()
    conn.close()
    err = _refused(b, file)
    assert "in mind-file format 99; this noemad (0.1.0) reads format 1 and older: upgrade noemad here, then import it" in err
    conn = sqlite3.connect(file)
    conn.execute("UPDATE manifest SET value = '1' WHERE key = 'format_version'")
    conn.execute("UPDATE manifest SET value = json_set(value, '$.events', json_insert(json_extract(value, '$.events'), '$[#]', 'mood')) WHERE key = 'tables'")
    conn.commit()
    conn.close()
    assert "holds columns mood of events, which this noemad (0.1.0) does not know: it came from a newer noemad" in _refused(b, file)


def test_an_import_onto_a_full_disk_is_refused_with_nothing_stored(exported: tuple[InProcess, Path]) -> None:
    b, file = exported

    def fill(db: Any) -> None:  # the database may grow no more: SQLite answers SQLITE_FULL, as on a full disk
        db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")

    b.run(b.sup.store.writer.run(fill))
    err = _refused(b, file)
    assert "is full, so nothing of this request was stored; free space there, then retry" in err
    b.run(b.sup.store.writer.run(lambda db: db.execute("PRAGMA max_page_count = 1073741823")))
    assert b.ctl("import", str(file)).returncode == 0



def test_an_import_writes_its_rows_many_to_a_statement(exported: tuple[InProcess, Path], tmp_path: Path) -> None:
    """Each run of a statement opens a savepoint and copies every page it changes to the statement journal: an import
    that wrote a row a statement spent most of its time there (bench/export.py). It writes many rows an INSERT."""
    _, file = exported
    Store(tmp_path / "c.db").close()  # a store of its own: the trace callback here is the only one on its connection
    db = open_db(tmp_path / "c.db")
    runs: list[str] = []  # each run of an INSERT into events (a table with no trigger: a trigger's start is traced too)
    db.conn.set_trace_callback(lambda sql: runs.append(sql) if sql.startswith('INSERT INTO "events"') else None)
    try:
        with db.conn:
            manifest = import_mind(db, file, "ada")
        assert manifest.events > 10
        assert len(runs) == 1  # its events, under a hundred, in one INSERT
        assert db.execute("SELECT count(*) FROM events WHERE mind = 'ada'").fetchone()[0] == manifest.events
    finally:
        db.conn.close()

# --- a mind with every kind of row -------------------------------------------------------------------------------------

GENERATED_SCRIPT = """
[respond]
default = "Noted."
"""


def _generate(app: InProcess, mind: str, room: Any = None) -> None:
    """Give `mind` (with a scripted respond model) a row in every table a mind has: each through the API, as operators do."""
    post = lambda body: app.api("POST", f"/minds/{mind}/events", json=body)
    assert app.ctl("rules", "add", mind, "--name", "dms", "--flag", "dm", "--always").returncode == 0
    assert app.api("PUT", f"/minds/{mind}/trust/build-monitor", json={"value": 0.8}).status_code == 200
    for n in range(3):
        post({"kind": "message", "author": "alice", "text": f"the deploy of service {n} failed again"})
        post({"kind": "observation", "source": "build-monitor", "text": "the build is red",
              "claim": {"proposition": "the build is red", "subject": "build", "stance": "support"}})
        app.settle(mind)
    post({"kind": "goal", "title": "ship the parser rewrite"})
    app.settle(mind)
    [goal] = app.api("GET", f"/minds/{mind}/goals").json()["goals"]
    post({"kind": "goal", "goal": goal["id"], "progress": 0.5})
    for n in range(3):
        post({"kind": "prediction", "proposition": f"deploy {n} finishes without a rollback", "subject": "deploy", "confidence": 0.9, "due": "1h"})
        app.settle(mind)
        [prediction] = app.api("GET", f"/minds/{mind}/predictions", params={"status": "open"}).json()["predictions"]
        post({"kind": "outcome", "prediction": prediction["id"], "result": "miss"})
        app.settle(mind)
    memory = app.api("POST", f"/minds/{mind}/memories", json={"text": "the parser lives in src/parse", "tags": ["code"]}).json()
    assert app.api("POST", f"/memories/{memory['id']}/retract", json={"reason": "moved"}).status_code == 200
    for kind in ("reflection", "consolidation"):
        job = app.api("POST", f"/minds/{mind}/jobs", json={"kind": kind})
        assert job.status_code == 202, job.text
        app.wait_job(job.json()["id"])
    notes = app.api("GET", f"/minds/{mind}/notifications").json()["notifications"]
    if notes:
        app.api("POST", f"/notifications/{notes[0]['id']}/ack")
    app.advance(40 * 86400)
    post({"kind": "message", "author": "alice", "text": "back after a month"})
    app.settle(mind)
    if room is not None:
        _said_in_a_room(app, room)
    assert app.api("POST", f"/minds/{mind}/archive", json={"older_than": "35d"}).status_code == 200
    assert app.api("POST", f"/minds/{mind}/sleep", json={"for": "2h", "note": "quiet hours"}).status_code == 200


def _said_in_a_room(app: InProcess, connector: Any) -> None:
    """A message brought in by a connector (its cursor and remote id stored with it) and the reply it sends (a delivery)."""
    from noemad.inbox import Inbound
    from noemad.stimuli import Message

    message = Message(author="matrix:@bob:example.org", text="are the roses fine?", channel="matrix:!garden:example.org")
    (stored,) = app.run(connector.context.ingest([Inbound(message, "$said-1", "!garden:example.org", None)], "after-1"))
    app.settle("ada")
    app.wait_for("ada", "delivery", int(stored.id))


def test_a_mind_with_every_kind_of_row_round_trips(tmp_path: Path, doubles: dict[str, Any]) -> None:  # noqa: F811
    from conftest import SCRIPTED_RESPOND
    from inprocess import scripted_app

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, again = tmp_path / "ada.noema", tmp_path / "again.noema"
    # The mind's room is the host's config, not the mind's: b names it for the imported mind as its operator would.
    room = matrix_config(tmp_path)
    with scripted_app(tmp_path / "a", GENERATED_SCRIPT, SCRIPTED_RESPOND + "\n" + room) as a:
        _generate(a, "ada", doubles["matrix:@ada:example.org"])
        assert a.ctl("export", "ada", str(first)).returncode == 0
        views = _views(a, "ada")
        _ids_in_data_are_declared(a)
        carried = tmp_path / "ada-archives.noema"
        assert a.ctl("export", "ada", str(carried), "--with-archives").returncode == 0
        [run] = a.api("GET", "/minds/ada/archives").json()
        walked = _archived_walk(a, run["first_id"], "ada")
    counts = json.loads(_manifest(first)["counts"])
    assert sorted(t for t, n in counts.items() if n == 0) == [], "the generated mind leaves a table empty: the round trip does not cover it"
    with scripted_app(tmp_path / "b", GENERATED_SCRIPT, SCRIPTED_RESPOND + "\n" + room.replace("minds.ada.", "minds.ada2.")) as b:  # b has a mind `ada` of its own
        out = b.ctl("import", str(first), "--as", "ada2")
        assert out.returncode == 0, out.stderr
        assert b.ctl("export", "ada2", str(again)).returncode == 0
        assert _manifest(again)["checksum"] == _manifest(first)["checksum"]
        assert _views(b, "ada2", shown_as="ada") == views
        assert _cited_rows_are_the_minds(b, "ada2") > 50
        # Without its archive files the moved mind's archive runs name the files where they were; with them, the files
        # are made anew here and its archived events walk as on a.
        [elsewhere] = b.api("GET", "/minds/ada2/archives").json()
        assert elsewhere["path"] == run["path"]
        out = b.ctl("import", str(carried), "--as", "ada3")
        assert out.returncode == 0, out.stderr
        [here] = b.api("GET", "/minds/ada3/archives").json()
        assert Path(here["path"]) == b.paths.data_dir / "archives" / f"ada3-{run['path'].rsplit('ada-', 1)[1]}"
        assert oct(Path(here["path"]).stat().st_mode & 0o777) == "0o600"
        assert _archived_walk(b, here["first_id"], "ada3", shown_as="ada") == walked
        altered = tmp_path / "altered.noema"
        altered.write_bytes(carried.read_bytes())
        conn = sqlite3.connect(altered)
        conn.execute("UPDATE archive1__events SET text = 'not what happened' WHERE rowid = 1")
        conn.commit()
        conn.close()
        assert "does not match its checksum" in _refused(b, altered, "--as", "ada4")
        assert sorted(p.name for p in (b.paths.data_dir / "archives").iterdir()) == [Path(here["path"]).name], "a refused import leaves no archive file"
        again_carried = tmp_path / "again-archives.noema"
        assert b.ctl("export", "ada3", str(again_carried), "--with-archives").returncode == 0
        assert _manifest(again_carried)["checksum"] == _manifest(carried)["checksum"] != _manifest(first)["checksum"]


def _archived_walk(engine: InProcess, event_id: int, mind: str, shown_as: str | None = None) -> str:
    """The causal walk around an archived event (inside its archive file), ids and the file's name aside."""
    chain = engine.api("GET", f"/events/{event_id}/chain")
    assert chain.status_code == 200, chain.text
    text = json.dumps(chain.json(), sort_keys=True)
    text = re.sub(r'"[^"]*/archives/[^"]*\.sqlite"', '"FILE"', text)
    return re.sub(r"\d+", "#", text.replace(f'"{mind}"', f'"{shown_as}"').replace(f"{mind}/", f"{shown_as}/") if shown_as else text)


def _cited_rows_are_the_minds(engine: InProcess, mind: str) -> int:
    """Every id the mind's JSON cites (declared in transfer_ids) names a row of the mind, or an event it archived; how many."""
    from noemad.store.transfer_ids import shift_json, shift_text

    db = engine.sup.store.reader()
    cited: list[tuple[str, int]] = []

    def note(space: str, value: int) -> int:
        cited.append((space, value))
        return value

    for (table, column), (kind_column, patterns) in JSON_COLUMNS.items():
        kind = kind_column or "''"
        for kind_value, text in db.execute(f'SELECT {kind}, "{column}" FROM {table} WHERE mind = ?', [mind]):
            shift_json(text, paths_for(patterns, kind_value or "*"), note, compact=True)
    for table, column in TEXT_COLUMNS:
        for (text,) in db.execute(f'SELECT "{column}" FROM {table} WHERE mind = ?', [mind]):
            shift_text(text, note, str)
    # Every string in the mind's data and notification keys that names rows (TEXT_REF), read here on its own terms.
    spaces = {"belief": "beliefs", "event": "events", "memory": "memories", "goal": "goals", "prediction": "predictions", "notification": "notifications"}
    texts = [data for (data,) in db.execute("SELECT data FROM events WHERE mind = ?", [mind])]
    texts += [key for (key,) in db.execute("SELECT key FROM notifications WHERE mind = ?", [mind])]
    for text in texts:
        for match in TEXT_REF.finditer(text):
            if match.group(4) is not None:
                assert match.group(4) == mind, f"{text[:80]} names mind {match.group(4)}"
                continue
            cited.append((spaces[match.group(1)], int(match.group(2))))
            if match.group(1) == "belief" and match.group(3) is not None:
                cited.append(("events", int(match.group(3))))
    archived = db.execute("SELECT first_id, last_id FROM archives WHERE mind = ?", [mind]).fetchall()
    stray = []
    for space, value in cited:
        owner = db.execute(f"SELECT mind FROM {space} WHERE id = ?", [value]).fetchone()
        if owner != (mind,) and not (space == "events" and any(lo <= value <= hi for lo, hi in archived)):
            stray.append((space, value, owner))
    assert stray == [], f"{mind}'s data cites rows that are not its own"
    return len(cited)


def test_a_mind_larger_than_the_body_limit_is_imported(tmp_path: Path) -> None:
    """The import's body is a whole mind, streamed to disk: daemon.max_body_bytes (for JSON bodies) does not bound it."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = start_app(tmp_path / "a")
    try:
        assert a.api("POST", "/minds", json={"name": "ada"}).status_code == 201
        for n in range(3):
            a.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": f"log {n}: " + "x" * 3000})
        a.settle("ada")
        file = tmp_path / "ada.noema"
        assert a.ctl("export", "ada", str(file)).returncode == 0
    finally:
        a.stop()
    b = start_app(tmp_path / "b", "[daemon]\nmax_body_bytes = 4096\n")
    try:
        assert file.stat().st_size > 4 * 4096
        assert b.api("POST", "/minds/ada/events", json={"kind": "message", "author": "bob", "text": "x" * 5000}).status_code == 413
        out = b.ctl("import", str(file))
        assert out.returncode == 0, out.stderr
        assert len(b.api("GET", "/minds/ada/events?kind=message").json()["events"]) == 3
    finally:
        b.stop()


def test_a_job_running_when_the_mind_was_exported_is_failed_on_import_not_left_running(hosts: tuple[InProcess, InProcess], tmp_path: Path) -> None:
    from noemad.background.jobs import start_job

    a, b = hosts
    assert a.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    job = a.run(a.sup.store.writer.run(lambda db: start_job(db, mind="ada", kind="consolidation", trigger="operator", actor="operator", inputs={}, now=0)))
    file = tmp_path / "ada.noema"
    assert a.ctl("export", "ada", str(file)).returncode == 0
    assert b.ctl("import", str(file)).returncode == 0
    [moved] = b.api("GET", "/jobs").json()["jobs"]
    assert (moved["status"], moved["error"]) == ("failed", "the mind was exported while this job ran; run it again where the mind is now")
    assert b.api("GET", "/minds/ada").json()["mode"] == "idle"
    assert b.api("POST", "/minds/ada/jobs", json={"kind": "consolidation"}).status_code == 202  # not barred by a job that runs nowhere
    assert a.api("GET", f"/jobs/{job.id}").json()["status"] == "running"  # the first host's row is its own
