"""noemad.toml as a whole: `Config`, assembled from the sections' modules, and the settings a mind runs with.

A file is read with tomllib and validated into `Config`; anything wrong (a
syntax error, an unknown key, a value out of range) raises one `ConfigError`
whose sentence names each problem and, for unknown keys, the nearest valid
one. A missing file means the embedded defaults.

Each section is a model in the module named for it (`daemon`, `models`,
`schedules`, `gate`, `governance`, `replica`; a mind's `[minds.NAME]` is
`mind.MindSettings`). This module holds what needs the whole file: the
checks across sections, and a mind's running settings drawn from it (its
stored settings over its table, its schedules, its governance, its
archiving). Reading the file is `noemad.config.files`, and the sentences for
what fails validation are `noemad.config.problems`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, model_validator

from noemad.config.daemon import DaemonSettings, TimelineSettings
from noemad.config.gate import GateSettings
from noemad.config.governance import GovernanceSettings, refuse_retired
from noemad.config.mind import MindSettings
from noemad.config.models import BudgetSettings, ModelsSettings, PriceSettings
from noemad.config.replica import ReplicaSettings
from noemad.config.schedules import ArchiveSettings, ScheduleSettings
from noemad.config.section import Section


class Config(Section):
    """The whole of noemad.toml."""

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        return refuse_retired(data, "[governance]")

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
