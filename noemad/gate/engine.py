"""A mind's gate: when its stored stimuli wake it, and why.

Every stimulus is stored before it is offered here, and a turn takes every
stored stimulus no turn has taken yet, so the gate decides only *when* a
turn runs and *why*, never what the turn sees. It is a plain state machine:
pure, in memory, with `now` passed in by the caller (the actor, on the
injectable clock), so tests drive time by hand.

How a stimulus is decided (`Gate.offer`):

- While the mind sleeps, a stimulus reaches no rule (ASLEEP); one from a
  privileged author (the operator, by default) ends the sleep and wakes the
  mind with everything stored during it.
- Otherwise the rules are asked in order and the first that matches decides.
  A `passthrough` rule that denies (rate_limit without a token, a
  passive_sample that does not sample) lets the later rules decide; a deny
  without passthrough is like defer: stored, in context, no turn.
- No rule matches: the mind's default behaviour decides, as an unnamed rule.

Behaviours: `always` wakes now; `defer` never wakes; `debounce` gathers a
batch per rule that wakes once, `ms` after its newest stimulus (each one
pushes the time back); `rate_limit` is a token bucket per key (full at
first, a token back every `refill_ms`, counted continuously); a
`passive_sample` counter per key wakes for the 1st, (every+1)th, ...

`resets`: when a rule fires (wakes now, or its batch is delivered), the
rules it names start afresh: their buckets are full again, their sample
counters start over, and their pending batch is cancelled, its stimuli
joining the firing rule's delivery (the turn it wakes takes them anyway).

A rule's state is kept by name across `set_rules` while its behaviour is
unchanged; a rule whose behaviour changes starts afresh. A batch pending
when its rule is removed or changed still wakes the mind at its time (the
stimuli were promised a turn); it is listed among the upcoming wakes.

Sleep: stimuli are stored and reach no rule; pending batches and the
self-wake wait, and a judge's verdict reached during it is held. The sleep's end (its time, or `wake_up`) delivers what was
stored during it; a privileged author's stimulus ends it at once with the
same. Self-wake: the mind's own timer (skip_reply); any turn start cancels
it (`turn_started`); due together with a batch, it goes with that batch as
one turn.

What survives a restart: the rules (`noemad.rules.table`), a sleep and a
self-wake (`noemad.gate.sleep`). Batches, buckets, sample counters, held
deliveries and the counters gate-status shows live here and start afresh
(`since`); stimuli a batch held are not lost: stored and never taken, they
are taken by the first turn after the restart.

Deliveries that come while a turn runs or the mind is paused are held by the
actor here (`hold`) and go as one (`release`): at most 100 stimuli, oldest
dropped and counted (they stay stored and in context; only the delivery's
list, which names the turn's parents, is capped).

`judge` rules batch as debounce does (`max_wait_ms` caps how long a batch
may be pushed back); a due batch goes to the rule's `JudgeSlot`
(`noemad.gate.judge.slot`, which says its timing rules) instead of waking the
mind, and the actor asks the judge (`to_judge`, `verdict`, `stop_judging`).
A judge batch is not absorbed by a turn that takes its stimuli: it is
judged after that turn, against what the turn left. Unwired (judging off,
or no judge model), a judge rule runs as a debounce of its quiet period and
gate-status says so.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from noemad.clock import iso
from noemad.gate.judge.slot import FAIL_STREAK, REJUDGES, JudgedBatch, JudgeSlot, JudgeStart, Outcome, VerdictRecord
from noemad.gate.judge.port import JudgeOutcome
from noemad.gate.status import (
    Bucket,
    GateStatus,
    JudgeRuleStatus,
    JudgeVerdictStatus,
    RuleStatus,
    Sampled,
    SelfWakeStatus,
    SleepStatus,
    UpcomingWake,
)
from noemad.rules.match import Facts, Matcher
from noemad.rules.probe import shadow_warnings
from noemad.rules.shape import (
    Always,
    Behaviour,
    Debounce,
    Defer,
    JudgeBehaviour,
    KeyBy,
    PassiveSample,
    RateLimit,
    Rule,
    behaviour_data,
    match_data,
)
from noemad.rules.table import StoredRules

__all__ = ["HOLD_CAP", "Batch", "Decision", "Delivery", "Gate", "RuleState", "UpcomingWake", "Verdict"]

V = TypeVar("V")

HOLD_CAP = 100  # stimuli in held deliveries, and in the list of a sleep's stimuli
SHOWN_BUCKETS = 20  # per rule in gate-status: the most recently used
MAX_KEYS = 10_000  # buckets or sample counters per rule: past it the least recently used key is forgotten


class Verdict(enum.Enum):
    """What the gate did with one stimulus."""

    WAKE = "wake"  # a turn now
    BATCH = "batch"  # a turn later, with the rest of the rule's batch
    DEFER = "defer"  # stored, in context, no turn
    DENY = "deny"  # a rate_limit or passive_sample said no: like defer
    ASLEEP = "asleep"  # the mind sleeps: stored, reached no rule


@dataclass(frozen=True)
class Decision:
    """The gate's answer for one stimulus, with the sentence the timeline shows."""

    verdict: Verdict
    rule: str | None  # the rule that decided (None: the default, or sleep)
    reason: str
    due: float | None = None  # BATCH: when the batch wakes the mind unless pushed back


