"""A homeserver that answers 429: the mind's replies wait what it asks, and none is lost or doubled.

This module's Synapse has low message rate limits (`HOMESERVER_LIMITS`): the
mind's account may send 1 message, then one every 2 seconds. alice, who
talks to it, is exempt. The outbox's waits are on the manual clock, which
the test moves; the homeserver's are real, so the test moves the clock and
looks again until every reply is in the room.
"""

from __future__ import annotations

import time
from pathlib import Path

from nio import RoomCreateResponse, RoomMessagesResponse, RoomSendResponse

from homeserver import Homeserver, Limits, People, unlimited
from inprocess import scripted_app
from test_matrix import SCRIPT, matrix_config, token_file

HOMESERVER_LIMITS = Limits(per_second=0.5, burst_count=1)


def test_429s_are_honoured_and_every_reply_arrives_once(homeserver: Homeserver, people: People, tmp_path: Path) -> None:
    alice, mind = people.add("lalice", "Alice"), people.add("lgardener", "Gardener")
    unlimited(homeserver, alice.user_id)
    made = people.run(alice.room_create(invite=[mind.user_id]))
    assert isinstance(made, RoomCreateResponse)
    config = matrix_config(homeserver, mind.user_id, token_file(tmp_path, people.accounts["lgardener"].access_token), [made.room_id])
    with scripted_app(tmp_path, SCRIPT, config) as engine:
        asked = []
        for text in ("one", "two", "three"):
            sent = people.run(alice.room_send(made.room_id, "m.room.message", {"msgtype": "m.text", "body": text}))
            assert isinstance(sent, RoomSendResponse)
            asked.append(engine.wait_for("ada", "message", since=asked[-1]["id"] if asked else 0))
            engine.wait_for("ada", "reply", since=asked[-1]["id"])  # one turn per message: three replies
        deadline = time.monotonic() + 60
        while True:
            got = engine.api("GET", "/minds/ada/events", params={"kind": "delivery", "limit": 100}).json()
            assert "events" in got, got
            sent_ = [e for e in got["events"]
                     if e["data"]["outcome"] == "sent"]
            if len(sent_) == 3 or time.monotonic() > deadline:
                break
            engine.advance(1)  # the outbox waits on the daemon's clock what the homeserver asked; Synapse counts real time
            time.sleep(0.2)
        deliveries = engine.api("GET", "/minds/ada/events", params={"kind": "delivery", "limit": 100}).json()["events"]
        limited = [d for d in deliveries if d["data"]["outcome"] == "failed"]
        assert limited, "the homeserver never answered 429"
        assert all("rate limiting" in d["data"]["error"] and "retry_at" in d["data"] for d in limited)
        assert len([d for d in deliveries if d["data"]["outcome"] == "sent"]) == 3
        page = people.run(alice.room_messages(made.room_id, start="", limit=100))
        assert isinstance(page, RoomMessagesResponse)
        replies = [e.source["content"]["body"] for e in page.chunk if e.source.get("sender") == mind.user_id and e.source["type"] == "m.room.message"]
        assert replies == ["On it."] * 3  # each reply once, none lost
