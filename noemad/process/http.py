"""The HTTP protocol noemad serves with: uvicorn's httptools protocol, with the request head bounded.

uvicorn bounds nothing in a request head when it parses with httptools (its
`h11_max_incomplete_event_size` applies to h11 only), and httptools keeps a
header's bytes until the line ends: one 512 MiB header line was held whole,
and 20,000 headers were answered 200. Here a head (request line and headers)
may hold at most `MAX_HEAD_BYTES` and `MAX_HEADERS` fields; past either, the
answer is 431 (problem+json, as every API error) and the connection closes.
The body keeps its own limit (`daemon.max_body_bytes`, in `noemad.api`).

It also says who is asking: the peer's uid (SO_PEERCRED) is read once per
connection and every request on it carries the `Operator` in its ASGI scope
(`extensions`), for the API to record as the actor of what the request does.

And it answers in one write, made without holding the GIL: uvicorn writes a
response's head and its body separately, two syscalls that wake the client
twice for one small answer (every stimulus' 201). The head is held until the
body's first write in the same turn of the event loop, and goes alone at the
end of that turn when no body comes with it (a stream's head is never held
back). uvloop's transport sends with the GIL held, and waking the client
inside that send is the costliest syscall of a request (on a VM, a wake-up
on another CPU is an interrupt the hypervisor handles), during which the
writer thread could not run a line of Python. So a write that finds the
transport with nothing buffered goes straight to its socket with `os.write`,
which lets go of the GIL; what the socket does not take, and any write
while something is buffered, goes through the transport as before, so the
order of the bytes never changes.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from noemad.operator import SCOPE_KEY, Operator

MAX_HEAD_BYTES = 64 * 1024  # request line and headers, as received
MAX_HEADERS = 100  # header fields in one request (Apache's LimitRequestFields)
FIELD_OVERHEAD = 4  # ": " and CRLF around each header, counted like the bytes on the wire


_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_operator(transport: asyncio.BaseTransport) -> Operator:
    """The operator at the other end of a Unix socket connection; the unknown one where the kernel cannot say."""
    sock = transport.get_extra_info("socket")
    if sock is None or getattr(sock, "family", None) != socket.AF_UNIX or not hasattr(socket, "SO_PEERCRED"):
        return Operator()
    try:
        _, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    except OSError:
        return Operator()
    return Operator.of_uid(uid)


class HeadTooLarge(Exception):
    """A request head passed `MAX_HEAD_BYTES` or `MAX_HEADERS`; the sentence says which."""


def too_large_response(detail: str) -> bytes:
    """A complete 431 answer (problem+json) that closes the connection."""
    body = json.dumps(
        {"type": "about:blank", "title": "Request Header Fields Too Large", "status": 431, "detail": detail}
    ).encode()
    head = (
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "content-type: application/problem+json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class OneWrite:
    """A response's view of its connection: its first write (the head) is held for the next, and sent with it."""

    __slots__ = ("_transport", "_held", "_first")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: bytes | None = None
        self._first = True

    def write(self, data: bytes) -> None:
        if self._first:
            self._first = False
            self._held = data
            asyncio.get_running_loop().call_soon(self._flush)  # alone, if nothing follows in this turn of the loop
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._send(data)

    def _flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if not self._transport.is_closing():  # the client went away meanwhile: nobody to send it to
                self._send(held)

    def _send(self, data: bytes) -> None:
        """Send what the socket takes now without the GIL; the transport sends the rest, and everything while it holds some."""
        transport = self._transport
        # Only on an open transport: a closed one's descriptor may already belong to another file.
        sock = None if transport.is_closing() or transport.get_write_buffer_size() else transport.get_extra_info("socket")
        if sock is not None:
            try:
                data = data[os.write(sock.fileno(), data):]
            except OSError:
                pass  # would block, or the client went away: the transport sends it, or sees the error and closes
            if not data:
                return
        transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)  # anything else a response asks of its connection


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bound on the size and the count of a request's headers.

    The fields are counted as httptools hands them over; the bytes of a head
    still incomplete are counted as they arrive, so a header line that never
    ends is cut off at the bound, not held until memory runs out.
    """

    _head_open = False
    _head_bytes = 0
    _head_fields = 0
    _pending_bytes = 0
    _refusal: str | None = None
    _operator: Operator = Operator()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._operator = peer_operator(transport)  # once per connection: the peer cannot change on it

    def data_received(self, data: bytes) -> None:
        was_open = self._head_open
        super().data_received(data)
        if was_open and self._head_open and not self.transport.is_closing():
            self._pending_bytes += len(data)  # the whole chunk belongs to a head still unfinished
            if self._pending_bytes > MAX_HEAD_BYTES:
                self._refusal = f"the request's headers pass {MAX_HEAD_BYTES} bytes"
                self.send_400_response("")

    def send_400_response(self, msg: str) -> None:
        """uvicorn answers 400 when the parser fails, as it does when a callback here raises: then answer 431."""
        if self._refusal is None:
            super().send_400_response(msg)
            return
        self.logger.warning("request refused with 431: %s", self._refusal)
        detail = f"{self._refusal}; noemad accepts at most {MAX_HEADERS} header fields and {MAX_HEAD_BYTES} bytes of request line and headers"
        self.transport.write(too_large_response(detail))
        self.transport.close()
        self._head_open = False

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # uvicorn's scope type says each extension is a dict; this one is the peer's Operator (read by noemad.operator).
        self.scope.setdefault("extensions", {})[SCOPE_KEY] = self._operator  # type: ignore[assignment]
        self._head_open = True
        self._head_bytes = 0
        self._head_fields = 0
        self._pending_bytes = 0

    def on_url(self, url: bytes) -> None:
        self._count(len(url), fields=0)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + FIELD_OVERHEAD, fields=1)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._head_open = False
        super().on_headers_complete()
        if self.cycle is not None and self.cycle.transport is self.transport:  # not for an upgrade, which makes no cycle
            self.cycle.transport = OneWrite(self.transport)  # type: ignore[assignment]  # the writes and closes a cycle makes

    def _count(self, size: int, fields: int) -> None:
        self._head_bytes += size
        self._head_fields += fields
        if self._head_fields > MAX_HEADERS:
            self._refusal = f"the request has more than {MAX_HEADERS} header fields"
        elif self._head_bytes > MAX_HEAD_BYTES:
            self._refusal = f"the request's headers pass {MAX_HEAD_BYTES} bytes"
        if self._refusal is not None:
            raise HeadTooLarge(self._refusal)  # httptools stops parsing; uvicorn then calls send_400_response