@dataclass(frozen=True)
class Delivery:
    """A wake to hand to the actor: the stimuli that asked for it, and why."""

    rule: str | None
    stimuli: tuple[int, ...]  # oldest first; the turn takes every untaken stimulus, these are its cause and parents
    addressed: tuple[int, ...]  # those said to the mind (a mention, a DM, a reply to it)
    reason: str
    self_wake: bool = False  # the mind's own timer: a turn with nothing new
    cause: int | None = None  # a self-wake's self_wake_set event
    judged: bool = False  # a judge's REPLY (or a failed call under on_error = "wake"): a turn even if another took its stimuli


@dataclass
class Batch:
    """A debounce (or judge) batch: stimuli gathered by one rule until `due`."""

    rule: str | None  # None: the default's batch
    behaviour: Debounce | JudgeBehaviour
    stimuli: list[int] = field(default_factory=list)
    addressed: list[int] = field(default_factory=list)
    due: float = 0.0
    orphan: bool = False  # its rule was removed or changed since: it wakes the mind at `due` all the same
    started: float = 0.0  # its first stimulus (max_wait_ms counts from here)

    @property
    def quiet_ms(self) -> int:
        return self.behaviour.debounce_ms if isinstance(self.behaviour, JudgeBehaviour) else self.behaviour.ms

    def delivery(self, unwired: str | None = None) -> Delivery:
        label = _label(self.rule)
        gone = " (gathered before the rule changed)" if self.orphan else ""
        ms = self.quiet_ms
        how = f"judge, run as a debounce of {ms} ms ({unwired})" if unwired else f"debounce {ms} ms"
        reason = f"{label}: {how}, a batch of {_count(len(self.stimuli))} after {ms} ms quiet{gone}"
        return Delivery(self.rule, tuple(self.stimuli), tuple(self.addressed), reason)

    def judged(self) -> JudgedBatch:
        assert self.rule is not None and isinstance(self.behaviour, JudgeBehaviour)
        return JudgedBatch(self.rule, self.behaviour, list(self.stimuli), list(self.addressed))


@dataclass
class _Bucket:
    tokens: float
    at: float  # when `tokens` was counted


@dataclass
class RuleState:
    """One rule's state and counters: its state kept by name while its behaviour is unchanged, its counters while its name is."""

    behaviour: Behaviour
    batch: Batch | None = None
    buckets: dict[str, _Bucket] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)
    matches: int = 0
    last_match: float | None = None
    denials: int = 0
    seen: int = 0
    woke: int = 0

    def reset(self) -> Batch | None:
        """Start afresh (another rule's `resets`): full buckets, sampling from the start; the pending batch is returned, cancelled."""
        self.buckets.clear()
        self.samples.clear()
        batch, self.batch = self.batch, None
        return batch


@dataclass
class _Entry:
    rule: Rule | None  # None: the default
    behaviour: Behaviour
    matcher: Matcher | None
    state: RuleState

    @property
    def name(self) -> str | None:
        return None if self.rule is None else self.rule.name


@dataclass
class _Sleep:
    until: float
    note: str | None
    stimuli: list[int] = field(default_factory=list)  # stored during the sleep, newest HOLD_CAP
    addressed: list[int] = field(default_factory=list)
    ended: str | None = None  # why it ended early (wake_up); due at once


@dataclass
class _SelfWake:
    at: float
    cause: int


def _label(rule: str | None) -> str:
    return "the default (no rule matched)" if rule is None else f"rule {rule}"


def _count(n: int) -> str:
    return f"{n} stimulus" if n == 1 else f"{n} stimuli"


def _record(
    outcome: JudgeOutcome, rule: str, verdict: Outcome, woke: bool, reason: str, stimuli: tuple[int, ...], now: float,
    superseded: bool = False, refused_until: float | None = None,
) -> VerdictRecord:
    """A verdict with the call it cites and its tokens."""
    return VerdictRecord(
        rule, verdict, woke, reason, stimuli, now, superseded, outcome.call_id, outcome.input_tokens,
        outcome.cache_read, outcome.cache_write, outcome.output_tokens, refused_until,
    )


def _key(key_by: KeyBy, facts: Facts) -> str:
    if key_by == "channel":
        return facts.channel
    if key_by == "author":
        return facts.author
    return ""


def _key_words(key_by: KeyBy, key: str) -> str:
    return "everyone" if key_by == "none" else f"{key_by} {key or '(none)'}"


def _remember(table: dict[str, V], key: str) -> None:
    """Keep `key` as most recently used, forgetting the least recently used past MAX_KEYS (a forgotten key starts afresh)."""
    if key in table:
        table[key] = table.pop(key)
    while len(table) > MAX_KEYS:
        del table[next(iter(table))]


