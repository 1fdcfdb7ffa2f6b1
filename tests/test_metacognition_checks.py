"""What metacognition's checks mean for predictions, contradictions that stay open, and what the mind said itself.

Through noemactl's own code run in process against the engine (manual clock): predictions draw
no source warnings and are judged by calibration once outcomes come; a
belief contested a day ago draws `stale_contradiction` however much evidence
kept arriving; a reply stating what nothing supports becomes the mind's own
evidence, and the next cycle warns `fluent_without_evidence`. Where a test
repeats a command many times over, the first goes through noemactl and the
rest send the same body to the API: the repeats check the engine, not the
command line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND
from inprocess import InProcess, scripted_app

HOUR = 3600.0


def settle(app: InProcess, mind: str, since: int) -> dict[str, Any]:
    """The cycle_completed of the turn that took stimulus `since` (the mind has taken it, and its turn has ended)."""
    done = app.wait_for(mind, "cycle_completed", since=since)
    app.settle(mind)
    return done


def warnings(app: InProcess, mind: str) -> list[str]:
    return sorted(w["check"] for w in app.ctl_json("mind", "show", mind)["warnings"])


def stored_id(out: Any) -> int:
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split("#")[1].split()[0]) if "#" in out.stdout else int(out.stdout.split()[-1])


def test_predictions_draw_no_source_warnings_and_are_judged_by_calibration(app: InProcess, mind: str) -> None:
    out = app.ctl("--json", "predict", mind, "the deploy 0 lands by noon", "--subject", "deploy", "--confidence", "0.9", "--due", "2h")
    assert out.returncode == 0, out.stderr
    for n in range(1, 5):  # the body `noemactl predict` sends, as the one above did
        body = {"kind": "prediction", "proposition": f"the deploy {n} lands by noon", "subject": "deploy", "confidence": 0.9, "due": "2h"}
        assert app.api("POST", f"/minds/{mind}/events", json=body).status_code == 201
    last = app.api("GET", f"/minds/{mind}/events", params={"kind": "prediction"}).json()["events"][-1]
    app.wait_for(mind, "narrative_updated", since=last["id"])
    app.settle(mind)  # a turn over the earlier ones may have written that narrative: wait for every turn to end
    # Five stated bets at 0.9, each resting on the mind's own word: no insufficient_evidence, no single_source.
    assert warnings(app, mind) == []
    predictions = app.ctl_json("predictions", mind)["predictions"]
    assert len(predictions) == 5 and {p["status"] for p in predictions} == {"open"}
    # The outcomes judge them: five misses at 0.9 are overconfidence, which calibration shows and metacognition warns of.
    # Each outcome is its own turn: a warning competes with a turn's other thoughts for attention, and a turn
    # over all five outcomes would fill it with their five belief updates.
    out = app.ctl("outcome", str(predictions[0]["id"]), "--miss")
    assert out.returncode == 0, out.stderr
    settle(app, mind, app.api("GET", f"/minds/{mind}/events", params={"kind": "outcome"}).json()["events"][-1]["id"])
    for p in predictions[1:]:  # the body `noemactl outcome --miss` sends
        answer = app.api("POST", f"/minds/{mind}/events", json={"kind": "outcome", "prediction": p["id"], "result": "miss"})
        assert answer.status_code == 201
        settle(app, mind, answer.json()["id"])
    shown = app.ctl("mind", "show", mind)
    # Five misses on one subject are a repeated failure too; still no source check on a bet.
    assert warnings(app, mind) == ["overconfidence", "repeated_failure"], shown.stdout
    assert "overconfidence" in shown.stdout and "single_source" not in shown.stdout and "insufficient_evidence" not in shown.stdout
    assert app.ctl_json("calibration", mind)["overconfident"] is True


def observe(app: InProcess, mind: str, source: str, stance: str, proposition: str = "the cache is warm", cli: bool = False) -> int:
    """An observation bearing on `proposition`: through `noemactl observe`, or as the body it sends to the API."""
    if cli:
        out = app.ctl("--json", "observe", mind, f"{source} checked the cache", "--source", source, f"--{stance}", proposition, "--subject", "cache")
        assert out.returncode == 0, out.stderr
        return int(app.api("GET", f"/minds/{mind}/events", params={"kind": "observation"}).json()["events"][-1]["id"])
    claim = {"proposition": proposition, "subject": "cache", "stance": stance}
    body = {"kind": "observation", "source": source, "text": f"{source} checked the cache", "data": {}, "claim": claim}
    stored = app.api("POST", f"/minds/{mind}/events", json=body)
    assert stored.status_code == 201, stored.text
    return int(stored.json()["id"])


def test_a_belief_contested_for_a_day_draws_stale_contradiction_however_much_evidence_arrives(app: InProcess, mind: str) -> None:
    settle(app, mind, observe(app, mind, "probe-a", "supports", cli=True))
    settle(app, mind, observe(app, mind, "probe-b", "contradicts", cli=True))
    [belief] = app.ctl_json("beliefs", mind)["beliefs"]
    assert belief["status"] == "contested"
    # Evidence keeps arriving every few hours, on both sides; the belief stays contested all along.
    for n in range(5):
        app.advance(4 * HOUR)
        done = settle(app, mind, observe(app, mind, f"probe-{n % 2}", "supports" if n % 2 else "contradicts"))
        assert app.api("GET", f"/beliefs/{belief['id']}").json()["status"] == "contested"
        assert "stale_contradiction" not in done["data"]["warnings"]  # 20 hours: not yet a day
    assert app.ctl_json("belief", str(belief["id"]))["status"] == "contested"
    app.advance(4 * HOUR)  # 24 hours since it became contested
    done = settle(app, mind, observe(app, mind, "probe-c", "supports"))
    assert "stale_contradiction" in done["data"]["warnings"]
    assert "stale_contradiction" in warnings(app, mind)
    goals = app.ctl("goals", mind)
    assert goals.returncode == 0 and "investigate: the cache is warm" in goals.stdout


SCRIPT = """
[[respond.rules]]
match = "(?i)deploy"
text = "The deploy finished at 14:05 on prod-7. Anything else?"

