"""A response goes to its client in one write (noemad.process.http.OneWrite): a head and the body sent with it, straight to the socket when nothing waits before it."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from noemad.process.http import OneWrite


class Recorded:
    """A connection that records each write and whether it was closed; `sock`: the socket it would name, if any."""

    def __init__(self, sock: socket.socket | None = None, buffered: int = 0) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.sock = sock
        self.buffered = buffered

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def get_extra_info(self, name: str) -> Any:
        return self.sock if name == "socket" else f"info {name}"


def test_a_head_and_its_body_in_one_turn_of_the_loop_are_one_write() -> None:
    async def answer() -> list[bytes]:
        conn = Recorded()
        one = OneWrite(conn)  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n")
        one.write(b"{}")
        await asyncio.sleep(0)  # the end of the turn sends nothing more
        return conn.writes

    assert asyncio.run(answer()) == [b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}"]


def test_a_head_with_no_body_yet_goes_alone_at_the_end_of_the_turn() -> None:
    """A stream's head is not held until its first event: the client sees the answer start at once."""

    async def stream() -> tuple[list[bytes], list[bytes]]:
        conn = Recorded()
        one = OneWrite(conn)  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        held = list(conn.writes)
        await asyncio.sleep(0)
        sent = list(conn.writes)
        one.write(b"5\r\nevent\r\n")
        return held, sent + conn.writes[len(sent):]

    held, sent = asyncio.run(stream())
    assert held == []
    assert sent == [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n", b"5\r\nevent\r\n"]


def test_closing_sends_a_held_head_first() -> None:
    async def closed() -> Recorded:
        conn = Recorded()
        one = OneWrite(conn)  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
        one.close()
        assert one.is_closing() and one.get_extra_info("peername") == "info peername"
        await asyncio.sleep(0)  # the scheduled flush finds nothing left to send
        return conn

    conn = asyncio.run(closed())
    assert conn.writes == [b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n"] and conn.closed


def test_a_head_held_for_a_client_that_went_away_is_dropped() -> None:
    async def gone() -> list[bytes]:
        conn = Recorded()
        one = OneWrite(conn)  # type: ignore[arg-type]
        one.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        conn.closed = True  # the client disconnected before the end of the turn
        await asyncio.sleep(0)
        return conn.writes

    assert asyncio.run(gone()) == []


def test_a_write_with_nothing_buffered_goes_straight_to_the_socket() -> None:
    ours, client = socket.socketpair()
    try:
        ours.setblocking(False)

        async def answer() -> list[bytes]:
            conn = Recorded(ours)
            one = OneWrite(conn)  # type: ignore[arg-type]
            one.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n")
            one.write(b"{}")
            return conn.writes

        assert asyncio.run(answer()) == []  # nothing left for the transport
        assert client.recv(1024) == b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}"
    finally:
        ours.close()
        client.close()


def test_a_write_behind_buffered_bytes_keeps_its_place() -> None:
    """While the transport still holds bytes for the client, writing around it would put the answer before them."""
    ours, client = socket.socketpair()
    try:
        ours.setblocking(False)

        async def answer() -> list[bytes]:
            conn = Recorded(ours, buffered=10)
            one = OneWrite(conn)  # type: ignore[arg-type]
            one.write(b"head;")
            one.write(b"body")
            return conn.writes

        assert asyncio.run(answer()) == [b"head;body"]
        client.setblocking(False)
        try:
            assert client.recv(1024) == b""
        except BlockingIOError:
            pass  # nothing reached the client around the transport
    finally:
        ours.close()
        client.close()


def test_what_the_socket_does_not_take_goes_through_the_transport() -> None:
    ours, client = socket.socketpair()
    try:
        ours.setblocking(False)
        big = b"x" * (8 << 20)  # more than a socket's buffer takes at once

        async def answer() -> list[bytes]:
            conn = Recorded(ours)
            one = OneWrite(conn)  # type: ignore[arg-type]
            one.write(b"head;")
            one.write(big)
            return conn.writes

        rest = asyncio.run(answer())
        assert len(rest) == 1 and 0 < len(rest[0]) < len(big) + 5
        client.setblocking(False)
        got = b""
        while True:
            try:
                chunk = client.recv(1 << 20)
            except BlockingIOError:
                break
            got += chunk
        assert got + rest[0] == b"head;" + big  # the socket's part, then the transport's, in order
    finally:
        ours.close()
        client.close()
