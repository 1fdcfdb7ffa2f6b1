"""The governance gate on a corpus of real acknowledgements (tests/data/acks.toml), per language.

After a message that tells, thanks or greets, at least 90% of the plain
acks of each of the five detector languages skip the critic; the same acks
answering a question all fire; no risky draft skips after any message.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from noemad.governance import GovernanceCapability, GovernanceSubject, TurnEvidence

CORPUS = tomllib.loads((Path(__file__).parent / "data" / "acks.toml").read_text())
LANGUAGES = ("en", "es", "de", "fr", "pt")
GOAL = 0.9


def skips(draft: str, message: str) -> bool:
    return not GovernanceCapability.compose().decide(GovernanceSubject(draft), TurnEvidence(message=message)).fire


def pairs(lang: str, messages: str) -> list[tuple[str, str]]:
    """Each ack of `lang` beside one of its `messages`, in turn (deterministic)."""
    acks, said = CORPUS[lang]["acks"], CORPUS[lang][messages]
    return [(ack, said[i % len(said)]) for i, ack in enumerate(acks)]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_most_plain_acks_after_a_statement_skip(lang: str) -> None:
    found = pairs(lang, "statements")
    missed = [ack for ack, message in found if not skips(ack, message)]
    assert 1 - len(missed) / len(found) >= GOAL, missed


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_ack_answering_a_question_fires(lang: str) -> None:
    skipped = [(ack, q) for ack in CORPUS[lang]["acks"] for q in CORPUS[lang]["questions"] if skips(ack, q)]
    assert skipped == []


def test_no_risky_draft_skips_after_any_message() -> None:
    messages = [m for lang in LANGUAGES for m in CORPUS[lang]["statements"]]
    skipped = [(d, m) for d in CORPUS["risky"]["drafts"] for m in messages if skips(d, m)]
    assert skipped == []
