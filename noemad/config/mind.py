"""`[minds.NAME]`: one mind's settings, one model (`MindSettings`) whichever way they come.

They come from the `[minds.NAME]` table of noemad.toml, or from the JSON
stored with the mind (set by `noemactl mind create --settings`, `noemactl
mind set`, `PATCH /api/v1/minds/NAME`). Each is checked at its edge with the
same rules and sentences; the running settings of a mind are the stored keys
over the table's keys over the defaults (`MindSettings.effective`), so a live
change needs no reload and `mind set --unset KEY` hands the key back to the
file. Where the next settings go.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError, model_validator

from noemad.config.connectors import ConnectorSettings, check_keys
from noemad.config.gate import MindGate
from noemad.config.governance import MindGovernance, refuse_retired
from noemad.config.models import BudgetSettings, RoleOverrides
from noemad.config.problems import describe_validation_error
from noemad.config.schedules import ArchiveOverride, ScheduleOverrides
from noemad.config.section import Section, flag, unit, whole
from noemad.errors import InvalidInput


DEFAULT_ATTENTION_CAPACITY = 4
MAX_ATTENTION_CAPACITY = 16
DEFAULT_CONTEXT_TOKENS = 60_000  # a respond request: hours of a busy room, under every long-context price line
CONTEXT_TOKENS = (4_000, 1_000_000)
MAX_PERSONA = 20_000
MAX_COOLDOWN = 365 * 86400.0


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


class MindSettings(Section):
    """`[minds.NAME]`: one mind's settings, here or stored with the mind (see MIND SETTINGS)."""

    # Both sources are this one model, checked by the same rules. A mind runs
    # with, key by key, the first that sets it of: its stored settings (`mind
    # create --settings`, `mind set`, PATCH), its [minds.NAME] table, the
    # defaults (for models, schedules and budgets: [models], [schedules],
    # [budgets]). See `effective` and `with_stored`.

    persona: Annotated[str | None, BeforeValidator(_persona)] = Field(
        None, description="The system prompt of the mind's respond calls; unset means \"You are NAME, a long-lived mind. ...\"."
    )
    attention_capacity: Annotated[int, BeforeValidator(whole(1, MAX_ATTENTION_CAPACITY))] = Field(
        DEFAULT_ATTENTION_CAPACITY, description=f"How many thoughts enter the workspace each cycle (1 to {MAX_ATTENTION_CAPACITY})."
    )
    context_tokens: Annotated[int, BeforeValidator(whole(*CONTEXT_TOKENS))] = Field(
        DEFAULT_CONTEXT_TOKENS,
        description="Input tokens of one respond request, an estimate: the persona and tools, then as much of the"
        f" conversation as fits ({CONTEXT_TOKENS[0]:,} to {CONTEXT_TOKENS[1]:,}).",
    )
    narrative_llm: Annotated[bool, BeforeValidator(flag)] = Field(
        False, description="Ask the narrate model to reword each new narrative (kept only if it adds nothing)."
    )
    notify_proactively: Annotated[bool, BeforeValidator(flag)] = Field(
        False, description="Also notify on confident new beliefs the mind attended to, not only on warnings and misses."
    )
    notify_min_confidence: Annotated[float, BeforeValidator(unit)] = Field(
        0.8, description="Least confidence of a belief that notifies proactively (0 to 1)."
    )
    notify_min_salience: Annotated[float, BeforeValidator(unit)] = Field(
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
        return refuse_retired(data, "[minds.NAME.governance]")

    def effective(self, stored: MindSettings) -> MindSettings:
        """These settings (the file's) with `stored` over them, key by key, tables merged."""
        return MindSettings.model_validate(_merge(self.model_dump(exclude_unset=True), stored.model_dump(exclude_unset=True)))


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


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
