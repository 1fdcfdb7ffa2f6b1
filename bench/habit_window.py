"""Windows of messages that hold a habit, at any size: what consolidation must find however large the window is.

Issue 22 (item 5): 240 messages from four speakers over 20 days, 160 of them
"we select Go for the X" and 32 "we select Rust for the X", the rest six
fillers of 8 episodes each ("the coffee machine is broken again"), gave six
filler generalisations and not the Go habit. `majority_window` is that mix
at any size; `one_speaker_window` holds a habit of one speaker's (most of
alice's episodes) in a window where one of its terms is everyone's.
tests/test_consolidation_scale.py runs them at 150 to 10,000 episodes and
bench/consolidation.py at 100,000.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

SPEAKERS = ("alice", "bob", "carol", "dave")
DAYS = 20
COMPONENTS = "parser importer scheduler exporter gateway mailer notifier uploader reporter indexer".split()
FILLERS = (
    "the coffee machine is broken again",
    "the printer on floor two jams",
    "who took my stapler",
    "the lift is out of order",
    "parking gate stuck open",
    "fire drill at eleven",
)
FILLER_EPISODES = 8


@dataclass(frozen=True)
class Said:
    """One message of a window: who said it, when (days after the window's start) and what."""

    author: str
    day: float
    text: str


def _chatter(rng: random.Random) -> str:
    """Three made-up words: in no habit, and (nearly) never twice."""
    return " ".join("".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(4)) for _ in range(3))


def _spread(kinds: list[tuple[str, str]], rng: random.Random) -> list[Said]:
    """(author, text) in a shuffled order, spread evenly over DAYS days."""
    rng.shuffle(kinds)
    n = len(kinds)
    return [Said(author, DAYS * (i + 0.5) / n, text) for i, (author, text) in enumerate(kinds)]


def majority_window(n: int, seed: int = 1) -> list[Said]:
    """n messages from four speakers: two thirds "we select Go for the X", 2/15 "we select Rust for the X", fillers, chatter.

    Six fillers of FILLER_EPISODES episodes each while there is room (at 240
    episodes, exactly the issue's window), then chatter.
    """
    rng = random.Random(seed)
    go, rust = 2 * n // 3, 2 * n // 15
    fillers = min(len(FILLERS), (n - go - rust) // FILLER_EPISODES)
    texts = [f"we select Go for the {rng.choice(COMPONENTS)}" for _ in range(go)]
    texts += [f"we select Rust for the {rng.choice(COMPONENTS)}" for _ in range(rust)]
    texts += [f for f in FILLERS[:fillers] for _ in range(FILLER_EPISODES)]
    texts += [_chatter(rng) for _ in range(n - len(texts))]
    return _spread([(rng.choice(SPEAKERS), t) for t in texts], rng)


def one_speaker_window(n: int, seed: int = 1) -> list[Said]:
    """n messages: a fifth are alice's, 60% of them "we select Go for the X"; the others say "we select Rust ..." 75% of the time.

    "select" is in most of the window, so the Go pair's lift is below 1.5
    and it is in an eighth of the window: only alice's share shows it.
    """
    rng = random.Random(seed)
    kinds: list[tuple[str, str]] = []
    for i in range(n):
        k = i // 5
        if i % 5 == 0:  # alice: 3 in 5 of hers
            kinds.append(("alice", f"we select Go for the {rng.choice(COMPONENTS)}" if k % 5 < 3 else _chatter(rng)))
        else:  # 3 in 4 of the others'
            text = f"we select Rust for the {rng.choice(COMPONENTS)}" if i % 4 else _chatter(rng)
            kinds.append((rng.choice(SPEAKERS[1:]), text))
    return _spread(kinds, rng)
