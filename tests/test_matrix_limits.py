"""A homeserver that answers 429: the mind's replies wait what it asks, and none is lost or doubled.

This module's Synapse has low message rate limits (`HOMESERVER_LIMITS`): the
mind's account may send 1 message, then one every 5 seconds. alice, who
talks to it, is exempt. The outbox's waits are on the manual clock, which
the test moves; the homeserver's are real, so the test moves the clock and
looks again until every reply is in the room.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from nio import RoomCreateResponse, RoomMessagesResponse, RoomSendResponse

from homeserver import Homeserver, Limits, People, unlimited
from inprocess import scripted_app
from test_matrix import SCRIPT, matrix_config, token_file

HOMESERVER_LIMITS = Limits(per_second=0.2, burst_count=1)


def test_429s_are_honoured_and_every_reply_arrives_once(homeserver: Homeserver, people: People, tmp_path: Path) -> None:
    alice, mind = people.add("lalice", "Alice"), people.add("lgardener", "Gardener")
    unlimited(homeserver, alice.user_id)
    made = people.run(alice.room_create(invite=[mind.user_id]))
    assert isinstance(made, RoomCreateResponse)
    config = matrix_config(homeserver, mind.user_id, token_file(tmp_path, people.accounts["lgardener"].access_token), [made.room_id])
    with scripted_app(tmp_path, SCRIPT, config) as engine:
        # What is said before the connector's first sync is the room's history: wait for it.
        deadline = time.monotonic() + 60
        while [c["state"]["phase"] for c in engine.api("GET", "/minds/ada/connectors").json()["connectors"]] != ["connected"]:
            assert time.monotonic() < deadline, "the connector never connected"
            time.sleep(0.05)
        # The first reply takes the account's one message; the next, a turn later, comes well within 5 s.
        first = people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": "one"}))
        assert isinstance(first, RoomSendResponse)
        engine.wait_for("ada", "delivery")
        for text in ("two", "three"):
            sent = people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": text}))
            assert isinstance(sent, RoomSendResponse)

        def events(kind: str) -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = engine.api("GET", "/minds/ada/events", params={"kind": kind, "limit": 100}).json()["events"]
            return found

        deadline = time.monotonic() + 120
        while True:
            engine.settle("ada")  # every turn done: no reply still to come
            replies, sent = events("reply"), [d for d in events("delivery") if d["data"]["outcome"] == "sent"]
            if (len(replies) >= 2 and len(sent) == len(replies)) or time.monotonic() > deadline:
                break
            engine.advance(1)  # the outbox waits on the daemon's clock what the homeserver asked; Synapse counts real time
            time.sleep(0.2)
        limited = [d for d in events("delivery") if d["data"]["outcome"] == "failed"]
        assert limited, "the homeserver never answered 429"
        assert all("rate limiting" in d["data"]["error"] and "retry_at" in d["data"] for d in limited)
        assert len(sent) == len(replies) >= 2
        page = people.run(alice.room_messages(made.room_id, start="", limit=100))
        assert isinstance(page, RoomMessagesResponse)
        assert [e.source["event_id"] for e in page.chunk if e.source.get("sender") == mind.user_id
                and e.source["type"] == "m.room.message"][::-1] == [d["data"]["remote_id"] for d in sent]  # each reply once, none lost
