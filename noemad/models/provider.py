"""The one interface every provider implements."""

from __future__ import annotations

from typing import Protocol

from noemad.models.types import ModelRequest, ModelResponse


class Provider(Protocol):
    """Makes model calls. Errors are raised as the `noemad.errors.ModelError` family."""

    name: str

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Make one call; cancelling the awaiting task aborts it."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
