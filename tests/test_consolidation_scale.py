"""A habit is a habit at any scale (issue 22, item 5).

A pair of terms in most of the window's episodes, or in most of one
speaker's, is found whatever the size of the window, and is taken before
fillers of a few episodes; even when one of its terms also occurs apart
("we select Rust"), which once put its lift below 1.5 as the window grew
past 200 episodes. Windows from bench/habit_window.py, perceived into a
mind as a turn perceives messages and consolidated by the job; at 10,000
episodes, on the clustering alone (bench/consolidation.py checks 100,000).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from habit_window import FILLER_EPISODES, Said, majority_window, one_speaker_window  # noqa: E402
from noemad.background.consolidation import LIFT_FLOOR, Authors, cluster_table, term_table  # noqa: E402
from noemad.cognition.perceive import perceive  # noqa: E402
from noemad.stimuli import Message  # noqa: E402
from test_consolidation import DAY, NOW, Consolidated, Env  # noqa: E402


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path / "n.db")
    yield e
    e.close()


def consolidate(env: Env, window: Sequence[Said]) -> Consolidated:
    """The window perceived into mind ada (one writer job: an episode per message, as a turn makes it), then consolidated."""
    start = NOW - 25 * DAY

    def job(db: Any) -> None:
        from noemad.events import append

        for i, said in enumerate(window):
            at = start + said.day * DAY
            stored = append(db, Message(said.author, said.text).draft("ada"), at)
            perceive(db, "ada", [stored], f"ada/{i}", at)

    env.store.writer.run_sync(job)
    return env.consolidate()


@pytest.mark.parametrize("n", [150, 240, 1_000])
def test_a_habit_in_most_of_the_window_is_found_first_at_any_size(env: Env, n: int) -> None:
    window = majority_window(n)
    go = sum(1 for s in window if " Go " in s.text)
    done = consolidate(env, window)
    first, *rest = done.clusters
    assert (first["pair"], first["episodes"]) == (["go", "select"], go)
    assert f" and 2 others repeatedly mentioned select and go ({go} episodes, " in first["proposition"]
    # Fillers of a few episodes may be generalised too (and "we select Rust" in a small window), but after the habit.
    assert all(c["episodes"] < go for c in rest)
    assert [c["episodes"] for c in rest if len(c["pair"]) == 2 and c["pair"] != ["rust", "select"]] == [FILLER_EPISODES] * min(6, (n - go - 2 * n // 15) // FILLER_EPISODES)


@pytest.mark.parametrize("n", [150, 1_000])
def test_a_habit_in_most_of_one_speakers_episodes_is_found_though_its_term_is_everyones(env: Env, n: int) -> None:
    window = one_speaker_window(n)
    go = sum(1 for s in window if " Go " in s.text)
    rust = sum(1 for s in window if " Rust " in s.text)
    done = consolidate(env, window)
    found = {tuple(c["pair"]): c for c in done.clusters}
    assert found[("go", "select")]["episodes"] == go and found[("go", "select")]["speakers"] == {"alice": go}
    assert found[("go", "select")]["association"]["by"] == ("lift" if n < LIFT_FLOOR else "speaker")  # a small window is measured as 200
    assert found[("rust", "select")]["episodes"] == rust  # in most of the window


@pytest.mark.parametrize("window", [majority_window, one_speaker_window])
def test_at_10000_episodes_the_habit_is_still_found_by_the_clustering(window: Callable[[int], list[Said]]) -> None:
    said = window(10_000)
    texts = [f"{s.author} said on cli: {s.text}" for s in said]
    authors = Authors.of([s.author for s in said], [int(s.day) for s in said])
    found = {c.pair: c for c in cluster_table(term_table(texts), 3, authors)}
    go = [i for i, s in enumerate(said) if " Go " in s.text]
    habit = found[("go", "select")]
    assert list(habit.members) == go and habit.by == ("window" if window is majority_window else "speaker")
