"""A judge rule's timing in the gate's state machine, on a hand-driven clock.

Pure and in memory, as tests/test_gate_engine.py: a `Gate` with judge rules
read by the one validator (with judging on), its judge verdicts given by
hand. What is asserted is what the mind and its operator see: which batch a
judge call is asked about and with which instructions, whether a verdict
wakes the mind and with what, what is held, queued or dropped, what
gate-status and the upcoming wakes say.
"""

from __future__ import annotations

from typing import Any

from noemad.gate.engine import Gate
from noemad.gate.judge.slot import JUDGE_CAP, JudgeStart
from noemad.gate.judge.port import JudgeOutcome
from noemad.rules.match import Facts
from noemad.rules.shape import Always, read_rule
from noemad.rules.table import StoredRules

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def judge_rule(name: str = "room", debounce_ms: int = 2000, **params: Any) -> dict[str, Any]:
    return {"name": name, "match": {"channel": "discord:*"}, "behaviour": {"judge": {"debounce_ms": debounce_ms, **params}}}


def stored(*bodies: dict[str, Any]) -> StoredRules:
    return StoredRules(tuple(read_rule(b, judge=True).rule for b in bodies), Always())


def wired(*bodies: dict[str, Any]) -> Gate:
    gate = Gate("ada", stored(*bodies))
    gate.set_judging(True)
    return gate


def said(text: str = "lunch?", *flags: str, channel: str = "discord:g:general") -> Facts:
    return Facts("message", channel, "carol", text, frozenset(flags))


REPLY = JudgeOutcome("reply", "asked directly")
WAIT = JudgeOutcome("wait", "banter between others")
FAILED = JudgeOutcome(None, "timed out after 20 s", failed=True)


def fire(gate: Gate, ids: range | list[int], at: float = T0, quiet: float = 2.0) -> list[JudgeStart]:
    """Offer `ids` at `at`, let the batch come due, and return the judge calls that start."""
    for i in ids:
        gate.offer(i, said(), at)
    assert gate.due(at + quiet) == []  # a judge batch wakes nothing by itself
    return gate.to_judge(at + quiet)


def test_a_due_batch_goes_to_the_judge_and_reply_wakes_the_mind_with_it() -> None:
    gate = wired(judge_rule(instructions="wake me when asked"))
    gate.offer(1, said(), T0)
    gate.offer(2, said("ada, are you around?", "mention"), T0 + 1)
    assert gate.due(T0 + 2.9) == [] and gate.to_judge(T0 + 2.9) == []  # the second pushed the quiet period back
    [start] = fire(gate, [], at=T0 + 1)
    assert (start.batch, start.addressed, start.instructions) == ((1, 2), (2,), "wake me when asked")
    assert gate.to_judge(T0 + 3) == []  # one request per rule at a time
    delivery, record = gate.verdict("room", start.token, REPLY, T0 + 4)
    assert delivery is not None and delivery.stimuli == (1, 2) and delivery.addressed == (2,) and delivery.judged
    assert record is not None and (record.verdict, record.woke) == ("reply", True)
    status = gate.status(T0 + 4).rules[0].judge
    assert status is not None and status.verdicts["reply"] == 1 and status.last is not None
    assert status.last.reason == "asked directly"


def test_wait_wakes_nothing_and_a_batch_that_fired_while_judging_is_judged_afresh() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1, 2])
    [] = fire(gate, [3], at=T0 + 3)  # fires while the judge decides: queued, not a second call
    assert gate.status(T0 + 5).rules[0].judge.queued == 1  # type: ignore[union-attr]
    delivery, record = gate.verdict("room", start.token, WAIT, T0 + 6)
    assert delivery is None and record is not None and not record.woke
    [again] = gate.to_judge(T0 + 6)
    assert again.batch == (3,)


def test_a_batch_that_fired_while_judging_goes_with_a_reply() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1])
    fire(gate, [2], at=T0 + 3)
    delivery, _ = gate.verdict("room", start.token, REPLY, T0 + 6)
    assert delivery is not None and delivery.stimuli == (1, 2)
    assert gate.to_judge(T0 + 6) == []


def test_a_queue_beside_a_full_batch_keeps_its_newest_and_counts_the_drops() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, range(1, 101))
    fire(gate, range(101, 251), at=T0 + 3)  # 150 fire while the first 100 are judged
    status = gate.status(T0 + 6).rules[0].judge
    assert status is not None and (status.judging, status.queued, status.dropped) == (100, JUDGE_CAP, 50)
    gate.verdict("room", start.token, WAIT, T0 + 6)
    [again] = gate.to_judge(T0 + 6)
    assert again.batch == tuple(range(151, 251))  # the newest kept: they may hold the question


