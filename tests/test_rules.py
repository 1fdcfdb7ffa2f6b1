"""Wake rules: reading (one validator, its sentences and clamp notes), matching, the table, the probe table.

Every way a rule comes in (the API, the CLI, the config, the mind's tools)
calls `read_rule`; the sentences tested here are the ones a user reads.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noemad.errors import MindNotFound, RuleExists, RuleNotFound, RuleRefused
from noemad.events import Event, EventDraft, append, list_events
from noemad.minds import create_mind, delete_mind
from noemad.rules import table
from noemad.rules.match import Facts, Matcher, facts_of
from noemad.rules.probe import probe_table, shadow_warnings
from noemad.rules.shape import (
    KINDS,
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
from noemad.rules.table import (
    MAX_RULES,
    RulesChange,
    StoredRules,
    add_rule,
    move_rule,
    remove_rule,
    seed_rules,
    seeded,
    set_default,
    stored_rules,
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
        ({"name": "..", "behaviour": "always"}, "rule.name: '..' cannot name a rule: in the rule's address (/minds/MIND/rules/NAME) it is a directory"),
        ({"name": ".", "behaviour": "always"}, "'.' cannot name a rule"),
        ({"name": "default", "behaviour": "always"}, "'default' cannot name a rule: in the rule's address (/minds/MIND/rules/NAME) it is the default"),
        ({"name": "x", "behaviour": "always", "resets": [".."]}, "rule 'x': resets: '..' cannot name a rule"),
        ({"name": "x"}, "rule 'x' needs a behaviour, one of always, defer, debounce, rate_limit, passive_sample"),
        (
            {"name": "x", "behaviour": {"always": {}, "defer": {}}},
            "rule 'x': behaviour: a rule has exactly one behaviour, and this names 2 (always, defer); keep one",
        ),
        ({"name": "x", "behaviour": {"debounse": {"ms": 2000}}}, "'debounse' is not a behaviour; did you mean 'debounce'?"),
        ({"name": "x", "behaviour": "judge"}, "judge rules need judging, which is off on this noemad; set [gate.judge] enabled = true"),
        ({"name": "x", "behaviour": "always", "resets": ["y", "x"]}, "rule 'x': resets names the rule itself; resets clears other rules' state"),
        (
            {"name": "x", "behaviour": "always", "match": {"text": "(?:\\pL|\\pN){1000}[^a]{1000}", "regex": True}},
            "is too large for RE2 once compiled (pattern too large - compile failed): its repeats multiply out",
        ),
        ({"name": "x", "behaviour": "always", "match": {"text": "(a{100}){100}", "regex": True}}, "repeats too much for RE2 (invalid repetition size"),
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
            "is not a pattern RE2 takes (missing ): (deploy). Fix the pattern, or set regex to false",
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
    assert KINDS == STIMULUS_KINDS  # shape.py sits below stimuli.py and keeps its own copy
    assert read_match({"kinds": list(STIMULUS_KINDS)}).kinds == STIMULUS_KINDS


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
        event = put(store, message.draft(mind))
        read_back = facts_of(db, event, mind)
        assert facts_of(db, event, mind, message) == read_back  # ingest's facts, from the stimulus in hand, are the same
        return set(read_back.flags)

    assert flags(Message("zoe", "hello", mentions=("ada",))) == {"mention"}
    assert flags(Message("zoe", "hello @Ada, how are you")) == {"mention"}
    assert flags(Message("zoe", "ada: deploy please")) == {"mention"}
    assert flags(Message("zoe", "adam is here")) == set()
    assert flags(Message("zoe", "hello", dm=True)) == {"dm"}
    assert flags(Message("zoe", "yes", reply_to=reply.id)) == {"reply"}
    assert flags(Message("zoe", "yes", reply_to=other.id)) == set()  # another mind's reply
    assert flags(Message("ci", "built", bot=True)) == {"from_bot"}
    assert flags(Message("ada", "talking to myself")) == {"from_self"}
    # Its own account in a room (matrix:@ada:…) is not its name: the connector says so.
    assert flags(Message("matrix:@ada:example.org", "posted from my phone", from_self=True)) == {"from_self"}
    f = facts_of(db, put(store, Message("zoe", "Deploy", "discord:g:ops", tags=("urgent",)).draft("ada")), "ada")
    assert (f.kind, f.channel, f.author, f.text, f.tags) == ("message", "discord:g:ops", "zoe", "Deploy", frozenset({"urgent"}))


def test_facts_of_an_observation(store: Store) -> None:
    observation = Observation("ci", "build green", tags=("build",))
    event = put(store, observation.draft("ada"))
    f = facts_of(store.reader(), event, "ada")
    assert facts_of(store.reader(), event, "ada", observation) == f
    assert (f.kind, f.channel, f.author, f.text, f.flags, f.tags) == ("observation", "", "ci", "build green", frozenset(), frozenset({"build"}))


def test_new_message_fields_are_stored_only_when_set(store: Store) -> None:
    plain = put(store, Message("zoe", "hi").draft("ada"))
    assert plain.data == {"author": "zoe", "mentions": []}
    full = put(store, Message("zoe", "hi", dm=True, reply_to=plain.id, bot=True, tags=("a",)).draft("ada"))
    assert full.data == {"author": "zoe", "mentions": [], "dm": True, "reply_to": plain.id, "bot": True, "tags": ["a"]}
    assert Message.of(full) == Message("zoe", "hi", dm=True, reply_to=plain.id, bot=True, tags=("a",))
    assert Message.of(plain).operator is None  # stored before the operator was kept: reads as none
    kept = put(store, Message("zoe", "hi", operator="operator:root").draft("ada"))
    assert kept.data == {"author": "zoe", "mentions": [], "operator": "operator:root"} and kept.actor == "user:zoe"
    assert Message.of(kept).operator == "operator:root"


# The table. ---------------------------------------------------------------------------


def rule(name: str, behaviour: Any = "always", **match: Any) -> Rule:
    return read_rule({"name": name, "match": match, "behaviour": behaviour}).rule


def write(store: Store, job: Any) -> Any:
    return store.writer.run_sync(job)


def names(store: Store, mind: str = "ada") -> list[str]:
    return [r.name for r in stored_rules(store.reader(), mind).rules]


def test_rules_are_added_in_order_and_each_change_is_an_event(store: Store) -> None:
    first = write(store, lambda db: add_rule(db, "ada", rule("a"), position=None, actor="operator", now=20.0))
    write(store, lambda db: add_rule(db, "ada", rule("b", "defer"), position=None, actor="mind", now=21.0))
    write(store, lambda db: add_rule(db, "ada", rule("c"), position=0, actor="operator", now=22.0))
    write(store, lambda db: add_rule(db, "ada", rule("d"), position=99, actor="operator", now=22.0))  # past the end: last
    assert names(store) == ["c", "a", "b", "d"]
    assert (first.kind, first.actor, first.text) == ("gate_rules_changed", "operator", "wake rule 'a' added at position 1: always")
    assert RulesChange.of(first) == RulesChange("add", ("a",), "a", 1, body=rule("a").to_data())
    events = list_events(store.reader(), "ada", kinds=("gate_rules_changed",))
    assert [(e.actor, RulesChange.of(e).rules) for e in events] == [
        ("operator", ("a",)),
        ("mind", ("a", "b")),
        ("operator", ("c", "a", "b")),
        ("operator", ("c", "a", "b", "d")),
    ]
    assert stored_rules(store.reader(), "bea") == StoredRules()  # another mind's rules are its own


def test_a_duplicate_name_is_a_conflict(store: Store) -> None:
    write(store, lambda db: add_rule(db, "ada", rule("a"), position=None, actor="operator", now=20.0))
    with pytest.raises(RuleExists, match=r"mind 'ada' already has a wake rule named 'a'; pick another name, or change it in place \(noemactl rules edit ada a ...\)"):
        write(store, lambda db: add_rule(db, "ada", rule("a", "defer"), position=None, actor="operator", now=20.0))
    assert RuleExists.status == 409
    write(store, lambda db: add_rule(db, "bea", rule("a"), position=None, actor="operator", now=20.0))  # another mind may


def test_remove_and_move(store: Store) -> None:
    for n in "abcd":
        write(store, lambda db, n=n: add_rule(db, "ada", rule(n), position=None, actor="operator", now=20.0))
    removed = write(store, lambda db: remove_rule(db, "ada", "b", actor="operator", now=21.0))
    assert names(store) == ["a", "c", "d"]
    assert RulesChange.of(removed) == RulesChange("remove", ("a", "c", "d"), "b", body=rule("b").to_data())
    moved = write(store, lambda db: move_rule(db, "ada", "d", to=0, actor="operator", now=22.0))
    assert names(store) == ["d", "a", "c"] and RulesChange.of(moved).position == 1
    write(store, lambda db: move_rule(db, "ada", "d", to=50, actor="operator", now=22.0))
    assert names(store) == ["a", "c", "d"]
    with pytest.raises(RuleNotFound, match=r"mind 'ada' has no wake rule named 'cc'; did you mean 'c'\?"):
        write(store, lambda db: remove_rule(db, "ada", "cc", actor="operator", now=23.0))
    with pytest.raises(RuleNotFound, match=r"has no wake rule named 'zzz' \(its rules: a, c, d\); list them with `noemactl rules list ada`"):
        write(store, lambda db: move_rule(db, "ada", "zzz", to=0, actor="operator", now=23.0))
    with pytest.raises(MindNotFound):
        write(store, lambda db: add_rule(db, "nobody", rule("a"), position=None, actor="operator", now=23.0))


def test_the_default_behaviour(store: Store) -> None:
    assert stored_rules(store.reader(), "ada").default == Always()
    event = write(store, lambda db: set_default(db, "ada", Debounce(2000), actor="operator", now=20.0))
    assert stored_rules(store.reader(), "ada").default == Debounce(2000)
    assert event.text == "default wake behaviour set to debounce 2000 ms"
    assert RulesChange.of(event) == RulesChange("default", (), default={"debounce": {"ms": 2000}})


def test_two_hundred_rules_work(store: Store) -> None:
    def add_all(db: Any) -> None:
        for i in range(200):
            add_rule(db, "ada", rule(f"r{i}", "defer", channel=f"c{i}"), position=None, actor="operator", now=20.0)

    write(store, add_all)
    read = stored_rules(store.reader(), "ada")
    assert [r.name for r in read.rules] == [f"r{i}" for i in range(200)] and read.errors == ()
    write(store, lambda db: move_rule(db, "ada", "r199", to=0, actor="operator", now=21.0))
    assert names(store)[:2] == ["r199", "r0"]


def test_a_mind_has_at_most_500_rules(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table, "MAX_RULES", 3)
    for n in "abc":
        write(store, lambda db, n=n: add_rule(db, "ada", rule(n), position=None, actor="operator", now=20.0))
    with pytest.raises(RuleRefused, match="mind 'ada' has 3 wake rules, the most a mind may have; remove one before adding another"):
        write(store, lambda db: add_rule(db, "ada", rule("d"), position=None, actor="operator", now=20.0))
    assert table.MAX_RULES == 3 and MAX_RULES == 500


def test_a_stored_rule_that_no_longer_reads_is_left_out_and_named(store: Store) -> None:
    for n in "abc":
        write(store, lambda db, n=n: add_rule(db, "ada", rule(n), position=None, actor="operator", now=20.0))
    # As an older version (or a hand) might have left them: a passthrough always, and a body that is not JSON.
    bad = json.dumps({"name": "b", "behaviour": "always", "passthrough": True})
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE gate_rules SET body = ? WHERE mind = 'ada' AND name = 'b'", [bad])
        conn.execute("UPDATE gate_rules SET body = '{oops' WHERE mind = 'ada' AND name = 'c'")
        conn.execute("INSERT INTO gate_minds (mind, default_behaviour, seeded_at) VALUES ('bea', '\"sometimes\"', 'x')")
    read = stored_rules(store.reader(), "ada")
    assert [r.name for r in read.rules] == ["a"]
    assert read.errors == (
        "stored rule 'b': passthrough is only for rate_limit and passive_sample (when they deny, later rules decide); an always rule"
        " always decides. Remove passthrough, or use one of those behaviours. It is left out; remove it (noemactl rules rm ada b)"
        " and add it again in today's shape",
        "stored rule 'c': its body is not JSON. It is left out; remove it (noemactl rules rm ada c) and add it again in today's shape",
    )
    write(store, lambda db: remove_rule(db, "ada", "c", actor="operator", now=21.0))  # a bad row can still be removed
    assert len(stored_rules(store.reader(), "ada").errors) == 1
    bea = stored_rules(store.reader(), "bea")
    assert bea.default == Always() and bea.errors[0].startswith("stored default: 'sometimes' is not a behaviour")


def test_notes_stay_with_the_rule_and_resets_of_unknown_rules_are_noted(store: Store) -> None:
    read = read_rule({"name": "slow", "behaviour": {"debounce": {"ms": 5}}, "resets": ["later"]})
    write(store, lambda db: add_rule(db, "ada", read.rule, position=None, actor="operator", now=20.0, notes=read.notes))
    assert stored_rules(store.reader(), "ada").notes == (
        "rule 'slow': behaviour.debounce.ms 5 is below the least allowed; read as 100 ms",
        "rule 'slow' resets 'later', which is not one of the mind's rules: it resets nothing until one is added",
    )
    write(store, lambda db: add_rule(db, "ada", rule("later"), position=None, actor="operator", now=20.0))
    assert len(stored_rules(store.reader(), "ada").notes) == 1


def test_the_config_seeds_once(store: Store) -> None:
    seed = [rule("dms", flags=["dm"]), rule("ambient", {"debounce": {"ms": 2000}})]
    assert not seeded(store.reader(), "ada")
    assert write(store, lambda db: seed_rules(db, "ada", [], Always(), now=20.0)) is None  # nothing to seed: nothing written
    assert not seeded(store.reader(), "ada")
    event = write(store, lambda db: seed_rules(db, "ada", seed, Defer(), now=20.0))
    assert (event.actor, event.text) == ("config", "wake rules seeded from the config: 2 rules, default defer")
    assert RulesChange.of(event) == RulesChange("seed", ("dms", "ambient"), default={"defer": {}})
    assert seeded(store.reader(), "ada") and names(store) == ["dms", "ambient"]
    assert write(store, lambda db: seed_rules(db, "ada", [rule("other")], Always(), now=21.0)) is None
    assert names(store) == ["dms", "ambient"] and stored_rules(store.reader(), "ada").default == Defer()
    # An operator's change marks a mind seeded: the config no longer applies to it.
    write(store, lambda db: set_default(db, "bea", Always(), actor="operator", now=21.0))
    assert write(store, lambda db: seed_rules(db, "bea", seed, Always(), now=22.0)) is None
    assert names(store, "bea") == []


def test_a_seed_that_names_a_rule_twice_is_refused(store: Store) -> None:
    with pytest.raises(RuleExists, match="the rules seeded for mind 'ada' name 'a' twice; rule names are unique per mind"):
        write(store, lambda db: seed_rules(db, "ada", [rule("a"), rule("a", "defer")], Always(), now=22.0))
    assert not seeded(store.reader(), "ada")


def test_a_minds_rules_go_with_it(store: Store) -> None:
    write(store, lambda db: add_rule(db, "ada", rule("a"), position=None, actor="operator", now=20.0))
    write(store, lambda db: delete_mind(db, "ada", "ada"))
    db = store.reader()
    assert db.execute("SELECT count(*) FROM gate_rules").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM gate_minds").fetchone() == (0,)


# The probe table and shadow warnings. ---------------------------------------------------------


def test_the_probe_table_says_what_each_kind_of_stimulus_would_do_before_and_after() -> None:
    after = [rule("dms", flags=["dm", "mention"]), rule("bots", "defer", flags=["from_bot"]), rule("ambient", {"debounce": {"ms": 2000}}, kinds=["message"])]
    rows = probe_table(([], Always()), (after, Always()))
    assert [(r.probe, r.before, r.after) for r in rows] == [
        ("a DM", "wake (default)", "wake (rule dms)"),
        ("a mention", "wake (default)", "wake (rule dms)"),
        ("a reply to the mind", "wake (default)", "debounce 2000 ms (rule ambient)"),
        ("ambient human talk", "wake (default)", "debounce 2000 ms (rule ambient)"),
        ("ambient bot talk", "wake (default)", "defer (rule bots)"),
        ("an observation", "wake (default)", "wake (default)"),
    ]
    limited = [read_rule({"name": "rl", "behaviour": {"rate_limit": {"tokens": 3, "refill_ms": 60000, "key_by": "channel"}}, "passthrough": True}).rule]
    rows = probe_table(StoredRules(), StoredRules(tuple(limited), Defer()))
    assert rows[0].after == "rate_limit 3 per 60000 ms per channel: wake while tokens last, else later rules (rule rl): defer (default)"
    sampled = [rule("sample", {"passive_sample": {"every": 10}})]
    assert probe_table(StoredRules(), (sampled, Always()))[3].after == "passive_sample 1 in 10: wake for the first of each 10, else defer (rule sample)"


def test_a_catch_all_defer_first_is_warned_about() -> None:
    """The framework's incident: a catch-all defer placed first made an agent deaf to everyone."""
    rules = [rule("quiet", "defer"), rule("dms", flags=["dm"]), rule("mentions", flags=["mention"])]
    assert shadow_warnings(rules, Always()) == [
        "rule 'quiet' (defer) comes before rule 'dms' and takes a DM: 'dms' never sees one. Move 'dms' above 'quiet', or narrow"
        ' the match of \'quiet\' (say, by "channel" or "flags")',
        "a DM would not wake the mind: rule 'quiet' defers it. If the mind should answer when spoken to, add a rule such as"
        ' {"name": "dms", "match": {"flags": ["dm"]}, "behaviour": "always"} at position 1',
        "rule 'quiet' (defer) comes before rule 'mentions' and takes a mention: 'mentions' never sees one. Move 'mentions' above"
        ' \'quiet\', or narrow the match of \'quiet\' (say, by "channel" or "flags")',
        "a mention would not wake the mind: rule 'quiet' defers it. If the mind should answer when spoken to, add a rule such as"
        ' {"name": "mentions", "match": {"flags": ["mention"]}, "behaviour": "always"} at position 1',
    ]
    # In the right order nothing is said; a debounce ahead of the DM rule still shadows it.
    assert shadow_warnings([rules[1], rules[2], rules[0]], Always()) == []
    ambient = rule("ambient", {"debounce": {"ms": 2000}}, kinds=["message"])
    assert [w.split(":")[0] for w in shadow_warnings([ambient, rules[1]], Always())] == [
        "rule 'ambient' (debounce) comes before rule 'dms' and takes a DM"
    ]
    # A default of defer with nothing for DMs or mentions: both would wake nothing.
    assert [w.split(":")[0] for w in shadow_warnings([], Defer())] == ["a DM would not wake the mind", "a mention would not wake the mind"]
    # A passthrough rate limit lets later rules decide, so it shadows nothing.
    limited = read_rule({"name": "rl", "behaviour": {"rate_limit": {"tokens": 3, "refill_ms": 60000}}, "passthrough": True}).rule
    assert shadow_warnings([limited, rules[1], rules[2]], Always()) == []


def test_only_the_table_module_runs_sql_on_the_rules_tables() -> None:
    import ast
    import re

    tables = re.compile(r"\b(FROM|JOIN|UPDATE|INTO)\s+(gate_rules|gate_minds)\b", re.IGNORECASE)
    root = Path(__file__).resolve().parents[1]
    found = {
        str(p.relative_to(root))
        for p in (root / "noemad").rglob("*.py")
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and tables.search(n.value) for n in ast.walk(ast.parse(p.read_text())))
    }
    assert found == {"noemad/rules/table.py"}, "read and change a mind's wake rules through noemad/rules/table.py"
