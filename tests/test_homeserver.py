"""The Synapse harness itself (tests/homeserver.py): it starts, registers people, carries a message, restarts.

Cheap next to what it proves for every Matrix test: the homeserver is real,
on loopback only, and a restart keeps its rooms (the reconnect test needs it).
"""

from __future__ import annotations

import json

from nio import RoomCreateResponse, RoomMessagesResponse, RoomMessageText, RoomSendResponse

from homeserver import Homeserver, People


def test_people_talk_in_a_room_that_outlives_a_restart(homeserver: Homeserver, people: People) -> None:
    alice, bob = people.add("h_alice"), people.add("h_bob")
    made = people.run(alice.room_create(invite=[bob.user_id]))
    assert isinstance(made, RoomCreateResponse)
    people.run(bob.join(made.room_id))
    sent = people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": "hello bob"}))
    assert isinstance(sent, RoomSendResponse)
    homeserver.restart()
    history = people.run(bob.room_messages(made.room_id, start="", limit=10))
    assert isinstance(history, RoomMessagesResponse)
    assert [e.body for e in history.chunk if isinstance(e, RoomMessageText)] == ["hello bob"]
    # Loopback only, no federation or key server: nothing in its config reaches beyond 127.0.0.1.
    config = json.loads((homeserver.place / "homeserver.yaml").read_text())
    assert config["trusted_key_servers"] == [] and config["federation_domain_whitelist"] == []
    assert [(lis["bind_addresses"], lis["resources"][0]["names"]) for lis in config["listeners"]] == [(["127.0.0.1"], ["client"])]
