"""The Matrix connector against a real homeserver: Synapse on loopback (tests/homeserver.py), people as nio clients.

In process (tests/inprocess.py): the engine runs the mind `ada` with a
`[[minds.ada.connectors]]` Matrix table for its account `@gardener`, on the
manual clock; the people speak through Synapse, and what the tests assert is
what the mind stored and what the room shows. One Synapse serves the module;
each test makes its own people and rooms.
"""

from __future__ import annotations

import json
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from nio import AsyncClient, RoomCreateResponse, RoomMessagesResponse, RoomSendResponse

from conftest import SCRIPTED_RESPOND, poll
from homeserver import Homeserver, People
from inprocess import HeldTurns, InProcess, scripted_app

SCRIPT = """
[respond]
default = "On it."
"""
WAIT = 60.0  # seconds: a bound on a homeserver that never answers, not a wait for time to pass
_names = itertools.count(1)


def token_file(home: Path, token: str) -> Path:
    path = home / "gardener.token"
    path.write_text(token + "\n")
    os.chmod(path, 0o600)
    return path


def matrix_config(server: Homeserver, user_id: str, token: Path, rooms: list[str], invites_from: list[str] = (), bots: list[str] = (),
                  rules: str = "") -> str:
    quoted = lambda items: "[" + ", ".join(f'"{i}"' for i in items) + "]"  # noqa: E731
    # scripted_app fills in {script}: the rest is escaped for str.format.
    return SCRIPTED_RESPOND + (rules + f"""
[[minds.ada.connectors]]
kind = "matrix"
homeserver = "{server.url}"
user_id = "{user_id}"
access_token_file = "{token}"
rooms = {quoted(rooms)}
invites_from = {quoted(invites_from)}
bots = {quoted(bots)}
""").replace("{", "{{").replace("}", "}}")


