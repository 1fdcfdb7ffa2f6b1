"""The one protocol every behaviour's state follows, and what passes through it.

A rule's behaviour (`noemad.rules.shape`) says what it does; its state here
says what it holds between stimuli: a debounce or judge rule's batch, a
rate_limit rule's token buckets, a passive_sample rule's counters. The gate
(`noemad.gate.engine`) asks a state four things and never which behaviour
it is: `offer` (a stimulus the rule matched), `due` (its batch, once its
time came), `reset` (another rule's `resets` fired) and `status` (what
gate-status shows of it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeVar

from noemad.gate.batch import Batch
from noemad.gate.delivery import label
from noemad.gate.status import Bucket
from noemad.rules.match import Facts
from noemad.rules.shape import JudgeBehaviour, KeyBy
from noemad.wake import Verdict

__all__ = ["MAX_KEYS", "Answer", "BehaviourState", "Gathering", "Offered", "StateView", "key_of", "key_words", "remember"]

V = TypeVar("V")

MAX_KEYS = 10_000  # buckets or sample counters per rule: past it the least recently used key is forgotten


@dataclass(slots=True)  # not frozen: built for every stimulus a rule matches, and a frozen one costs twice as much
class Offered:
    """A stimulus a rule matched, as its behaviour's state sees it."""

    event_id: int
    facts: Facts
    rule: str | None  # the rule's name (None: the default)
    now: float
    judge_wired: bool  # judge rules are judged (else they run as a debounce)

    @property
    def label(self) -> str:
        return label(self.rule)


@dataclass(slots=True)  # not frozen, as Offered
class Answer:
    """What a behaviour did with a stimulus: the verdict and its sentence (the rule named)."""

    verdict: Verdict
    reason: str
    due: float | None = None  # BATCH: when its batch is due
    sampled: bool | None = None  # a passive_sample's count: whether this one woke the mind (None: not sampled)


@dataclass(frozen=True)
class StateView:
    """What gate-status shows of a behaviour's state now."""

    batch: Batch | None = None
    buckets: list[Bucket] = field(default_factory=list)


class BehaviourState(Protocol):
    """A rule's state under its one behaviour: kept by the gate while the rule's name and behaviour are unchanged."""

    @property
    def batch(self) -> Batch | None:
        """The batch it gathers (debounce, judge), None when it has none or never gathers one."""

    @property
    def gathers(self) -> bool:
        """Whether it ever holds a batch (the gate looks for due batches among these alone)."""

    @property
    def judge(self) -> JudgeBehaviour | None:
        """A judge rule's behaviour, whose batches go to its judge; None for every other behaviour."""

    def offer(self, stimulus: Offered) -> Answer:
        """A stimulus the rule matched: what the behaviour does with it (its state moves)."""

    def due(self, now: float) -> Batch | None:
        """Its batch, taken out, once its time came (None: nothing is due)."""

    def reset(self) -> Batch | None:
        """Start afresh: full buckets, sampling from the start; the pending batch is returned, cancelled."""

    def status(self, now: float) -> StateView:
        """What gate-status shows of it at `now` (a pure read)."""


def key_of(key_by: KeyBy, facts: Facts) -> str:
    """The key a rate_limit or passive_sample counts a stimulus under."""
    if key_by == "channel":
        return facts.channel
    if key_by == "author":
        return facts.author
    return ""


def key_words(key_by: KeyBy, key: str) -> str:
    return "everyone" if key_by == "none" else f"{key_by} {key or '(none)'}"


def remember(table: dict[str, V], key: str) -> None:
    """Keep `key` as most recently used, forgetting the least recently used past MAX_KEYS (a forgotten key starts afresh)."""
    if key in table:
        table[key] = table.pop(key)
    while len(table) > MAX_KEYS:
        del table[next(iter(table))]


class Immediate:
    """What the states that answer each stimulus at once (always, defer, rate_limit, passive_sample) share: no batch, nothing due."""

    gathers: ClassVar[bool] = False
    batch: ClassVar[Batch | None] = None
    judge: ClassVar[JudgeBehaviour | None] = None

    def due(self, now: float) -> Batch | None:
        return None

    def reset(self) -> Batch | None:
        return None

    def status(self, now: float) -> StateView:
        return StateView()


class Gathering:
    """What the states that gather a batch (debounce, judge) share: the batch, due once, cancelled by a reset."""

    gathers: ClassVar[bool] = True

    def __init__(self) -> None:
        self.batch: Batch | None = None

    def due(self, now: float) -> Batch | None:
        batch = self.batch
        if batch is None or batch.due > now:
            return None
        self.batch = None
        return batch

    def reset(self) -> Batch | None:
        batch, self.batch = self.batch, None
        return batch

    def status(self, now: float) -> StateView:
        return StateView(self.batch)
