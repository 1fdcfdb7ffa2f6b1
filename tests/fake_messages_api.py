"""A fake Anthropic Messages API on loopback, for tests that drive the real SDK.

`FakeMessagesAPI` serves `POST /v1/messages` on 127.0.0.1 (a random port) from
a thread. It records every request (headers and JSON body) and answers each
from a queue of scripted replies: a message (text, or a `tool_use` call), an
error in the API's JSON shape, or a reply held back (`slow`) until the test releases it or the client goes
away. With nothing queued it answers a plain message.

Like the real API it checks the credentials first: a request without an
`x-api-key` header (or, when `key` is given, with another key) gets 401
`authentication_error` and leaves the queue alone.

With `cache=PromptCache(...)` it also simulates the API's prompt cache, so
cache behaviour is measured rather than assumed: every message reply's
`usage` (all but `output_tokens`) is what the cache says of the request
(see `PromptCache`), a request with more than four breakpoints, or longer TTLs
after shorter ones, is refused as the API refuses it, and one longer than
`context_limit` tokens gets the API's "prompt is too long" error.

Nothing here sleeps: a held reply waits on `select` for either its release
or the client's disconnect, and tests wait on events (with generous bounds
that only a hung test ever reaches). No traffic ever leaves loopback.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import itertools
import json
import math
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BOUND = 30.0  # seconds: how long anything here waits before deciding a test has hung
POLL = 0.01  # seconds: how often the server loop looks for a shutdown (the stdlib server polls)


def usage(
    input_tokens: int = 10,
    output_tokens: int = 5,
    *,
    cache_read: int = 0,
    cache_write_5m: int = 0,
    cache_write_1h: int = 0,
) -> dict[str, Any]:
    """A `usage` object as the API reports it, cache writes split by TTL."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write_5m + cache_write_1h,
        "cache_creation": {"ephemeral_5m_input_tokens": cache_write_5m, "ephemeral_1h_input_tokens": cache_write_1h},
        "service_tier": "standard",
    }


class Hold:
    """A reply held back until `release()`, or until the client disconnects."""

    def __init__(self) -> None:
        self.arrived = threading.Event()  # the request reached the server and is being held
        self.disconnected = threading.Event()  # the client closed the connection while it was held
        self.answered = threading.Event()  # the reply went out after the release
        self._released = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()

    def release(self) -> None:
        """Let the held reply go out (if the client is still there)."""
        if not self._released.is_set():
            self._released.set()
            self._wake_w.send(b"x")

    async def wait_arrived(self) -> None:
        assert await asyncio.to_thread(self.arrived.wait, BOUND), "the held request never reached the fake API"

    async def wait_disconnected(self) -> None:
        assert await asyncio.to_thread(self.disconnected.wait, BOUND), "the client never closed the held connection"

    def _wait(self, conn: socket.socket) -> bool:
        """Block until released (True) or the client hangs up (False)."""
        self.arrived.set()
        while True:
            readable, _, _ = select.select([conn, self._wake_r], [], [], BOUND)
            if not readable:
                return True  # a hung test: answer rather than hold a thread forever
            if self._wake_r in readable:
                return True
            try:
                data = conn.recv(1, socket.MSG_PEEK)
            except OSError:
                data = b""
            if not data:
                self.disconnected.set()
                return False
            # The client sent more bytes while waiting (it never does); wait on the release alone.
            self._released.wait(BOUND)
            return True

    def close(self) -> None:
        self.release()
        self._wake_r.close()
        self._wake_w.close()


@dataclass
class Reply:
    """One scripted answer."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    hold: Hold | None = None  # hold the answer back until released


@dataclass
class Recorded:
    """One request as the fake API received it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lowercase
    body: Any  # the decoded JSON body (None if it was not JSON)
    disconnected: bool = False  # the client went away before the reply was sent
    raw: bytes = b""  # the body as sent, byte for byte


