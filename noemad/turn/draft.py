"""The draft: the mind's `respond` model answers the respond context.

A failed call is an outcome of the turn, not an exception out of it: the
error comes back to be recorded (`reply_failed`), and the turn goes on to its
narrative. With no respond model there is no draft: the mind records and does
not reply, which is the deterministic path, not an error. The governance gate
will sit between this step and the emitted reply.
"""

from __future__ import annotations

import logging

from noemad.errors import ModelError, NoModelConfigured
from noemad.models import ModelGateway, ModelResponse, Prompt

log = logging.getLogger("noemad.reply")


async def draft_reply(gateway: ModelGateway, context: Prompt) -> ModelResponse | ModelError | None:
    """The model's answer to `context`, the error that stopped it, or None when no respond model is configured."""
    try:
        return await gateway.complete(context)
    except NoModelConfigured:
        return None
    except ModelError as exc:
        log.warning("mind %s could not reply: %s", context.mind, exc.detail)
        return exc
