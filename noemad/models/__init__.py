"""Model calls: one provider interface, the providers, holds, budgets and the usage ledger."""

from noemad.models.gateway import ModelGateway, Prompt
from noemad.models.types import Block, ModelRequest, ModelResponse, Turn, Usage

__all__ = ["Block", "ModelGateway", "ModelRequest", "ModelResponse", "Prompt", "Turn", "Usage"]
