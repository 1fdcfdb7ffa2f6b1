"""The gate's state machine: when stored stimuli wake a mind, and the sentence that says why.

Pure and in memory: every test builds a `Gate` from rules in their one JSON
shape (read by `read_rule`, as every way in reads them) and drives `now` by
hand. What is asserted is what the mind and its operator see: whether a
turn runs now, later or not at all, which stimuli it is woken with, the
reason the timeline shows, and what gate-status reports.
"""

from __future__ import annotations

from typing import Any

from noemad.gate.engine import HOLD_CAP, Decision, Delivery, Gate, Verdict
from noemad.rules.match import Facts
from noemad.rules.shape import Always, Behaviour, Debounce, read_behaviour, read_rule
from noemad.rules.table import StoredRules
from noemad.wire import dump

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def rules(*bodies: dict[str, Any], default: Behaviour | None = None, errors: tuple[str, ...] = (), notes: tuple[str, ...] = ()) -> StoredRules:
    return StoredRules(tuple(read_rule(b).rule for b in bodies), default or Always(), errors, notes)


def rule(name: str, behaviour: Any, **match: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "match": match, "behaviour": behaviour}
    return body


def said(author: str = "alice", text: str = "hello", channel: str = "discord:g:general", *flags: str, kind: str = "message") -> Facts:
    return Facts(kind, channel, author, text, frozenset(flags))


DM = said("alice", "are you there?", "discord:dm:alice", "dm")
MENTION = said("bob", "ada, look", "discord:g:general", "mention")
AMBIENT = said("carol", "lunch?")
BOT = said("ci-bot", "build 42 green", "discord:g:builds", "from_bot")
OBSERVED = said("ci", "disk 91% full", "host:db1", kind="observation")


def test_a_mind_with_no_rules_wakes_for_every_stimulus_by_the_default() -> None:
    gate = Gate("ada", rules())
    decision, delivery = gate.offer(1, AMBIENT, T0)
    assert decision == Decision(Verdict.WAKE, None, "the default (no rule matched): always wakes the mind")
    assert delivery == Delivery(None, (1,), (), decision.reason)


def test_the_first_matching_rule_decides_and_its_name_is_in_the_reason() -> None:
    gate = Gate("ada", rules(rule("dms", "always", flags=["dm"]), rule("quiet", "defer", kinds=["message"])))
    decision, delivery = gate.offer(1, DM, T0)
    assert (decision.verdict, decision.rule) == (Verdict.WAKE, "dms")
    assert delivery is not None and delivery.addressed == (1,) and delivery.reason == "rule dms: always wakes the mind"
    decision, delivery = gate.offer(2, AMBIENT, T0)
    assert decision == Decision(Verdict.DEFER, "quiet", "rule quiet: defer, stored for the next turn without waking the mind")
    assert delivery is None and gate.next_due() is None


def test_a_debounce_batch_wakes_once_after_the_quiet_period_each_stimulus_pushes_back() -> None:
    gate = Gate("ada", rules(rule("ambient", {"debounce": {"ms": 2000}}, kinds=["message"])))
    first, _ = gate.offer(1, AMBIENT, T0)
    assert first.verdict is Verdict.BATCH and first.due == T0 + 2
    assert first.reason == "rule ambient: debounce 2000 ms, due at 2026-01-01T00:00:02.000Z (1 stimulus in the batch)"
    gate.offer(2, MENTION, T0 + 1.5)
    third, _ = gate.offer(3, AMBIENT, T0 + 3.0)  # 1.5 s after the second: the first due time never came
    assert third.due == T0 + 5.0 and "3 stimuli in the batch" in third.reason
    assert gate.due(T0 + 4.9) == [] and gate.next_due() == T0 + 5.0
    [delivery] = gate.due(T0 + 5.0)
    assert delivery == Delivery("ambient", (1, 2, 3), (2,), "rule ambient: debounce 2000 ms, a batch of 3 stimuli after 2000 ms quiet")
    assert gate.due(T0 + 60) == [] and gate.next_due() is None
    # A new stimulus starts a new batch.
    assert gate.offer(4, AMBIENT, T0 + 61)[0].due == T0 + 63


