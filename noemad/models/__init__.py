"""Model calls: one provider interface, the providers, holds, budgets and the usage ledger."""

from noemad.models.gateway import Conversation, ModelGateway, Prompt, ToolHandler
from noemad.models.types import Block, ModelRequest, ModelResponse, Tool, ToolResult, ToolUse, Turn, Usage

__all__ = [
    "Block",
    "Conversation",
    "ModelGateway",
    "ModelRequest",
    "ModelResponse",
    "Prompt",
    "Tool",
    "ToolHandler",
    "ToolResult",
    "ToolUse",
    "Turn",
    "Usage",
]
