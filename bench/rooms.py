"""A mind in a Matrix room, on loopback: how fast what is said gets in, and how fast its replies get out.

What is measured (a real noemad on the system clock, a real Synapse on
127.0.0.1 from tests/homeserver.py, people as matrix-nio clients):
  * in: a room message (alice's `room_send` called) to its stimulus committed
    (seen on the mind's event stream), one message at a time: p50, p99;
  * out: a reply committed (seen on the stream) to its event in the room
    (seen by alice's sync): p50, p99;
  * load: 20 senders each sending `--per-sender` messages as fast as the
    homeserver takes them: messages per second from the first send to the
    last stimulus committed, and every message stored exactly once;
  * catch-up: the same load said while noemad is stopped (SIGSTOP), then
    taken in at the connector's own pace once it goes on (SIGCONT): its
    first sync is cut short and the rest read from /messages.

The mind's rules defer everything but "ping" messages (which always wake it):
the load phase measures the connector and the store, not turns.

Run: .venv/bin/python bench/rooms.py [--samples 50] [--per-sender 25]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _daemon import exit_on_sigterm, running_daemon  # noqa: E402
from _report import figure  # noqa: E402
from homeserver import People, running_homeserver  # noqa: E402
from nio import AsyncClient, RoomCreateResponse, RoomSendResponse, SyncResponse  # noqa: E402

SCRIPT = """
[respond]
default = "pong"
"""
RULES = """
[minds.ada.gate]
default = "defer"

[[minds.ada.gate.rules]]
name = "pings"
match = { text = "ping" }
behaviour = "always"
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(values: list[float]) -> str:
    return f"p50 {pct(values, 0.5) * 1000:.1f} ms, p99 {pct(values, 0.99) * 1000:.1f} ms (n={len(values)})"


class Stream:
    """The mind's event stream: when each event was seen, by kind and text."""

    def __init__(self, socket: Path) -> None:
        self.client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(socket)), base_url="http://noemad", timeout=None)
        self.seen: dict[tuple[str, str], float] = {}
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    async def follow(self) -> None:
        async with self.client.stream("GET", "/api/v1/minds/ada/events/stream", params={"since": 0}) as resp:
            async for line in resp.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    self.seen.setdefault((event["kind"], event.get("text") or ""), time.perf_counter())
                    self.events.append(event)
                    self.changed.set()

    async def wait(self, kind: str, text: str) -> float:
        while (kind, text) not in self.seen:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 60)
        return self.seen[(kind, text)]

    async def count(self, kind: str, n: int) -> float:
        while sum(1 for e in self.events if e["kind"] == kind) < n:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 120)
        return time.perf_counter()


def check_sent(sent: Any) -> None:
    assert isinstance(sent, RoomSendResponse), sent


