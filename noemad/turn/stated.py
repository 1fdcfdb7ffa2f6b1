"""What the mind said: a reply's claims that nothing it was given supports become its own (fluent) evidence.

A drafted reply is the mind speaking. Where it states a specific — a
number, a link, an identifier, a name (`noemad.governance.fabrication`) —
that nothing it was given holds (the conversation window it answered, the
memories the cycle recalled, its beliefs), it has said something fluent
without evidence. Each sentence of the reply that holds such a claim
becomes support for the proposition it states:

* kind `model_output`, source `own_reply`, weight `WEIGHT`, credibility
  `CREDIBILITY` (the mind's word for itself counts for little);
* written after the reply, caused by it, actor `process:statements`, in the
  turn's cycle; the subject is the first unsupported claim of the sentence.

The next cycle's metacognition finds such beliefs (`fluent_without_evidence`:
a belief resting only on model output or notes), warns, and adds
counter-evidence; later evidence from the world (an observation, an
assertion) makes the belief rest on more than the mind's own words.

What is not recorded: a sentence whose claims are all supported, a claim
with no specific in it ("the build is green"), which the deterministic
detector cannot tell from a platitude — the governance critic reads those.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlite_utils import Database

from noemad.cognition.beliefs.evidence import add_evidence
from noemad.cognition.beliefs.model import normalise
from noemad.cognition.beliefs.queries import list_beliefs
from noemad.cognition.memory.reads import get_memory
from noemad.errors import NotFound
from noemad.events import Event
from noemad.governance import fabrication_findings
from noemad.models import Block, Prompt

ACTOR = "process:statements"
SOURCE = "own_reply"
KIND = "model_output"
WEIGHT = 0.5
CREDIBILITY = 0.5
MAX_SENTENCES = 5  # sentences of one reply recorded at most
MAX_PROPOSITION = 300  # characters of a sentence kept as the proposition
MAX_BELIEFS = 200  # the mind's most confident beliefs read as what it was given
_SENTENCES = re.compile(r"(?<=[.!?…。！？])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The reply's sentences, trailing punctuation dropped, empty ones left out."""
    return [s for s in (part.strip().rstrip(".!?…。！？").strip() for part in _SENTENCES.split(text)) if s]


def given(db: Database, mind: str, context: Prompt, recalled: Event | None) -> list[str]:
    """What the mind was given when it drafted: the context's texts, the recalled memories, its beliefs."""
    texts = [b.text for t in context.messages for b in t.content if isinstance(b, Block)]
    texts += [b.text for b in context.system if isinstance(b, Block)]
    for ref in recalled.refs if recalled is not None else []:
        if ref.type == "memory":
            try:
                texts.append(get_memory(db, ref.id).text)
            except NotFound:
                continue
    texts += [b.proposition for b in list_beliefs(db, mind, limit=MAX_BELIEFS) if b.status != "rejected"]
    return texts


def unsupported_statements(reply: str, evidence: Sequence[str]) -> list[tuple[str, str]]:
    """(sentence, its first unsupported claim) for each sentence of `reply` stating a specific nothing in `evidence` holds."""
    out: list[tuple[str, str]] = []
    for sentence in sentences(reply):
        findings = fabrication_findings(sentence, evidence)
        if findings and normalise(sentence):
            out.append((sentence[:MAX_PROPOSITION], findings[0].text))
        if len(out) >= MAX_SENTENCES:
            break
    return out


def record_statements(
    db: Database, *, mind: str, reply: Event, evidence: Sequence[str], cycle_id: str | None, now: float
) -> list[Event]:
    """Record the reply's unsupported statements as the mind's own evidence (a writer job); the belief events written."""
    if reply.kind != "reply" or not reply.text:
        return []
    events = []
    for sentence, claim in unsupported_statements(reply.text, evidence):
        subject = normalise(claim) or normalise(sentence)
        _, event = add_evidence(
            db,
            mind=mind,
            proposition=sentence,
            subject=subject,
            kind=KIND,
            stance="support",
            weight=WEIGHT,
            source=SOURCE,
            credibility=CREDIBILITY,
            brought_by=reply.id,
            now=now,
            actor=ACTOR,
            cycle_id=cycle_id,
        )
        events.append(event)
    return events
