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

Behaviours, each one's state a class in `noemad.gate.behaviours` behind one
protocol (offer, due, reset, status): `always` wakes now; `defer` never
wakes; `debounce` gathers a batch per rule that wakes once, `ms` after its
newest stimulus (each one pushes the time back); `rate_limit` is a token
bucket per key (full at first, a token back every `refill_ms`, counted
continuously); a `passive_sample` counter per key wakes for the 1st,
(every+1)th, ...

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
actor here (`hold`, `noemad.gate.held`) and go as one (`release`): at most
100 stimuli, oldest dropped and counted (they stay stored and in context;
only the delivery's list, which names the turn's parents, is capped).

`judge` rules batch as debounce does (`max_wait_ms` caps how long a batch
may be pushed back); a due batch goes to the rule's `JudgeSlot`
(`noemad.gate.judge.rules` keeps them; `slot` says their timing rules)
instead of waking the mind, and the actor asks the judge (`to_judge`, `verdict`, `stop_judging`).
A judge batch is not absorbed by a turn that takes its stimuli: it is
judged after that turn, against what the turn left. Unwired (judging off,
or no judge model), a judge rule runs as a debounce of its quiet period and
gate-status says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from noemad.clock import iso
from noemad.gate.batch import Batch
from noemad.gate.behaviours import BehaviourState, Offered, state_for
from noemad.gate.delivery import Decision, Delivery, count
from noemad.gate.held import HOLD_CAP, Held
from noemad.gate.judge.port import JudgeOutcome
from noemad.gate.judge.rules import JudgeRules
from noemad.gate.judge.slot import JudgedBatch, JudgeStart, VerdictRecord
from noemad.gate.status import GateStatus, RuleStatus, Sampled, SelfWakeStatus, SleepStatus, UpcomingWake
from noemad.rules.match import Facts, Matcher
from noemad.rules.probe import shadow_warnings
from noemad.rules.shape import Always, Behaviour, Rule, behaviour_data, match_data
from noemad.rules.table import StoredRules
from noemad.wake import Verdict

__all__ = ["HOLD_CAP", "Batch", "Counters", "Decision", "Delivery", "Gate", "UpcomingWake", "Verdict"]


@dataclass
class Counters:
    """A rule's counters for gate-status: kept while its name is, across an edit to its behaviour."""

    matches: int = 0
    last_match: float | None = None
    denials: int = 0
    seen: int = 0  # a passive_sample's: stimuli it sampled from
    woke: int = 0  # ... and those that woke the mind


@dataclass
class _Entry:
    rule: Rule | None  # None: the default
    behaviour: Behaviour
    matcher: Matcher | None
    state: BehaviourState
    counters: Counters = field(default_factory=Counters)

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


