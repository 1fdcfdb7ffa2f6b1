"""Capture the real Matrix events the connector's translation tests read (tests/data/matrix_events.json).

Starts a Synapse on loopback (tests/homeserver.py), has alice, bob and the
mind's account (`@gardener`) say what a room says (plain text, an intentional
mention, the name in the body, a reply, a thread, an edit, a redaction, an
event the mind cannot decrypt, a DM) and writes each event as the mind's sync
returned it, by a name the tests use. Run it again when Synapse changes what
it sends: `python scripts/capture_matrix_events.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))

from nio import RoomCreateResponse, RoomSendResponse, SyncResponse  # noqa: E402

from homeserver import People, running_homeserver  # noqa: E402

TEXT = {"msgtype": "m.text"}


def main() -> None:
    with running_homeserver() as server:
        people = People(server)
        alice, bob = people.add("alice", "Alice"), people.add("bob", "Bob")
        mind = people.add("gardener", "Gardener")
        made = people.run(alice.room_create(alias="garden", invite=[bob.user_id, mind.user_id]))
        assert isinstance(made, RoomCreateResponse)
        room = made.room_id
        for who in (bob, mind):
            people.run(who.join(room))
        direct = people.run(alice.room_create(invite=[mind.user_id], is_direct=True))
        assert isinstance(direct, RoomCreateResponse)
        people.run(mind.join(direct.room_id))
        first = people.run(mind.sync(timeout=0))
        assert isinstance(first, SyncResponse)

        def send(who: Any, content: dict[str, Any], kind: str = "m.room.message", where: str = room, txn: str | None = None) -> str:
            sent = people.run(who.room_send(where, kind, content, tx_id=txn))
            assert isinstance(sent, RoomSendResponse), sent
            return str(sent.event_id)

        names: dict[str, str] = {}
        names["plain"] = send(alice, {**TEXT, "body": "the tomatoes need water"})
        names["intentional_mention"] = send(bob, {**TEXT, "body": "Gardener: thoughts?", "m.mentions": {"user_ids": [mind.user_id]}})
        names["name_in_body"] = send(bob, {**TEXT, "body": "what does gardener think?"})
        names["from_mind"] = send(mind, {**TEXT, "body": "water them at dusk"}, txn="noema.42")
        names["reply"] = send(
            alice, {**TEXT, "body": "why dusk?", "m.relates_to": {"m.in_reply_to": {"event_id": names["from_mind"]}}}
        )
        names["thread"] = send(
            bob,
            {**TEXT, "body": "in a thread", "m.relates_to": {"rel_type": "m.thread", "event_id": names["plain"], "is_falling_back": True,
                                                             "m.in_reply_to": {"event_id": names["plain"]}}},
        )
        names["edit"] = send(
            alice,
            {**TEXT, "body": "* the tomatoes need more water", "m.new_content": {**TEXT, "body": "the tomatoes need more water"},
             "m.relates_to": {"rel_type": "m.replace", "event_id": names["plain"]}},
        )
        names["emote"] = send(bob, {"msgtype": "m.emote", "body": "waters the basil"})
        names["notice"] = send(bob, {"msgtype": "m.notice", "body": "build 812 passed"})
        names["encrypted"] = send(
            bob, {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnB...", "device_id": "BOBDEV", "sender_key": "abc",
                  "session_id": "xyz"}, kind="m.room.encrypted",
        )
        redacted_target = send(bob, {**TEXT, "body": "my password is hunter2"})
        people.run(bob.room_redact(room, redacted_target, reason="oops"))
        names["dm"] = send(alice, {**TEXT, "body": "are you there?"}, where=direct.room_id)
        later = people.run(mind.sync(timeout=0, since=first.next_batch, sync_filter={"room": {"timeline": {"limit": 100}}}))
        assert isinstance(later, SyncResponse)
        events: dict[str, Any] = {}
        by_id: dict[str, dict[str, Any]] = {}
        for joined in later.rooms.join.values():
            for event in joined.timeline.events:
                by_id[event.source["event_id"]] = event.source
        for name, event_id in names.items():
            events[name] = by_id[event_id]
        events["redacted"] = by_id[redacted_target]  # as a sync after the redaction shows it: content gone
        events["redaction"] = next(e for e in by_id.values() if e["type"] == "m.room.redaction")
        out = {
            "room": room, "direct_room": direct.room_id, "mind": mind.user_id, "alice": alice.user_id, "bob": bob.user_id,
            "events": events,
        }
        people.close()
    (HERE / "tests" / "data" / "matrix_events.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