def test_a_call_stopped_by_a_turn_gives_no_verdict_and_its_batch_and_queue_are_judged_once_after() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1, 2])
    fire(gate, [3], at=T0 + 3)
    gate.turn_started(T0 + 4)
    assert gate.stop_judging() == ["room"]
    gate.taken([1, 2, 3])  # the turn takes every stimulus; the judge batch stays to be judged after it
    assert gate.verdict("room", start.token, WAIT, T0 + 5) == (None, None)  # a late answer of the stopped call: nothing
    gate.turn_ended(True)
    [again] = gate.to_judge(T0 + 6)
    assert again.batch == (1, 2, 3)
    status = gate.status(T0 + 6).rules[0].judge
    assert status is not None and status.verdicts == {"reply": 0, "wait": 0, "failed": 0, "refused": 0, "superseded": 0}


def test_a_reply_overtaken_by_a_turn_is_traced_not_woken_and_rejudged_at_most_twice_then_delivered() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1])
    for n in (1, 2):
        gate.turn_started(T0 + n * 10)
        gate.stop_judging()
        delivery, record = gate.verdict("room", start.token, REPLY, T0 + n * 10 + 1)  # the stopped call answered anyway
        assert delivery is None and record is not None and (record.superseded, record.woke) == (True, False)
        gate.turn_ended(True)
        [start] = gate.to_judge(T0 + n * 10 + 2)
    gate.turn_started(T0 + 30)
    gate.stop_judging()
    delivery, record = gate.verdict("room", start.token, REPLY, T0 + 31)
    assert delivery is not None and delivery.stimuli == (1,)  # the third overtaken REPLY is delivered as it stands
    assert record is not None and not record.woke
    status = gate.status(T0 + 31).rules[0].judge
    assert status is not None and status.verdicts["superseded"] == 3 and status.verdicts["reply"] == 0


def test_a_refused_call_holds_its_batch_until_the_hold_ends_under_skip() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1])
    until = T0 + 300
    refused = JudgeOutcome(None, "refused", refused_until=until, refusal="the judge model is held after a 429")
    delivery, record = gate.verdict("room", start.token, refused, T0 + 3, on_error="skip")
    assert delivery is None and record is not None and (record.verdict, record.refused_until) == ("refused", until)
    status = gate.status(T0 + 10).rules[0].judge
    assert status is not None and status.held == 1 and status.verdicts["refused"] == 1
    assert "judge calls refused until 2026-01-01T00:05:00.000Z: the judge model is held after a 429" in status.notices
    assert gate.next_due() == until  # a timer at the stated time
    assert gate.to_judge(until - 1) == []
    [again] = gate.to_judge(until)
    delivery, _ = gate.verdict("room", again.token, REPLY, until + 1, on_error="skip")
    assert delivery is not None and delivery.stimuli == (1,)


def test_a_failed_call_wakes_the_mind_unless_skip_and_three_in_a_row_are_named() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1])
    delivery, record = gate.verdict("room", start.token, FAILED, T0 + 3)
    assert delivery is not None and record is not None and (record.verdict, record.woke) == ("failed", True)
    for n, i in enumerate((2, 3), 1):
        [start] = fire(gate, [i], at=T0 + n * 10)
        delivery, record = gate.verdict("room", start.token, FAILED, T0 + n * 10 + 3, on_error="skip")
        assert delivery is None and record is not None and not record.woke
    status = gate.status(T0 + 40).rules[0].judge
    assert status is not None and status.verdicts["failed"] == 3
    assert "the judge failed its last 3 requests (is the judge model served?)" in status.notices


def test_a_reply_whose_turn_failed_is_folded_into_the_next_judged_batch_as_unanswered() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1])
    delivery, _ = gate.verdict("room", start.token, REPLY, T0 + 3)
    assert delivery is not None
    gate.turn_started(T0 + 3)
    gate.taken([1])
    gate.turn_ended(False)  # reply_failed
    [start] = fire(gate, [2], at=T0 + 10)
    assert (start.batch, start.unanswered, start.last_turn_failed) == ((1, 2), (1,), True)
    gate.verdict("room", start.token, WAIT, T0 + 13)
    gate.turn_started(T0 + 20)
    gate.turn_ended(True)  # the next completed turn saw them
    [start] = fire(gate, [3], at=T0 + 30)
    assert (start.batch, start.unanswered, start.last_turn_failed) == ((3,), (), False)


def test_a_rule_edited_while_its_batch_waits_is_judged_as_it_is_and_a_removed_one_as_it_was() -> None:
    gate = wired(judge_rule(instructions="old words"))
    for i in (1, 2):
        gate.offer(i, said(), T0)
    gate.set_rules(stored(judge_rule(instructions="new words")))  # outside any turn, before the batch is due
    gate.due(T0 + 2)
    [start] = gate.to_judge(T0 + 2)
    assert start.instructions == "new words" and start.batch == (1, 2)
    gate.verdict("room", start.token, WAIT, T0 + 3)
    gate.offer(3, said(), T0 + 10)
    gate.set_rules(stored())  # removed: its batch is still judged, by the rule as it was
    gate.due(T0 + 12)
    [start] = gate.to_judge(T0 + 12)
    assert start.instructions == "new words" and start.batch == (3,)


