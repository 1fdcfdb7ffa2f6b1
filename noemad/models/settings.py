"""The effective settings of one role for one mind: global config, then the mind's overrides."""

from __future__ import annotations

from noemad.config.models import Budget, RoleSettings

from noemad.config.schema import Config
from noemad.models.pricing import PRICES, Price
from noemad.models.types import Role


def role_settings(config: Config, mind: str, role: Role) -> RoleSettings:
    """The model, effort, timeout and output limit of `role` for `mind`."""
    base: RoleSettings = getattr(config.models, role)
    mind_settings = config.minds.get(mind)
    if mind_settings is None:
        return base
    override = getattr(mind_settings.models, role)
    changes = {k: v for k, v in override if v is not None}
    return base.model_copy(update=changes) if changes else base


def budget(config: Config, mind: str, role: Role) -> Budget:
    """The daily budget of `role` for `mind`."""
    mind_settings = config.minds.get(mind)
    budgets = mind_settings.budgets if mind_settings and mind_settings.budgets else config.budgets
    found: Budget = getattr(budgets, role)
    return found


def price(config: Config, model: str) -> Price | None:
    """The price of `model`: the config's, else the built-in table's, else unknown."""
    configured = config.pricing.get(model)
    if configured is not None:
        return Price(configured.input, configured.output, configured.tier_threshold, configured.tier_multiplier)
    return PRICES.get(model)