[respond]
default = "Noted."
"""

CONFIG = SCRIPTED_RESPOND


@pytest.fixture
def talker(tmp_path: Path) -> Iterator[InProcess]:
    """An engine on the scripted provider with a mind `ada` (as conftest's `scripted_noemad`, in process)."""
    with scripted_app(tmp_path, SCRIPT, CONFIG, {"persona": "You are Ada."}) as engine:
        yield engine


def test_a_reply_stating_what_nothing_supports_draws_fluent_without_evidence(talker: InProcess) -> None:
    asked = talker.ctl("--json", "say", "ada", "how did the deploy go?", "--from", "alice")
    assert asked.returncode == 0, asked.stderr
    reply = talker.wait_for("ada", "reply")
    talker.settle("ada")  # the turn goes on after its reply (the evidence from what it said): let it end
    assert reply["text"].startswith("The deploy finished at 14:05 on prod-7")
    # What it said that nothing it was given holds is now its own evidence, caused by the reply.
    [belief] = talker.ctl_json("beliefs", "ada")["beliefs"]
    assert belief["proposition"] == "The deploy finished at 14:05 on prod-7" and belief["kind"] == "model_output"
    shown = talker.ctl_json("belief", str(belief["id"]))
    assert [(e["kind"], e["source"], e["event_id"]) for e in shown["evidence"]] == [("model_output", "own_reply", reply["id"])]
    # "Anything else?" states nothing specific, and "Noted." neither: no belief from them.
    thanks = talker.ctl("--json", "say", "ada", "thanks", "--from", "alice")
    assert thanks.returncode == 0, thanks.stderr
    said = talker.api("GET", "/minds/ada/events", params={"kind": "message"}).json()["events"][-1]
    done = talker.wait_for("ada", "cycle_completed", since=said["id"])
    talker.settle("ada")
    assert done["data"]["warnings"] == ["fluent_without_evidence"]
    overview = talker.ctl("mind", "show", "ada")
    assert "fluent_without_evidence" in overview.stdout
    [warning] = talker.api("GET", "/minds/ada/events", params={"kind": "metacognition"}).json()["events"]
    assert warning["data"]["belief"] == belief["id"]
    assert warning["text"] == "I hold “The deploy finished at 14:05 on prod-7” only on my own words or notes, with nothing to back it"
    lowered = talker.ctl_json("belief", str(belief["id"]))
    assert lowered["confidence"] < belief["confidence"] and lowered["evidence"][-1]["source"] == "metacognition"
    assert len(talker.ctl_json("beliefs", "ada")["beliefs"]) == 1