@dataclass
class Room:
    """A mind in a Matrix room: the engine, its people, the room and the mind's account."""

    engine: InProcess
    people: People
    room_id: str
    mind: AsyncClient
    clients: dict[str, AsyncClient]

    def say(self, who: str, body: str, **content: Any) -> str:
        sent = self.people.run(self.clients[who].room_send(self.room_id, "m.room.message", {"msgtype": "m.text", "body": body, **content}))
        assert isinstance(sent, RoomSendResponse), sent
        return str(sent.event_id)

    def until(self, check: Callable[[], Any], what: str) -> Any:
        """Wait until `check()` is truthy (Synapse and the engine work at their own pace; no clock time passes); its value."""
        return poll(check, what, WAIT, every=0.02)

    def messages(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = self.engine.api("GET", "/minds/ada/events", params={"kind": "message", "limit": 1000}).json()["events"]
        return events

    def stored(self, text: str) -> dict[str, Any]:
        return self.until(lambda: next((m for m in self.messages() if m["text"] == text), None), f"the message {text!r} stored")

    def connected(self) -> None:
        def ready() -> bool:
            running = self.engine.connectors.of("ada")
            return bool(running) and running[0].state().phase == "connected"

        self.until(ready, "the connector connected")

    def room_events(self, who: str = "alice", room: str | None = None) -> list[dict[str, Any]]:
        """The room's message events, oldest first, as one of the people reads them."""
        page = self.people.run(self.clients[who].room_messages(room or self.room_id, start="", limit=1000))
        assert isinstance(page, RoomMessagesResponse), page
        return [e.source for e in reversed(page.chunk) if e.source.get("type") == "m.room.message"]


def homeserver_name(user_id: str) -> str:
    return user_id.split(":", 1)[1]


@pytest.fixture
def garden(homeserver: Homeserver, people: People, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Room]:
    """The mind in a room with alice and bob (and ci, a bot); `dm=True` (indirect param) makes alice's direct room instead."""
    n = next(_names)
    params: dict[str, Any] = getattr(request, "param", {})
    alice, bob, ci = people.add(f"alice{n}", "Alice"), people.add(f"bob{n}", "Bob"), people.add(f"ci{n}")
    mind = people.add(f"gardener{n}", "Gardener")
    alias = f"garden{n}" if params.get("alias") else None
    made = people.run(alice.room_create(alias=alias, invite=[bob.user_id, ci.user_id, mind.user_id]))
    assert isinstance(made, RoomCreateResponse)
    for who in (bob, ci):
        people.run(who.join(made.room_id))
    token = token_file(tmp_path, people.accounts[f"gardener{n}"].access_token)
    named = f"#{alias}:{homeserver_name(mind.user_id)}" if alias else made.room_id
    config = matrix_config(homeserver, mind.user_id, token, [named], invites_from=[alice.user_id], bots=[ci.user_id],
                           rules=params.get("rules", ""))
    with scripted_app(tmp_path, SCRIPT, config) as engine:
        room = Room(engine, people, made.room_id, mind, {"alice": alice, "bob": bob, "ci": ci, "mind": mind})
        room.connected()
        yield room


def test_room_messages_are_stored_with_the_rooms_flags(garden: Room) -> None:
    garden.say("alice", "the tomatoes need water")
    plain = garden.stored("the tomatoes need water")
    assert plain["actor"] == f"user:matrix:{garden.clients['alice'].user_id}"
    assert plain["channel"] == f"matrix:{garden.room_id}"
    garden.say("bob", "what do you think, Gardener?", **{"m.mentions": {"user_ids": [garden.mind.user_id]}})
    assert garden.stored("what do you think, Gardener?")["data"]["mentions"] == ["ada"]
    # Its display name in the body is a mention too (its localpart here is gardenerN, its display name Gardener).
    garden.say("bob", "let's ask Gardener")
    assert garden.stored("let's ask Gardener")["data"]["mentions"] == ["ada"]
    garden.say("ci", "build 812 passed")
    assert garden.stored("build 812 passed")["data"]["bot"] is True


def verdict(garden: Room, event_id: int) -> str | None:
    turn: dict[str, Any] = garden.engine.api("GET", f"/events/{event_id}/turn").json()
    return turn["verdict"]


def test_the_minds_own_account_is_stored_as_from_self_and_never_wakes_it(garden: Room) -> None:
    garden.say("mind", "posted from my phone")  # the mind's account, from another client: not an echo of a reply
    own = garden.stored("posted from my phone")
    assert own["data"]["from_self"] is True
    assert verdict(garden, own["id"]) == "defer"


def test_a_direct_invite_from_a_listed_person_is_joined_and_its_messages_are_dms(garden: Room) -> None:
    alice = garden.clients["alice"]
    made = garden.people.run(alice.room_create(invite=[garden.mind.user_id], is_direct=True))
    assert isinstance(made, RoomCreateResponse)
    garden.until(lambda: made.room_id in (garden.engine.connectors.of("ada")[0].state().rooms), "the mind in alice's direct room")
    sent = garden.people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": "are you there?"}))
    assert isinstance(sent, RoomSendResponse)
    dm = garden.stored("are you there?")
    assert (dm["channel"], dm["data"]["dm"]) == (f"matrix:{made.room_id}", True)
    # The default rules wake the mind for a DM; its reply arrives in the DM as a Matrix reply to it.
    reply = garden.engine.wait_for("ada", "reply")
    assert reply["causation_id"] == dm["id"]
    answer = garden.until(lambda: [e for e in garden.room_events("mind", made.room_id) if e["sender"] == garden.mind.user_id], "the reply")
    assert [(e["content"]["body"], e["content"]["m.relates_to"]) for e in answer] == [("On it.", {"m.in_reply_to": {"event_id": sent.event_id}})]
    # Sent with the reply's event id as its transaction id (the account's own reads show it): one event per reply.
    assert answer[0]["unsigned"]["transaction_id"] == f"noema.{reply['id']}"
    delivered = garden.engine.wait_for("ada", "delivery")
    assert (delivered["causation_id"], delivered["data"]["remote_id"]) == (reply["id"], answer[0]["event_id"])


def test_an_invite_from_a_stranger_is_refused_and_recorded(garden: Room) -> None:
    bob = garden.clients["bob"]  # in the room, but not in invites_from
    made = garden.people.run(bob.room_create(invite=[garden.mind.user_id]))
    assert isinstance(made, RoomCreateResponse)
    refused = garden.engine.wait_for("ada", "matrix_invite_refused")
    assert refused["data"] == {"room": made.room_id, "inviter": bob.user_id, "connector": f"matrix:{garden.mind.user_id}"}
    members = garden.people.run(bob.joined_members(made.room_id))
    assert [m.user_id for m in members.members] == [bob.user_id]
    assert made.room_id not in garden.engine.connectors.of("ada")[0].state().rooms


def test_a_redaction_takes_the_text_back_from_what_the_mind_reads(garden: Room) -> None:
    secret = garden.say("bob", "my password is hunter2")
    stored = garden.stored("my password is hunter2")
    garden.engine.wait_for("ada", "reply", since=stored["id"])  # its turn remembered it: an episode
    garden.engine.settle("ada")
    garden.people.run(garden.clients["bob"].room_redact(garden.room_id, secret, reason="oops"))
    redaction = garden.engine.wait_for("ada", "message_redacted")
    assert redaction["causation_id"] == stored["id"]
    assert redaction["text"] == f"redacted by matrix:{garden.clients['bob'].user_id}: oops"
    assert garden.engine.api("GET", f"/events/{stored['id']}").json()["text"] == "(redacted)"
    # What the mind's next turn and its judge read of the room: the conversation window, from the events.
    from noemad.stimuli import conversation_before

    window = conversation_before(garden.engine.sup.store.reader(), "ada", 10**9, 100)
    assert not any("hunter2" in row[4] for row in window)
    # The episode its turn wrote is retracted by the redaction: no turn retrieves it again.
    found = garden.engine.api("GET", "/minds/ada/memories", params={"search": "hunter2"}).json()
    assert found["memories"] == []
    retracted = garden.engine.wait_for("ada", "memory_retracted", since=redaction["id"] - 1)
    assert retracted["causation_id"] == redaction["id"]


def test_an_edit_is_a_message_linked_to_the_one_it_corrects(garden: Room) -> None:
    first = garden.say("alice", "water at noon")
    original = garden.stored("water at noon")
    garden.say("alice", "* water at dusk", **{"m.new_content": {"msgtype": "m.text", "body": "water at dusk"},
                                               "m.relates_to": {"rel_type": "m.replace", "event_id": first}})
    assert garden.stored("water at dusk")["data"]["edits"] == original["id"]


def test_an_encrypted_message_is_recorded_as_unreadable(garden: Room) -> None:
    sent = garden.people.run(garden.clients["bob"].room_send(
        garden.room_id, "m.room.encrypted", {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "device_id": "D",
                                             "sender_key": "k", "session_id": "s"}))
    assert isinstance(sent, RoomSendResponse)
    unreadable = garden.until(lambda: next((m for m in garden.messages() if "encrypted" in m["data"].get("tags", [])), None), "it")
    assert unreadable["actor"] == f"user:matrix:{garden.clients['bob'].user_id}" and "cannot read" in unreadable["text"]


def test_a_reply_to_the_minds_message_is_a_reply_to_its_reply(garden: Room) -> None:
    garden.say("alice", "what should we plant?")
    asked = garden.stored("what should we plant?")
    reply = garden.engine.wait_for("ada", "reply", since=asked["id"])
    delivered = garden.engine.wait_for("ada", "delivery", since=reply["id"])
    mine = delivered["data"]["remote_id"]
    # A connector started afresh (a reload that changes it), after the room's echo of the mind's message was
    # synced past (a later message is stored), knows that message from the outbox's record alone.
    from noemad.config.files import load_config

    garden.say("bob", "noted")
    garden.stored("noted")

    before = garden.engine.connectors.of("ada")[0]
    config = garden.engine.home / "noemad.toml"
    config.write_text(config.read_text().replace("bots = [", 'bots = ["@nobody:test.local", '))

    async def reload() -> None:
        garden.engine.sup.apply_config(load_config(config))

    garden.engine.run(reload())
    garden.until(lambda: (now := garden.engine.connectors.of("ada")[0]) is not before and now.state().phase == "connected", "a new connector")
    garden.say("bob", "why that?", **{"m.relates_to": {"m.in_reply_to": {"event_id": mine}}})
    assert garden.stored("why that?")["data"]["reply_to"] == reply["id"]  # the gate's `reply` flag: said to the mind
    # The room's echo of the mind's own reply is not stored as something said to it.
    assert [m["text"] for m in garden.messages() if m["data"].get("from_self")] == []


CHATTY = """
[minds.ada.gate]
default = { debounce = { ms = 600000 } }

[[minds.ada.gate.rules]]
name = "addressed"
match = { flags = ["dm", "mention", "reply"] }
behaviour = "always"
"""


@pytest.mark.parametrize("garden", [{"rules": CHATTY}], indirect=True)
def test_people_chatting_wait_in_a_batch_and_a_mention_wakes_the_mind(garden: Room) -> None:
    garden.say("alice", "did the basil come up?")
    garden.say("bob", "a few sprouts")
    chat = [garden.stored("did the basil come up?"), garden.stored("a few sprouts")]
    assert [verdict(garden, m["id"]) for m in chat] == ["batch", "batch"]  # two people talking: the mind waits
    garden.say("bob", f"{garden.mind.user_id}, when do we thin them?", **{"m.mentions": {"user_ids": [garden.mind.user_id]}})
    mention = garden.stored(f"{garden.mind.user_id}, when do we thin them?")
    reply = garden.engine.wait_for("ada", "reply", since=mention["id"] - 1)
    assert reply["causation_id"] == mention["id"]
    started = garden.engine.wait_for("ada", "cycle_started", since=mention["id"])
    assert (started["data"]["rule"], started["data"]["stimuli"]) == ("addressed", 3)
    # The turn took the whole conversation: nothing of it waits any more.
    assert [garden.engine.api("GET", f"/events/{m['id']}/turn").json()["waiting"] for m in chat] == [False, False]


def test_a_send_retried_after_a_crash_posts_nothing_twice(garden: Room) -> None:
    # The outbox sends a delivery again (same reply, same transaction id) when noemad died before it
    # recorded the first attempt: the homeserver keeps one event per transaction id.
    from noemad.clock import parse_iso
    from noemad.connectors.port import Delivery

    garden.say("alice", "one reply, please")
    asked = garden.stored("one reply, please")
    reply = garden.engine.wait_for("ada", "reply", since=asked["id"])
    first = garden.engine.wait_for("ada", "delivery", since=reply["id"])["data"]["remote_id"]
    connector = garden.engine.connectors.of("ada")[0].connector
    assert connector is not None
    again = Delivery(id=1, mind="ada", event_id=reply["id"], what="reply", text=reply["text"], at=parse_iso(reply["at"]),
                     attempt=2, room=garden.room_id, in_reply_to=None)
    assert garden.engine.run(connector.send(again)).remote_id == first
    assert [e["event_id"] for e in garden.room_events() if e["sender"] == garden.mind.user_id] == [first]


def test_a_room_the_config_drops_is_left_on_reload(garden: Room) -> None:
    from noemad.config.files import load_config

    config = garden.engine.home / "noemad.toml"
    config.write_text(config.read_text().replace(f'rooms = ["{garden.room_id}"]', "rooms = []"))

    async def reload() -> None:
        garden.engine.sup.apply_config(load_config(config))

    garden.engine.run(reload())
    alice = garden.clients["alice"]

    def left() -> bool:
        members = garden.people.run(alice.joined_members(garden.room_id))
        return garden.mind.user_id not in [m.user_id for m in members.members]

    garden.until(left, "the mind gone from the room")


def test_the_homeserver_reaches_nothing_beyond_loopback(homeserver: Homeserver) -> None:
    # No federation, no key server (Synapse's default is matrix.org): the tests need no network.
    config = json.loads((homeserver.place / "homeserver.yaml").read_text())
    assert config["trusted_key_servers"] == [] and config["federation_domain_whitelist"] == []
    assert [(lis["bind_addresses"], lis["resources"][0]["names"]) for lis in config["listeners"]] == [(["127.0.0.1"], ["client"])]


def test_the_mind_shows_as_typing_in_the_room_while_its_turn_runs(garden: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    from inprocess import hold_turns

    held = garden.engine.run(_held(monkeypatch, hold_turns))
    alice = garden.clients["alice"]
    first = garden.people.run(alice.sync(timeout=0))
    since = first.next_batch
    garden.say("alice", "take your time")
    garden.stored("take your time")

    def typing() -> list[str]:
        nonlocal since
        answer = garden.people.run(alice.sync(timeout=1000, since=since))
        since = answer.next_batch
        room = answer.rooms.join.get(garden.room_id)
        events = room.ephemeral if room is not None else []
        return [u for e in events if getattr(e, "users", None) is not None for u in e.users] or []

    assert garden.until(lambda: garden.mind.user_id in typing(), "the mind typing") is True
    garden.engine.loop.call_soon_threadsafe(held.release.set)
    garden.engine.wait_for("ada", "reply")
    garden.until(lambda: typing() == [] or None, "the typing notice off")


async def _held(monkeypatch: pytest.MonkeyPatch, hold: Callable[[Any], HeldTurns]) -> HeldTurns:
    return hold(monkeypatch)  # on the engine's loop: the event belongs to it


def test_a_reply_to_a_thread_goes_to_the_same_thread(garden: Room) -> None:
    root = garden.say("alice", "thread: the compost heap")
    garden.stored("thread: the compost heap")
    asked = garden.say("bob", "too wet?", **{"m.relates_to": {"rel_type": "m.thread", "event_id": root, "is_falling_back": True,
                                                               "m.in_reply_to": {"event_id": root}}})
    stored = garden.stored("too wet?")
    reply = garden.engine.wait_for("ada", "reply", since=stored["id"])
    assert reply["causation_id"] == stored["id"]

    def in_thread() -> list[dict[str, Any]]:
        return [e for e in garden.room_events() if e["sender"] == garden.mind.user_id
                and e["content"].get("m.relates_to", {}).get("rel_type") == "m.thread"]

    answer = garden.until(in_thread, "the reply in the thread")
    assert answer[-1]["content"]["m.relates_to"] == {
        "rel_type": "m.thread", "event_id": root, "is_falling_back": False, "m.in_reply_to": {"event_id": asked},
    }


@pytest.mark.parametrize("garden", [{"alias": True}], indirect=True)
def test_a_room_named_by_its_alias_is_joined_and_heard(garden: Room) -> None:
    assert garden.engine.connectors.of("ada")[0].state().rooms == [garden.room_id]
    garden.say("alice", "found by its alias")
    assert garden.stored("found by its alias")["channel"] == f"matrix:{garden.room_id}"


def test_a_room_the_config_adds_is_heard_from_the_minds_join_on(garden: Room) -> None:
    from noemad.config.files import load_config

    from nio import RoomPreset

    # A public room the mind is not invited to (an invite from alice, in invites_from, would have it join at once).
    alice = garden.clients["alice"]
    made = garden.people.run(alice.room_create(preset=RoomPreset.public_chat))
    assert isinstance(made, RoomCreateResponse)
    old = garden.people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": "old news"}))
    assert isinstance(old, RoomSendResponse)
    config = garden.engine.home / "noemad.toml"
    config.write_text(config.read_text().replace(f'rooms = ["{garden.room_id}"]', f'rooms = ["{garden.room_id}", "{made.room_id}"]'))

    async def reload() -> None:
        garden.engine.sup.apply_config(load_config(config))

    garden.engine.run(reload())
    garden.until(lambda: made.room_id in garden.engine.connectors.of("ada")[0].state().rooms
                 and garden.engine.connectors.of("ada")[0].state().phase == "connected", "the mind in the new room")
    new = garden.people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": "new news"}))
    assert isinstance(new, RoomSendResponse)
    garden.stored("new news")
    assert "old news" not in [m["text"] for m in garden.messages()]  # the room's history is not said to the mind
