"""Governance in a mind's turn, through the scripted provider: each status as an operator sees it in the events and usage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND
from inprocess import InProcess, start_app
from noemad.turn.govern import NoVerdict, parse_verdict

CONFIG = SCRIPTED_RESPOND + """
[models.critic]
model = "claude-haiku-5-5"

[gate]
mind_tools = false
{extra}
"""

SCRIPT = """
[[respond.rules]]
match = "(?i)thanks for the update"
text = "Got it, thanks!"

[[respond.rules]]
match = "(?i)weather"
text = "It is 21 degrees in Paris."

[[respond.rules]]
match = "(?i)asks you to revise"
text = "I do not know the weather there."

[[respond.rules]]
match = "(?i)invoice"
text = "Sure, will do."

[[respond.rules]]
match = "(?i)loan"
text = "Absolutely, no problem"

[critic]
default = "The draft reads well.\\nAPPROVE: nothing unsupported"
{critic}
"""


def make(tmp_path: Path, critic: str = "", extra: str = "") -> InProcess:
    (tmp_path / "script.toml").write_text(SCRIPT.format(critic=critic))
    app = start_app(tmp_path, CONFIG.format(script=tmp_path / "script.toml", extra=extra))
    assert app.api("POST", "/minds", json={"name": "ada"}).status_code == 201
    return app


@pytest.fixture
def engine(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[InProcess]:
    critic, extra = getattr(request, "param", ("", ""))
    app = make(tmp_path, critic, extra)
    yield app
    app.stop()


def say(app: InProcess, text: str) -> dict[str, Any]:
    resp = app.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "channel": "irc:#ops", "text": text})
    assert resp.status_code == 201
    return resp.json()


def turn_events(app: InProcess, since: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    reply = app.wait_for("ada", "reply", since)
    app.settle("ada")
    found = app.api("GET", f"/minds/ada/events?kind=governance&since={since}").json()["events"]
    return found, reply


def calls_by_role(app: InProcess) -> dict[str, int]:
    rows = app.api("GET", "/usage?by=role&mind=ada").json()["rows"]
    return {row["role"]: row["calls"] for row in rows}


def test_a_trivial_ack_skips_the_critic_and_says_so_before_the_reply(engine: InProcess) -> None:
    message = say(engine, "Thanks for the update!")
    [gov], reply = turn_events(engine, message["id"])
    assert reply["text"] == "Got it, thanks!"
    assert gov["id"] < reply["id"] and gov["causation_id"] == message["id"]
    assert gov["data"] == {"status": "skipped", "trigger": None, "reviewed": False, "verdict": None, "revision": 0}
    assert gov["text"] == "metacognition[skipped]" and gov["actor"] == "process:governance"
    assert "critic" not in calls_by_role(engine)
    # It cites the draft's model call, the one the reply cites.
    assert [r["id"] for r in gov["refs"]] == [r["id"] for r in reply["refs"]]


def test_a_claim_is_reviewed_and_the_critic_spend_shows_by_role(engine: InProcess) -> None:
    message = say(engine, "What's the weather?")
    [gov], reply = turn_events(engine, message["id"])
    assert reply["text"] == "It is 21 degrees in Paris."
    assert gov["data"]["status"] == "reviewed" and gov["data"]["verdict"] == "approve"
    assert gov["data"]["trigger"] == "fabrication_finding"  # 21 and Paris: nothing in the context says so
    assert len(gov["refs"]) == 2  # the draft's call and the critic's
    # The finding text stays in the critic's call, never in the event.
    assert "Paris" not in str(gov["data"]) and "Paris" not in gov["text"]
    assert calls_by_role(engine)["critic"] == 1


@pytest.mark.parametrize("engine", [('[[critic.rules]]\nmatch = "21 degrees"\ntext = "REVISE: nothing says 21 degrees"', "")], indirect=True)
def test_revise_has_the_mind_redraft_once_and_the_redraft_passes_again(engine: InProcess) -> None:
    message = say(engine, "What's the weather?")
    govs, reply = turn_events(engine, message["id"])
    assert reply["text"] == "I do not know the weather there."
    assert [(g["data"]["revision"], g["data"]["verdict"]) for g in govs] == [(0, "revise"), (1, "approve")]
    assert all(g["id"] < reply["id"] for g in govs)
    assert len(reply["refs"]) == 2  # the draft and the redraft


@pytest.mark.parametrize(
    "engine",
    [('[[critic.rules]]\nmatch = "21 degrees"\nfault = "unavailable"', ""), ('[[critic.rules]]\nmatch = "21 degrees"\ntext = "Looks fine to me."', "")],
    indirect=True,
    ids=["outage", "no-verdict"],
)
def test_a_critic_that_fails_fails_open_marked_degraded(engine: InProcess) -> None:
    message = say(engine, "What's the weather?")
    [gov], reply = turn_events(engine, message["id"])
    assert reply["text"] == "It is 21 degrees in Paris."
    assert gov["data"]["status"] == "degraded" and gov["data"]["reviewed"] is True and gov["data"]["verdict"] is None


def test_a_request_for_action_fires_even_on_an_ack(engine: InProcess) -> None:
    message = say(engine, "Please pay the invoice")
    [gov], _ = turn_events(engine, message["id"])
    assert gov["data"]["trigger"] == "intent:action" and gov["data"]["status"] == "reviewed"


def test_an_ack_answering_a_question_is_reviewed_as_an_answer(engine: InProcess) -> None:
    message = say(engine, "Is the loan approved?")
    [gov], reply = turn_events(engine, message["id"])
    assert reply["text"] == "Absolutely, no problem"
    assert gov["data"]["trigger"] == "answers_question" and gov["data"]["status"] == "reviewed"


def test_a_question_earlier_in_the_batch_makes_the_reply_an_answer(engine: InProcess) -> None:
    # Two messages in one debounce batch: one turn answers both, and its reply is caused by the newer, a thanks.
    ambient = {"name": "ambient", "match": {"kinds": ["message"]}, "behaviour": {"debounce": {"ms": 2000}}}
    assert engine.api("POST", "/minds/ada/rules", json={"rule": ambient}).status_code == 201
    question = say(engine, "Is the loan approved?")
    thanks = say(engine, "Thanks for the update!")
    engine.advance(3)
    [gov], reply = turn_events(engine, question["id"])
    assert reply["causation_id"] == thanks["id"]
    assert gov["data"]["trigger"] == "answers_question" and gov["data"]["status"] == "reviewed"


@pytest.mark.parametrize("engine", [("", "[minds.ada.governance]\nenabled = false")], indirect=True)
def test_governance_off_for_a_mind_leaves_its_turn_as_it_was(engine: InProcess) -> None:
    message = say(engine, "What's the weather?")
    govs, reply = turn_events(engine, message["id"])
    assert govs == [] and reply["text"] == "It is 21 degrees in Paris."


@pytest.mark.parametrize("engine", [("", '[governance]\nsensitive_terms = ["degrees"]\npolicy = "confidence_only"')], indirect=True)
def test_confidence_only_reviews_a_sensitive_term_and_skips_the_rest(engine: InProcess) -> None:
    first = say(engine, "What's the weather?")
    [gov], _ = turn_events(engine, first["id"])
    assert gov["data"]["trigger"] == "sensitive_term"
    second = say(engine, "Please pay the invoice")
    [gov2], _ = turn_events(engine, second["id"])
    assert gov2["data"]["status"] == "skipped"  # the floors are dropped: a request for action is not reviewed


@pytest.mark.parametrize(
    ("text", "verdict"),
    [("APPROVE: ok", ("approve", "ok")), ("line\nREVISE: fix 21", ("revise", "fix 21")), ("why\nREVISE:", ("revise", "why"))],
)
def test_the_verdict_is_read_strictly_from_the_last_line(text: str, verdict: tuple[str, str]) -> None:
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize("text", ["approve: ok", "APPROVE: ok\nthanks", "Approve", "", "REVISE - no"])
def test_anything_else_is_no_verdict(text: str) -> None:
    with pytest.raises(NoVerdict):
        parse_verdict(text)


@pytest.mark.parametrize("engine", [("", '[governance]\nsensitive_tags = ["legal"]')], indirect=True)
def test_a_recalled_memorys_tag_is_evidence_the_draft_cannot_fake(engine: InProcess) -> None:
    made = engine.api("POST", "/minds/ada/memories", json={"text": "The contract renewal goes through legal counsel", "tags": ["legal"]})
    assert made.status_code == 201 and made.json()["tags"] == ["legal"]
    message = say(engine, "Thanks for the update on the contract renewal")
    [gov], reply = turn_events(engine, message["id"])
    assert reply["text"] == "Got it, thanks!"
    assert gov["data"]["trigger"] == "recalled_sensitive_tag:legal" and gov["data"]["status"] == "reviewed"
    # A turn that recalls nothing tagged skips the same ack.
    other = say(engine, "Thanks for the update!")
    govs, _ = turn_events(engine, other["id"])
    assert govs[-1]["data"]["status"] == "skipped"
