"""`[gate]` and `[minds.NAME.gate]`: the event gate on every mind, its reply judge, and the wake rules that seed a mind.

Wake rules are rows of a SQLite table owned by `noemad.rules.table` (added,
removed and moved at run time by `noemactl rules`, the API and a mind's own
tools, each change a `gate_rules_changed` event), seeded once per mind from
its `[minds.NAME.gate]` table (rules read by the one validator,
`noemad.rules.shape.read_rule`, when the file is loaded: a bad rule makes
the file invalid). The file seeds, the table then rules: the seed is written
when the mind is created, or at the first start that finds the table for a
mind whose rules were never written; afterwards the stored rules win, and a
change to `[minds.NAME.gate]` does not reach that mind. So `gate` is not a
stored setting (`mind set` refuses it). A judge instruction is a column of
the rule it belongs to, not a setting.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from noemad.config.models import Effort
from noemad.config.section import Section
from noemad.errors import RuleRefused
from noemad.rules.shape import Behaviour, ReadRule, read_behaviour, read_rule


JUDGE_MIN_INPUT = 4000  # tokens: the least budget a judge request is built to; less is read as this, with a log line


class JudgeSettings(Section):
    """`[gate.judge]`: the reply judge, a paid model call per judged batch, so off unless a host turns it on.

    The model is the `judge` role's in `[models]`. With `enabled = false`
    the rule validator and the mind's tools are as they were without it.
    """

    enabled: bool = Field(False, description="Accept judge wake rules; a small model decides REPLY or WAIT for each batch.")
    timeout: float = Field(20.0, gt=0, le=600, description="Seconds one judge call may take; a late verdict is ignored.")
    on_error: Literal["wake", "skip"] = Field(
        "wake", description="What a failed call (error, timeout, no verdict) does: wake the mind (fail open), or skip the batch."
    )
    max_input_tokens: int = Field(
        90_000, ge=1, le=1_000_000,
        description="The estimated input tokens a judge request is built to (an estimate, kept under the 100K price line);"
        f" under {JUDGE_MIN_INPUT} is read as {JUDGE_MIN_INPUT}.",
    )
    effort: Effort = Field("low", description="output_config effort of each judge call.")
    cache_ttl: Literal["5m", "1h"] = Field("5m", description="How long the judge's cached prefix is kept.")

    @property
    def input_budget(self) -> int:
        """`max_input_tokens` as used: never under the least a request is built to (gate-status says so when raised)."""
        return max(self.max_input_tokens, JUDGE_MIN_INPUT)

    @property
    def budget_clamped(self) -> bool:
        return self.max_input_tokens < JUDGE_MIN_INPUT

    @property
    def budget_note(self) -> str | None:
        """The sentence gate-status, the log and `--check-config` give a budget read at the least; None when it is not."""
        if not self.budget_clamped:
            return None
        return f"[gate.judge] max_input_tokens {self.max_input_tokens} is under {JUDGE_MIN_INPUT}: read as {JUDGE_MIN_INPUT}"


class GateSettings(Section):
    """`[gate]`: the event gate on every mind (each mind's wake rules are in [minds.NAME.gate] and the database)."""

    mind_tools: bool = Field(
        True, description="Give each mind's respond model the wake-rule tools and skip_reply; false leaves the respond request as it was."
    )
    privileged: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=lambda: ["operator"], max_length=100, description="Authors whose messages wake a sleeping mind."
    )
    judge: JudgeSettings = JudgeSettings()


def _read_gate_rule(index: int, value: Any) -> ReadRule:
    try:
        # A judge rule reads here; `Config` refuses it unless [gate.judge] enabled = true.
        return read_rule(value, f"rule {index}", judge=True)
    except RuleRefused as exc:
        raise ValueError(exc.detail) from None


class MindGate(Section):
    """`[minds.NAME.gate]`: the wake rules that seed the mind when it is created (see WAKE RULES)."""

    default: str | dict[str, Any] = Field(
        "always", description='What a stimulus no rule matches does: "always", "defer", or a table such as { debounce = { ms = 2000 } }.'
    )
    rules: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=500,
        description="[[minds.NAME.gate.rules]] tables in the order they are asked: name, match, behaviour, passthrough, resets.",
    )

    @field_validator("default")
    @classmethod
    def _behaviour(cls, value: Any) -> Any:
        try:
            read_behaviour(value)
        except RuleRefused as exc:
            raise ValueError(exc.detail.removeprefix("default: ")) from None  # the key is named already
        return value

    @field_validator("rules")
    @classmethod
    def _rules(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen: set[str] = set()
        for index, rule in enumerate(value, 1):
            name = _read_gate_rule(index, rule).rule.name
            if name in seen:
                raise ValueError(f"rule {index}: the name {name!r} is taken by an earlier rule; rule names are unique per mind")
            seen.add(name)
        return value

    def read(self) -> tuple[list[ReadRule], Behaviour, list[str]]:
        """The rules as read (each with its clamp notes), the default behaviour, and its notes."""
        default, notes = read_behaviour(self.default)
        return [_read_gate_rule(i, rule) for i, rule in enumerate(self.rules, 1)], default, notes