def message_reply(
    text: str = "Hello.",
    *,
    stop_reason: str = "end_turn",
    model: str | None = None,
    usage_: dict[str, Any] | None = None,
    content: list[dict[str, Any]] | None = None,
) -> Reply:
    """A 200 with a message; `model` None echoes the request's model."""
    body = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content if content is not None else [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage_ if usage_ is not None else usage(),
    }
    return Reply(200, body)


def tool_use_reply(name: str, input_: dict[str, Any], *, id_: str = "toolu_fake_1", text: str | None = None) -> Reply:
    """A 200 whose message calls a tool (stop reason `tool_use`), after a text block if `text` is given."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": id_, "name": name, "input": input_})
    return message_reply(stop_reason="tool_use", content=content)


def error_reply(status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    """An error in the API's shape: {"type": "error", "error": {"type": ..., "message": ...}}."""
    return Reply(status, {"type": "error", "error": {"type": error_type, "message": message}}, dict(headers or {}))


_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|\s+|[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]{1,2}|[^\x00-\x7f]")


def count_tokens(text: str) -> int:
    """A deterministic stand-in tokenizer with a real one's densities.

    A run of letters is a token per 4 (English prose comes out near 3.5
    characters a token), digits likewise, whitespace rides along free, one or
    two ASCII punctuation marks are a token (code comes out near 2.5) and so
    is every non-ASCII character (CJK at 1).
    """
    tokens = 0
    for match in _TOKEN.finditer(text):
        piece = match.group()
        if piece[0].isspace():
            continue
        if piece.isascii():
            tokens += math.ceil(len(piece) / 4) if piece[0].isalnum() else 1
        else:
            tokens += len(piece)
    return tokens


BLOCK_TOKENS = 1  # what a content block costs beyond its text
MESSAGE_TOKENS = 3  # what a message's role costs
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def minimum_for(model: str) -> int:
    """The shortest prefix the API caches for a model: 4,096 tokens on Haiku and Opus, 1,024 on the others."""
    return 4096 if "haiku" in model or "opus" in model else 1024


