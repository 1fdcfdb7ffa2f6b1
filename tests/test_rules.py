"""Wake rules: reading (one validator, its sentences and clamp notes), matching, the table, the probe table.

Every way a rule comes in (the API, the CLI, the config, the mind's tools)
calls `read_rule`; the sentences tested here are the ones a user reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noemad.errors import RuleRefused
from noemad.events import Event, EventDraft, append
from noemad.minds import create_mind
from noemad.rules.match import Facts, Matcher, facts_of
from noemad.rules.shape import (
    Always,
    Debounce,
    Defer,
    Match,
    PassiveSample,
    RateLimit,
    Rule,
    behaviour_data,
    read_behaviour,
    read_match,
    read_rule,
)
from noemad.stimuli import STIMULUS_KINDS, Message, Observation
from noemad.store import Store

ISSUE_EXAMPLE: dict[str, Any] = {
    "name": "ambient",
    "match": {
        "kinds": ["message"],
        "channel": "discord:*",
        "author": "*",
        "flags": ["mention"],
        "text": "deploy",
        "regex": False,
        "tags_any": [],
        "tags_all": [],
        "tags_none": [],
    },
    "behaviour": {"debounce": {"ms": 2000}},
    "passthrough": False,
    "resets": [],
}


# Reading. -----------------------------------------------------------------------------


def test_the_issue_example_reads_and_round_trips() -> None:
    read = read_rule(ISSUE_EXAMPLE)
    assert read.notes == ()
    assert read.rule == Rule("ambient", Match(("message",), "discord:*", "*", ("mention",), "deploy"), Debounce(2000))
    assert read.rule.to_data() == ISSUE_EXAMPLE
    assert read_rule(read.rule.to_data()).rule == read.rule


@pytest.mark.parametrize(
    "behaviour",
    [Always(), Defer(), Debounce(100), RateLimit(3, 60000, "channel"), PassiveSample(10, "author"), PassiveSample(2)],
)
def test_every_behaviour_round_trips(behaviour: Any) -> None:
    rule = Rule("r", Match(flags=("dm",), regex=True, text="^hi+$", tags_none=("noise",)), behaviour, resets=("other",))
    assert read_rule(rule.to_data()).rule == rule
    assert read_behaviour(behaviour_data(behaviour)) == (behaviour, [])


def test_a_minimal_rule_matches_everything() -> None:
    assert read_rule({"name": "all", "behaviour": "always"}).rule == Rule("all", Match(), Always())
    assert read_rule({"name": "quiet", "behaviour": {"defer": {}}}).rule.behaviour == Defer()
    assert read_behaviour("defer") == (Defer(), [])


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ("always", "rule must be an object such as {\"name\": \"ambient\""),
        ({"name": "x", "behavior": "always"}, "rule: unknown key 'behavior'; did you mean 'behaviour'? (valid keys: name, match, behaviour, passthrough, resets)"),
        ({"behaviour": "always"}, "rule needs a name (unique in the mind)"),
        ({"name": "no spaces", "behaviour": "always"}, "rule.name: 'no spaces' is not a rule name; write 1-64 letters, digits"),
        ({"name": "x" * 65, "behaviour": "always"}, "is not a rule name"),
        ({"name": "x"}, "rule 'x' needs a behaviour, one of always, defer, debounce, rate_limit, passive_sample"),
        (
            {"name": "x", "behaviour": {"always": {}, "defer": {}}},
            "rule 'x': behaviour: a rule has exactly one behaviour, and this names 2 (always, defer); keep one",
        ),
        ({"name": "x", "behaviour": {"debounse": {"ms": 2000}}}, "'debounse' is not a behaviour; did you mean 'debounce'?"),
        ({"name": "x", "behaviour": "judge"}, "'judge' is not a behaviour (one of always, defer, debounce, rate_limit, passive_sample"),
        ({"name": "x", "behaviour": "debounce"}, 'rule \'x\': behaviour: debounce needs its settings; write {"debounce": {"ms": 2000}}'),
        ({"name": "x", "behaviour": {}}, "a behaviour is one of always, defer"),
        ({"name": "x", "behaviour": {"debounce": {}}}, "behaviour.debounce needs ms, the quiet period in milliseconds"),
        ({"name": "x", "behaviour": {"debounce": {"ms": "2s"}}}, "behaviour.debounce.ms must be a whole number such as 100, not '2s'"),
        ({"name": "x", "behaviour": {"debounce": {"ms": 2000, "max": 3}}}, "behaviour.debounce: unknown key 'max'"),
        ({"name": "x", "behaviour": {"always": {"ms": 1}}}, "behaviour.always takes no settings; write \"always\""),
        ({"name": "x", "behaviour": {"rate_limit": {"tokens": 3}}}, "behaviour.rate_limit needs refill_ms; write {\"rate_limit\""),
        (
            {"name": "x", "behaviour": {"rate_limit": {"tokens": 3, "refill_ms": 1000, "key_by": "chan"}}},
            "key_by is one of channel, author, none, not 'chan'; did you mean 'channel'?",
        ),
        ({"name": "x", "behaviour": {"passive_sample": {}}}, "behaviour.passive_sample needs every"),
        (
            {"name": "x", "behaviour": "always", "passthrough": True},
            "rule 'x': passthrough is only for rate_limit and passive_sample (when they deny, later rules decide); an always rule always decides",
        ),
        ({"name": "x", "behaviour": {"debounce": {"ms": 500}}, "passthrough": True}, "a debounce rule always decides"),
        ({"name": "x", "behaviour": "defer", "passthrough": "yes"}, "passthrough is true or false, not 'yes'"),
        ({"name": "x", "behaviour": "always", "match": {"flags": ["mentions"]}}, "match.flags: 'mentions' is not one of the flags; did you mean 'mention'?"),
        ({"name": "x", "behaviour": "always", "match": {"kinds": ["mesage"]}}, "match.kinds: 'mesage' is not one of the stimulus kinds; did you mean 'message'?"),
        ({"name": "x", "behaviour": "always", "match": {"chanel": "a"}}, "match: unknown key 'chanel'; did you mean 'channel'?"),
        ({"name": "x", "behaviour": "always", "match": "dm"}, "match is an object of fields that must all hold"),
        ({"name": "x", "behaviour": "always", "match": {"channel": "discord:[abc"}}, "match.channel: the glob 'discord:[abc' opens a [ it never closes"),
        ({"name": "x", "behaviour": "always", "match": {"author": ""}}, "match.author is a glob of 1-200 characters"),
        ({"name": "x", "behaviour": "always", "match": {"text": "x" * 501}}, "match.text is 501 characters; a text filter is at most 500"),
        ({"name": "x", "behaviour": "always", "match": {"regex": "yes"}}, "match.regex is true (text is an RE2 pattern) or false"),
        (
            {"name": "x", "behaviour": "always", "match": {"text": r"(a)\1", "regex": True}},
            "uses a backreference or lookaround; patterns run on RE2, which matches in linear time and has no backtracking constructs",
        ),
        ({"name": "x", "behaviour": "always", "match": {"text": "deploy(?=ed)", "regex": True}}, "uses a backreference or lookaround"),
        ({"name": "x", "behaviour": "always", "match": {"text": "(?<!un)done", "regex": True}}, "uses a backreference or lookaround"),
        (
            {"name": "x", "behaviour": "always", "match": {"text": "(deploy", "regex": True}},
            "is not a pattern RE2 takes (missing ): (deploy); RE2 matches in linear time",
        ),
        ({"name": "x", "behaviour": "always", "match": {"tags_any": "urgent", "tags_all": [1]}}, "match.tags_all is a list of tags"),
        ({"name": "x", "behaviour": "always", "resets": ["ok", "not ok"]}, "rule 'x': resets: 'not ok' is not a rule name"),
        ({"name": "x", "behaviour": "always", "resets": [f"r{i}" for i in range(51)]}, "resets names 51 rules; at most 50"),
    ],
)
def test_a_bad_rule_is_refused_with_a_sentence_saying_what_to_write(body: Any, sentence: str) -> None:
    with pytest.raises(RuleRefused) as refused:
        read_rule(body)
    assert sentence in refused.value.detail
    assert refused.value.status == 422


def test_the_sentence_names_where_the_rule_came_from() -> None:
    with pytest.raises(RuleRefused, match=r"^minds\.ada\.gate\.rules\[2\]: passthrough is only for"):
        read_rule({"name": "x", "behaviour": "defer", "passthrough": True}, "minds.ada.gate.rules[2]")


def test_a_literal_backslash_before_a_digit_is_not_a_backreference() -> None:
    assert read_rule({"name": "x", "behaviour": "always", "match": {"text": r"C:\\1", "regex": True}}).rule.match.text == r"C:\\1"


@pytest.mark.parametrize(
    ("behaviour", "read", "note"),
    [
        ({"debounce": {"ms": 5}}, Debounce(100), "rule 'x': behaviour.debounce.ms 5 is below the least allowed; read as 100 ms"),
        ({"debounce": {"ms": 600000}}, Debounce(300000), "behaviour.debounce.ms 600000 is above the most allowed; read as 300000 ms"),
        ({"rate_limit": {"tokens": 0, "refill_ms": 50}}, RateLimit(1, 100), "behaviour.rate_limit.tokens 0 is below the least allowed; read as 1"),
        ({"rate_limit": {"tokens": 5000, "refill_ms": 10**9}}, RateLimit(1000, 86400000), "refill_ms 1000000000 is above the most allowed; read as 86400000 ms"),
        ({"passive_sample": {"every": 1}}, PassiveSample(2), "behaviour.passive_sample.every 1 is below the least allowed; read as 2"),
        ({"passive_sample": {"every": 10**6}}, PassiveSample(10000), "read as 10000"),
    ],
)
def test_an_out_of_range_bound_is_read_at_its_nearest_value_with_a_note(behaviour: Any, read: Any, note: str) -> None:
    result = read_rule({"name": "x", "behaviour": behaviour})
    assert result.rule.behaviour == read
    assert any(note in n for n in result.notes)


def test_a_clamped_rule_reads_back_without_notes() -> None:
    rule = read_rule({"name": "x", "behaviour": {"debounce": {"ms": 5}}}).rule
    assert read_rule(rule.to_data()).notes == ()


def test_a_default_behaviour_is_read_the_same_way() -> None:
    assert read_behaviour({"debounce": {"ms": 2000.0}}) == (Debounce(2000), [])
    with pytest.raises(RuleRefused, match=r"^default: 'sometimes' is not a behaviour"):
        read_behaviour("sometimes")


def test_the_rule_kinds_are_the_stimulus_kinds() -> None:
    for kind in STIMULUS_KINDS:
        assert read_match({"kinds": [kind]}).kinds == (kind,)


# Matching. ----------------------------------------------------------------------------


def facts(
    kind: str = "message",
    channel: str = "discord:g:general",
    author: str = "alice",
    text: str = "hello there",
    flags: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
) -> Facts:
    return Facts(kind, channel, author, text, frozenset(flags), frozenset(tags))


def matches(match: dict[str, Any], f: Facts) -> bool:
    return Matcher(read_match(match)).test(f)


def test_an_empty_match_matches_every_stimulus() -> None:
    assert matches({}, facts()) and matches({}, facts(kind="observation", channel="", author="ci", text=""))


def test_kinds_are_any_of() -> None:
    assert matches({"kinds": ["message", "observation"]}, facts(kind="observation"))
    assert not matches({"kinds": ["message"]}, facts(kind="assertion"))


@pytest.mark.parametrize(
    ("glob", "channel", "hit"),
    [
        ("discord:*", "discord:g:general", True),
        ("discord:*", "slack:general", False),
        ("discord:g:gen?ral", "discord:g:general", True),
        ("discord:g:[gh]*", "discord:g:general", True),
        ("discord:g:[!g]*", "discord:g:general", False),
        ("Discord:*", "discord:g:general", False),  # channels are names: case counts
        ("*", "", True),
    ],
)
def test_channel_is_a_glob(glob: str, channel: str, hit: bool) -> None:
    assert matches({"channel": glob}, facts(channel=channel)) is hit


def test_author_is_a_glob() -> None:
    assert matches({"author": "*bot"}, facts(author="deploybot"))
    assert not matches({"author": "*bot"}, facts(author="alice"))


def test_flags_are_any_of() -> None:
    assert matches({"flags": ["mention", "dm"]}, facts(flags=("dm",)))
    assert not matches({"flags": ["mention", "dm"]}, facts(flags=("from_bot",)))
    assert not matches({"flags": ["reply"]}, facts())


def test_text_is_a_case_insensitive_substring() -> None:
    assert matches({"text": "DEPLOY"}, facts(text="the deploy failed"))
    assert not matches({"text": "deploy"}, facts(text="the release failed"))
    assert not matches({"text": "a.c"}, facts(text="abc"))  # a substring, not a pattern


def test_text_is_a_case_insensitive_re2_pattern_when_regex() -> None:
    assert matches({"text": r"^deploy(ed|ing)?\b", "regex": True}, facts(text="Deployed to prod"))
    assert matches({"text": "a.c", "regex": True}, facts(text="xABCx"))
    assert not matches({"text": r"^deploy\b", "regex": True}, facts(text="we deploy"))


def test_a_catastrophic_pattern_matches_in_linear_time() -> None:
    # (a+)+$ over a long run of a's ending in b takes exponential time in a backtracking engine; RE2's is linear.
    rule = {"text": "(a+)+$", "regex": True}
    assert not matches(rule, facts(text="a" * 50000 + "b"))
    assert matches(rule, facts(text="b" + "a" * 50000))


def test_tags_any_all_none() -> None:
    tagged = facts(tags=("urgent", "ops"))
    assert matches({"tags_any": ["urgent", "sales"]}, tagged)
    assert not matches({"tags_any": ["sales"]}, tagged)
    assert matches({"tags_all": ["urgent", "ops"]}, tagged)
    assert not matches({"tags_all": ["urgent", "sales"]}, tagged)
    assert matches({"tags_none": ["noise"]}, tagged)
    assert not matches({"tags_none": ["ops"]}, tagged)


def test_every_field_given_must_hold() -> None:
    match = {"kinds": ["message"], "channel": "discord:*", "flags": ["mention"], "text": "deploy"}
    assert matches(match, facts(text="deploy now", flags=("mention",)))
    assert not matches(match, facts(text="deploy now"))
    assert not matches(match, facts(text="ship now", flags=("mention",)))


def test_addressed_is_a_mention_dm_or_reply() -> None:
    assert [facts(flags=(f,)).addressed for f in ("mention", "dm", "reply", "from_bot", "from_self")] == [True, True, True, False, False]


# Facts of stored stimuli. --------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "n.db")
    s.writer.run_sync(lambda db: (create_mind(db, "ada", {}, 1.0, "operator"), create_mind(db, "bea", {}, 1.0, "operator")))
    yield s
    s.close()


def put(store: Store, draft: EventDraft) -> Event:
    return store.writer.run_sync(lambda db: append(db, draft, 10.0))


def test_facts_of_a_message(store: Store) -> None:
    reply = put(store, EventDraft("ada", "reply", "mind", text="hi"))
    other = put(store, EventDraft("bea", "reply", "mind", text="hi"))
    db = store.reader()

    def flags(message: Message, mind: str = "ada") -> set[str]:
        return set(facts_of(db, put(store, message.draft(mind)), mind).flags)

    assert flags(Message("zoe", "hello", mentions=("ada",))) == {"mention"}
    assert flags(Message("zoe", "hello @Ada, how are you")) == {"mention"}
    assert flags(Message("zoe", "ada: deploy please")) == {"mention"}
    assert flags(Message("zoe", "adam is here")) == set()
    assert flags(Message("zoe", "hello", dm=True)) == {"dm"}
    assert flags(Message("zoe", "yes", reply_to=reply.id)) == {"reply"}
    assert flags(Message("zoe", "yes", reply_to=other.id)) == set()  # another mind's reply
    assert flags(Message("ci", "built", bot=True)) == {"from_bot"}
    assert flags(Message("ada", "talking to myself")) == {"from_self"}
    f = facts_of(db, put(store, Message("zoe", "Deploy", "discord:g:ops", tags=("urgent",)).draft("ada")), "ada")
    assert (f.kind, f.channel, f.author, f.text, f.tags) == ("message", "discord:g:ops", "zoe", "Deploy", frozenset({"urgent"}))


def test_facts_of_an_observation(store: Store) -> None:
    f = facts_of(store.reader(), put(store, Observation("ci", "build green", tags=("build",)).draft("ada")), "ada")
    assert (f.kind, f.channel, f.author, f.text, f.flags, f.tags) == ("observation", "", "ci", "build green", frozenset(), frozenset({"build"}))


def test_new_message_fields_are_stored_only_when_set(store: Store) -> None:
    plain = put(store, Message("zoe", "hi").draft("ada"))
    assert plain.data == {"author": "zoe", "mentions": []}
    full = put(store, Message("zoe", "hi", dm=True, reply_to=plain.id, bot=True, tags=("a",)).draft("ada"))
    assert full.data == {"author": "zoe", "mentions": [], "dm": True, "reply_to": plain.id, "bot": True, "tags": ["a"]}
    assert Message.of(full) == Message("zoe", "hi", dm=True, reply_to=plain.id, bot=True, tags=("a",))
