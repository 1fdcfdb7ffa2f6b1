"""One salient term is a habit of its own when one speaker uses it on many days and in most of their episodes (issue 22, item 7).

"wrote the importer in Go", "went with Go for the CLI", "Go again for the
worker", ...: no two terms recur together, so no pair clustered them. A term
in at least half of a speaker's episodes, on MIN_DAYS distinct days, is a
habit; a term many speakers use now and then, one used on a day or two, or
one in a minority of a speaker's episodes is a mere topic. Pairs are taken
first: a pair says more than one of its terms.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from noemad.background.consolidation import MIN_DAYS, Authors, cluster
from test_consolidation import DAY, NOW, Env

VARIED = (
    "wrote the importer in Go",
    "went with Go for the CLI",
    "Go again for the worker",
    "the scheduler is Go now",
    "ported the exporter to Go",
    "Go suits the gateway",
    "rewrote the mailer in Go",
    "Go for the notifier as well",
)
OTHER = ("lunch at noon on Friday?", "the coffee machine on floor two is broken again", "my cat is asleep")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path / "n.db")
    yield e
    e.close()


def test_one_term_with_varied_verbs_on_many_days_is_a_habit(env: Env) -> None:
    go = [env.say(text, NOW - 20 * DAY + i * DAY) for i, text in enumerate(VARIED)]
    for i, text in enumerate(OTHER):
        env.say(text, NOW - 10 * DAY + i * DAY)
    env.say("rain again today", NOW - 5 * DAY, author="bob")
    done = env.consolidate()
    [c] = done.clusters
    assert (c["pair"], c["subject"], c["terms"], c["episodes"], c["speakers"]) == (["go"], "go", ["go"], 8, {"alice": 8})
    assert c["association"]["by"] == "term" and c["association"]["share"] == round(8 / 11, 4)
    assert c["proposition"] == 'alice repeatedly mentioned go (8 episodes, 2026-01-12 to 2026-01-19), e.g. "Go suits the gateway".'
    assert done.outputs["summary"] == "1 generalisation from 8 of 12 episodes; 4 left for later"
    assert env.rows("SELECT memory_id FROM consolidated ORDER BY memory_id") == [(i,) for i in go]


def test_a_term_on_one_day_in_a_minority_or_from_many_speakers_once_is_a_topic(env: Env) -> None:
    # On one day: what alice talked about then.
    for i, text in enumerate(VARIED):
        env.say(text, NOW - 3 * DAY + i * 60)
    assert env.consolidate().clusters == []
    # In a minority of bob's episodes, on eight days.
    for i, text in enumerate(VARIED):
        env.say(text, NOW - 20 * DAY + i * DAY, author="bob")
    for i in range(12):
        env.say(f"w{i}a w{i}b w{i}c", NOW - 20 * DAY + i * DAY + 3600, author="bob")
    assert [c for c in env.consolidate().clusters if c["pair"] == ["go"]] == []
    # One message each from eight speakers, on eight days.
    for i, text in enumerate(VARIED):
        env.say(text, NOW - 20 * DAY + i * DAY, author=f"user{i}")
    assert [c for c in env.consolidate().clusters if c["pair"] == ["go"]] == []


def test_a_pair_is_taken_before_one_of_its_terms() -> None:
    said = [{"select", "go", f"x{i}"} for i in range(5)] + [{"go", f"y{i}"} for i in range(4)] + [{f"z{i}"} for i in range(3)]
    authors = Authors.of(["alice"] * 12, list(range(12)))
    found = cluster(said, 3, authors)
    assert [(c.pair, c.members, c.by) for c in found] == [(("go", "select"), (0, 1, 2, 3, 4), "lift"), (("go",), (5, 6, 7, 8), "term")]
    # The same on fewer than MIN_DAYS days: the pair only.
    few = Authors.of(["alice"] * 12, [i % (MIN_DAYS - 1) for i in range(12)])
    assert [c.pair for c in cluster(said, 3, few)] == [("go", "select")]
    # Without authors nobody is known to have a habit: one shared term alone never clusters.
    assert [c.pair for c in cluster(said, 3)] == [("go", "select")]


def test_counting_a_habits_days_and_occasions_does_not_import_numpy_ma() -> None:
    # np.unique imports numpy.ma on its first call: 12 ms of a daemon's first consolidation, on its clustering's path.
    code = (
        "import sys\n"
        "from noemad.background.consolidation import Authors, cluster\n"
        "said = [{'select', 'go', f'x{i}'} for i in range(5)] + [{'go', f'y{i}'} for i in range(4)] + [{'rust', 'pick'}] * 3\n"
        "found = cluster(said, 3, Authors.of(['alice'] * 9 + ['bob'] * 3, list(range(9)) + [20, 20, 21]))\n"
        "assert [c.by for c in found] == ['lift', 'lift', 'term'], found\n"
        "assert 'numpy.ma' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])