class Gate:
    """One mind's gate: its rules with their state, its sleep, its self-wake and what it holds."""

    def __init__(
        self, mind: str, rules: StoredRules, *, privileged: frozenset[str] = frozenset({"operator"}), since: float | None = None
    ) -> None:
        self.mind = mind
        self.privileged = privileged
        self._entries: list[_Entry] = []
        self._by_name: dict[str, _Entry] = {}
        self._gathering: list[_Entry] = []
        self._default: _Entry = _Entry(None, Always(), None, state_for(Always()))
        self._stored = StoredRules()
        self._warnings: list[str] | None = None  # worked out when first asked, for these rules
        self._orphans: list[Batch] = []
        self._sleep: _Sleep | None = None
        self._self_wake: _SelfWake | None = None
        self._retry: tuple[float, int] | None = None  # a failed turn's retry: when, and how many stimuli it takes
        self._held = Held()
        self._judges = JudgeRules()
        self.last_turn_failed = False  # the mind's newest turn failed before it answered (R1-2)
        self._seen = since  # the latest `now` the gate was told of
        self.since = since  # when the counters started (None until the gate first sees the time)
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
                state = state_for(rule.behaviour)
                if before is not None:  # an edit to its behaviour: what it held starts afresh, its counters go on
                    self._orphan(before.state)
            # A match compiles once (globs, RE2): an edit elsewhere in a list of 200 does not compile them all again.
            same = before is not None and before.rule is not None and before.rule.match == rule.match
            matcher = before.matcher if same and before is not None else Matcher(rule.match)
            counters = before.counters if before is not None else Counters()
            entries.append(_Entry(rule, rule.behaviour, matcher, state, counters))
        for gone in old.values():
            self._orphan(gone.state)
        if self._default.behaviour != rules.default:
            self._orphan(self._default.state)
            self._default = _Entry(None, rules.default, None, state_for(rules.default))
        self._entries = entries
        self._by_name = {e.rule.name: e for e in entries if e.rule is not None}
        # Only these can hold a batch: next_due (asked after every stimulus) looks at them alone.
        self._gathering = [e for e in (*entries, self._default) if e.state.gathers]
        self._stored = rules
        self._warnings = None
        self._judges.forget(self._is_judge)

    def _is_judge(self, name: str) -> bool:
        entry = self._by_name.get(name)
        return entry is not None and entry.state.judge is not None

    def _orphan(self, state: BehaviourState) -> None:
        batch = state.reset()  # the state is left behind; only its batch goes on
        if batch is not None and batch.stimuli:
            batch.orphan = True
            self._orphans.append(batch)

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
        passed: list[str] = []
        for entry in self._entries:
            assert entry.matcher is not None
            if not entry.matcher.test(facts):
                continue
            decision, delivery = self._apply(entry, event_id, facts, now)
            if decision.verdict is Verdict.DENY and entry.rule is not None and entry.rule.passthrough:
                passed.append(entry.rule.name)
                continue
            return self._passed_on(decision, passed), delivery
        decision, delivery = self._apply(self._default, event_id, facts, now)
        return self._passed_on(decision, passed), delivery

    def _passed_on(self, decision: Decision, passed: list[str]) -> Decision:
        if not passed:
            return decision
        names = ", ".join(passed)
        return Decision(decision.verdict, decision.rule, f"{decision.reason} (passed on by {names}, which denied it)", decision.due)

    def _apply(self, entry: _Entry, event_id: int, facts: Facts, now: float) -> tuple[Decision, Delivery | None]:
        """What `entry`'s behaviour does with a stimulus it matched (its counters move)."""
        counters, name = entry.counters, entry.name
        counters.matches += 1
        counters.last_match = now
        answer = entry.state.offer(Offered(event_id, facts, name, now, self._judges.wired))
        if answer.verdict is Verdict.DENY:
            counters.denials += 1
        if answer.sampled is not None:
            counters.seen += 1
            counters.woke += answer.sampled
        decision = Decision(answer.verdict, name, answer.reason, answer.due)
        if answer.verdict is not Verdict.WAKE:
            return decision, None
        # A rule wakes the mind now: its resets apply, their cancelled batches join the delivery.
        said = (event_id,) if facts.addressed else ()
        return decision, self._resets(entry.rule, Delivery(name, (event_id,), said, answer.reason))

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

    def _sleep_end(self, now: float) -> float | None:
        """When the sleep ends (now, if it was ended early), or None when the mind does not sleep."""
        if self._sleep is None:
            return None
        return now if self._sleep.ended is not None else self._sleep.until

    # self-wake and turns -----------------------------------------------------------

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
        self._judges.turn_started()
        return had

    def turn_ended(self, completed: bool) -> None:
        """The mind's turn ended: completed (it answered, skipped, or had nothing to answer) or failed (R1-2)."""
        self.last_turn_failed = not completed
        self._judges.turn_ended(completed)

    # judging -------------------------------------------------------------------------

    def set_judging(self, wired: bool, notice: str | None = None, notes: list[str] | None = None) -> None:
        """Whether judge rules are judged; unwired, they run as a debounce and `notice` says why."""
        self._judges.wire(wired, notice, notes)

    @property
    def judge_wired(self) -> bool:
        return self._judges.wired

    @property
    def judge_ratio(self) -> float | None:
        """The calibrated chars-per-token of the judge's window (the actor keeps it)."""
        return self._judges.ratio

    @judge_ratio.setter
    def judge_ratio(self, ratio: float | None) -> None:
        self._judges.ratio = ratio

    def to_judge(self, now: float) -> list[JudgeStart]:
        """The judge calls to start now (the actor has checked the mind is free): one per rule at a time."""
        self._saw(now)
        if not self._judges.wired or self.sleeping(now):
            return []
        return self._judges.to_judge(now, self._instructions, self.last_turn_failed)

    def _instructions(self, batch: JudgedBatch) -> str | None:
        """R1-5: the rule as it is when the judge is asked, while it is a judge rule; as it was once it is not."""
        entry = self._by_name.get(batch.rule)
        judge = entry.state.judge if entry is not None else None
        return (judge or batch.behaviour).instructions

    def stop_judging(self) -> list[str]:
        """A turn started or the mind was paused: every call in flight is stopped, its batch held (no verdict). The rules stopped."""
        return self._judges.stop()

    def judging(self) -> dict[str, int]:
        """The calls in flight: rule -> token."""
        return self._judges.judging()

    def verdict(
        self, rule: str, token: int, outcome: JudgeOutcome, now: float, on_error: str = "wake"
    ) -> tuple[Delivery | None, VerdictRecord | None]:
        """A judge call answered: the delivery it makes (REPLY, or a failure under on_error = "wake") and the record to trace.

        A stopped call is no verdict but a superseded REPLY (`JudgeRules.verdict`
        says how). A REPLY applies its rule's resets. While the mind sleeps the
        delivery is held, not returned: it goes when the mind wakes (a verdict
        never wakes a sleeping mind).
        """
        self._saw(now)
        delivery, record = self._judges.verdict(rule, token, outcome, now, on_error)
        if delivery is None:
            return None, record
        entry = self._by_name.get(rule)
        delivery = self._resets(entry.rule if entry is not None else None, delivery)
        if self.sleeping(now):
            self.hold(delivery)
            return None, record
        return delivery, record

    # timers ------------------------------------------------------------------------

    def next_due(self) -> float | None:
        """When `due` next has something to deliver (None: nothing is scheduled)."""
        if self._sleep is not None:
            # During a sleep nothing but its end (or a privileged author) wakes the mind.
            return self._seen if self._sleep.ended is not None and self._seen is not None else self._sleep.until
        times = [b.due for b in self._batches()]
        if self._self_wake is not None:
            times.append(self._self_wake.at)
        times += self._judges.retry_times(self._seen)
        return min(times, default=None)

    def _batches(self) -> list[Batch]:
        pending = [e.state.batch for e in self._gathering if e.state.batch is not None]
        return [*pending, *self._orphans]

    def _fired(self, batch: Batch) -> Delivery | None:
        """A due batch: to its rule's judge (None), or the delivery it makes."""
        judged = batch.judged(self._judges.wired)
        if judged is not None:
            self._judges.fire(judged)
            return None
        return batch.delivery(self._judges.notice)

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
        for entry in self._gathering:
            batch = entry.state.due(now)
            if batch is not None and (delivery := self._fired(batch)) is not None:
                fired.append((batch.due, self._resets(entry.rule, delivery)))
        for batch in [b for b in self._orphans if b.due <= now]:
            self._orphans.remove(batch)
            if (delivery := self._fired(batch)) is not None:
                fired.append((batch.due, delivery))
        if not self._judges.wired:
            fired += [(now, d) for d in self._judges.unwired_due(now)]
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
        # A judge batch is not absorbed (`Batch.take`): it is judged after the turn, against what the turn left.
        for entry in self._gathering:
            batch = entry.state.batch
            if batch is not None and batch.take(gone):
                entry.state.reset()  # absorbed: the batch is gone, nothing else of the state is
                self.absorbed += 1
        for batch in [b for b in self._orphans if b.take(gone)]:
            self._orphans.remove(batch)
            self.absorbed += 1
        if self._sleep is not None:
            self._sleep.stimuli = [s for s in self._sleep.stimuli if s not in gone]
            self._sleep.addressed = [s for s in self._sleep.addressed if s not in gone]
        self._held.taken(gone)

    # holding -----------------------------------------------------------------------

    def hold(self, delivery: Delivery) -> None:
        """Keep a delivery that came while a turn runs or the mind is paused (at most HOLD_CAP stimuli, oldest dropped)."""
        self._held.hold(delivery)

    @property
    def holding(self) -> bool:
        """A held delivery waits (a self-wake holds no stimuli, so `held` may be 0)."""
        return bool(self._held)

    @property
    def held(self) -> int:
        """Stimuli in held deliveries."""
        return self._held.count

    def release(self) -> Delivery | None:
        """The held deliveries merged into one (None if nothing is held)."""
        return self._held.release()

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
            if batch.rule is None or batch.rule != exclude:
                wakes.append(batch.upcoming(self._judges.wired, max(batch.due, end or batch.due)))
        if self._self_wake is not None:
            wakes.append(UpcomingWake(max(self._self_wake.at, end or self._self_wake.at), "its own self-wake (skip_reply timer)"))
        wakes += self._judges.upcoming(now, end, exclude)
        if self._retry is not None:
            # A failed turn's retry is a wake already in motion (R1-6); during a sleep it waits for the end.
            at, stimuli = self._retry
            wakes.append(UpcomingWake(max(at, end or at), f"the retry of a turn that failed ({count(stimuli)})"))
        if self._held:
            # Held while a turn runs, the mind is paused, or it sleeps: during a sleep they wait for its end.
            when = "when its sleep ends" if end is not None else "as soon as the running turn ends"
            wakes.append(UpcomingWake(end or now, f"{count(self.held)} waiting to wake it {when}"))
        return sorted(wakes, key=lambda w: w.at)

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
            dropped=self._held.dropped,
            absorbed=self.absorbed,
            errors=list(self._stored.errors),
            notes=list(self._stored.notes),
            warnings=list(self._warnings),
            since=self.since if self.since is not None else now,
        )

    def _rule_status(self, entry: _Entry, now: float) -> RuleStatus:
        rule, counters = entry.rule, entry.counters
        assert rule is not None
        view = entry.state.status(now)
        batch = view.batch
        end = self._sleep_end(now)
        return RuleStatus(
            name=rule.name,
            behaviour=behaviour_data(rule.behaviour),
            match=match_data(rule.match),
            passthrough=rule.passthrough,
            resets=list(rule.resets),
            matches=counters.matches,
            last_match=counters.last_match,
            pending=len(batch.stimuli) if batch else 0,
            # During a sleep a batch wakes the mind at its end, not before.
            next_delivery=(batch.due if end is None else max(batch.due, end)) if batch else None,
            buckets=view.buckets,
            denials=counters.denials,
            sampled=Sampled(counters.seen, counters.woke),
            judge=self._judges.status(rule.name, now) if entry.state.judge is not None else None,
        )