def test_each_debounce_rule_gathers_its_own_batch() -> None:
    gate = Gate("ada", rules(rule("bots", {"debounce": {"ms": 10000}}, flags=["from_bot"]), rule("talk", {"debounce": {"ms": 1000}})))
    gate.offer(1, BOT, T0)
    gate.offer(2, AMBIENT, T0)
    gate.offer(3, BOT, T0 + 0.5)
    assert [(d.rule, d.stimuli) for d in gate.due(T0 + 1)] == [("talk", (2,))]
    assert [(d.rule, d.stimuli) for d in gate.due(T0 + 10.5)] == [("bots", (1, 3))]


def test_a_rate_limit_wakes_while_tokens_last_refills_with_time_and_keeps_a_bucket_per_key() -> None:
    gate = Gate("ada", rules(rule("limit", {"rate_limit": {"tokens": 2, "refill_ms": 1000, "key_by": "author"}})))
    verdicts = [gate.offer(i, AMBIENT, T0)[0].verdict for i in (1, 2, 3)]
    assert verdicts == [Verdict.WAKE, Verdict.WAKE, Verdict.DENY]
    denied = gate.offer(4, AMBIENT, T0)[0]
    assert denied.reason == "rule limit: rate_limit, no token left for author carol (the next at 2026-01-01T00:00:01.000Z); stored, in context"
    assert gate.offer(5, MENTION, T0)[0].verdict is Verdict.WAKE  # bob has his own bucket
    assert gate.offer(6, AMBIENT, T0 + 0.5)[0].verdict is Verdict.DENY  # half a token back
    woke = gate.offer(7, AMBIENT, T0 + 1.0)[0]
    assert woke.verdict is Verdict.WAKE and woke.reason == "rule limit: rate_limit, a token for author carol (0 of 2 left)"
    assert gate.offer(8, AMBIENT, T0 + 60)[0].verdict is Verdict.WAKE  # full again, never past full
    assert gate.offer(9, AMBIENT, T0 + 60)[0].verdict is Verdict.WAKE
    assert gate.offer(10, AMBIENT, T0 + 60)[0].verdict is Verdict.DENY
    [status] = gate.status(T0 + 60.25).rules
    assert (status.matches, status.denials) == (10, 4)
    assert [(b.key, b.tokens) for b in status.buckets] == [("carol", 0.25), ("bob", 2.0)]


def test_a_rate_limit_keyed_by_nothing_has_one_bucket_for_everyone() -> None:
    gate = Gate("ada", rules(rule("limit", {"rate_limit": {"tokens": 1, "refill_ms": 60000}})))
    assert gate.offer(1, AMBIENT, T0)[0].verdict is Verdict.WAKE
    denied = gate.offer(2, MENTION, T0)[0]
    assert denied.verdict is Verdict.DENY and "no token left for everyone" in denied.reason


def test_passive_sampling_wakes_for_the_first_of_every_run_per_key() -> None:
    gate = Gate("ada", rules(rule("sample", {"passive_sample": {"every": 3, "key_by": "channel"}})))
    woke = [gate.offer(i, AMBIENT, T0 + i)[0].verdict is Verdict.WAKE for i in range(1, 8)]
    assert woke == [True, False, False, True, False, False, True]
    assert gate.offer(8, BOT, T0 + 8)[0].verdict is Verdict.WAKE  # another channel counts on its own
    skipped = gate.offer(9, AMBIENT, T0 + 9)[0]
    assert skipped.reason == (
        "rule sample: passive_sample 1 in 3, number 8 for channel discord:g:general is not sampled; stored, in context"
    )
    [status] = gate.status(T0 + 10).rules
    assert (status.sampled.seen, status.sampled.woke, status.denials) == (9, 4, 5)


def test_a_passthrough_rule_that_denies_lets_later_rules_decide() -> None:
    burst = {"name": "burst", "match": {}, "behaviour": {"rate_limit": {"tokens": 1, "refill_ms": 60000}}, "passthrough": True}
    gate = Gate("ada", rules(burst, rule("rest", {"debounce": {"ms": 5000}})))
    assert gate.offer(1, AMBIENT, T0)[0].rule == "burst"
    decision, delivery = gate.offer(2, AMBIENT, T0 + 1)
    assert (decision.verdict, decision.rule, delivery) == (Verdict.BATCH, "rest", None)
    assert decision.reason.endswith("(passed on by burst, which denied it)")
    # Without passthrough the deny stands: stored, no turn, and later rules are not asked.
    gate.set_rules(rules({**burst, "passthrough": False}, rule("rest", {"debounce": {"ms": 5000}})))
    decision, _ = gate.offer(3, AMBIENT, T0 + 2)
    assert (decision.verdict, decision.rule) == (Verdict.DENY, "burst")
    assert [r.matches for r in gate.status(T0 + 2).rules] == [3, 1]


