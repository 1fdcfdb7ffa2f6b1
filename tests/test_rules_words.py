"""One phrasing of a wake rule: the daemon (its events, the dashboard) and the CLI word a behaviour and a match alike.

noemad holds the phrasing (`noemad.rules.phrasing`: `behaviour_words`,
`match_words`, `extras_words`); noemactl imports nothing of noemad and
mirrors it in `noemactl/gate_view.py`. This holds the two to the same words
for every behaviour shape and the match fields, so the dashboard's rules box
says what `noemactl rules list` says (issue 22, item 11: it showed
`default: {"always": {}}`).
"""

from __future__ import annotations

from typing import Any

import pytest

from noemactl import gate_view
from noemad.rules.shape import describe_behaviour, read_behaviour
from noemad.rules.phrasing import behaviour_words, extras_words, match_words

BEHAVIOURS: list[Any] = [
    "always", {"always": {}}, {"defer": {}}, {"debounce": {"ms": 2000}},
    {"rate_limit": {"tokens": 5, "refill_ms": 60000, "key_by": "channel"}}, {"rate_limit": {"tokens": 1, "refill_ms": 1000, "key_by": "none"}},
    {"passive_sample": {"every": 10, "key_by": "author"}}, {"passive_sample": {"every": 3, "key_by": "none"}},
    {"judge": {"debounce_ms": 2000}}, {"judge": {"debounce_ms": 2000, "max_wait_ms": 20000, "instructions": "only questions"}},
]
MATCHES: list[Any] = [
    None, {}, {"kinds": ["message"], "channel": "discord:*", "author": "*"}, {"flags": ["mention", "dm"], "text": "deploy"},
    {"text": "^go", "regex": True, "tags_any": ["a", "b"], "tags_all": ["c"], "tags_none": ["d"]}, {"author": "alice", "channel": "*"},
]


@pytest.mark.parametrize("data", BEHAVIOURS)
def test_a_behaviour_reads_the_same_in_the_cli_and_the_daemon(data: Any) -> None:
    assert behaviour_words(data) == gate_view.behaviour(data)
    judge = isinstance(data, dict) and "judge" in data
    assert describe_behaviour(read_behaviour(data, judge=judge)[0]) == gate_view.behaviour(data)  # the rules' events too


@pytest.mark.parametrize("data", MATCHES)
def test_a_match_reads_the_same_in_the_cli_and_the_daemon(data: Any) -> None:
    assert match_words(data) == gate_view.match(data)


def test_passthrough_and_resets_read_the_same() -> None:
    for rule in ({}, {"passthrough": True}, {"resets": ["ambient", "quiet"]}, {"passthrough": True, "resets": ["x"]}):
        assert extras_words(rule) == gate_view.extras(rule)
