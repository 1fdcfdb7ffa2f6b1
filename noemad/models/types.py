"""What a model call asks for and what it answers, for every role and provider."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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
class Turn:
    """One message of the conversation sent to the model."""

    role: Literal["user", "assistant"]
    content: tuple[Block, ...]

    @classmethod
    def user(cls, text: str, cache: CacheTTL | None = None) -> Turn:
        return cls("user", (Block(text, cache),))


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

    def text(self) -> str:
        """Everything the request says, system first (for scripted rules and estimates)."""
        parts = [b.text for b in self.system]
        parts += [b.text for turn in self.messages for b in turn.content]
        return "\n".join(parts)


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
    stop_reason: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    call_id: int | None = None  # the model_calls row that records it
