"""What a change to the rules does: the probe table, and warnings for rules that swallow DMs or mentions.

After an add, remove or move, the answer shows what six typical stimuli (a
DM, a mention, a reply to the mind, ambient human talk, ambient bot talk, an
observation) would do before and after. The shadow warnings name the
agent framework's incident: a catch-all `defer` placed first made an agent
deaf to everyone. A rule that decides a DM or a mention ahead of the rule
written for them, or an order under which a DM or mention wakes nothing,
is said in a sentence with what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from noemad.rules.match import Facts, Matcher
from noemad.rules.shape import PASSTHROUGH_KINDS, Always, Behaviour, Defer, Rule
from noemad.rules.table import StoredRules


def _facts(kind: str, channel: str, author: str, text: str, *flags: str) -> Facts:
    return Facts(kind, channel, author, text, frozenset(flags), frozenset())


PROBES: tuple[tuple[str, Facts], ...] = (
    ("a DM", _facts("message", "discord:dm:someone", "someone", "hello, are you there?", "dm")),
    ("a mention", _facts("message", "discord:guild:general", "someone", "@you can you look at this?", "mention")),
    ("a reply to the mind", _facts("message", "discord:guild:general", "someone", "thanks, that worked", "reply")),
    ("ambient human talk", _facts("message", "discord:guild:general", "someone", "anyone around for lunch?")),
    ("ambient bot talk", _facts("message", "discord:guild:general", "somebot", "build 812 passed", "from_bot")),
    ("an observation", _facts("observation", "", "sensor", "the build is green")),
)
# The probes that say the mind is spoken to, with the flag a rule names to handle them.
_ADDRESSED: tuple[tuple[str, str], ...] = (("a DM", "dm"), ("a mention", "mention"))


@dataclass(frozen=True)
class ProbeRow:
    """What one probe would do before and after a change."""

    probe: str
    before: str
    after: str


def _compiled(rules: Sequence[Rule]) -> list[tuple[Rule, Matcher]]:
    return [(rule, Matcher(rule.match)) for rule in rules]


def outcome(compiled: Sequence[tuple[Rule, Matcher]], default: Behaviour, facts: Facts) -> str:
    """What `facts` would meet: "wake (rule dms)", "defer (default)", "rate_limit: wake while tokens last (...), else later rules: ..."."""
    for index, (rule, matcher) in enumerate(compiled):
        if not matcher.test(facts):
            continue
        does = rule.behaviour.does()
        if rule.behaviour.kind in PASSTHROUGH_KINDS:  # it may deny
            if rule.passthrough:
                return f"{does}, else later rules (rule {rule.name}): {outcome(compiled[index + 1 :], default, facts)}"
            return f"{does}, else defer (rule {rule.name})"
        return f"{does} (rule {rule.name})"
    return f"{default.does()} (default)"


def _parts(rules: StoredRules | tuple[Sequence[Rule], Behaviour]) -> tuple[Sequence[Rule], Behaviour]:
    return (rules.rules, rules.default) if isinstance(rules, StoredRules) else rules


def probe_table(
    before: StoredRules | tuple[Sequence[Rule], Behaviour], after: StoredRules | tuple[Sequence[Rule], Behaviour]
) -> list[ProbeRow]:
    """For each probe, what it would do under the rules `before` and `after` a change."""
    (old_rules, old_default), (new_rules, new_default) = _parts(before), _parts(after)
    old, new = _compiled(old_rules), _compiled(new_rules)
    return [ProbeRow(label, outcome(old, old_default, f), outcome(new, new_default, f)) for label, f in PROBES]


def _deciding(compiled: Sequence[tuple[Rule, Matcher]], facts: Facts) -> int | None:
    """The index of the rule that decides `facts` when every passthrough rule lets it by; None: the default decides."""
    for index, (rule, matcher) in enumerate(compiled):
        if matcher.test(facts) and not rule.passthrough:
            return index
    return None


def shadow_warnings(rules: Sequence[Rule], default: Behaviour) -> list[str]:
    """A sentence for each rule that swallows DMs or mentions ahead of the rule written for them, or when they wake nothing."""
    compiled = _compiled(rules)
    warnings: list[str] = []
    probes = dict(PROBES)
    for label, flag in _ADDRESSED:
        f = probes[label]
        first = _deciding(compiled, f)
        behaviour = default if first is None else compiled[first][0].behaviour
        if first is not None and behaviour != Always():
            rule = compiled[first][0]
            for later, matcher in compiled[first + 1 :]:
                if flag in later.match.flags and matcher.test(f) and flag not in rule.match.flags:
                    warnings.append(
                        f"rule {rule.name!r} ({rule.behaviour.kind}) comes before rule {later.name!r} and takes"
                        f" {label}: {later.name!r} never sees one. Move {later.name!r} above {rule.name!r}, or narrow"
                        f" the match of {rule.name!r} (say, by \"channel\" or \"flags\")"
                    )
                    break
        if behaviour == Defer():
            by = "the default defers it" if first is None else f"rule {compiled[first][0].name!r} defers it"
            warnings.append(
                f"{label} would not wake the mind: {by}. If the mind should answer when spoken to, add a rule such as"
                f' {{"name": "{flag}s", "match": {{"flags": ["{flag}"]}}, "behaviour": "always"}} at position 1'
            )
    return warnings
