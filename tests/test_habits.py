"""Consolidation learns the most consistent habits: a pattern in every episode is the strongest habit, not noise.

The 200-message case of issue 14 goes through a real noemad and the real
noemactl (`consolidate`); the statistic's edges (chance pairings of common
words, a burst from one speaker, a habit in most but not all episodes) are
checked on `cluster` itself and on the job on a real store.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from inprocess import InProcess
from noemad.background.consolidation import LIFT_FLOOR, MIN_LIFT, Authors, Pairs, cluster
from test_consolidation import DAY, NOW, Env

USERS = ("alice", "bob", "carol", "dave", "erin")


def test_a_habit_in_every_one_of_200_messages_from_five_users_is_learned(app: InProcess, mind: str) -> None:
    for n in range(200):
        body = {"kind": "message", "author": USERS[n % 5], "text": f"we deploy service {n} with kubernetes today"}
        assert app.api("POST", f"/minds/{mind}/events", json=body).status_code == 201
    app.settle(mind)  # every turn taken: the 200 stimuli woke it one by one
    out = app.ctl("consolidate", mind)
    assert out.returncode == 0, out.stderr
    assert "1 generalisation from 200 of 200 episodes; 0 left for later" in out.stdout
    job_id = int(out.stdout.split("consolidation job ")[1].split()[0])
    [c] = app.ctl_json("jobs", "show", str(job_id))["outputs"]["clusters"]
    assert c["episodes"] == 200 and c["association"]["by"] == "window" and c["association"]["share"] == 1.0
    assert c["association"]["lift"] < MIN_LIFT  # what the old statistic refused it for
    assert set(c["terms"]) >= {"deploy", "kubernetes"} and set(c["speakers"]) == set(USERS)
    assert c["proposition"].startswith("alice, bob and 3 others repeatedly mentioned deploy")
    belief = app.ctl_json("belief", str(c["belief"]))
    assert belief["kind"] == "inference" and len(belief["evidence"]) == 200
    assert {e["source"] for e in belief["evidence"]} == set(USERS)


# --- the statistic ------------------------------------------------------------------------------


def test_a_pair_in_every_episode_of_a_large_window_clusters_and_chance_still_does_not() -> None:
    everywhere = [{"deploy", "kubernet", "servic", f"n{i}"} for i in range(1000)]
    [found] = cluster(everywhere, 3)
    assert len(found.members) == 1000 and found.by == "window" and found.lift == 1.0
    # Two common words each in 60% of the episodes, together by chance: neither test associates them.
    rng = random.Random(7)
    chance = [{w for w in ("please", "thanks") if rng.random() < 0.6} | {f"w{i}"} for i in range(1000)]
    seen = Pairs()
    assert cluster(chance, 3, pairs_seen=seen) == []
    assert (seen.recurring, seen.by_chance) == (1, 1)
    # A habit in 80% of the window, its terms always together: prevalent, so learned though its lift is 1.25.
    most = [{"select", "go", f"x{i}"} if i % 5 else {f"y{i}"} for i in range(1000)]
    [habit] = cluster(most, 3)
    assert len(habit.members) == 800 and habit.lift == pytest.approx(1.25) and (habit.by, habit.share) == ("window", 0.8)
    # Terms that mostly come apart are no habit, however common.
    loose = [{"go"} if i % 2 else {"select"} for i in range(900)] + [{"go", "select"}] * 100
    seen = Pairs()
    assert cluster(loose, 3, pairs_seen=seen) == [] and seen.apart == 1


def test_a_pair_only_prevalence_associates_must_recur_on_two_occasions() -> None:
    burst = [{"error", "disk", f"line{i}"} for i in range(500)]
    one_occasion = Authors.of(["sensor"] * 500, ["2026-01-01"] * 500)
    seen = Pairs()
    assert cluster(burst, 3, one_occasion, seen) == []
    assert seen.one_occasion == 1
    two = Authors.of(["sensor"] * 500, [f"2026-01-0{1 + i % 2}" for i in range(500)])
    [found] = cluster(burst, 3, two)
    assert len(found.members) == 500
    # A pair lift associates needs no occasions: a few episodes mostly about one thing in a small window.
    assert len(cluster([{"select", "go"}] * 5 + [{"lunch"}], 3, Authors.of(["a"] * 6, ["d"] * 6))) == 1
    assert LIFT_FLOOR == 200


@pytest.fixture
def env(tmp_path: Path) -> Any:
    e = Env(tmp_path / "n.db")
    yield e
    e.close()


def test_one_speaker_in_one_burst_is_not_a_habit_and_the_summary_says_why(env: Env) -> None:
    for n in range(300):
        env.say(f"disk error on volume {n} again", NOW - DAY + n, author="sensor")
    done = env.consolidate()
    assert done.clusters == []
    assert done.outputs["summary"] == (
        "no generalisation: 3 pairs of terms recur together in 3 or more of the 300 episodes,"
        " but none is a habit (3 from one speaker on one day); all are left for later"
    )
    # The next day it happens again: now it recurs, and it is learned.
    for n in range(3):
        env.say(f"disk error on volume {n} again", NOW + 3600 + n, author="sensor")
    env.clock.advance(2 * 3600)
    [c] = env.consolidate().clusters
    assert c["episodes"] == 303 and c["association"]["by"] == "window"


def test_with_nothing_recurring_the_summary_says_so(env: Env) -> None:
    for i, text in enumerate(("the build is red", "lunch at noon", "my cat is asleep", "rain again today")):
        env.say(text, NOW - DAY + i)
    assert env.consolidate().outputs["summary"] == (
        "no generalisation: no two terms recur together in 3 or more of the 4 episodes; all are left for later"
    )
