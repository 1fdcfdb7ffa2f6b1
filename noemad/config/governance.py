"""`[governance]` and `[minds.NAME.governance]`: whether the critic reviews a mind's drafted reply.

Governance is host policy like budgets: a global section and a per-mind
table, a field of `MindSettings` (so a stored value may override it the same
way, and `mind set` checks it). The earlier framework's settings are refused
here with the key to write instead.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from noemad.config.section import Section, unit


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


class GovernanceSettings(Section):
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
    confidence_floor: Annotated[float, BeforeValidator(unit)] | None = Field(
        None, description="Review a draft whose confidence (from the mind's beliefs about what it asserts) is below this (0 to 1)."
    )
    trivial_ack_patterns: Patterns = Field(
        default_factory=list, max_length=200, description="Regular expressions of more acknowledgments (whole draft, case-insensitive)."
    )


class MindGovernance(Section):
    """`[minds.NAME.governance]`: one mind's governance; unset keys follow [governance]."""

    enabled: bool | None = Field(None, description="Run the governance gate for this mind.")
    policy: GovernancePolicy | None = Field(None, description='"selective" or "confidence_only".')
    sensitive_terms: list[GovName] | None = Field(None, max_length=500, description="Terms that always fire review.")
    sensitive_tags: list[GovName] | None = Field(None, max_length=500, description="Recalled memory tags that fire review.")
    read_only_tools: list[GovName] | None = Field(None, max_length=500, description="Tools that do not count as mutating.")
    confidence_floor: Annotated[float, BeforeValidator(unit)] | None = Field(None, description="Confidence below which review fires.")
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


def refuse_retired(data: Any, table: str) -> Any:
    """`data` unchanged, or ValueError naming each retired setting in it and what to write under `table` instead."""
    if isinstance(data, dict):
        found = [key for key in RETIRED_SETTINGS if key in data]
        if found:
            raise ValueError(
                "; ".join(f"{key} is retired: write {RETIRED_SETTINGS[key][1]} under {table} instead" for key in found)
            )
    return data