def test_a_rule_that_fires_resets_the_rules_it_names() -> None:
    mentions = {"name": "mentions", "match": {"flags": ["mention"]}, "behaviour": "always", "resets": ["ambient", "limit"]}
    limit = rule("limit", {"rate_limit": {"tokens": 1, "refill_ms": 3600000}}, flags=["from_bot"])
    gate = Gate("ada", rules(mentions, limit, rule("ambient", {"debounce": {"ms": 30000}})))
    gate.offer(1, BOT, T0)
    assert gate.offer(2, BOT, T0)[0].verdict is Verdict.DENY  # the bucket is empty
    gate.offer(3, AMBIENT, T0 + 1)
    gate.offer(4, AMBIENT, T0 + 2)
    decision, delivery = gate.offer(5, MENTION, T0 + 3)
    assert decision.rule == "mentions"
    # The ambient batch is cancelled: its stimuli go with the mention's turn, and nothing is left to fire.
    assert delivery == Delivery("mentions", (3, 4, 5), (5,), "rule mentions: always wakes the mind")
    assert gate.next_due() is None and gate.due(T0 + 3600) == []
    assert gate.offer(6, BOT, T0 + 4)[0].verdict is Verdict.WAKE  # the bucket is full again


def test_a_batch_delivered_applies_its_rules_resets() -> None:
    ambient = {"name": "ambient", "match": {}, "behaviour": {"debounce": {"ms": 1000}}, "resets": ["sample"]}
    gate = Gate("ada", rules(rule("sample", {"passive_sample": {"every": 5}}, flags=["from_bot"]), ambient))
    assert gate.offer(1, BOT, T0)[0].verdict is Verdict.WAKE
    assert gate.offer(2, BOT, T0)[0].verdict is Verdict.DENY
    gate.offer(3, AMBIENT, T0)
    gate.due(T0 + 1)
    assert gate.offer(4, BOT, T0 + 2)[0].verdict is Verdict.WAKE  # sampling starts over


def test_a_stimulus_no_rule_matches_goes_to_the_default_behaviour() -> None:
    debounce, _ = read_behaviour({"debounce": {"ms": 500}})
    gate = Gate("ada", rules(rule("dms", "always", flags=["dm"]), default=debounce))
    decision, delivery = gate.offer(1, OBSERVED, T0)
    assert decision.reason == "the default (no rule matched): debounce 500 ms, due at 2026-01-01T00:00:00.500Z (1 stimulus in the batch)"
    assert (decision.verdict, decision.rule, delivery) == (Verdict.BATCH, None, None)
    assert [(u.what, u.rule) for u in gate.upcoming_wakes(T0)] == [
        ("a debounce batch of 1 stimulus (the default, for stimuli no rule matched)", None)
    ]
    assert [(d.rule, d.stimuli) for d in gate.due(T0 + 0.5)] == [(None, (1,))]
    assert dump(gate.status(T0))["default"] == {"debounce": {"ms": 500}}


def test_a_sleeping_mind_stores_stimuli_without_asking_its_rules_and_wakes_at_the_end() -> None:
    gate = Gate("ada", rules(rule("dms", "always", flags=["dm"]), rule("ambient", {"debounce": {"ms": 1000}})))
    gate.offer(1, AMBIENT, T0)  # a batch due at T0+1, which the sleep will hold back
    gate.sleep(T0 + 3600, "night")
    assert gate.sleeping(T0 + 10) and not gate.sleeping(T0 + 3600)
    decision, delivery = gate.offer(2, DM, T0 + 10)
    assert decision == Decision(Verdict.ASLEEP, None, "asleep until 2026-01-01T01:00:00.000Z (night): stored, reaches no rule")
    assert delivery is None
    assert [r.matches for r in gate.status(T0 + 10).rules] == [0, 1]  # the DM reached no rule
    assert gate.due(T0 + 100) == [] and gate.next_due() == T0 + 3600
    assert [(u.what, u.at) for u in gate.upcoming_wakes(T0 + 100)] == [
        ("the end of its sleep", T0 + 3600),
        ("a debounce batch of 1 stimulus", T0 + 3600),  # held back to the sleep's end
    ]
    status = dump(gate.status(T0 + 100))
    assert status["sleeping"] == {"until": "2026-01-01T01:00:00.000Z", "note": "night"}
    end, batch = gate.due(T0 + 3600)
    assert end == Delivery(None, (2,), (2,), "its sleep until 2026-01-01T01:00:00.000Z ended")
    assert (batch.rule, batch.stimuli) == ("ambient", (1,))
    assert not gate.sleeping(T0 + 3600) and gate.status(T0 + 3600).sleeping is None
    assert gate.offer(3, DM, T0 + 3601)[0].verdict is Verdict.WAKE