class CacheRefusal(Exception):
    """A request the API refuses for its cache_control or its length (`reply` says how)."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.body["error"]["message"])
        self.reply = reply


@dataclass
class _Entry:
    tokens: int
    expires: float
    seconds: float  # its TTL: a read extends it by as much


class PromptCache:
    """The Messages API's prompt cache, as documented, on a clock the test drives.

    A request is read as blocks in the API's order: tools, system, then each
    message's content blocks (`cache_control` left out of what is compared).
    Its prefix up to each block has a running hash. A block with
    `cache_control` is a breakpoint: the request reads the longest prefix
    cached at that breakpoint or at any of the `lookback` block boundaries
    before it (entries are only ever written at breakpoints), and writes an
    entry at each of its breakpoints past what it read, whose prefix is at
    least the model's minimum (`minimum_for`). A read refreshes the entry's
    TTL; an entry is gone once its TTL (5m or 1h, from `cache_control.ttl`)
    has run out on the clock. `usage` reports the read tokens, the written
    ones (split by the TTL of the breakpoint that wrote them) and the rest as
    uncached input.
    """

    def __init__(
        self,
        now: Callable[[], float] = time.monotonic,
        *,
        lookback: int = 20,
        minimum: Callable[[str], int] = minimum_for,
        count: Callable[[str], int] = count_tokens,
        context_limit: int | None = None,
    ) -> None:
        self.now = now
        self.lookback = lookback
        self.minimum = minimum
        self.count = count
        self.context_limit = context_limit
        self.entries: dict[str, _Entry] = {}
        self.usages: list[dict[str, Any]] = []  # every usage reported, in order
        self._lock = threading.Lock()

    def _blocks(self, body: dict[str, Any]) -> list[tuple[str, str | None, int]]:
        """Each block as (what is compared, its breakpoint TTL or None, its tokens)."""
        out: list[tuple[str, str | None, int]] = []

        def add(where: str, block: dict[str, Any], extra: int) -> None:
            control = block.get("cache_control")
            bare = {k: v for k, v in block.items() if k != "cache_control"}
            ttl = (control.get("ttl") or "5m") if isinstance(control, dict) else None
            text = bare.get("text") if bare.get("type") == "text" else None
            tokens = self.count(text if isinstance(text, str) else json.dumps(bare, sort_keys=True)) + BLOCK_TOKENS + extra
            out.append((where + json.dumps(bare, sort_keys=True, ensure_ascii=False), ttl, tokens))

        for tool in body.get("tools") or ():
            add("tool:", tool, 0)
        system = body.get("system")
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        for block in system or ():
            add("system:", block, 0)
        for message in body.get("messages") or ():
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for i, block in enumerate(content or ()):
                add(f"{message.get('role')}{'+' if i == 0 else ''}:", block, MESSAGE_TOKENS if i == 0 else 0)
        return out

    def usage(self, body: dict[str, Any]) -> dict[str, Any]:
        """What the API reports of the request's input, moving the cache as it would; `CacheRefusal` as it refuses."""
        blocks = self._blocks(body)
        ttls = [ttl for _, ttl, _ in blocks if ttl is not None]
        if len(ttls) > 4:
            raise CacheRefusal(error_reply(400, "invalid_request_error", f"A maximum of 4 blocks with cache_control may be provided. Found {len(ttls)}."))
        if any(a == "5m" and b == "1h" for a, b in itertools.combinations(ttls, 2)):
            raise CacheRefusal(error_reply(400, "invalid_request_error", "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"))
        model = str(body.get("model"))
        digest = hashlib.sha256(model.encode())
        hashes: list[str] = []
        cum: list[int] = []
        total = 0
        for compared, _, tokens in blocks:
            digest.update(compared.encode())
            hashes.append(digest.copy().hexdigest())
            total += tokens
            cum.append(total)
        if self.context_limit is not None and total > self.context_limit:
            raise CacheRefusal(error_reply(400, "invalid_request_error", f"prompt is too long: {total} tokens > {self.context_limit} maximum"))
        marks = [i for i, (_, ttl, _) in enumerate(blocks) if ttl is not None]
        with self._lock:
            now = self.now()
            for key in [k for k, e in self.entries.items() if e.expires <= now]:
                del self.entries[key]
            hit = -1
            for b in marks:
                for p in range(b, max(-1, b - self.lookback), -1):
                    if hashes[p] in self.entries:
                        hit = max(hit, p)
                        break
            read = cum[hit] if hit >= 0 else 0
            written = {"5m": 0, "1h": 0}
            done = read
            for b in marks:
                ttl = blocks[b][1]
                assert ttl is not None
                seconds = TTL_SECONDS.get(ttl, 300.0)
                if b <= hit:
                    continue  # inside what was read
                if cum[b] < self.minimum(model):
                    continue  # too short a prefix to cache
                self.entries[hashes[b]] = _Entry(cum[b], now + seconds, seconds)
                written[ttl] += cum[b] - done
                done = cum[b]
            if hit >= 0:  # a read refreshes the entry it read
                entry = self.entries[hashes[hit]]
                entry.expires = max(entry.expires, now + entry.seconds)
            result = usage(total - done, 0, cache_read=read, cache_write_5m=written["5m"], cache_write_1h=written["1h"])
            self.usages.append(result)
        return result


