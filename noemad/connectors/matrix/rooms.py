"""The Matrix connector: the mind's account in its rooms, through matrix-nio.

`run` syncs from the stored cursor: each sync's messages (translated by
`translate`) and the next `since` token are stored in one transaction
(`ConnectorContext.ingest`), so a crash anywhere loses no message and stores
none twice. The cursor is this connector's own JSON (`Cursor`): the `since`
token, the rooms it joined because the config named them (so a reload that
drops one leaves it) and the direct rooms it was invited to.

A room joined after the cursor's first sync is heard from the mind's own join
on; the rooms it was in before its first sync are heard from that sync on: a
mind put in a room does not wake for the room's history. A sync whose
timeline was cut short (`limited`: the connector was away) is filled in from
`/messages` back to the previous token, so nothing said while it was away is
lost.

`send` posts a reply to its room (and thread) as a Matrix reply to the newest
stimulus it answers, with the transaction id `noema.<reply event id>`: the
homeserver keeps one event per transaction id, so a retry after a crash posts
nothing twice, and the room's echo of it is known for the mind's own words.
A 429 is a transient failure with the homeserver's `retry_after_ms`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    DirectRoomsResponse,
    InviteMemberEvent,
    JoinResponse,
    MessageDirection,
    ProfileGetDisplayNameResponse,
    RoomMessagesResponse,
    RoomResolveAliasResponse,
    RoomSendResponse,
    SyncResponse,
)

from noemad.config.connectors import MatrixConnector
from noemad.connectors.matrix.translate import Me, Redacted, Room, Said, resolve, translate, txn_id
from noemad.connectors.port import ConnectorContext, ConnectorState, Delivery, DeliveryFailed, Sent
from noemad.inbox import Inbound

log = logging.getLogger("noemad.connectors.matrix")

POLL_MS = 30_000  # a sync's long poll: the homeserver answers as soon as something happens
TIMELINE = 200  # events per room a sync returns before it is `limited` and the gap is read from /messages
SYNC_FILTER: dict[str, Any] = {
    "room": {"timeline": {"limit": TIMELINE}, "state": {"lazy_load_members": True}, "ephemeral": {"not_types": ["*"]}},
    "presence": {"not_types": ["*"]},
}
TYPING_MS = 30_000
ECHOES = 1000  # the mind's own sends remembered, so the room's echo of each is known without a read


class MatrixFailed(Exception):
    """The homeserver refused or could not be reached: the manager restarts the connector after a backoff."""


@dataclass
class Cursor:
    """What this connector keeps between runs, stored as its cursor in the same transaction as what it brought in."""

    since: str | None = None
    rooms: list[str] = field(default_factory=list)  # room ids joined because the config named them
    direct: list[str] = field(default_factory=list)  # rooms the mind was invited to as a direct chat

    @classmethod
    def read(cls, stored: str | None) -> Cursor:
        try:
            data = json.loads(stored) if stored else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        since = data.get("since")
        rooms, direct = data.get("rooms"), data.get("direct")
        return cls(
            since if isinstance(since, str) else None,
            [r for r in rooms if isinstance(r, str)] if isinstance(rooms, list) else [],
            [r for r in direct if isinstance(r, str)] if isinstance(direct, list) else [],
        )

    def dump(self) -> str:
        return json.dumps({"since": self.since, "rooms": sorted(self.rooms), "direct": sorted(self.direct)}, sort_keys=True)


def _error(response: Any) -> str:
    """A homeserver's error answer in a sentence (never the token: nio's answers do not hold it)."""
    code = getattr(response, "status_code", None)
    message = getattr(response, "message", None) or type(response).__name__
    return f"{code} {message}" if code else str(message)


@dataclass
class Heard:
    """What one sync brought: the messages to store, the redactions, the invites to answer."""

    said: list[tuple[str, Said]] = field(default_factory=list)  # (room id, Said), in the rooms' order
    redacted: list[Redacted] = field(default_factory=list)
    invites: list[tuple[str, str, bool]] = field(default_factory=list)  # (room id, inviter, direct)


class MatrixRooms:
    """One mind's Matrix account: joins its rooms, brings what is said there in, posts its replies."""

    def __init__(self, settings: MatrixConnector, context: ConnectorContext) -> None:
        self.key = settings.key
        self.settings = settings
        self.ctx = context
        self._state = ConnectorState()
        self._client: AsyncClient | None = None
        self._cursor = Cursor()
        self._me = Me(context.mind, settings.user_id, None, frozenset(settings.bots))
        self._echoes: dict[str, int] = {}  # a sent event's id -> the reply it carried (the room's echo of it is not stored)
        self._waking: set[str] = set()  # rooms whose stimuli wait for a turn: the typing notice goes there
        self._typing: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._named: set[str] = set()  # the ids of the rooms the config names

    # the connector protocol -------------------------------------------------

    def state(self) -> ConnectorState:
        return replace(self._state, rooms=sorted(set(self._cursor.rooms) | set(self._cursor.direct)))

    async def run(self) -> None:
        client = self._new_client()
        self._client = client
        stop_turns = self.ctx.on_turn(self._turn)
        try:
            await self._run(client)
        except MatrixFailed as exc:
            self._failed(str(exc))
            raise
        except (OSError, asyncio.TimeoutError) as exc:
            self._failed(f"cannot reach {self.settings.homeserver} ({type(exc).__name__})")
            raise MatrixFailed(f"cannot reach {self.settings.homeserver} ({type(exc).__name__}: {exc})") from None
        finally:
            stop_turns()
            self._client = None
            self._state.phase = "stopped"
            await client.close()

    async def send(self, delivery: Delivery) -> Sent:
        if delivery.room is None:
            raise DeliveryFailed("the reply names no Matrix room to go to", transient=False)
        content: dict[str, Any] = {"msgtype": "m.text", "body": delivery.text}
        if delivery.thread is not None:
            content["m.relates_to"] = {
                "rel_type": "m.thread", "event_id": delivery.thread, "is_falling_back": delivery.in_reply_to is None,
                "m.in_reply_to": {"event_id": delivery.in_reply_to or delivery.thread},
            }
        elif delivery.in_reply_to is not None:
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": delivery.in_reply_to}}
        client = self._client
        own = client is None
        if client is None:
            client = self._new_client()
        try:
            answer = await client.room_send(delivery.room, "m.room.message", content, tx_id=txn_id(delivery.event_id))
        except (OSError, asyncio.TimeoutError) as exc:
            raise DeliveryFailed(f"cannot reach {self.settings.homeserver} ({type(exc).__name__})", transient=True) from None
        finally:
            if own:
                await client.close()
        if isinstance(answer, RoomSendResponse):
            event_id = str(answer.event_id)
            self._echo(event_id, delivery.event_id)
            return Sent(remote_id=event_id, detail=f"in {delivery.room}")
        status = getattr(getattr(answer, "transport_response", None), "status", None)
        code = getattr(answer, "status_code", None)
        retry_ms = getattr(answer, "retry_after_ms", None)
        if status == 429 or code == "M_LIMIT_EXCEEDED":
            raise DeliveryFailed(
                f"the homeserver is rate limiting the mind ({_error(answer)})", transient=True,
                retry_after=retry_ms / 1000 if isinstance(retry_ms, (int, float)) else None,
            )
        transient = status is None or status >= 500 or code in ("M_UNKNOWN", None)
        raise DeliveryFailed(f"the homeserver refused the reply: {_error(answer)}", transient=transient)

    # running ----------------------------------------------------------------

    def _new_client(self) -> AsyncClient:
        # nio retries 429s and timeouts itself with real sleeps: told not to, it answers them to us, and every
        # wait is the outbox's or the manager's, on the daemon's clock.
        config = AsyncClientConfig(max_limit_exceeded=0, max_timeouts=0, encryption_enabled=False, store_sync_tokens=False,
                                   request_timeout=60)
        client = AsyncClient(self.settings.homeserver, self.settings.user_id, config=config)
        client.access_token = self.ctx.secret("access_token")
        client.user_id = self.settings.user_id
        return client

    def _failed(self, why: str) -> None:
        self._state.last_error, self._state.last_error_at = why, self.ctx.clock.now()

    async def _run(self, client: AsyncClient) -> None:
        self._state.phase = "syncing"
        self._cursor = cursor = Cursor.read(self.ctx.cursor())
        direct = await client.list_direct_rooms()
        if isinstance(direct, DirectRoomsResponse):
            listed = {room for rooms in direct.rooms.values() if isinstance(rooms, list) for room in rooms if isinstance(room, str)}
            cursor.direct = sorted(set(cursor.direct) | listed)
        self._named = await self._resolve(client)
        shown = await client.get_displayname()
        if isinstance(shown, ProfileGetDisplayNameResponse) and shown.displayname:
            self._me = replace(self._me, display_name=str(shown.displayname))  # people may call the mind by it
        first = cursor.since is None
        if first:
            # The first sync of a new connector: the rooms' history is not said to the mind, only what follows.
            answer = await client.sync(timeout=0, sync_filter=SYNC_FILTER)
            if not isinstance(answer, SyncResponse):
                raise MatrixFailed(f"the homeserver refused the first sync: {_error(answer)}")
            cursor.since = str(answer.next_batch)
            await self._answer_invites(client, (await self._heard(None, answer, cursor.since)).invites)
        joined = await self._join_configured(client)
        for dropped in sorted(set(cursor.rooms) - set(joined)):
            left = await client.room_leave(dropped)
            log.info("mind %s: left %s, which the config no longer names (%s)", self.ctx.mind, dropped, type(left).__name__)
        cursor.rooms = joined
        await self.ctx.ingest([], cursor.dump())
        self._state.phase = "connected"
        while True:
            since = cursor.since
            answer = await client.sync(timeout=POLL_MS, since=since, sync_filter=SYNC_FILTER)
            if not isinstance(answer, SyncResponse):
                raise MatrixFailed(f"the homeserver refused a sync: {_error(answer)}")
            heard = await self._heard(client, answer, since)
            await self._answer_invites(client, heard.invites)
            for redaction in heard.redacted:
                await self.ctx.redact(redaction.target, redaction.author, redaction.channel, redaction.reason)
            inbound = [self._inbound(room, said) for room, said in heard.said if said.echo_of is None and said.remote_id not in self._echoes]
            cursor.since = str(answer.next_batch)
            ingested = await self.ctx.ingest(inbound, cursor.dump())
            for item in ingested:
                if item.gate is not None and item.gate.verdict in ("wake", "batch") and item.channel:
                    self._waking.add(item.channel.removeprefix("matrix:"))
            self._state.last_sync = self.ctx.clock.now()

    async def _resolve(self, client: AsyncClient) -> set[str]:
        """The ids of the rooms the config names (an alias resolved): an invite to one of them is accepted whoever sent it."""
        ids: set[str] = set()
        for room in self.settings.rooms:
            if room.startswith("#"):
                answer = await client.room_resolve_alias(room)
                if not isinstance(answer, RoomResolveAliasResponse):
                    raise MatrixFailed(f"cannot find the room {room}: {_error(answer)}")
                ids.add(str(answer.room_id))
            else:
                ids.add(room)
        return ids

    async def _join_configured(self, client: AsyncClient) -> list[str]:
        joined: list[str] = []
        for room in self.settings.rooms:
            answer = await client.join(room)
            if not isinstance(answer, JoinResponse):
                raise MatrixFailed(f"cannot join {room}: {_error(answer)}")
            joined.append(str(answer.room_id))
        return joined

    async def _heard(self, client: AsyncClient | None, answer: SyncResponse, since: str | None) -> Heard:
        """What `answer` says to the mind, a `limited` room's gap read from /messages (with a client: not on the first sync,
        whose rooms' history is not heard at all)."""
        heard = Heard()
        direct = set(self._cursor.direct)
        for room_id, info in answer.rooms.join.items():
            if client is None:
                continue
            events = [e.source for e in info.timeline.events if isinstance(getattr(e, "source", None), dict)]
            if info.timeline.limited and info.timeline.prev_batch is not None and since is not None:
                events = await self._missed(client, room_id, info.timeline.prev_batch, since) + events
            # A room the mind joined since the last sync starts at its own join: what came before is history.
            joins = [i for i, e in enumerate(events) if e.get("type") == "m.room.member" and e.get("state_key") == self._me.user_id
                     and (e.get("content") or {}).get("membership") == "join" and self._new_join(e)]
            if joins:
                events = events[joins[-1] + 1:]
            self._take(heard, Room(room_id, room_id in direct), events)
        for room_id, invite in answer.rooms.invite.items():
            for event in invite.invite_state:
                # nio's invite events keep their content beside the source, not in it.
                if isinstance(event, InviteMemberEvent) and event.state_key == self._me.user_id and event.membership == "invite":
                    content = event.content if isinstance(event.content, dict) else {}
                    heard.invites.append((room_id, str(event.sender), content.get("is_direct") is True))
        return heard

    def _new_join(self, event: dict[str, Any]) -> bool:
        unsigned = event.get("unsigned") or {}
        previous = (unsigned.get("prev_content") or {}).get("membership")
        return previous != "join"  # a profile change is a join after a join: not a new arrival

    def _take(self, heard: Heard, room: Room, events: Sequence[dict[str, Any]]) -> None:
        for event in events:
            change = translate(event, room, self._me)
            if isinstance(change, Said):
                if change.echo_of is not None:
                    self._echo(change.remote_id, change.echo_of)
                heard.said.append((room.room_id, change))
            elif isinstance(change, Redacted):
                heard.redacted.append(change)

    async def _missed(self, client: AsyncClient, room_id: str, prev_batch: str, since: str) -> list[dict[str, Any]]:
        """What a `limited` sync left out of a room, oldest first: read from /messages back to the previous token."""
        missed: list[dict[str, Any]] = []
        start: str | None = prev_batch
        while start:
            page = await client.room_messages(room_id, start=start, end=since, direction=MessageDirection.back, limit=TIMELINE)
            if not isinstance(page, RoomMessagesResponse):
                raise MatrixFailed(f"cannot read what {room_id} said while the mind was away: {_error(page)}")
            chunk = [e.source for e in page.chunk if isinstance(getattr(e, "source", None), dict)]
            if not chunk:
                break
            missed = list(reversed(chunk)) + missed
            start = page.end if page.end and page.end != start else None
        return missed

    async def _answer_invites(self, client: AsyncClient, invites: Sequence[tuple[str, str, bool]]) -> None:
        for room_id, inviter, direct in invites:
            if room_id in self._named:
                continue  # a room the config names: joined as such
            if inviter in self.settings.invites_from:
                answer = await client.join(room_id)
                if isinstance(answer, JoinResponse) and direct and room_id not in self._cursor.direct:
                    self._cursor.direct.append(room_id)
                continue
            await client.room_leave(room_id)  # leaving a room one is invited to refuses the invite
            await self.ctx.note(
                "matrix_invite_refused",
                f"refused an invite to {room_id} from {inviter}: not in invites_from",
                {"room": room_id, "inviter": inviter, "connector": self.key},
            )

    def _echo(self, remote_id: str, reply: int) -> None:
        # The newest ones only: an older echo's reply is found through the outbox (`find_stimulus`).
        self._echoes[remote_id] = reply
        if len(self._echoes) > ECHOES:
            del self._echoes[next(iter(self._echoes))]

    def _inbound(self, room: str, said: Said) -> Inbound:
        return Inbound(resolve(said, self._find), said.remote_id, room, said.thread)

    def _find(self, remote_id: str) -> int | None:
        return self.ctx.find_stimulus(remote_id) or self._echoes.get(remote_id)

    # the typing notice ----------------------------------------------------------

    def _turn(self, started: bool) -> None:
        client = self._client
        if client is None:
            return
        rooms = set(self._waking) if started else set(self._typing)
        if started:
            self._waking.clear()
            self._typing |= rooms
        else:
            self._typing.clear()
        for room in rooms:
            task = asyncio.get_running_loop().create_task(self._typing_notice(client, room, started))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _typing_notice(self, client: AsyncClient, room: str, on: bool) -> None:
        try:
            await client.room_typing(room, typing_state=on, timeout=TYPING_MS)
        except Exception as exc:  # noqa: BLE001 - a typing notice is a courtesy: never a failure of the turn
            log.info("mind %s: no typing notice in %s (%s)", self.ctx.mind, room, type(exc).__name__)
