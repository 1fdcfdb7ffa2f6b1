"""The draft: the mind's `respond` model answers the respond context.

A failed call is an outcome of the turn, not an exception out of it: the
error comes back to be recorded (`reply_failed`), and the turn goes on to its
narrative. With no respond model there is no draft: the mind records and does
not reply, which is the deterministic path, not an error. The governance gate
will sit between this step and the emitted reply.

With the mind's tools (`[gate] mind_tools`), the draft is a bounded
conversation (`ModelGateway.converse`): the model may list and change its
wake rules, or skip the reply, before it answers; the conversation ends at
once when it skips. Without them it is the one call it always was, the
request byte for byte the same.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from noemad.errors import ModelError, NoModelConfigured
from noemad.models import Conversation, ModelGateway, Prompt
from noemad.turn.tools import MindTools

log = logging.getLogger("noemad.reply")


async def draft_reply(gateway: ModelGateway, context: Prompt, tools: MindTools | None = None) -> Conversation | None:
    """Every answer of the model to `context` and the error that stopped it, or None when no respond model is configured."""
    if tools is None:
        try:
            return Conversation((await gateway.complete(context),))
        except NoModelConfigured:
            return None
        except ModelError as exc:
            log.warning("mind %s could not reply: %s", context.mind, exc.detail)
            return Conversation((), exc)
    tools.judge = gateway.config().gate.judge.enabled  # judge rules, and the tools' words for them, only where judging is on
    drafted = await gateway.converse(replace(context, tools=tools.definitions), tools.handle, done=lambda: tools.skipping)
    if isinstance(drafted.error, NoModelConfigured) and not drafted.responses:
        return None
    if drafted.error is not None:
        log.warning("mind %s could not reply: %s", context.mind, drafted.error.detail)
    return drafted
