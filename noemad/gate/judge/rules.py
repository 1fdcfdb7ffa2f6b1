"""One gate's judge rules from a due batch to a verdict: their slots, the calls to start, what a verdict delivers.

A judge rule's batch is gathered as a debounce's (`noemad.gate.behaviours.judge`);
when due it comes here, to its rule's `JudgeSlot` (`slot`, which says the
timing rules), and the actor asks the judge (`to_judge`, `verdict`, `stop`).
Unwired (judging off, or no judge model), what waits goes as a debounce
would, and gate-status says why (`notice`).
"""

from __future__ import annotations

from collections.abc import Callable

from noemad.clock import iso
from noemad.gate.delivery import Delivery, count
from noemad.gate.judge.port import JudgeOutcome
from noemad.gate.judge.slot import FAIL_STREAK, REJUDGES, JudgedBatch, JudgeSlot, JudgeStart, Outcome, VerdictRecord
from noemad.gate.status import JudgeRuleStatus, JudgeVerdictStatus, UpcomingWake

__all__ = ["JudgeRules"]

OFF = "judging is off on this host ([gate.judge] enabled = false)"


def _record(
    outcome: JudgeOutcome, rule: str, verdict: Outcome, woke: bool, reason: str, stimuli: tuple[int, ...], now: float,
    superseded: bool = False, refused_until: float | None = None,
) -> VerdictRecord:
    """A verdict with the call it cites and its tokens."""
    return VerdictRecord(
        rule, verdict, woke, reason, stimuli, now, superseded, outcome.call_id, outcome.input_tokens,
        outcome.cache_read, outcome.cache_write, outcome.output_tokens, refused_until,
    )


