"""The narrative reads as a short first-person account, through noemactl's own code run in process against the engine.

Issue 14: after `correct 1 --status rejected --reason "alice was joking"`
the narrative said "I am thinking about alice was joking (0.47 -> 0.00,
rejected)": the correction's reason stood for the belief. A belief is named
by its proposition; the reason is quoted as what the operator said; what
changed reads as a person would write it; the citations are what they were.
"""

from __future__ import annotations

from typing import Any

from inprocess import InProcess
from noemad.cognition.narrative.phrasing import sureness, trim


def turn(app: InProcess, mind: str, *args: str) -> dict[str, Any]:
    """Run a noemactl command that stores a stimulus; the narrative written after the mind took it."""
    out = app.ctl("--json", *args)
    assert out.returncode == 0, out.stderr
    newest = app.api("GET", f"/minds/{mind}/events", params={"limit": 1000}).json()["events"][-1]
    return app.wait_for(mind, "narrative_updated", since=newest["id"] - 1)


def test_a_rejected_belief_is_named_by_its_proposition_and_the_reason_quoted(app: InProcess, mind: str) -> None:
    turn(app, mind, "say", mind, "hello, who are you?", "--from", "alice")
    asserted = turn(app, mind, "assert", mind, "alice is an admin", "--subject", "alice", "--from", "alice")
    [belief] = app.ctl_json("beliefs", mind)["beliefs"]
    sure = sureness(belief["confidence"])
    assert asserted["text"] == (
        f"alice said “hello, who are you?”, then told me that alice is an admin. So I came to believe that alice is an admin ({sure})."
    )
    corrected = turn(app, mind, "correct", str(belief["id"]), "--status", "rejected", "--reason", "alice was joking")
    assert corrected["text"] == (
        "alice said “hello, who are you?”, then told me that alice is an admin;"
        " then an operator rejected my belief that alice is an admin, saying “alice was joking”."
        " So I stopped believing that alice is an admin when an operator rejected it."
    )
    assert "I am thinking about" not in corrected["text"] and "alice was joking (" not in corrected["text"]
    # The citations are the stimuli it tells of, the belief, and the belief event.
    correction = app.api("GET", f"/minds/{mind}/events", params={"kind": "correction"}).json()["events"][-1]
    cited = {(r["type"], r["id"]) for r in corrected["refs"]}
    assert {("event", correction["id"]), ("belief", belief["id"])} <= cited
    shown = app.ctl("narrative", mind)
    assert shown.returncode == 0 and shown.stdout.splitlines()[0] == corrected["text"]
    assert "doing      stopped believing that alice is an admin" in shown.stdout


def test_a_long_message_is_quoted_to_a_word_and_a_prediction_reads_as_a_bet(app: InProcess, mind: str) -> None:
    long = "could somebody please look at the flaky integration test in the payments service before the release tomorrow?"
    said = turn(app, mind, "say", mind, long, "--from", "bob")
    # Cut at the last word before 60 characters; the ellipsis ends the sentence.
    assert said["text"] == "bob said “could somebody please look at the flaky integration test…”"
    assert said["text"] == f"bob said “{trim(long)}”"
    bet = turn(app, mind, "predict", mind, "the deploy lands", "--subject", "deploy", "--confidence", "0.8", "--due", "2h")
    # The bet is told once, by what the mind expects; how sure is said in words (0.8 is "quite sure").
    assert bet["text"].endswith("then an operator had me predict that the deploy lands. I expect that the deploy lands (due 2026-01-01 02:00 UTC, quite sure).")
    assert "#" not in bet["text"]  # ids stay in the citations