def test_a_privileged_author_wakes_a_sleeping_mind_with_what_came_during_the_sleep() -> None:
    gate = Gate("ada", rules(rule("quiet", "defer")), privileged=frozenset({"operator"}))
    gate.sleep(T0 + 3600, None)
    gate.offer(1, AMBIENT, T0 + 1)
    decision, delivery = gate.offer(2, said("operator", "wake up, ada", "cli"), T0 + 2)
    assert decision == Decision(Verdict.WAKE, None, "operator is privileged: woke the mind from its sleep")
    assert delivery is not None and delivery.stimuli == (1, 2)
    assert not gate.sleeping(T0 + 3) and gate.next_due() is None
    assert gate.offer(3, AMBIENT, T0 + 3)[0].rule == "quiet"  # the rules decide again


def test_waking_a_mind_by_hand_delivers_what_came_during_its_sleep_at_once() -> None:
    gate = Gate("ada", rules())
    gate.sleep(T0 + 3600, "focus")
    gate.offer(1, AMBIENT, T0 + 5)
    gate.wake_up(T0 + 10)
    assert not gate.sleeping(T0 + 10)
    due = gate.next_due()
    assert due is not None and due <= T0 + 10
    assert gate.due(T0 + 10) == [Delivery(None, (1,), (), "the operator ended its sleep")]


def test_a_self_wake_fires_with_nothing_new_unless_a_turn_starts_first() -> None:
    gate = Gate("ada", rules())
    gate.set_self_wake(T0 + 600, cause=41)
    assert gate.next_due() == T0 + 600
    assert dump(gate.status(T0))["self_wake"] == {"at": "2026-01-01T00:10:00.000Z", "cause": 41}
    assert [u.what for u in gate.upcoming_wakes(T0)] == ["its own self-wake (skip_reply timer)"]
    assert gate.turn_started(T0 + 5) is True  # cancelled: the caller records self_wake_cancelled
    assert gate.next_due() is None and gate.due(T0 + 600) == [] and gate.upcoming_wakes(T0 + 6) == []
    assert gate.turn_started(T0 + 7) is False

    gate.set_self_wake(T0 + 600, cause=42)
    assert gate.due(T0 + 599) == []
    [fired] = gate.due(T0 + 600)
    assert fired == Delivery(None, (), (), "its own self-wake, set for 2026-01-01T00:10:00.000Z when it chose not to reply", True, 42)
    assert gate.turn_started(T0 + 600) is False  # the turn it woke cancels nothing
    gate.set_self_wake(T0 + 900, cause=43)
    gate.cancel_self_wake()
    assert gate.next_due() is None


def test_deliveries_held_during_a_turn_go_as_one() -> None:
    gate = Gate("ada", rules())
    gate.hold(Delivery("dms", (5,), (5,), "rule dms: always wakes the mind"))
    gate.hold(Delivery("ambient", (3, 4), (), "rule ambient: debounce 2000 ms, a batch of 2 stimuli after 2000 ms quiet"))
    assert gate.status(T0).held == 3
    merged = gate.release()
    assert merged is not None and (merged.rule, merged.stimuli, merged.addressed) == ("dms", (3, 4, 5), (5,))
    assert merged.reason.startswith("held while the mind was busy: rule dms: always wakes the mind; rule ambient")
    assert gate.release() is None


def test_at_most_100_held_stimuli_are_kept_the_oldest_dropped_and_counted() -> None:
    gate = Gate("ada", rules())
    for i in range(1, 121):
        gate.hold(Delivery(None, (i,), (), "the default (no rule matched): always wakes the mind"))
    status = gate.status(T0)
    assert (status.held, status.dropped) == (HOLD_CAP, 20)
    released = gate.release()
    assert released is not None and released.stimuli == tuple(range(21, 121))


