"""Parsing server-sent events, as noemad's `/events/stream` sends them.

A message is a run of `field: value` lines ended by a blank line; lines
starting with `:` are comments (keep-alives, "following"). noemad sends
`id: N`, `event: KIND` and one `data: {json}` line per event, and a final
`event: end` when the stream is over.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

END = "end"


@dataclass(frozen=True)
class Message:
    """One server-sent event."""

    event: str
    data: str
    id: str | None = None

    @property
    def is_end(self) -> bool:
        """Whether noemad says the stream is over."""
        return self.event == END

    def json(self) -> Any:
        """The data, decoded as JSON (None when there is none or it is not JSON)."""
        try:
            return json.loads(self.data) if self.data else None
        except ValueError:
            return None


def parse_sse(lines: Iterable[str]) -> Iterator[Message]:
    """Yield each complete message from the stream's lines (without line ends)."""
    event = ""
    data: list[str] = []
    last_id: str | None = None
    for line in lines:
        line = line.rstrip("\r\n")
        if not line:
            if data or event:
                yield Message(event=event or "message", data="\n".join(data), id=last_id)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            last_id = value
