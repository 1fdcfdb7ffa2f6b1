"""The model's wording of a cluster: a one-sentence generalisation, kept only if the episodes support it.

While the run has model calls left (`model_calls`), the `summarise` role is
asked for a one-sentence generalisation of each cluster, largest first,
given at most PROMPT_EPISODES episodes (most representative first) and the
pair's words, through the wording guard (`noemad.cognition.wording`). The
answer is used only if it is *supported* (`unsupported` returns what is not):

* one sentence (no ". ", "! ", "? " or line break inside), of at most
  MAX_GENERALISATION characters, not cut short by max_tokens;
* it mentions both terms of the cluster's pair;
* it adds nothing (the guard's STEMS vocabulary): each content word has a
  stem found in the cluster's episodes (any of them, not only those shown),
  in its speakers' names, or among GENERALISING_WORDS (often, usually,
  prefers, ...: words that generalise without adding a fact); each number
  appears in an episode.

A discarded answer (unsupported, cut short or empty) is listed in the
outputs' `discarded` (cluster, text, `why` as a list, `reason` as one line,
model_call), and the plain proposition is used, `reason` "unsupported". No
model, a refusal (budget, hold, pause) or an error also leave the plain
proposition, with the guard's reason (no_model, budget, held, refused,
model_error; `detail` says more); the job adds no_calls, and after a refusal
asks for no further call. Every call made or refused is recorded on the job.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from noemad.background.consolidation.proposition import Plan, join
from noemad.background.consolidation.tokenise import strip_speaker
from noemad.background.jobs import JobContext
from noemad.cognition.beliefs.model import check_proposition
from noemad.cognition.narrative.phrasing import clip
from noemad.words import content_words, snowball_stems
from noemad.cognition.wording import STEMS, Objection, Support, reword, shown
from noemad.wire import HIDDEN, OMIT_EMPTY, OMIT_NONE, renamed, wire

PROMPT_EPISODE_CHARS = 300
MAX_GENERALISATION = 200  # characters
MAX_ANSWER_TOKENS = 120
# Words a generalisation may use though no episode does: they say how often or
# how habitually, or name the act of choosing, without adding a fact.
GENERALISING_WORDS = frozenset(
    """
    often usually repeatedly regularly frequently generally typically consistently habitually mostly commonly
    tends tend tended keeps keep kept again times many several recurring recurrently habit habits pattern
    user users prefers prefer preferred preference favours favour favors favor likes like
    chooses choose chose chosen picks pick picked selects select selected uses use used
    """.split()
)
REFUSALS = ("no_model", "budget", "held", "refused")  # reasons a call was not made

_SENTENCE_BREAK = re.compile(r"[.!?]+[\"')\]]*\s+\S|\n")

WordedBy = Literal["plain", "model"]

SYSTEM = (
    "You generalise from a mind's episodes: things said to it or observed by it that recur. Answer with one sentence,"
    f" at most {MAX_GENERALISATION} characters, stating the habit or regularity the episodes share, as a general"
    " statement about who said or observed them. Use only words, names and numbers found in the episodes, plus words"
    " such as often, usually, repeatedly, regularly or prefers; include the shared words you are given. Add no facts,"
    " opinions or hedges. Answer with the sentence only."
)

_GENERALISING_STEMS = frozenset(snowball_stems(sorted(GENERALISING_WORDS)))


def prompt_text(p: Plan) -> str:
    """The user turn asking for a cluster's generalisation."""
    lines = [
        f"- {e.speaker}, {e.created_at[:10]}: {clip(strip_speaker(e.text), PROMPT_EPISODE_CHARS)}" for e in p.ordered
    ]
    shown_ = f"{len(p.ordered)} shown" if len(p.ordered) < len(p.episodes) else "all shown"
    pair = [p.words.get(t, t) for t in p.cluster.pair]
    return (
        f"Episodes ({len(p.episodes)} in all, {shown_}):\n" + "\n".join(lines) + f"\n\nThey share the words: {join(pair)}."
        "\nOne sentence:"
    )


def support(p: Plan, terms: Collection[str]) -> Support:
    """What a generalisation may say: `terms` (those of all of the cluster's episodes), its speakers' names, generalising words."""
    return Support.of(
        STEMS,
        [name for name, _ in p.speakers],
        keys=set(terms) | _GENERALISING_STEMS,
        numbers_from=[strip_speaker(e.text) for e in p.episodes],
    )


def unsupported(answer: str, p: Plan, terms: Collection[str]) -> list[str]:
    """Why `answer` is not a supported generalisation of the cluster; [] if it is (see the module docstring).

    `terms` are the terms of all of the cluster's episodes.
    """
    problems: list[str] = []
    text = answer.strip()
    if not text:
        return ["the answer is empty"]
    if len(text) > MAX_GENERALISATION:
        problems.append(f"it is {len(text)} characters long, more than {MAX_GENERALISATION}")
    if _SENTENCE_BREAK.search(text):
        problems.append("it is more than one sentence")
    have = set(snowball_stems(content_words(text)))
    for t in p.cluster.pair:
        if t not in have:
            problems.append(f"it does not mention {p.words.get(t, t)!r}")
    added = support(p, terms).added(text)
    if added.words:
        problems.append("no episode says " + shown(added.words, quote=True))
    if added.numbers:
        problems.append("no episode has the number " + ", ".join(added.numbers[:8]))
    return problems


@wire
@dataclass
class Wording:
    """How a cluster's proposition was worded, and why it stayed plain if it did (as the job's outputs record it)."""

    text: Annotated[str, HIDDEN]  # the job's outputs show it as the cluster's proposition
    worded_by: WordedBy = "plain"
    reason: Annotated[str | None, OMIT_EMPTY] = None  # why plain: no_calls, no_model, budget, held, refused, model_error, unsupported
    detail: Annotated[str | None, OMIT_EMPTY] = None
    call_id: Annotated[int | None, renamed("model_call"), OMIT_NONE] = None
    discarded: Annotated[dict[str, Any] | None, HIDDEN] = None  # the unsupported answer and why


def _one_line(text: str) -> str:
    return " ".join(text.split())


async def word(ctx: JobContext, p: Plan, terms: Collection[str]) -> Wording:
    """Ask the summarise role for a cluster's generalisation; keep it only if supported. Never raises a ModelError."""
    from noemad.models import Block, Prompt, Turn

    prompt = Prompt(
        role="summarise",
        mind=ctx.mind,
        system=(Block(SYSTEM),),
        messages=(Turn.user(prompt_text(p)),),
        max_tokens=MAX_ANSWER_TOKENS,
    )

    def check(answer: str) -> Objection | None:
        why = unsupported(_one_line(answer), p, terms)
        return Objection(tuple(why)) if why else None

    worded = await reword(ctx.gateway, prompt, p.plain, check, on_call=ctx.record_call)
    if worded.rendered_by == "model":
        proposition, _ = check_proposition(_one_line(worded.text), "x")
        return Wording(proposition, "model", call_id=worded.call_id)
    if not worded.discarded:
        return Wording(p.plain, reason=worded.reason, detail=worded.detail, call_id=worded.call_id)
    answer, why = _one_line(worded.answer or ""), list(worded.why)
    return Wording(
        p.plain,
        reason="unsupported",
        detail="; ".join(why),
        call_id=worded.call_id,
        discarded={
            "cluster": p.index,
            "text": clip(answer, 400),
            "why": why,
            "reason": f'"{clip(answer, 120)}": ' + "; ".join(why),  # the line a human reads
            "model_call": worded.call_id,
        },
    )