def test_a_batch_a_turn_took_meanwhile_wakes_nothing_and_is_counted_absorbed() -> None:
    gate = Gate("ada", rules(rule("dms", "always", flags=["dm"]), rule("ambient", {"debounce": {"ms": 2000}})))
    gate.offer(1, AMBIENT, T0)
    gate.offer(2, AMBIENT, T0 + 0.5)
    assert gate.offer(3, DM, T0 + 1)[0].verdict is Verdict.WAKE
    gate.taken([1, 2, 3])  # the DM's turn took every stored stimulus
    assert gate.due(T0 + 10) == [] and gate.next_due() is None
    assert gate.status(T0 + 10).absorbed == 1
    # A batch the turn took only part of still fires with the rest.
    gate.offer(4, AMBIENT, T0 + 20)
    gate.offer(5, AMBIENT, T0 + 20.5)
    gate.taken([4])
    assert [d.stimuli for d in gate.due(T0 + 23)] == [(5,)]


def test_set_rules_keeps_a_rules_state_while_its_behaviour_is_unchanged() -> None:
    limit = rule("limit", {"rate_limit": {"tokens": 1, "refill_ms": 3600000}}, kinds=["message"])
    gate = Gate("ada", rules(limit, rule("ambient", {"debounce": {"ms": 1000}}, kinds=["observation"])))
    gate.offer(1, AMBIENT, T0)
    gate.offer(2, OBSERVED, T0)
    # The match changed, the behaviour did not: the empty bucket and the batch stay.
    gate.set_rules(rules(rule("dms", "always", flags=["dm"]), {**limit, "match": {"kinds": ["message"], "author": "*"}},
                         rule("ambient", {"debounce": {"ms": 1000}}, kinds=["observation"])))
    assert gate.offer(3, AMBIENT, T0 + 1)[0].verdict is Verdict.DENY
    assert gate.status(T0 + 0.5).rules[2].pending == 1
    # A new behaviour starts afresh (a full bucket), and the rule's counters go on: it is the same rule, edited.
    gate.set_rules(rules(rule("limit", {"rate_limit": {"tokens": 2, "refill_ms": 3600000}})))
    assert gate.offer(4, AMBIENT, T0 + 2)[0].verdict is Verdict.WAKE
    assert (gate.status(T0 + 2).rules[0].matches, gate.status(T0 + 2).rules[0].denials) == (3, 1)


def test_a_batch_whose_rule_is_removed_still_wakes_the_mind_at_its_time() -> None:
    gate = Gate("ada", rules(rule("ambient", {"debounce": {"ms": 5000}})))
    gate.offer(1, AMBIENT, T0)
    gate.set_rules(rules())
    [upcoming] = gate.upcoming_wakes(T0 + 1)
    assert (upcoming.rule, upcoming.what, upcoming.at) == ("ambient", "a debounce batch of 1 stimulus (its rule has changed since)", T0 + 5)
    [delivery] = gate.due(T0 + 5)
    assert delivery.stimuli == (1,) and delivery.reason.endswith("(gathered before the rule changed)")


def test_upcoming_wakes_are_listed_soonest_first() -> None:
    gate = Gate("ada", rules(rule("bots", {"debounce": {"ms": 60000}}, flags=["from_bot"]), rule("talk", {"debounce": {"ms": 2000}})))
    gate.offer(1, BOT, T0)
    gate.offer(2, AMBIENT, T0)
    gate.set_self_wake(T0 + 30, cause=7)
    assert [(u.at - T0, u.rule) for u in gate.upcoming_wakes(T0)] == [(2, "talk"), (30, None), (60, "bots")]
    assert [u["at"] for u in dump(gate.status(T0))["upcoming"]] == [
        "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:30.000Z", "2026-01-01T00:01:00.000Z"
    ]


def test_a_list_of_200_rules_works_and_the_last_can_still_decide() -> None:
    bodies = [rule(f"r{i}", "defer", channel=f"discord:g:room{i}") for i in range(199)]
    gate = Gate("ada", rules(*bodies, rule("catch-all", {"debounce": {"ms": 100}})))
    assert gate.offer(1, said("alice", "hi", "discord:g:room150"), T0)[0].rule == "r150"
    assert gate.offer(2, AMBIENT, T0)[0].rule == "catch-all"
    status = gate.status(T0)
    assert len(status.rules) == 200 and status.rules[150].matches == 1


