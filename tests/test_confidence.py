"""The confidence formula's promises, checked with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noemad.cognition.confidence import Item, confidence, contested, sides

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
sources = st.sampled_from(["alice", "bob", "carol", "sensor", "metacognition"])
items = st.builds(Item, stance=st.sampled_from(["support", "contradict"]), weight=unit, credibility=unit, source=sources)
supports = st.builds(Item, stance=st.just("support"), weight=unit, credibility=unit, source=sources)
contradictions = st.builds(Item, stance=st.just("contradict"), weight=unit, credibility=unit, source=sources)


@given(st.lists(items, max_size=12), st.randoms())
def test_order_does_not_matter_and_stays_in_range(evidence: list[Item], rnd) -> None:
    shuffled = evidence[:]
    rnd.shuffle(shuffled)
    assert confidence(evidence) == confidence(shuffled)
    assert 0.0 <= confidence(evidence) <= 1.0


@given(st.lists(items, max_size=10), supports)
def test_more_support_never_lowers_it(evidence: list[Item], extra: Item) -> None:
    assert confidence([*evidence, extra]) >= confidence(evidence) - 1e-9


@given(st.lists(items, max_size=10), contradictions)
def test_more_contradiction_never_raises_it(evidence: list[Item], extra: Item) -> None:
    assert confidence([*evidence, extra]) <= confidence(evidence) + 1e-9


@settings(max_examples=200)
@given(st.integers(min_value=2, max_value=8), st.floats(min_value=0.05, max_value=0.95))
def test_one_source_repeated_counts_for_less_than_independent_sources(n: int, strength: float) -> None:
    same = [Item("support", strength, 1.0, "alice") for _ in range(n)]
    independent = [Item("support", strength, 1.0, f"source-{i}") for i in range(n)]
    assert confidence(same) < confidence(independent)
    assert confidence(same) > confidence(same[:1])  # still more than one item


def test_one_credible_item_can_carry_a_belief_to_0_7() -> None:
    assert confidence([Item("support", 1.0, 0.8, "alice")]) == pytest.approx(0.8)
    assert confidence([Item("support", 0.9, 0.8, "alice")]) >= 0.7


def test_metacognition_counter_evidence_lowers_a_belief_visibly() -> None:
    belief = [Item("support", 1.0, 0.8, "alice")]
    lowered = [*belief, Item("contradict", 0.25, 1.0, "metacognition")]
    assert confidence(belief) - confidence(lowered) == pytest.approx(0.2)
    assert confidence(lowered) < 0.7  # below the insufficient_evidence threshold


def test_consolidation_episodes_count_0_3_each() -> None:
    one_user = [Item("support", 0.3, 1.0, "user:alice") for _ in range(10)]
    ten_users = [Item("support", 0.3, 1.0, f"user:{i}") for i in range(10)]
    assert confidence(one_user[:1]) == pytest.approx(0.3)
    assert confidence(one_user) == pytest.approx(0.4896, abs=1e-3)
    assert confidence(ten_users) == pytest.approx(0.9718, abs=1e-3)


def test_contested_means_strong_evidence_on_both_sides() -> None:
    strong_for = Item("support", 1.0, 0.8, "alice")
    strong_against = Item("contradict", 1.0, 0.7, "bob")
    weak_against = Item("contradict", 0.25, 1.0, "metacognition")
    assert contested([strong_for, strong_against])
    assert not contested([strong_for, weak_against])
    assert sides([strong_for, strong_against]) == pytest.approx((0.8, 0.7))


def test_no_evidence_no_confidence() -> None:
    assert confidence([]) == 0.0
