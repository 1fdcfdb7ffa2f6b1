"""`[models]`, `[budgets]` and `[pricing]`: who answers each role's model calls, and what a mind may spend on them.

A mind's own `[minds.NAME.models]` overrides are here too (`RoleOverrides`);
its `[minds.NAME.budgets]` is a whole `BudgetSettings`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from noemad.config.section import Section


Effort = Literal["low", "medium", "high", "none"]


class RoleSettings(Section):
    """`[models.ROLE]`: the model one role calls, and how."""

    model: str | None = Field(
        None, description="Model id; unset or empty means the role has no model and callers take their deterministic path."
    )
    effort: Effort = Field("none", description="output_config effort sent with each call; none omits it.")
    timeout: float = Field(60.0, gt=0, le=600, description="Seconds one call may take before it fails as a timeout.")
    max_tokens: int = Field(1024, ge=1, le=128_000, description="Most output tokens one call may produce.")


class RoleOverride(Section):
    """`[minds.NAME.models.ROLE]`: what one mind changes of a role's settings."""

    model: str | None = Field(None, description="Model id for this mind's calls of the role.")
    effort: Effort | None = Field(None, description="Effort for this mind's calls of the role.")
    timeout: float | None = Field(None, gt=0, le=600, description="Timeout in seconds for this mind's calls of the role.")
    max_tokens: int | None = Field(None, ge=1, le=128_000, description="Output token limit for this mind's calls of the role.")


class AnthropicSettings(Section):
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


class ScriptedSettings(Section):
    """`[models.scripted]`: replies from a file, for the demo and tests."""

    file: str | None = Field(None, description="The script: TOML with replies per role (see noemad.toml(5)).")


DEFAULT_MODELS = {"judge": "claude-haiku-5-5", "narrate": "claude-haiku-5-5", "summarise": "claude-haiku-5-5"}


class ModelsSettings(Section):
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


class Budget(Section):
    """`[budgets.ROLE]`: what one mind may spend on a role per UTC day."""

    tokens_per_day: int | None = Field(None, ge=0, description="Most tokens (input of every kind plus output) per mind per day.")
    cost_per_day: float | None = Field(None, ge=0, description="Most estimated dollars per mind per day.")


class BudgetSettings(Section):
    """`[budgets]`: daily budgets per role, for each mind."""

    respond: Budget = Budget()
    critic: Budget = Budget()
    judge: Budget = Budget()
    narrate: Budget = Budget()
    summarise: Budget = Budget()


class RoleOverrides(Section):
    """`[minds.NAME.models]`: one mind's role overrides."""

    respond: RoleOverride = RoleOverride()
    critic: RoleOverride = RoleOverride()
    judge: RoleOverride = RoleOverride()
    narrate: RoleOverride = RoleOverride()
    summarise: RoleOverride = RoleOverride()


class PriceSettings(Section):
    """`[pricing."MODEL"]`: dollars per million tokens, to add a model or change a price."""

    input: float = Field(ge=0, description="Uncached input, per million tokens.")
    output: float = Field(ge=0, description="Output, per million tokens.")
    tier_threshold: int | None = Field(None, ge=1, description="Input tokens past which a request is priced at the long-context tier.")
    tier_multiplier: float = Field(1.0, ge=1, description="How many times the base prices the long-context tier costs.")