async def bench(people: People, socket: Path, pid: int, room: str, mind_id: str, senders: list[AsyncClient], alice: AsyncClient,
                samples: int, per_sender: int) -> None:
    stream = Stream(socket)
    follower = asyncio.create_task(stream.follow())
    await asyncio.sleep(0.5)
    # in: a message to its stimulus, one at a time
    inbound: list[float] = []
    for i in range(samples):
        text = f"sample {i} of what the room says"
        began = time.perf_counter()
        check_sent(await alice.room_send(room, "m.room.message", {"msgtype": "m.text", "body": text}))
        inbound.append(await stream.wait("message", text) - began)
    print(f"room message -> stored stimulus: {ms(inbound)}")
    figure("rooms", "room message -> stored stimulus, p50", f"{pct(inbound, 0.5) * 1000:.1f} ms", "(no goal set)", None, size=f"{samples} messages")
    # out: a reply committed to its event in the room, as alice's sync sees it
    first = await alice.sync(timeout=0)
    assert isinstance(first, SyncResponse)
    since = first.next_batch
    outbound: list[float] = []
    for i in range(max(10, samples // 2)):
        await alice.room_send(room, "m.room.message", {"msgtype": "m.text", "body": f"ping {i}"})
        replies = sum(1 for e in stream.events if e["kind"] == "reply")
        committed = await stream.count("reply", replies + 1)
        arrived = None
        while arrived is None:
            answer = await alice.sync(timeout=30000, since=since)
            assert isinstance(answer, SyncResponse)
            since = answer.next_batch
            for event in answer.rooms.join[room].timeline.events if room in answer.rooms.join else []:
                if event.source.get("sender") == mind_id:
                    arrived = time.perf_counter()
        outbound.append(arrived - committed)
    print(f"reply committed -> its event in the room: {ms(outbound)}")
    figure("rooms", "reply -> its event in the room, p50", f"{pct(outbound, 0.5) * 1000:.1f} ms", "(no goal set)", None, size=f"{len(outbound)} replies")
    # load: 20 senders at once
    before = sum(1 for e in stream.events if e["kind"] == "message")
    total = len(senders) * per_sender
    cpu = os.times()

    async def send_all(k: int, client: AsyncClient) -> None:
        for j in range(per_sender):
            sent = await client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": f"load {k}.{j}"})
            assert isinstance(sent, RoomSendResponse), sent

    began = time.perf_counter()
    await asyncio.gather(*(send_all(k, c) for k, c in enumerate(senders)))
    sent_at = time.perf_counter()
    done = await stream.count("message", before + total)
    stored = [e["text"] for e in stream.events if e["kind"] == "message" and e["text"].startswith("load ")]
    after = os.times()
    print(f"load: {total} messages from {len(senders)} senders: sent in {sent_at - began:.1f} s, all stored after {done - began:.1f} s:"
          f" {total / (done - began):.0f} messages/s; stored {len(stored)}, distinct {len(set(stored))}, lost {total - len(set(stored))}"
          f" (this process's CPU {after.user - cpu.user + after.system - cpu.system:.1f} s)")
    lost = total - len(set(stored))
    figure("rooms", f"load, {len(senders)} senders", f"{total / (done - began):.0f} messages/s, {lost} lost", "nothing lost", lost == 0, size=f"{total} messages")
    # catch-up: the same load said while noemad is frozen (SIGSTOP), then taken in at the connector's own pace
    before = sum(1 for e in stream.events if e["kind"] == "message")
    os.kill(pid, signal.SIGSTOP)
    try:
        await asyncio.gather(*(send_all(k + 100, c) for k, c in enumerate(senders)))
    finally:
        os.kill(pid, signal.SIGCONT)
    began = time.perf_counter()
    done = await stream.count("message", before + total)
    caught = [e["text"] for e in stream.events if e["kind"] == "message" and e["text"].startswith("load 1")]
    caught = [t for t in caught if int(t.split()[1].split(".")[0]) >= 100]
    print(f"catch-up: {total} messages said while noemad was stopped, all stored {done - began:.1f} s after it went on:"
          f" {total / (done - began):.0f} messages/s; distinct {len(set(caught))}, lost {total - len(set(caught))}")
    follower.cancel()
    await stream.client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--per-sender", type=int, default=25)
    args = parser.parse_args()
    exit_on_sigterm()
    with running_homeserver() as server:
        print(f"Synapse started in {server.started_in:.1f} s")
        people = People(server)
        alice = people.add("alice", "Alice")
        mind = people.add("gardener", "Gardener")
        senders = [people.add(f"sender{k}") for k in range(20)]
        made = people.run(alice.room_create(invite=[mind.user_id, *(s.user_id for s in senders)]))
        assert isinstance(made, RoomCreateResponse)
        for s in senders:
            people.run(s.join(made.room_id))
        tokens = Path(server.place / "gardener.token")
        tokens.write_text(people.accounts["gardener"].access_token)
        os.chmod(tokens, 0o600)
        script = server.place / "script.toml"
        script.write_text(SCRIPT)
        config = f"""
[models]
provider = "scripted"
[models.scripted]
file = "{script}"
[models.respond]
model = "claude-haiku-5-5"
{RULES}
[[minds.ada.connectors]]
kind = "matrix"
homeserver = "{server.url}"
user_id = "{mind.user_id}"
access_token_file = "{tokens}"
rooms = ["{made.room_id}"]
"""
        with running_daemon(config=config) as daemon:
            daemon.create_minds(["ada"])
            with daemon.client() as c:
                deadline = time.monotonic() + 60
                while [x["state"]["phase"] for x in c.get("/api/v1/minds/ada/connectors").json()["connectors"]] != ["connected"]:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"the connector never connected:\n{daemon.log_tail()}")
                    time.sleep(0.1)
            people.loop.run(bench(people, daemon.socket, daemon.proc.pid, made.room_id, mind.user_id, senders, alice, args.samples, args.per_sender), 900)
        people.close()


if __name__ == "__main__":
    main()