def test_gate_status_shows_the_stored_rules_reading_errors_and_clamp_notes() -> None:
    error = "stored rule 'old' no longer reads: behaviour 'judge' is unknown; it is left out"
    note = "rule ambient: debounce ms 50 is below 100, read as 100"
    gate = Gate("ada", rules(rule("ambient", {"debounce": {"ms": 100}}), errors=(error,), notes=(note,)), since=T0)
    gate.offer(1, AMBIENT, T0 + 1)
    status = dump(gate.status(T0 + 1.05))
    assert status["errors"] == [error] and status["notes"] == [note]
    assert status["since"] == "2026-01-01T00:00:00.000Z"
    assert status["rules"][0] | {"match": None} == {
        "name": "ambient",
        "behaviour": {"debounce": {"ms": 100}},
        "match": None,
        "passthrough": False,
        "resets": [],
        "matches": 1,
        "last_match": "2026-01-01T00:00:01.000Z",
        "pending": 1,
        "next_delivery": "2026-01-01T00:00:01.100Z",
        "buckets": [],
        "denials": 0,
        "sampled": {"seen": 0, "woke": 0},
    }
    assert (status["held"], status["dropped"], status["absorbed"]) == (0, 0, 0)


def test_the_default_debounce_keeps_its_batch_across_a_rules_change_that_leaves_it() -> None:
    gate = Gate("ada", rules(default=Debounce(1000)))
    gate.offer(1, AMBIENT, T0)
    gate.set_rules(rules(rule("dms", "always", flags=["dm"]), default=Debounce(1000)))
    gate.offer(2, AMBIENT, T0 + 0.5)
    assert [d.stimuli for d in gate.due(T0 + 1.5)] == [(1, 2)]


def test_a_self_wake_due_with_a_batch_goes_with_it_as_one_turn() -> None:
    gate = Gate("ada", rules(rule("ambient", {"debounce": {"ms": 2000}})))
    gate.offer(1, AMBIENT, T0)
    gate.set_self_wake(T0 + 1, cause=9)
    [delivery] = gate.due(T0 + 2)
    assert (delivery.rule, delivery.stimuli, delivery.self_wake, delivery.cause) == ("ambient", (1,), True, 9)
    assert delivery.reason.endswith("; and its own self-wake, set for 2026-01-01T00:00:01.000Z when it chose not to reply")
    assert gate.next_due() is None


def test_gate_status_warns_of_a_rule_that_swallows_dms_ahead_of_the_rule_for_them() -> None:
    gate = Gate("ada", rules(rule("quiet", "defer"), rule("dms", "always", flags=["dm"])))
    warnings = gate.status(T0).warnings
    assert any(w.startswith("rule 'quiet' (defer) comes before rule 'dms' and takes a DM") for w in warnings)
    assert gate.offer(1, DM, T0)[0].rule == "quiet"  # what the warning is about
    gate.set_rules(rules(rule("dms", "always", flags=["dm"]), rule("mentions", "always", flags=["mention"]), rule("quiet", "defer")))
    assert gate.status(T0).warnings == []


def test_status_is_a_pure_read() -> None:
    gate = Gate("ada", StoredRules())
    gate.sleep(T0 + 600, None)
    gate.wake_up()  # ended, with no time given: due when the gate next sees the time
    due, since = gate.next_due(), gate.since
    shown = gate.status(T0 + 100)
    assert shown.since == T0 + 100  # shown from `now` ...
    assert (gate.next_due(), gate.since) == (due, since)  # ... but asking changed nothing the gate does next


def test_the_minds_own_message_never_wakes_it_whatever_the_rules_say() -> None:
    # A room echoes the mind's own words back (or someone speaks from its account): waking on them
    # would have it answer itself, so no rule is asked, not even one naming from_self.
    gate = Gate("ada", rules(rule("mine", "always", flags=["from_self"])))
    own = said("matrix:@ada:example.org", "done", "matrix:!room:example.org", "from_self")
    decision, delivery = gate.offer(1, own, T0)
    assert decision == Decision(Verdict.DEFER, None, "the mind's own message: stored, in context; it never wakes the mind")
    assert delivery is None and gate.next_due() is None
