"""A Matrix room event into what the mind hears: real event JSON, as a Synapse sync returned it.

tests/data/matrix_events.json was captured from the Synapse of tests/homeserver.py
by scripts/capture_matrix_events.py: alice, bob and the mind's account
(`@gardener`) saying each thing a room says. Pure: no homeserver runs here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inprocess import InProcess

from noemad.connectors.matrix.translate import ENCRYPTED_TAG, Me, Redacted, Room, Said, echo_of, resolve, translate, txn_id
from noemad.rules.match import facts_of
from noemad.events import append
from noemad.minds import create_mind
from noemad.store import Store

CAPTURED = json.loads((Path(__file__).parent / "data" / "matrix_events.json").read_text())
EVENTS: dict[str, dict[str, Any]] = CAPTURED["events"]
ROOM = Room(CAPTURED["room"])
DM = Room(CAPTURED["direct_room"], direct=True)
NOBOTS = Me("gardener", CAPTURED["mind"], "Gardener")


def said(name: str, room: Room = ROOM, me: Me = NOBOTS) -> Said:
    change = translate(EVENTS[name], room, me)
    assert isinstance(change, Said), change
    return change


def test_a_room_message_is_a_message_from_its_author_on_the_rooms_channel() -> None:
    s = said("plain")
    assert s.remote_id == EVENTS["plain"]["event_id"]
    m = s.message
    assert (m.author, m.channel, m.text) == (f"matrix:{CAPTURED['alice']}", f"matrix:{CAPTURED['room']}", "the tomatoes need water")
    assert (m.dm, m.mentions, m.bot, m.from_self, m.reply_to, m.tags, s.thread) == (False, (), False, False, None, (), None)


def test_a_message_in_a_direct_room_is_a_dm() -> None:
    assert said("dm", DM).message.dm is True


def test_an_intentional_mention_or_the_minds_name_in_the_body_mentions_the_mind() -> None:
    assert said("intentional_mention").message.mentions == ("gardener",)
    assert said("name_in_body").message.mentions == ("gardener",)
    assert said("plain").message.mentions == ()
    # The mind's display name differs from its mind name: the account's names count as its name.
    other = Me("ada", CAPTURED["mind"], "Gardener")
    assert said("name_in_body", me=other).message.mentions == ("ada",)


def test_a_listed_bot_and_a_notice_are_flagged_as_a_bots() -> None:
    bob_is_a_bot = Me("gardener", CAPTURED["mind"], "Gardener", frozenset({CAPTURED["bob"]}))
    assert said("emote", me=bob_is_a_bot).message.bot is True
    assert said("plain", me=bob_is_a_bot).message.bot is False  # alice
    assert said("notice").message.bot is True  # m.notice: the spec's type for automated clients


def test_the_minds_own_account_is_from_self_and_its_own_send_is_an_echo_of_the_reply() -> None:
    s = said("from_mind")
    assert s.message.from_self is True
    assert s.echo_of == 42 == echo_of(txn_id(42))
    assert said("plain").echo_of is None


def test_a_reply_quotes_the_event_and_resolves_to_the_stimulus_it_became() -> None:
    s = said("reply")
    assert s.quoted == EVENTS["from_mind"]["event_id"]
    assert resolve(s, {EVENTS["from_mind"]["event_id"]: 7}.get).reply_to == 7
    assert resolve(s, {}.get).reply_to is None  # quoting something never stored: no reply_to


def test_a_thread_keeps_its_root_and_its_fallback_is_not_a_reply() -> None:
    s = said("thread")
    assert s.thread == EVENTS["plain"]["event_id"]
    assert s.quoted is None


def test_an_edit_carries_the_new_text_and_points_at_the_message_it_edits() -> None:
    s = said("edit")
    assert s.message.text == "the tomatoes need more water"
    assert s.edited == EVENTS["plain"]["event_id"]
    assert resolve(s, {EVENTS["plain"]["event_id"]: 3}.get).edits == 3


def test_an_encrypted_event_is_recorded_as_unreadable_never_dropped() -> None:
    s = said("encrypted")
    assert s.message.tags == (ENCRYPTED_TAG,)
    assert "cannot read" in s.message.text and s.message.author == f"matrix:{CAPTURED['bob']}"


def test_a_redaction_names_the_event_it_removes() -> None:
    change = translate(EVENTS["redaction"], ROOM, NOBOTS)
    assert change == Redacted(
        EVENTS["redaction"]["event_id"], EVENTS["redacted"]["event_id"], f"matrix:{CAPTURED['bob']}", f"matrix:{CAPTURED['room']}", "oops"
    )
    # The message itself, synced after its redaction, has no content left: nothing to hear.
    assert translate(EVENTS["redacted"], ROOM, NOBOTS) is None


@pytest.mark.parametrize(
    "name, room, flags",
    [
        ("dm", DM, {"dm"}),
        ("intentional_mention", ROOM, {"mention"}),
        ("notice", ROOM, {"from_bot"}),
        ("from_mind", ROOM, {"from_self"}),
        ("plain", ROOM, set()),
    ],
)
def test_the_gate_reads_the_rooms_flags_from_the_stored_message(tmp_path: Path, name: str, room: Room, flags: set[str]) -> None:
    store = Store(tmp_path / "s.db")
    try:
        draft = said(name, room).message.draft("gardener")
        event = store.writer.run_sync(lambda db: (create_mind(db, "gardener", {}, 1.0, "operator"), append(db, draft, 10.0))[1])
        assert set(facts_of(store.reader(), event, "gardener").flags) == flags
    finally:
        store.close()


def test_a_matrix_room_and_user_are_names_an_operator_can_type(app: InProcess, mind: str) -> None:
    """What the connector stores as channel and author (room ids hold `!`, localparts `+` and `=`) passes the one name rule,
    so `say --channel`, `trust SOURCE` and the event filters take them as typed."""
    room, person = "matrix:!5kseNmsQ9_-OPsu:example.org", "matrix:@a+b=c:example.org"
    said = app.ctl("say", mind, "the roses are fine", "--channel", room, "--from", person)
    assert said.returncode == 0, said.stderr
    assert app.ctl("trust", mind, person, "0.7").returncode == 0
    [event] = app.api("GET", f"/minds/{mind}/events", params={"kind": "message"}).json()["events"]
    assert (event["channel"], event["actor"]) == (room, f"user:{person}")