class Gate:
    """One mind's gate: its rules with their state, its sleep, its self-wake and what it holds."""

    def __init__(
        self, mind: str, rules: StoredRules, *, privileged: frozenset[str] = frozenset({"operator"}), since: float | None = None
    ) -> None:
        self.mind = mind
        self.privileged = privileged
        self._entries: list[_Entry] = []
        self._by_name: dict[str, _Entry] = {}
        self._debouncing: list[_Entry] = []
        self._default: _Entry = _Entry(None, Always(), None, RuleState(Always()))
        self._stored = StoredRules()
        self._warnings: list[str] | None = None  # worked out when first asked, for these rules
        self._orphans: list[Batch] = []
        self._sleep: _Sleep | None = None
        self._self_wake: _SelfWake | None = None
        self._retry: tuple[float, int] | None = None  # a failed turn's retry: when, and how many stimuli it takes
        self._held: list[Delivery] = []
        self._slots: dict[str, JudgeSlot] = {}  # judge rules' fired batches, by rule name (they outlive an edit)
        self._judge_wired = False
        self.judge_notice: str | None = "judging is off on this host ([gate.judge] enabled = false)"  # why unwired
        self.judge_notes: list[str] = []  # host notes for judge rules (a budget read at its least)
        self._token = 0
        self.judge_ratio: float | None = None  # the calibrated chars-per-token of the judge's window (the actor keeps it)
        self.last_turn_failed = False  # the mind's newest turn failed before it answered (R1-2)
        self._seen = since  # the latest `now` the gate was told of
        self.since = since  # when the counters started (None until the gate first sees the time)
        self.held_dropped = 0
        self.absorbed = 0
        self.set_rules(rules)

    # rules -----------------------------------------------------------------------

    def set_rules(self, rules: StoredRules) -> None:
        """Take a new rule list: a rule keeps its state while its name and behaviour are unchanged, its counters while its name is."""
        old = {e.name: e for e in self._entries}
        entries = []
        for rule in rules.rules:
            before = old.pop(rule.name, None)
            if before is not None and before.behaviour == rule.behaviour:
                state = before.state
            else:
                state = RuleState(rule.behaviour)
                if before is not None:  # an edit to its behaviour: what it held starts afresh, its counters go on
                    self._orphan(before.state)
                    old_state = before.state
                    state.matches, state.last_match, state.denials = old_state.matches, old_state.last_match, old_state.denials
                    state.seen, state.woke = old_state.seen, old_state.woke
            # A match compiles once (globs, RE2): an edit elsewhere in a list of 200 does not compile them all again.
            same = before is not None and before.rule is not None and before.rule.match == rule.match
            matcher = before.matcher if same and before is not None else Matcher(rule.match)
            entries.append(_Entry(rule, rule.behaviour, matcher, state))
        for gone in old.values():
            self._orphan(gone.state)
        if self._default.behaviour != rules.default:
            self._orphan(self._default.state)
            self._default = _Entry(None, rules.default, None, RuleState(rules.default))
        self._entries = entries
        self._by_name = {e.rule.name: e for e in entries if e.rule is not None}
        # Only these can hold a batch: next_due (asked after every stimulus) looks at them alone.
        self._debouncing = [e for e in (*entries, self._default) if isinstance(e.behaviour, (Debounce, JudgeBehaviour))]
        self._stored = rules
        self._warnings = None
        for name in [n for n, slot in self._slots.items() if slot.empty and not self._is_judge(n)]:
            del self._slots[name]  # a removed rule's records go with it once nothing of it waits

    def _is_judge(self, name: str) -> bool:
        entry = self._by_name.get(name)
        return entry is not None and isinstance(entry.behaviour, JudgeBehaviour)

    def _orphan(self, state: RuleState) -> None:
        if state.batch is not None and state.batch.stimuli:
            state.batch.orphan = True
            self._orphans.append(state.batch)
        state.batch = None

    # deciding ----------------------------------------------------------------------

    def _saw(self, now: float) -> None:
        if self.since is None:
            self.since = now
        if self._seen is None or now > self._seen:
            self._seen = now

    def offer(self, event_id: int, facts: Facts, now: float) -> tuple[Decision, Delivery | None]:
        """Decide for one stored stimulus; a WAKE comes with the delivery to run now."""
        self._saw(now)
        if "from_self" in facts.flags:
            # Its own words (a reply echoed back by a room, or said from its account elsewhere): it
            # reads them in context, but waking on them would have it answer itself.
            return Decision(Verdict.DEFER, None, "the mind's own message: stored, in context; it never wakes the mind"), None
        if self.sleeping(now):
            return self._offer_asleep(event_id, facts, now)
        addressed = facts.addressed
        passed: list[str] = []
        for entry in self._entries:
            assert entry.matcher is not None
            if not entry.matcher.test(facts):
                continue
            decision, delivery = self._apply(entry, event_id, facts, addressed, now)
            if decision.verdict is Verdict.DENY and entry.rule is not None and entry.rule.passthrough:
                passed.append(entry.rule.name)
                continue
            return self._passed_on(decision, passed), delivery
        decision, delivery = self._apply(self._default, event_id, facts, addressed, now)
        return self._passed_on(decision, passed), delivery

    def _passed_on(self, decision: Decision, passed: list[str]) -> Decision:
        if not passed:
            return decision
        names = ", ".join(passed)
        return Decision(decision.verdict, decision.rule, f"{decision.reason} (passed on by {names}, which denied it)", decision.due)

    def _apply(
        self, entry: _Entry, event_id: int, facts: Facts, addressed: bool, now: float
    ) -> tuple[Decision, Delivery | None]:
        """What `entry`'s behaviour does with a stimulus it matched (its counters move)."""
        state, behaviour, name, label = entry.state, entry.behaviour, entry.name, _label(entry.name)
        state.matches += 1
        state.last_match = now
        mine = (event_id,)
        said = mine if addressed else ()
        if isinstance(behaviour, Always):
            return self._fire(entry, Decision(Verdict.WAKE, name, f"{label}: always wakes the mind"), Delivery(name, mine, said, ""))
        if isinstance(behaviour, Defer):
            return Decision(Verdict.DEFER, name, f"{label}: defer, stored for the next turn without waking the mind"), None
        if isinstance(behaviour, (Debounce, JudgeBehaviour)):
            batch = state.batch
            if batch is None:
                batch = state.batch = Batch(name, behaviour, started=now)
            batch.stimuli.append(event_id)
            if addressed:
                batch.addressed.append(event_id)
            batch.due = now + batch.quiet_ms / 1000
            if isinstance(behaviour, Debounce):
                reason = f"{label}: debounce {behaviour.ms} ms, due at {iso(batch.due)} ({_count(len(batch.stimuli))} in the batch)"
                return Decision(Verdict.BATCH, name, reason, batch.due), None
            if behaviour.max_wait_ms is not None:
                batch.due = min(batch.due, batch.started + behaviour.max_wait_ms / 1000)
            how = "judged" if self._judge_wired else "delivered (no judge: a debounce)"
            reason = f"{label}: judge after {behaviour.debounce_ms} ms quiet, {how} at {iso(batch.due)} ({_count(len(batch.stimuli))} in the batch)"
            return Decision(Verdict.BATCH, name, reason, batch.due), None
        if isinstance(behaviour, RateLimit):
            key = _key(behaviour.key_by, facts)
            who = _key_words(behaviour.key_by, key)
            bucket = self._bucket(state, behaviour, key, now)
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                reason = f"{label}: rate_limit, a token for {who} ({int(bucket.tokens)} of {behaviour.tokens} left)"
                return self._fire(entry, Decision(Verdict.WAKE, name, reason), Delivery(name, mine, said, ""))
            state.denials += 1
            back = now + (1 - bucket.tokens) * behaviour.refill_ms / 1000
            reason = f"{label}: rate_limit, no token left for {who} (the next at {iso(back)}); stored, in context"
            return Decision(Verdict.DENY, name, reason), None
        assert isinstance(behaviour, PassiveSample)
        key = _key(behaviour.key_by, facts)
        number = state.samples.get(key, 0)
        state.samples[key] = number + 1
        _remember(state.samples, key)
        state.seen += 1
        who = _key_words(behaviour.key_by, key)
        if number % behaviour.every == 0:
            state.woke += 1
            reason = f"{label}: passive_sample 1 in {behaviour.every}, number {number + 1} for {who} wakes the mind"
            return self._fire(entry, Decision(Verdict.WAKE, name, reason), Delivery(name, mine, said, ""))
        state.denials += 1
        reason = f"{label}: passive_sample 1 in {behaviour.every}, number {number + 1} for {who} is not sampled; stored, in context"
        return Decision(Verdict.DENY, name, reason), None

    def _bucket(self, state: RuleState, behaviour: RateLimit, key: str, now: float) -> _Bucket:
        """The key's bucket refilled to `now`: one token back per `refill_ms`, counted continuously, never past full."""
        bucket = state.buckets.get(key)
        if bucket is None:
            bucket = state.buckets[key] = _Bucket(float(behaviour.tokens), now)
        elif now > bucket.at:
            bucket.tokens = min(float(behaviour.tokens), bucket.tokens + (now - bucket.at) * 1000 / behaviour.refill_ms)
            bucket.at = now
        _remember(state.buckets, key)
        return bucket

    def _fire(self, entry: _Entry, decision: Decision, delivery: Delivery) -> tuple[Decision, Delivery]:
        """A rule wakes the mind now: apply its resets; their cancelled batches join the delivery."""
        return decision, self._resets(entry.rule, Delivery(delivery.rule, delivery.stimuli, delivery.addressed, decision.reason))

    def _resets(self, rule: Rule | None, delivery: Delivery) -> Delivery:
        if rule is None or not rule.resets:
            return delivery
        stimuli, addressed = set(delivery.stimuli), set(delivery.addressed)
        for name in rule.resets:
            entry = self._by_name.get(name)
            if entry is not None and name != rule.name:
                batch = entry.state.reset()
                if batch is not None:
                    stimuli.update(batch.stimuli)
                    addressed.update(batch.addressed)
        if len(stimuli) == len(delivery.stimuli):
            return delivery
        return Delivery(delivery.rule, tuple(sorted(stimuli)), tuple(sorted(addressed)), delivery.reason)

    # sleep -------------------------------------------------------------------------

    def _offer_asleep(self, event_id: int, facts: Facts, now: float) -> tuple[Decision, Delivery | None]:
        sleep = self._sleep
        assert sleep is not None
        sleep.stimuli.append(event_id)
        if facts.addressed:
            sleep.addressed.append(event_id)
        if facts.author in self.privileged:
            reason = f"{facts.author} is privileged: woke the mind from its sleep"
            delivery = self._end_sleep(reason)
            return Decision(Verdict.WAKE, None, reason), delivery
        if len(sleep.stimuli) > HOLD_CAP:
            dropped = sleep.stimuli.pop(0)
            if sleep.addressed and sleep.addressed[0] == dropped:
                sleep.addressed.pop(0)
        note = f" ({sleep.note})" if sleep.note else ""
        reason = f"asleep until {iso(sleep.until)}{note}: stored, reaches no rule"
        return Decision(Verdict.ASLEEP, None, reason), None

    def _end_sleep(self, reason: str) -> Delivery:
        sleep = self._sleep
        assert sleep is not None
        self._sleep = None
        return Delivery(None, tuple(sleep.stimuli), tuple(sleep.addressed), reason)

    def sleep(self, until: float, note: str | None) -> None:
        """Sleep until `until`: stimuli reach no rule, batches and the self-wake wait; the end wakes the mind."""
        if self._sleep is not None:
            self._sleep.until, self._sleep.note, self._sleep.ended = until, note, None
        else:
            self._sleep = _Sleep(until, note)

    def wake_up(self, now: float | None = None) -> None:
        """End the sleep now: the next `due` delivers what was stored during it."""
        if self._sleep is not None:
            if now is not None:
                self._saw(now)
            self._sleep.ended = "the operator ended its sleep"

    def sleeping(self, now: float) -> bool:
        """Whether the mind sleeps at `now`."""
        return self._sleep is not None and self._sleep.ended is None and now < self._sleep.until

    # self-wake ---------------------------------------------------------------------

    def set_self_wake(self, at: float, cause: int) -> None:
        """The mind's own timer (skip_reply): a turn with nothing new at `at`; any turn start cancels it."""
        self._self_wake = _SelfWake(at, cause)

    def cancel_self_wake(self) -> None:
        self._self_wake = None

    def set_retry(self, at: float | None, stimuli: int = 0) -> None:
        """A failed turn's retry (kept by the actor) is due at `at` with `stimuli`; None: there is none to come."""
        self._retry = None if at is None else (at, stimuli)

    def turn_started(self, now: float) -> bool:
        """A turn started: it cancels the self-wake. True if there was one to cancel."""
        self._saw(now)
        had = self._self_wake is not None
        self._self_wake = None
        self._retry = None  # the turn takes what a failed turn's retry would have
        for slot in self._slots.values():
            slot.taken_by_turn()
        return had

    def turn_ended(self, completed: bool) -> None:
        """The mind's turn ended: completed (it answered, skipped, or had nothing to answer) or failed (R1-2)."""
        self.last_turn_failed = not completed
        for slot in self._slots.values():
            slot.turn_ended(completed)

    # judging -------------------------------------------------------------------------

    def set_judging(self, wired: bool, notice: str | None = None, notes: list[str] | None = None) -> None:
        """Whether judge rules are judged; unwired, they run as a debounce and `notice` says why."""
        self._judge_wired = wired
        self.judge_notice = None if wired else notice
        self.judge_notes = list(notes or [])

    @property
    def judge_wired(self) -> bool:
        return self._judge_wired

    def to_judge(self, now: float) -> list[JudgeStart]:
        """The judge calls to start now (the actor has checked the mind is free): one per rule at a time."""
        self._saw(now)
        if not self._judge_wired or self.sleeping(now):
            return []
        starts = []
        for slot in self._slots.values():
            if slot.ready(now):
                assert slot.held is not None
                self._token += 1
                starts.append(slot.start(self._token, self._instructions(slot.held), self.last_turn_failed))
        return starts

    def _instructions(self, batch: JudgedBatch) -> str | None:
        """R1-5: the rule as it is when the judge is asked, while it is a judge rule; as it was once it is not."""
        entry = self._by_name.get(batch.rule)
        if entry is not None and isinstance(entry.behaviour, JudgeBehaviour):
            return entry.behaviour.instructions
        return batch.behaviour.instructions

    def stop_judging(self) -> list[str]:
        """A turn started or the mind was paused: every call in flight is stopped, its batch held (no verdict). The rules stopped."""
        return [slot.rule for slot in self._slots.values() if slot.stop()]

    def judging(self) -> dict[str, int]:
        """The calls in flight: rule -> token."""
        return {slot.rule: slot.token for slot in self._slots.values() if slot.judging is not None}

    def verdict(
        self, rule: str, token: int, outcome: JudgeOutcome, now: float, on_error: str = "wake"
    ) -> tuple[Delivery | None, VerdictRecord | None]:
        """A judge call answered: the delivery it makes (REPLY, or a failure under on_error = "wake") and the record to trace.

        A call that was stopped is no verdict, unless it answered REPLY: then
        a turn overtook a REPLY (superseded, traced woke: false, not counted
        as a wake); it is judged again after the turn at most REJUDGES times,
        then delivered as it stands. While the mind sleeps the delivery is
        held, not returned: it goes when the mind wakes (a verdict never
        wakes a sleeping mind).
        """
        self._saw(now)
        if outcome.ratio is not None:
            self.judge_ratio = outcome.ratio
        delivery, record = self._verdict(rule, token, outcome, now, on_error)
        if delivery is not None and self.sleeping(now):
            self.hold(delivery)
            return None, record
        return delivery, record

    def _verdict(
        self, rule: str, token: int, outcome: JudgeOutcome, now: float, on_error: str
    ) -> tuple[Delivery | None, VerdictRecord | None]:
        slot = self._slots.get(rule)
        if slot is None:
            return None, None
        if token != slot.token or slot.judging is None:
            if outcome.verdict != "reply" or slot.held is None:
                return None, None  # a stopped call: no verdict, not a failure
            held = slot.held
            held.superseded += 1
            record = _record(outcome, rule, "reply", False, outcome.reason, tuple(held.stimuli), now, superseded=True)
            slot.count(record)
            if held.superseded <= REJUDGES:
                return None, record
            slot.held = None
            why = f"rule {rule}: the judge said REPLY ({held.superseded} times, each overtaken by a turn): delivered as it stands"
            return self._reply(slot, held, why), record
        batch = slot.judging
        slot.judging, slot.token = None, 0
        stimuli = tuple(sorted(set(batch.stimuli) | set(slot.unanswered)))
        if outcome.refused_until is not None or outcome.refusal is not None:
            # R1-1: not now, under either on_error: held and judged when the hold ends.
            slot.hold(batch)
            self._requeue(slot)
            slot.refused_until = outcome.refused_until if outcome.refused_until is not None else now + 60.0
            slot.refusal = outcome.refusal or outcome.reason
            record = _record(outcome, rule, "refused", False, slot.refusal, stimuli, now, refused_until=slot.refused_until)
            slot.count(record)
            return None, record
        if outcome.verdict == "wait":
            record = _record(outcome, rule, "wait", False, outcome.reason, stimuli, now)
            slot.count(record)
            self._requeue(slot)  # what fired while it decided is judged afresh
            return None, record
        if outcome.verdict == "reply":
            record = _record(outcome, rule, "reply", True, outcome.reason, stimuli, now)
            slot.count(record)
            return self._reply(slot, batch, f"rule {rule}: the judge said REPLY"), record
        wake = on_error != "skip"
        record = _record(outcome, rule, "failed", wake, outcome.reason, stimuli, now)
        slot.count(record)
        if wake:
            return self._reply(slot, batch, f"rule {rule}: the judge failed ({outcome.reason}); on_error = wake"), record
        self._requeue(slot)
        return None, record

    @staticmethod
    def _requeue(slot: JudgeSlot) -> None:
        if slot.queued is not None:
            queued, slot.queued = slot.queued, None
            slot.hold(queued)

    def _reply(self, slot: JudgeSlot, batch: JudgedBatch, reason: str) -> Delivery:
        """The batch wakes the mind as a debounce would, with what queued behind it and what is unanswered (R1-2)."""
        if slot.queued is not None:
            batch.merge(slot.queued)
            slot.queued = None
        stimuli = tuple(sorted(set(batch.stimuli) | set(slot.unanswered)))
        if slot.unanswered:
            reason += f" ({_count(len(slot.unanswered))} left unanswered by a failed turn)"
        slot.replied = stimuli
        delivery = Delivery(slot.rule, stimuli, tuple(batch.addressed), reason, judged=True)
        entry = self._by_name.get(slot.rule)
        return self._resets(entry.rule if entry is not None else None, delivery)

    # timers ------------------------------------------------------------------------

    def next_due(self) -> float | None:
        """When `due` next has something to deliver (None: nothing is scheduled)."""
        if self._sleep is not None:
            # During a sleep nothing but its end (or a privileged author) wakes the mind.
            return self._seen if self._sleep.ended is not None and self._seen is not None else self._sleep.until
        times = [b.due for b in self._batches()]
        if self._self_wake is not None:
            times.append(self._self_wake.at)
        # A refused judge call is tried again when its hold ends (R1-1): a timer at the stated time.
        # Only while it is still to come: once passed, the actor judges as soon as the mind is free (a turn's end
        # or a resume), and a time already past here would fire the timer again at once for as long as a turn runs.
        times += [
            s.refused_until for s in self._slots.values()
            if s.held is not None and s.refused_until is not None and (self._seen is None or s.refused_until > self._seen)
        ]
        return min(times, default=None)

    def _unwired(self, batch: Batch) -> str | None:
        return self.judge_notice if isinstance(batch.behaviour, JudgeBehaviour) else None

    def _to_judge(self, batch: Batch) -> bool:
        """A due judge batch goes to its rule's slot (True), unless judging is unwired."""
        if not isinstance(batch.behaviour, JudgeBehaviour) or not self._judge_wired or batch.rule is None:
            return False
        self._slot(batch.rule).fire(batch.judged())
        return True

    def _slot(self, rule: str) -> JudgeSlot:
        slot = self._slots.get(rule)
        if slot is None:
            slot = self._slots[rule] = JudgeSlot(rule)
        return slot

    def _batches(self) -> list[Batch]:
        pending = [e.state.batch for e in self._debouncing if e.state.batch is not None]
        return [*pending, *self._orphans]

    def due(self, now: float) -> list[Delivery]:
        """The deliveries whose time came, soonest first: a sleep's end, batches, the self-wake."""
        self._saw(now)
        out: list[Delivery] = []
        if self._sleep is not None:
            if self.sleeping(now):
                return out
            ended = self._sleep.ended or f"its sleep until {iso(self._sleep.until)} ended"
            out.append(self._end_sleep(ended))
        fired: list[tuple[float, Delivery]] = []
        for entry in self._debouncing:
            batch = entry.state.batch
            if batch is not None and batch.due <= now:
                entry.state.batch = None
                if self._to_judge(batch):
                    continue
                fired.append((batch.due, self._resets(entry.rule, batch.delivery(self._unwired(batch)))))
        for batch in [b for b in self._orphans if b.due <= now]:
            self._orphans.remove(batch)
            if not self._to_judge(batch):
                fired.append((batch.due, batch.delivery(self._unwired(batch))))
        if not self._judge_wired:
            # Judging was turned off (or lost its model) with batches waiting for it: they go as a debounce would.
            for slot in self._slots.values():
                for waiting in (slot.held, slot.queued):
                    if waiting is not None:
                        reason = f"rule {slot.rule}: judge, run as a debounce ({self.judge_notice}), a batch of {_count(len(waiting.stimuli))}"
                        fired.append((now, Delivery(slot.rule, tuple(waiting.stimuli), tuple(waiting.addressed), reason, judged=True)))
                slot.held = slot.queued = None
        out.extend(d for _, d in sorted(fired, key=lambda pair: pair[0]))
        if self._self_wake is not None and self._self_wake.at <= now:
            wake, self._self_wake = self._self_wake, None
            reason = f"its own self-wake, set for {iso(wake.at)} when it chose not to reply"
            if out:
                # Due with something else: one turn, not a second one with nothing new after it.
                first = out[0]
                out[0] = Delivery(first.rule, first.stimuli, first.addressed, f"{first.reason}; and {reason}", True, wake.cause)
            else:
                out.append(Delivery(None, (), (), reason, self_wake=True, cause=wake.cause))
        return out

    def taken(self, ids: Iterable[int]) -> None:
        """A turn took these stimuli: they leave every batch and held delivery; a batch left empty is absorbed."""
        gone = set(ids)
        if not gone:
            return
        # A judge batch is not absorbed: it is judged after the turn, against what the turn left.
        for entry in self._debouncing:
            batch = entry.state.batch
            if batch is not None and isinstance(batch.behaviour, Debounce) and self._take(batch, gone):
                entry.state.batch = None
                self.absorbed += 1
        for batch in [b for b in self._orphans if isinstance(b.behaviour, Debounce)]:
            if self._take(batch, gone):
                self._orphans.remove(batch)
                self.absorbed += 1
        if self._sleep is not None:
            self._sleep.stimuli = [s for s in self._sleep.stimuli if s not in gone]
            self._sleep.addressed = [s for s in self._sleep.addressed if s not in gone]
        held = []
        for d in self._held:
            if d.judged:  # a judge's REPLY wakes the mind for its batch, whoever took the stimuli
                held.append(d)
                continue
            kept = tuple(s for s in d.stimuli if s not in gone)
            if kept or d.self_wake:
                held.append(Delivery(d.rule, kept, tuple(s for s in d.addressed if s not in gone), d.reason, d.self_wake, d.cause))
        self._held = held

    @staticmethod
    def _take(batch: Batch, gone: set[int]) -> bool:
        """Remove `gone` from `batch`; True if that left it empty."""
        batch.stimuli = [s for s in batch.stimuli if s not in gone]
        batch.addressed = [s for s in batch.addressed if s not in gone]
        return not batch.stimuli

    # holding -----------------------------------------------------------------------

    def hold(self, delivery: Delivery) -> None:
        """Keep a delivery that came while a turn runs or the mind is paused (at most HOLD_CAP stimuli, oldest dropped)."""
        self._held.append(delivery)
        over = self.held - HOLD_CAP
        if over <= 0:
            return
        self.held_dropped += over
        drop = set(sorted({s for d in self._held for s in d.stimuli})[:over])
        self._held = [
            Delivery(d.rule, tuple(s for s in d.stimuli if s not in drop), tuple(s for s in d.addressed if s not in drop),
                     d.reason, d.self_wake, d.cause, d.judged)
            for d in self._held
            if d.self_wake or d.judged or any(s not in drop for s in d.stimuli)
        ]

    @property
    def holding(self) -> bool:
        """A held delivery waits (a self-wake holds no stimuli, so `held` may be 0)."""
        return bool(self._held)

    @property
    def held(self) -> int:
        """Stimuli in held deliveries."""
        return len({s for d in self._held for s in d.stimuli})

    def release(self) -> Delivery | None:
        """The held deliveries merged into one (None if nothing is held)."""
        if not self._held:
            return None
        held, self._held = self._held, []
        if len(held) == 1:
            return held[0]
        stimuli = sorted({s for d in held for s in d.stimuli})
        addressed = sorted({s for d in held for s in d.addressed})
        reasons = list(dict.fromkeys(d.reason for d in held))
        shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
        # The rule named is the first that asked for a wake: the turn was owed from then.
        woke = next((d for d in held if d.rule is not None), held[0])
        self_wake = next((d for d in held if d.self_wake), None)
        return Delivery(
            woke.rule, tuple(stimuli), tuple(addressed), f"held while the mind was busy: {shown}",
            self_wake is not None, None if self_wake is None else self_wake.cause, any(d.judged for d in held),
        )

    # what is coming ------------------------------------------------------------------

    def upcoming_wakes(self, now: float, exclude: str | None = None) -> list[UpcomingWake]:
        """What will wake the mind with no new stimulus, soonest first (R1-6).

        Batches (a judge rule's as "maybe"), judge rules' calls in flight,
        held and queued batches ("maybe"), deliveries held for the running
        turn ("as soon as the running turn ends"), the self-wake, the sleep's
        end. `exclude`: the judge rule asking, whose own batch is the question.
        """
        wakes: list[UpcomingWake] = []
        end = self._sleep_end(now)
        if end is not None:
            wakes.append(UpcomingWake(end, "the end of its sleep"))
        # During a sleep, a batch or the self-wake waits for its end.
        for batch in self._batches():
            if batch.rule is not None and batch.rule == exclude:
                continue
            if isinstance(batch.behaviour, JudgeBehaviour) and self._judge_wired:
                what = f"a batch of {_count(len(batch.stimuli))} its judge will be asked about"
                wakes.append(UpcomingWake(max(batch.due, end or batch.due), what, batch.rule, maybe=True))
                continue
            what = f"a debounce batch of {_count(len(batch.stimuli))}"
            if batch.orphan:
                what += " (its rule has changed since)"
            elif batch.rule is None:
                what += " (the default, for stimuli no rule matched)"
            wakes.append(UpcomingWake(max(batch.due, end or batch.due), what, batch.rule))
        if self._self_wake is not None:
            wakes.append(UpcomingWake(max(self._self_wake.at, end or self._self_wake.at), "its own self-wake (skip_reply timer)"))
        for slot in self._slots.values():
            if slot.rule == exclude:
                continue
            if slot.judging is not None:
                wakes.append(UpcomingWake(now, f"a batch of {_count(len(slot.judging.stimuli))} its judge is deciding on now", slot.rule, True))
            for waiting, how in ((slot.held, "held for its judge"), (slot.queued, "queued for its judge")):
                if waiting is not None:
                    at = max(now, slot.refused_until or now, end or now)
                    wakes.append(UpcomingWake(at, f"a batch of {_count(len(waiting.stimuli))} {how}", slot.rule, True))
        if self._retry is not None:
            # A failed turn's retry is a wake already in motion (R1-6); during a sleep it waits for the end.
            at, count = self._retry
            wakes.append(UpcomingWake(max(at, end or at), f"the retry of a turn that failed ({_count(count)})"))
        if self._held:
            # Held while a turn runs, the mind is paused, or it sleeps: during a sleep they wait for its end.
            when = "when its sleep ends" if end is not None else "as soon as the running turn ends"
            wakes.append(UpcomingWake(end or now, f"{_count(self.held)} waiting to wake it {when}"))
        return sorted(wakes, key=lambda w: w.at)

    def _sleep_end(self, now: float) -> float | None:
        """When the sleep ends (now, if it was ended early), or None when the mind does not sleep."""
        if self._sleep is None:
            return None
        return now if self._sleep.ended is not None else self._sleep.until

    def _delivered_at(self, due: float, now: float) -> float:
        """When a batch due at `due` wakes the mind: during a sleep, not before its end."""
        end = self._sleep_end(now)
        return due if end is None else max(due, end)

    def status(self, now: float) -> GateStatus:
        """The gate now, as gate-status shows it: a pure read (what `now` is changes nothing the gate does next)."""
        if self._warnings is None:
            self._warnings = list(shadow_warnings(self._stored.rules, self._stored.default))
        return GateStatus(
            mind=self.mind,
            default=behaviour_data(self._stored.default),
            rules=[self._rule_status(e, now) for e in self._entries],
            sleeping=SleepStatus(self._sleep.until, self._sleep.note) if self.sleeping(now) and self._sleep else None,
            self_wake=SelfWakeStatus(self._self_wake.at, self._self_wake.cause) if self._self_wake else None,
            upcoming=self.upcoming_wakes(now),
            held=self.held,
            dropped=self.held_dropped,
            absorbed=self.absorbed,
            errors=list(self._stored.errors),
            notes=list(self._stored.notes),
            warnings=list(self._warnings),
            since=self.since if self.since is not None else now,
        )

    def _rule_status(self, entry: _Entry, now: float) -> RuleStatus:
        rule, state = entry.rule, entry.state
        assert rule is not None
        buckets: list[Bucket] = []
        if isinstance(rule.behaviour, RateLimit):
            limit = rule.behaviour
            # The most recently used keys, newest first; counted to `now` without touching the buckets.
            for key in list(reversed(state.buckets))[:SHOWN_BUCKETS]:
                bucket = state.buckets[key]
                tokens = min(float(limit.tokens), bucket.tokens + max(0.0, now - bucket.at) * 1000 / limit.refill_ms)
                buckets.append(Bucket(key, round(tokens, 2)))
        batch = state.batch
        return RuleStatus(
            name=rule.name,
            behaviour=behaviour_data(rule.behaviour),
            match=match_data(rule.match),
            passthrough=rule.passthrough,
            resets=list(rule.resets),
            matches=state.matches,
            last_match=state.last_match,
            pending=len(batch.stimuli) if batch else 0,
            next_delivery=self._delivered_at(batch.due, now) if batch else None,
            buckets=buckets,
            denials=state.denials,
            sampled=Sampled(state.seen, state.woke),
            judge=self._judge_status(rule.name, now) if isinstance(rule.behaviour, JudgeBehaviour) else None,
        )

    def _judge_status(self, name: str, now: float) -> JudgeRuleStatus:
        slot = self._slots.get(name) or JudgeSlot(name)
        notices = list(self.judge_notes)
        if not self._judge_wired:
            notices.append(f"runs as a debounce of its quiet period: {self.judge_notice}")
        if slot.fail_streak >= FAIL_STREAK:
            notices.append(f"the judge failed its last {slot.fail_streak} requests (is the judge model served?)")
        if slot.refused_until is not None and slot.refused_until > now:
            notices.append(f"judge calls refused until {iso(slot.refused_until)}: {slot.refusal}")
        last = slot.last
        read_total = slot.input_tokens + slot.cache_read + slot.cache_write
        return JudgeRuleStatus(
            verdicts=dict(slot.counts),
            last=None if last is None else JudgeVerdictStatus(
                at=last.at, verdict=last.verdict, reason=last.reason, woke=last.woke, superseded=last.superseded,
                input_tokens=last.input_tokens + last.cache_read + last.cache_write, cache_read=last.cache_read,
                output_tokens=last.output_tokens, call=last.call_id,
            ),
            judging=len(slot.judging.stimuli) if slot.judging else 0,
            held=len(slot.held.stimuli) if slot.held else 0,
            queued=len(slot.queued.stimuli) if slot.queued else 0,
            unanswered=len(slot.unanswered),
            dropped=slot.held_dropped + slot.queue_dropped,
            refused_until=slot.refused_until if slot.refused_until is not None and slot.refused_until > now else None,
            input_tokens=read_total,
            output_tokens=slot.output_tokens,
            cache_share=round(slot.cache_read / read_total, 4) if read_total else None,
            ratio=self.judge_ratio,
            notices=notices,
        )