class FakeMessagesAPI:
    """The fake API server; use as a context manager (`with FakeMessagesAPI() as api:`)."""

    def __init__(self, key: str | None = None, cache: PromptCache | None = None) -> None:
        self.key = key  # the only key accepted, if set; otherwise any non-empty x-api-key
        self.cache = cache  # the prompt-cache simulation, if any
        self.requests: list[Recorded] = []
        self._queue: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._holds: list[Hold] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL,), name="fake-messages-api", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- scripting ----------------------------------------------------------

    def push(self, reply: Reply) -> Reply:
        with self._lock:
            self._queue.append(reply)
        return reply

    def message(self, text: str = "Hello.", **kwargs: Any) -> Reply:
        return self.push(message_reply(text, **kwargs))

    def tool_use(self, name: str, input_: dict[str, Any], **kwargs: Any) -> Reply:
        return self.push(tool_use_reply(name, input_, **kwargs))

    def error(self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> Reply:
        return self.push(error_reply(status, error_type, message, headers))

    def rate_limited(self, retry_after: str | None = "30") -> Reply:
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        return self.error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", headers)

    def overloaded(self, retry_after: str | None = None) -> Reply:
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        return self.error(529, "overloaded_error", "Overloaded", headers)

    def server_error(self, status: int = 500) -> Reply:
        return self.error(status, "api_error", "Internal server error")

    def prompt_too_long(self, tokens: int = 210_000, maximum: int = 200_000) -> Reply:
        return self.error(400, "invalid_request_error", f"prompt is too long: {tokens} tokens > {maximum} maximum")

    def unauthorized(self) -> Reply:
        return self.error(401, "authentication_error", "invalid x-api-key")

    def slow(self, reply: Reply | None = None) -> Hold:
        """Queue a reply (a message by default) that is held until released or abandoned."""
        hold = Hold()
        reply = reply or message_reply()
        reply.hold = hold
        with self._lock:
            self._holds.append(hold)
        self.push(reply)
        return hold

    # -- lifecycle ----------------------------------------------------------

    def __enter__(self) -> FakeMessagesAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for hold in self._holds:
            hold.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(BOUND)
        for hold in self._holds:
            hold.close()

    # -- serving ------------------------------------------------------------

    def _next_reply(self, recorded: Recorded) -> Reply:
        key = recorded.headers.get("x-api-key")
        if not key:
            return error_reply(401, "authentication_error", "x-api-key header is required")
        if self.key is not None and key != self.key:
            return error_reply(401, "authentication_error", "invalid x-api-key")
        if recorded.method != "POST" or recorded.path.split("?")[0] != "/v1/messages":
            return error_reply(404, "not_found_error", f"Not found: {recorded.method} {recorded.path}")
        if "anthropic-version" not in recorded.headers:
            return error_reply(400, "invalid_request_error", "anthropic-version: header is required")
        body = recorded.body
        if not isinstance(body, dict) or not {"model", "max_tokens", "messages"} <= body.keys():
            return error_reply(400, "invalid_request_error", "model, max_tokens and messages are required")
        with self._lock:
            reply = self._queue.popleft() if self._queue else message_reply()
        if self.cache is not None and reply.status == 200 and reply.body.get("type") == "message":
            try:
                counted = self.cache.usage(body)
            except CacheRefusal as refusal:
                return refusal.reply
            counted["output_tokens"] = (reply.body.get("usage") or {}).get("output_tokens", 5)
            reply = Reply(reply.status, {**reply.body, "usage": counted}, reply.headers, reply.hold)
        return reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                self._serve()

            def do_GET(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                recorded = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw=raw)
                with api._lock:
                    api.requests.append(recorded)
                reply = api._next_reply(recorded)
                if reply.hold is not None and not reply.hold._wait(self.connection):
                    recorded.disconnected = True
                    self.close_connection = True
                    return
                payload = dict(reply.body)
                if payload.get("type") == "message" and payload.get("model") is None and isinstance(body, dict):
                    payload["model"] = body.get("model")
                request_id = f"req_fake_{next(api._ids)}"
                if payload.get("type") == "error":
                    payload["request_id"] = request_id
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status, "Overloaded" if reply.status == 529 else None)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", request_id)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except OSError:  # the client left meanwhile
                    recorded.disconnected = True
                    self.close_connection = True
                    return
                if reply.hold is not None:
                    reply.hold.answered.set()

        return Handler
