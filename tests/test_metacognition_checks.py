"""What metacognition's checks mean for predictions, contradictions that stay open, and what the mind said itself.

Through a real noemad (manual clock) and the real noemactl: predictions draw
no source warnings and are judged by calibration once outcomes come; a
belief contested a day ago draws `stale_contradiction` however much evidence
kept arriving; a reply stating what nothing supports becomes the mind's own
evidence, and the next cycle warns `fluent_without_evidence`. Where a test
repeats a command many times over, the first goes through noemactl and the
rest send the same body to the API: one noemactl process costs a quarter of a
second, and the repeats check the engine, not the command line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SCRIPTED_RESPOND, Noemad, scripted_noemad

HOUR = 3600.0


def settle(noemad: Noemad, mind: str, since: int) -> dict[str, Any]:
    """The cycle_completed of the turn that took stimulus `since` (the mind has taken it)."""
    return noemad.wait_for(mind, "cycle_completed", since=since)


def warnings(noemad: Noemad, mind: str) -> list[str]:
    return sorted(w["check"] for w in noemad.ctl_json("mind", "show", mind)["warnings"])


def stored_id(out: Any) -> int:
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split("#")[1].split()[0]) if "#" in out.stdout else int(out.stdout.split()[-1])


def test_predictions_draw_no_source_warnings_and_are_judged_by_calibration(noemad: Noemad, mind: str) -> None:
    out = noemad.ctl("--json", "predict", mind, "the deploy 0 lands by noon", "--subject", "deploy", "--confidence", "0.9", "--due", "2h")
    assert out.returncode == 0, out.stderr
    for n in range(1, 5):  # the body `noemactl predict` sends, as the one above did
        body = {"kind": "prediction", "proposition": f"the deploy {n} lands by noon", "subject": "deploy", "confidence": 0.9, "due": "2h"}
        assert noemad.api("POST", f"/minds/{mind}/events", json=body).status_code == 201
    last = noemad.api("GET", f"/minds/{mind}/events", params={"kind": "prediction"}).json()["events"][-1]
    noemad.wait_for(mind, "narrative_updated", since=last["id"])
    # Five stated bets at 0.9, each resting on the mind's own word: no insufficient_evidence, no single_source.
    assert warnings(noemad, mind) == []
    predictions = noemad.ctl_json("predictions", mind)["predictions"]
    assert len(predictions) == 5 and {p["status"] for p in predictions} == {"open"}
    # The outcomes judge them: five misses at 0.9 are overconfidence, which calibration shows and metacognition warns of.
    out = noemad.ctl("outcome", str(predictions[0]["id"]), "--miss")
    assert out.returncode == 0, out.stderr
    for p in predictions[1:]:  # the body `noemactl outcome --miss` sends
        assert noemad.api("POST", f"/minds/{mind}/events", json={"kind": "outcome", "prediction": p["id"], "result": "miss"}).status_code == 201
    outcome = noemad.api("GET", f"/minds/{mind}/events", params={"kind": "outcome"}).json()["events"][-1]
    noemad.wait_for(mind, "narrative_updated", since=outcome["id"])
    shown = noemad.ctl("mind", "show", mind)
    # Five misses on one subject are a repeated failure too; still no source check on a bet.
    assert warnings(noemad, mind) == ["overconfidence", "repeated_failure"], shown.stdout
    assert "overconfidence" in shown.stdout and "single_source" not in shown.stdout and "insufficient_evidence" not in shown.stdout
    assert noemad.ctl_json("calibration", mind)["overconfident"] is True


def observe(noemad: Noemad, mind: str, source: str, stance: str, proposition: str = "the cache is warm", cli: bool = False) -> int:
    """An observation bearing on `proposition`: through `noemactl observe`, or as the body it sends to the API."""
    if cli:
        out = noemad.ctl("--json", "observe", mind, f"{source} checked the cache", "--source", source, f"--{stance}", proposition, "--subject", "cache")
        assert out.returncode == 0, out.stderr
        return int(noemad.api("GET", f"/minds/{mind}/events", params={"kind": "observation"}).json()["events"][-1]["id"])
    claim = {"proposition": proposition, "subject": "cache", "stance": stance}
    body = {"kind": "observation", "source": source, "text": f"{source} checked the cache", "data": {}, "claim": claim}
    stored = noemad.api("POST", f"/minds/{mind}/events", json=body)
    assert stored.status_code == 201, stored.text
    return int(stored.json()["id"])


def test_a_belief_contested_for_a_day_draws_stale_contradiction_however_much_evidence_arrives(noemad: Noemad, mind: str) -> None:
    settle(noemad, mind, observe(noemad, mind, "probe-a", "supports", cli=True))
    settle(noemad, mind, observe(noemad, mind, "probe-b", "contradicts", cli=True))
    [belief] = noemad.ctl_json("beliefs", mind)["beliefs"]
    assert belief["status"] == "contested"
    # Evidence keeps arriving every few hours, on both sides; the belief stays contested all along.
    for n in range(5):
        noemad.advance(4 * HOUR)
        done = settle(noemad, mind, observe(noemad, mind, f"probe-{n % 2}", "supports" if n % 2 else "contradicts"))
        assert noemad.api("GET", f"/beliefs/{belief['id']}").json()["status"] == "contested"
        assert "stale_contradiction" not in done["data"]["warnings"]  # 20 hours: not yet a day
    assert noemad.ctl_json("belief", str(belief["id"]))["status"] == "contested"
    noemad.advance(4 * HOUR)  # 24 hours since it became contested
    done = settle(noemad, mind, observe(noemad, mind, "probe-c", "supports"))
    assert "stale_contradiction" in done["data"]["warnings"]
    assert "stale_contradiction" in warnings(noemad, mind)
    goals = noemad.ctl("goals", mind)
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
def talker(place: Path) -> Iterator[Noemad]:
    with scripted_noemad(place, SCRIPT, CONFIG, {"persona": "You are Ada."}) as daemon:
        yield daemon


def test_a_reply_stating_what_nothing_supports_draws_fluent_without_evidence(talker: Noemad) -> None:
    asked = talker.ctl("--json", "say", "ada", "how did the deploy go?", "--from", "alice")
    assert asked.returncode == 0, asked.stderr
    reply = talker.wait_for("ada", "reply")
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
    assert done["data"]["warnings"] == ["fluent_without_evidence"]
    overview = talker.ctl("mind", "show", "ada")
    assert "fluent_without_evidence" in overview.stdout
    [warning] = talker.api("GET", "/minds/ada/events", params={"kind": "metacognition"}).json()["events"]
    assert warning["data"]["belief"] == belief["id"]
    assert warning["text"] == "I hold “The deploy finished at 14:05 on prod-7” only on my own words or notes, with nothing to back it"
    lowered = talker.ctl_json("belief", str(belief["id"]))
    assert lowered["confidence"] < belief["confidence"] and lowered["evidence"][-1]["source"] == "metacognition"
    assert len(talker.ctl_json("beliefs", "ada")["beliefs"]) == 1
