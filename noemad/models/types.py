"""What a model call asks for and what it answers, for every role and provider.

Tool use: a request may offer `tools`; an answer may then carry `tool_uses`
(stop reason `tool_use`), which the caller runs and answers with
`ToolResult` blocks in the next user turn (`ModelGateway.converse` runs that
loop). A request without tools is exactly the request it was before tools
existed, so nothing changes for a caller that offers none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Union

Role = Literal["respond", "critic", "judge", "narrate", "summarise"]
ROLES: tuple[Role, ...] = ("respond", "critic", "judge", "narrate", "summarise")
AUXILIARY_ROLES: frozenset[str] = frozenset({"critic", "judge", "narrate", "summarise"})
Effort = Literal["low", "medium", "high", "none"]
CacheTTL = Literal["5m", "1h"]


@dataclass(frozen=True)
class Block:
    """A text content block; `cache` puts a prompt-cache breakpoint after it."""

    text: str
    cache: CacheTTL | None = None


@dataclass(frozen=True)
class Tool:
    """A tool the model may call: its name, what it is for, and the JSON schema of its input.

    Callers define their tools once, as module constants, so their bytes are
    the same on every call and stay inside the cached prefix (the API caches
    tools before the system prompt).
    """

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


@dataclass(frozen=True)
class ToolUse:
    """A content block of an assistant turn: the model calls `name` with `input`; `id` pairs it with its result."""

    id: str
    name: str
    input: dict[str, Any]

    @property
    def text(self) -> str:
        return json.dumps({"tool_use": self.name, "input": self.input}, sort_keys=True)


@dataclass(frozen=True)
class ToolResult:
    """A content block of a user turn: what the tool call `tool_use_id` gave, or why it failed (`is_error`)."""

    tool_use_id: str
    content: str
    is_error: bool = False

    @property
    def text(self) -> str:
        return self.content


Content = Union[Block, ToolUse, ToolResult]


def cache_of(block: Content) -> CacheTTL | None:
    """The cache breakpoint after a content block (only text blocks carry one here)."""
    return block.cache if isinstance(block, Block) else None


@dataclass(frozen=True)
class Turn:
    """One message of the conversation sent to the model."""

    role: Literal["user", "assistant"]
    content: tuple[Content, ...]

    @classmethod
    def user(cls, text: str, cache: CacheTTL | None = None) -> Turn:
        return cls("user", (Block(text, cache),))


@dataclass(frozen=True)
class WindowUse:
    """What a request built on a token-budgeted window (noemad.turn.window) tells the gateway.

    With it the gateway learns from the answer: the mind's characters-per-token
    ratio for the model is calibrated from the reported input (and shrunk on a
    context-length error), and the window's anchor is kept for the role's next
    request (noemad.models.ratios). `budget_tokens` is the whole request's input
    budget (an estimate), so a request over it is recognised as such.
    """

    budget_tokens: int
    anchor_id: int | None  # the first event of the window (None: an empty conversation)
    chunk_chars: int  # the chunk size its chunks were cut at, kept with the anchor


@dataclass(frozen=True)
class ModelRequest:
    """One call: who it is for, which model, what to send and how long to wait."""

    role: Role
    mind: str
    model: str
    messages: tuple[Turn, ...]
    system: tuple[Block, ...] = ()
    max_tokens: int = 1024
    effort: Effort = "none"
    timeout: float = 60.0
    tools: tuple[Tool, ...] = ()
    window: WindowUse | None = None  # the window it was built on, if any (the gateway calibrates from it)

    def pieces(self) -> list[tuple[str, CacheTTL | None]]:
        """The request's text in the order the API reads it (tools, system, messages), each with its cache breakpoint."""
        parts: list[tuple[str, CacheTTL | None]] = [(json.dumps(tool.to_data(), sort_keys=True), None) for tool in self.tools]
        parts += [(b.text, b.cache) for b in self.system]
        parts += [(b.text, cache_of(b)) for turn in self.messages for b in turn.content]
        return parts

    def text(self) -> str:
        """Everything the request says, tools and system first (for scripted rules and estimates)."""
        return "\n".join(text for text, _ in self.pieces())


@dataclass(frozen=True)
class Usage:
    """Tokens of one call, split four ways (cache writes also by TTL)."""

    input_tokens: int = 0  # uncached input
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0  # all cache writes, 5m and 1h
    output_tokens: int = 0
    cache_write_1h_tokens: int = 0  # the part of cache_write_tokens written with a 1h TTL

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total(self) -> int:
        return self.total_input + self.output_tokens


@dataclass(frozen=True)
class ModelResponse:
    """What the model said, why it stopped, and what it cost in tokens."""

    text: str
    stop_reason: str  # "tool_use" when it asks for tool_uses
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    call_id: int | None = None  # the model_calls row that records it
    tool_uses: tuple[ToolUse, ...] = ()  # the tools it calls, in order

    @property
    def asks_for_tools(self) -> bool:
        """Whether the answer stops to have tools run (a cut-off tool call, stop reason max_tokens, is not run)."""
        return bool(self.tool_uses) and self.stop_reason == "tool_use"

    def turn(self) -> Turn:
        """The answer as the assistant turn that goes back in the conversation (an empty text block is left out: the API refuses it)."""
        text: tuple[Content, ...] = (Block(self.text),) if self.text.strip() else ()
        return Turn("assistant", text + self.tool_uses)
