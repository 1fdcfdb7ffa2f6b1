"""The gate's verdict as a typed value: the enum the gate answers with and the words the API and the timeline write."""

from __future__ import annotations

from typing import get_args

from noemad.wake import GateVerdict, HeldVerdict, Verdict


def test_every_verdict_has_its_word_and_only_wake_holds_nothing_back() -> None:
    assert [v.word for v in Verdict] == [v.value for v in Verdict] == list(get_args(GateVerdict))
    assert [v.held for v in Verdict] == [None, *get_args(HeldVerdict)]