def test_max_wait_judges_a_batch_by_then_while_stimuli_keep_coming() -> None:
    gate = wired(judge_rule(debounce_ms=2000, max_wait_ms=5000))
    for second in range(0, 5):
        gate.offer(second + 1, said(), T0 + second)
        gate.due(T0 + second)
        assert gate.to_judge(T0 + second) == []
    assert gate.next_due() == T0 + 5
    gate.due(T0 + 5)
    [start] = gate.to_judge(T0 + 5)
    assert start.batch == (1, 2, 3, 4, 5)


def test_unwired_a_judge_rule_runs_as_a_debounce_and_says_why() -> None:
    gate = Gate("ada", stored(judge_rule()))
    gate.set_judging(False, "no judge model is configured")
    gate.offer(1, said(), T0)
    [delivery] = gate.due(T0 + 2)
    assert delivery.stimuli == (1,) and "judge, run as a debounce of 2000 ms (no judge model is configured)" in delivery.reason
    status = gate.status(T0 + 2).rules[0].judge
    assert status is not None and status.notices == ["runs as a debounce of its quiet period: no judge model is configured"]


def test_upcoming_wakes_list_other_rules_judging_held_and_queued_as_maybe_and_held_deliveries() -> None:
    gate = wired(judge_rule("room"), {**judge_rule("ops"), "match": {"channel": "irc:*"}})
    gate.offer(1, said(), T0)
    gate.offer(2, said(channel="irc:#ops"), T0)
    gate.due(T0 + 2)
    starts = {s.rule: s for s in gate.to_judge(T0 + 2)}
    assert set(starts) == {"room", "ops"}
    upcoming = gate.upcoming_wakes(T0 + 2, exclude="ops")
    assert [(w.what, w.maybe) for w in upcoming] == [("a batch of 1 stimulus its judge is deciding on now", True)]
    gate.offer(3, said(), T0 + 3)  # a new batch pending on room
    from noemad.gate.engine import Delivery

    gate.hold(Delivery(None, (9,), (), "rule dms: always wakes the mind"))
    whats = [w.what for w in gate.upcoming_wakes(T0 + 3, exclude="ops")]
    assert "1 stimulus waiting to wake it as soon as the running turn ends" in whats
    assert "a batch of 1 stimulus its judge will be asked about" in whats


def test_a_verdict_reached_while_the_mind_sleeps_is_held_and_goes_when_it_wakes() -> None:
    gate = wired(judge_rule())
    [start] = fire(gate, [1])
    gate.sleep(T0 + 3600, "night")
    delivery, record = gate.verdict("room", start.token, REPLY, T0 + 3)
    assert delivery is None and record is not None and record.verdict == "reply"
    assert gate.due(T0 + 10) == [] and gate.held == 1
    status = gate.status(T0 + 10)
    assert status.sleeping is not None and status.held == 1
    [held] = [w for w in status.upcoming if "waiting to wake it" in w.what]
    assert (held.at, held.what) == (T0 + 3600, "1 stimulus waiting to wake it when its sleep ends")
    failed_gate = wired(judge_rule())
    [start] = fire(failed_gate, [1])
    failed_gate.sleep(T0 + 3600, None)
    assert failed_gate.verdict("room", start.token, FAILED, T0 + 3, on_error="wake")[0] is None
    assert failed_gate.held == 1


def test_a_wake_names_its_rule_once_in_gate_status_and_in_the_judges_if_you_wait() -> None:
    from rich.console import Console

    from noemactl.gate_view import gate as render_gate
    from noemad.gate.judge.prompt import render_if_you_wait
    from noemad.wire import dump

    gate = wired(judge_rule("room"), {**judge_rule("ops"), "match": {"channel": "irc:*"}})
    gate.offer(1, said(), T0)
    assert gate.due(T0 + 2) == []  # room's batch is held for its judge: no call started yet
    [held] = gate.upcoming_wakes(T0 + 2, exclude="ops")
    assert (held.what, held.rule, held.maybe) == ("a batch of 1 stimulus held for its judge", "room", True)
    told = render_if_you_wait("ada", [held], T0 + 2)
    assert "a batch of 1 stimulus held for its judge (rule room)\n" in told and told.count("rule room") == 1
    console = Console(width=200, record=True)
    for part in render_gate(dump(gate.status(T0 + 2))):
        console.print(part)
    shown = console.export_text()
    assert "a batch of 1 stimulus held for its judge (rule room) (maybe)" in shown and shown.count("(rule room)") == 1