class JudgeRules:
    """Every judge rule's slot in one mind's gate (kept by rule name: they outlive an edit), and how judging is wired."""

    def __init__(self) -> None:
        self._slots: dict[str, JudgeSlot] = {}
        self.wired = False
        self.notice: str | None = OFF  # why unwired
        self.notes: list[str] = []  # host notes for judge rules (a budget read at its least)
        self.ratio: float | None = None  # the calibrated chars-per-token of the judge's window (the actor keeps it)
        self._token = 0

    def wire(self, wired: bool, notice: str | None = None, notes: list[str] | None = None) -> None:
        """Whether judge rules are judged; unwired, they run as a debounce and `notice` says why."""
        self.wired = wired
        self.notice = None if wired else notice
        self.notes = list(notes or [])

    def fire(self, batch: JudgedBatch) -> None:
        """A judge rule's batch came due: to its slot, to be judged."""
        self._slot(batch.rule).fire(batch)

    def _slot(self, rule: str) -> JudgeSlot:
        slot = self._slots.get(rule)
        if slot is None:
            slot = self._slots[rule] = JudgeSlot(rule)
        return slot

    def forget(self, is_judge: Callable[[str], bool]) -> None:
        """A removed rule's records go with it once nothing of it waits."""
        for name in [n for n, slot in self._slots.items() if slot.empty and not is_judge(n)]:
            del self._slots[name]

    # calls -------------------------------------------------------------------------------

    def to_judge(self, now: float, instructions: Callable[[JudgedBatch], str | None], last_turn_failed: bool) -> list[JudgeStart]:
        """The judge calls to start now, one per rule at a time (the gate has checked the mind is free and awake)."""
        starts = []
        for slot in self._slots.values():
            if slot.ready(now):
                assert slot.held is not None
                self._token += 1
                starts.append(slot.start(self._token, instructions(slot.held), last_turn_failed))
        return starts

    def stop(self) -> list[str]:
        """Every call in flight is stopped, its batch held (no verdict). The rules stopped."""
        return [slot.rule for slot in self._slots.values() if slot.stop()]

    def judging(self) -> dict[str, int]:
        """The calls in flight: rule -> token."""
        return {slot.rule: slot.token for slot in self._slots.values() if slot.judging is not None}

    def turn_started(self) -> None:
        for slot in self._slots.values():
            slot.taken_by_turn()

    def turn_ended(self, completed: bool) -> None:
        for slot in self._slots.values():
            slot.turn_ended(completed)

    # verdicts ----------------------------------------------------------------------------

    def verdict(
        self, rule: str, token: int, outcome: JudgeOutcome, now: float, on_error: str
    ) -> tuple[Delivery | None, VerdictRecord | None]:
        """A judge call answered: the delivery it makes (before the rule's resets) and the record to trace.

        A call that was stopped is no verdict, unless it answered REPLY: then
        a turn overtook a REPLY (superseded, traced woke: false, not counted
        as a wake); it is judged again after the turn at most REJUDGES times,
        then delivered as it stands.
        """
        if outcome.ratio is not None:
            self.ratio = outcome.ratio
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

    @staticmethod
    def _reply(slot: JudgeSlot, batch: JudgedBatch, reason: str) -> Delivery:
        """The batch wakes the mind as a debounce would, with what queued behind it and what is unanswered (R1-2)."""
        if slot.queued is not None:
            batch.merge(slot.queued)
            slot.queued = None
        stimuli = tuple(sorted(set(batch.stimuli) | set(slot.unanswered)))
        if slot.unanswered:
            reason += f" ({count(len(slot.unanswered))} left unanswered by a failed turn)"
        slot.replied = stimuli
        return Delivery(slot.rule, stimuli, tuple(batch.addressed), reason, judged=True)

    # timers and what is coming ----------------------------------------------------------

    def unwired_due(self, now: float) -> list[Delivery]:
        """Judging was turned off (or lost its model) with batches waiting for it: they go as a debounce would."""
        out = []
        for slot in self._slots.values():
            for waiting in (slot.held, slot.queued):
                if waiting is not None:
                    reason = f"rule {slot.rule}: judge, run as a debounce ({self.notice}), a batch of {count(len(waiting.stimuli))}"
                    out.append(Delivery(slot.rule, tuple(waiting.stimuli), tuple(waiting.addressed), reason, judged=True))
            slot.held = slot.queued = None
        return out

    def retry_times(self, seen: float | None) -> list[float]:
        """A refused judge call is tried again when its hold ends (R1-1): a timer at the stated time.

        Only while it is still to come: once passed, the actor judges as soon as the mind is free (a turn's end
        or a resume), and a time already past here would fire the timer again at once for as long as a turn runs.
        """
        return [
            s.refused_until for s in self._slots.values()
            if s.held is not None and s.refused_until is not None and (seen is None or s.refused_until > seen)
        ]

    def upcoming(self, now: float, end: float | None, exclude: str | None) -> list[UpcomingWake]:
        """Calls in flight, held and queued batches ("maybe"); during a sleep, not before its `end`."""
        wakes: list[UpcomingWake] = []
        for slot in self._slots.values():
            if slot.rule == exclude:
                continue
            if slot.judging is not None:
                wakes.append(UpcomingWake(now, f"a batch of {count(len(slot.judging.stimuli))} its judge is deciding on now", slot.rule, True))
            for waiting, how in ((slot.held, "held for its judge"), (slot.queued, "queued for its judge")):
                if waiting is not None:
                    at = max(now, slot.refused_until or now, end or now)
                    wakes.append(UpcomingWake(at, f"a batch of {count(len(waiting.stimuli))} {how}", slot.rule, True))
        return wakes

    def status(self, name: str, now: float) -> JudgeRuleStatus:
        """A judge rule's judging, as gate-status shows it."""
        slot = self._slots.get(name) or JudgeSlot(name)
        notices = list(self.notes)
        if not self.wired:
            notices.append(f"runs as a debounce of its quiet period: {self.notice}")
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
            ratio=self.ratio,
            notices=notices,
        )
