"""What a Matrix room event becomes for the mind: pure, on the event's JSON as the homeserver sends it.

An `m.room.message` becomes a `Said`: a `Message` stimulus with the gate's
flags read from the room (`dm`, mentions, `bot`, `from_self`, the thread),
and the ids it points at (the event it quotes, the event it edits) left for
the connector to resolve against what it stored (`resolve`): translation
reads no store. An `m.room.encrypted` event is a `Said` too, marked
unreadable, so the mind knows something was said it could not read. An
`m.room.redaction` is a `Redacted`. Everything else (state, receipts,
reactions) is not the mind's to hear.

The connector's own sends carry the transaction id `noema.<reply event id>`
(`txn_id`): the room echoes them back, and `Said.echo_of` says which reply
an echo is, so it is never stored as something said to the mind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from noemad.fields import MAX_TEXT
from noemad.names import name_problem
from noemad.stimuli import Message

ENCRYPTED_TAG = "encrypted"
ENCRYPTED_TEXT = "(an encrypted message: the mind cannot read it; run this room unencrypted)"
TXN_PREFIX = "noema."


def txn_id(reply: int) -> str:
    """The Matrix transaction id of the send of reply event `reply`: the homeserver keeps one event per id,
    so a send retried after a crash posts nothing twice."""
    return f"{TXN_PREFIX}{reply}"


def echo_of(txn: Any) -> int | None:
    """The reply event id a transaction id names (`noema.<id>`), or None for anyone else's."""
    if isinstance(txn, str) and txn.startswith(TXN_PREFIX) and txn[len(TXN_PREFIX):].isdigit():
        return int(txn[len(TXN_PREFIX):])
    return None


def author(user_id: str) -> str:
    """A Matrix user as a stimulus' author: `matrix:@alice:example.org`."""
    return f"matrix:{user_id}"


def channel(room_id: str) -> str:
    """A Matrix room as a stimulus' channel: `matrix:!abc:example.org`."""
    return f"matrix:{room_id}"


@dataclass(frozen=True)
class Me:
    """The mind's account, as translation needs it: who is the mind, who is a bot."""

    mind: str
    user_id: str
    display_name: str | None = None
    bots: frozenset[str] = frozenset()

    @cached_property
    def named(self) -> re.Pattern[str]:
        """The account's user id, localpart or display name as a whole word in a body: the mind is named."""
        localpart = self.user_id[1:].split(":", 1)[0]
        names = sorted({self.user_id, localpart, *([self.display_name] if self.display_name else [])}, key=len, reverse=True)
        alternatives = "|".join(re.escape(n) for n in names if n)
        return re.compile(rf"(?<![\w@])@?(?:{alternatives})(?![\w])", re.IGNORECASE)


@dataclass(frozen=True)
class Room:
    """What translation needs of a room: its id, and whether it is a direct one (a DM)."""

    room_id: str
    direct: bool = False


@dataclass(frozen=True)
class Said:
    """A room message as the stimulus it becomes, with the remote ids still to resolve."""

    remote_id: str
    message: Message
    quoted: str | None = None  # the event it replies to (m.in_reply_to, not a thread's fallback)
    edited: str | None = None  # the event it edits (m.replace)
    echo_of: int | None = None  # the reply it is the room's echo of: the connector's own send
    thread: str | None = None  # the root of the thread it was said in (m.thread): a reply goes to the same thread


@dataclass(frozen=True)
class Redacted:
    """A redaction: `target`'s text is to be gone from what the mind reads."""

    remote_id: str
    target: str
    author: str
    channel: str
    reason: str | None = None


Change = Said | Redacted


def _fallback_stripped(body: str) -> str:
    # Older clients quote the message they reply to as "> <@who> text" lines and a blank line first.
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> "):
        return body
    rest = lines[next((i for i, line in enumerate(lines) if not line.startswith(">")), len(lines)):]
    return "\n".join(rest).lstrip("\n")


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(body: Any) -> str:
    text = body if isinstance(body, str) else ""
    text = text[:MAX_TEXT]
    return text if text.strip() else "(an empty message)"


def translate(event: Mapping[str, Any], room: Room, me: Me) -> Change | None:
    """What the room event `event` (its JSON) becomes for the mind; None when it is nothing the mind hears."""
    kind, sender, event_id = event.get("type"), event.get("sender"), event.get("event_id")
    if not isinstance(sender, str) or not isinstance(event_id, str):
        return None
    content = _dict(event.get("content"))
    if kind == "m.room.redaction":
        target = event.get("redacts") or content.get("redacts")
        if not isinstance(target, str):
            return None
        reason = content.get("reason")
        return Redacted(event_id, target, author(sender), channel(room.room_id), reason if isinstance(reason, str) else None)
    if kind == "m.room.encrypted":
        message = Message(author(sender), ENCRYPTED_TEXT, channel(room.room_id), dm=room.direct, bot=sender in me.bots,
                          tags=(ENCRYPTED_TAG,), from_self=sender == me.user_id)
        return Said(event_id, message)
    if kind != "m.room.message" or not content:  # a message redacted before it reached us has no content left
        return None
    relates = _dict(content.get("m.relates_to"))
    rel_type = relates.get("rel_type")
    edited = relates.get("event_id") if rel_type == "m.replace" else None
    thread = relates.get("event_id") if rel_type == "m.thread" else None
    quoted = _dict(relates.get("m.in_reply_to")).get("event_id")
    if rel_type == "m.thread" and relates.get("is_falling_back") is True:
        quoted = None  # a thread's fallback reply only helps clients without threads
    body: Any = content.get("body")
    if isinstance(edited, str):
        body = _dict(content.get("m.new_content")).get("body", body)
    text = _text(_fallback_stripped(body) if isinstance(body, str) and quoted else body)
    mentions = _dict(content.get("m.mentions"))
    user_ids = mentions.get("user_ids")
    named = (isinstance(user_ids, list) and me.user_id in user_ids) or mentions.get("room") is True or bool(me.named.search(text))
    msgtype = content.get("msgtype")
    tags = (msgtype.removeprefix("m."),) if isinstance(msgtype, str) and msgtype not in ("m.text", "m.notice") and msgtype.startswith("m.") else ()
    message = Message(
        author(sender),
        text,
        channel(room.room_id),
        mentions=(me.mind,) if named else (),
        dm=room.direct,
        # m.notice is the spec's message type for automated clients: a bot's, listed or not.
        bot=sender in me.bots or msgtype == "m.notice",
        tags=tuple(t for t in tags if name_problem(t) is None),  # a tag is a name; a msgtype that is not one is dropped
        from_self=sender == me.user_id,
    )
    echo = echo_of(_dict(event.get("unsigned")).get("transaction_id")) if sender == me.user_id else None
    return Said(
        event_id, message, quoted if isinstance(quoted, str) else None, edited if isinstance(edited, str) else None, echo,
        thread if isinstance(thread, str) else None,
    )


def resolve(said: Said, find: Callable[[str], int | None]) -> Message:
    """`said`'s message with the events it quotes and edits found among what was stored (`find`: remote id to event id)."""
    message = said.message
    if said.quoted is not None:
        message = replace(message, reply_to=find(said.quoted))
    if said.edited is not None:
        message = replace(message, edits=find(said.edited))
    return message