def test_during_a_sleep_a_batchs_next_delivery_is_the_sleeps_end_not_a_time_past() -> None:
    gate = Gate("ada", StoredRules(tuple(read_rule({"name": "ambient", "match": {}, "behaviour": {"debounce": {"ms": 2000}}}).rule for _ in [0]), Always()))
    gate.offer(1, said(), T0)
    gate.sleep(T0 + 600, None)
    [rule] = gate.status(T0 + 60).rules
    assert rule.pending == 1 and rule.next_delivery == T0 + 600
    assert [w.at for w in gate.upcoming_wakes(T0 + 60) if "debounce" in w.what] == [T0 + 600]


def test_a_failed_turns_retry_is_an_upcoming_wake_until_a_turn_takes_its_stimuli() -> None:
    gate = wired(judge_rule())
    gate.set_retry(T0 + 5, 2)
    assert [(w.at, w.what, w.maybe) for w in gate.upcoming_wakes(T0)] == [(T0 + 5, "the retry of a turn that failed (2 stimuli)", False)]
    gate.sleep(T0 + 60, None)
    assert [w.at for w in gate.upcoming_wakes(T0) if "retry" in w.what] == [T0 + 60]
    gate.wake_up(T0 + 1)
    gate.due(T0 + 1)
    gate.turn_started(T0 + 1)
    assert [w for w in gate.upcoming_wakes(T0 + 1) if "retry" in w.what] == []


# --- reading a judge rule ------------------------------------------------------------------------

import pytest  # noqa: E402

from noemad.config.files import parse_config  # noqa: E402
from noemad.errors import ConfigError, RuleRefused  # noqa: E402
from noemad.rules.shape import BEHAVIOUR_KINDS, JudgeBehaviour  # noqa: E402


def test_judge_is_the_last_kind_and_reads_with_its_bounds_clamped_and_noted() -> None:
    assert BEHAVIOUR_KINDS[-1] == "judge"
    read = read_rule(judge_rule(debounce_ms=50, max_wait_ms=10**9, instructions="wake me when asked"), judge=True)
    assert read.rule.behaviour == JudgeBehaviour(100, 3_600_000, "wake me when asked")
    assert read.notes == (
        "rule 'room': behaviour.judge.debounce_ms 50 is below the least allowed; read as 100 ms",
        "rule 'room': behaviour.judge.max_wait_ms 1000000000 is above the most allowed; read as 3600000 ms",
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({**judge_rule(), "passthrough": True}, "passthrough is only for rate_limit and passive_sample"),
        (judge_rule(instructions="x" * 4001), "instructions is 4001 characters; at most 4000"),
        ({"name": "room", "behaviour": {"judge": {"max_wait_ms": 5000}}}, "needs debounce_ms"),
        ({"name": "room", "behaviour": {"judge": {"debounce_ms": 2000, "wait": 1}}}, "unknown key 'wait'"),
    ],
)
def test_a_judge_rule_of_bad_shape_is_refused_with_a_sentence(body: dict[str, Any], says: str) -> None:
    with pytest.raises(RuleRefused) as refused:
        read_rule(body, judge=True)
    assert says in refused.value.detail


def test_without_judging_a_judge_rule_is_refused_saying_what_turns_judging_on_and_no_other_sentence_names_the_judge() -> None:
    for body in (judge_rule(), {"name": "room", "behaviour": "judge"}):
        with pytest.raises(RuleRefused) as refused:
            read_rule(body)
        assert refused.value.detail.startswith(
            "rule 'room': behaviour: judge rules need judging, which is off on this noemad; set [gate.judge] enabled = true"
            " in noemad.toml (with a judge model in [models]) and reload it, or use a debounce here"
        )
    with pytest.raises(RuleRefused) as other:
        read_rule({"name": "x", "behaviour": "sometimes"})
    assert "judge" not in other.value.detail


def test_the_config_seeds_a_judge_rule_only_with_judging_on() -> None:
    table = '[[minds.ada.gate.rules]]\nname = "room"\nbehaviour = { judge = { debounce_ms = 2000 } }\n'
    with pytest.raises(ConfigError) as refused:
        parse_config(table, "noemad.toml")
    assert "a judge rule needs [gate.judge] enabled = true" in str(refused.value)
    loaded = parse_config("[gate.judge]\nenabled = true\nmax_input_tokens = 1000\n" + table, "noemad.toml")
    assert loaded.config.gate.judge.input_budget == 4000  # read at its least, never the default
    [read], _, _ = loaded.config.minds["ada"].gate.read()  # type: ignore[union-attr]
    assert read.rule.behaviour == JudgeBehaviour(2000)
