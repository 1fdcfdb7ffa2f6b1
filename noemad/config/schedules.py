"""`[schedules]` and `[archive]`: the background jobs run for every mind (reflection, consolidation, archiving), and one mind's overrides of them."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from noemad.config.section import Section


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


class ReflectionSchedule(Section):
    """`[schedules.reflection]`: when minds reflect on their recent past."""

    every: Every = Field("1d", description='How often each mind reflects, as a span (6h, 1d), or "off".')
    model_calls: int = Field(1, ge=0, le=10, description="Most narrate calls one run makes to reword its findings; 0 keeps them plain.")


class ConsolidationSchedule(Section):
    """`[schedules.consolidation]`: when minds turn recurring episodes into generalisations."""

    every: Every = Field("1d", description='How often each mind consolidates, as a span (6h, 1d), or "off".')
    window: Window = Field("30d", description="How far back episodes are taken, as a span.")
    min_episodes: int = Field(3, ge=2, le=10_000, description="Episodes a cluster needs to become a generalisation.")
    model_calls: int = Field(8, ge=0, le=100, description="Most summarise calls one run makes; 0 keeps every proposition plain.")


class ScheduleSettings(Section):
    """`[schedules]`: background jobs run for every mind."""

    reflection: ReflectionSchedule = ReflectionSchedule()
    consolidation: ConsolidationSchedule = ConsolidationSchedule()


class ReflectionOverride(Section):
    """`[minds.NAME.schedules.reflection]`: one mind's reflection settings; unset keys follow [schedules.reflection]."""

    every: Every | None = Field(None, description='How often this mind reflects, or "off".')
    model_calls: int | None = Field(None, ge=0, le=10, description="Most narrate calls one run makes.")


class ConsolidationOverride(Section):
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


class ArchiveSettings(Section):
    """`[archive]`: moving minds' old events into archive files once a day, as `noemactl archive` does by hand."""

    older_than: OlderThan = Field(
        "off",
        description='Archive each mind\'s events older than this span (180d, 26w) once a day, or "off". At least the'
        " mind's consolidation window.",
    )


class ArchiveOverride(Section):
    """`[minds.NAME.archive]`: one mind's archiving; unset follows [archive]."""

    older_than: OlderThan | None = Field(None, description='Archive this mind\'s events older than this span once a day, or "off".')


class ScheduleOverrides(Section):
    """`[minds.NAME.schedules]`: one mind's schedules."""

    reflection: ReflectionOverride = ReflectionOverride()
    consolidation: ConsolidationOverride = ConsolidationOverride()
