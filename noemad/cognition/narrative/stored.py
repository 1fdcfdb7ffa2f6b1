"""Narratives stored (`update`, when the parts changed) and read back with their rephrasing (`latest`, `narrative_shown`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from sqlite_utils import Database

from noemad.cognition.narrative.model import (
    ACTOR,
    MAX_REFS,
    REPHRASED,
    SETTING,
    UPDATED,
    Narrative,
)
from noemad.cognition.narrative.render import render
from noemad.events import Event, EventDraft, append, get_event, latest_data, latest_events
from noemad.wire import wire

if TYPE_CHECKING:
    from noemad.config.mind import MindSettings


def last_updated(db: Database, mind: str, through: int | None = None) -> Event | None:
    """The mind's newest `narrative_updated` event (of those up to event `through`, if given)."""
    if through is not None:
        row = db.execute("SELECT id FROM events WHERE mind = ? AND kind = ? AND id <= ? ORDER BY id DESC LIMIT 1", [mind, UPDATED, through]).fetchone()
        return None if row is None else get_event(db, int(row[0]))
    found = latest_events(db, mind, kinds=(UPDATED,), limit=1)
    return found[0] if found else None


def update(db: Database, *, mind: str, narrative: Narrative, cause: int, cycle_id: str | None, now: float) -> Event | None:
    """Store `narrative` as `narrative_updated` if its parts changed since the last one (a writer job); else None.

    A mind's first narrative is stored unless it is empty.
    """
    previous = latest_data(db, mind, UPDATED)  # (id, data): its parts are all the comparison reads
    before = Narrative.from_data(previous[1]).parts() if previous else Narrative().parts()
    if narrative.parts() == before:
        return None
    return append(
        db,
        EventDraft(
            mind=mind,
            kind=UPDATED,
            actor=ACTOR,
            text=render(narrative),
            cycle_id=cycle_id,
            causation_id=cause,
            refs=list(dict.fromkeys(narrative.refs))[:MAX_REFS],
            data={**narrative.parts(), "rendered_by": "plain", "previous": previous[0] if previous else None},
        ),
        now,
    )


def _rephrased(db: Database, updated: Event, through: int | None = None) -> Event | None:
    bounded = " AND id <= ?" if through is not None else ""
    row = db.execute(
        f"SELECT id FROM events WHERE causation_id = ? AND kind = ?{bounded} ORDER BY id DESC LIMIT 1",
        [updated.id, REPHRASED, *([through] if through is not None else [])],
    ).fetchone()
    return None if row is None else get_event(db, int(row[0]))


@wire
@dataclass(frozen=True)
class NarrativeParts:
    """The five parts of a narrative, at most three short items each."""

    doing: list[str]
    """The cycle's admitted thoughts, in order."""
    why: list[str]
    """The newest stimuli, e.g. 'alice said …'."""
    recently: list[str]
    """Notable recent events: replies, belief status changes, warnings, goals, outcomes."""
    resolving: list[str]
    """Contested beliefs, then active goals."""
    next: list[str]
    """Open predictions with their due times."""


@wire
@dataclass(frozen=True)
class NarrativeShown:
    """A mind's newest narrative; every field but `mind` is null before its first."""

    mind: str
    event_id: int | None = None
    """The narrative_updated event."""
    at: str | None = None
    cycle_id: str | None = None
    text: str | None = None
    """The narrative as shown: the narrate model's rephrasing if it was accepted, else the plain prose."""
    plain: str | None = None
    """The plain prose rendered from the parts."""
    rendered_by: Literal["plain", "model"] | None = None
    reason: str | None = None
    """Why it is plain: narrative_llm_off, not_rephrased, no_model, budget, held, refused, model_error, truncated, empty_answer or unsupported_content."""
    detail: str | None = None
    """The reason as a sentence."""
    model_call: int | None = None
    """The narrate model call, when one was made."""
    rephrased_event_id: int | None = None
    """The narrative_rephrased event, when the mind asked for a rephrasing."""
    parts: NarrativeParts | None = None


def latest(db: Database, mind: str, settings: MindSettings | None = None, through: int | None = None) -> NarrativeShown | None:
    """The mind's newest narrative: parts, the prose as shown, the plain prose, who rendered it and why; None if none yet.

    With `through`, the narrative as it read right after that event: the newest written by then, rephrased if it was by then.
    """
    updated = last_updated(db, mind, through)
    if updated is None:
        return None
    rephrased = _rephrased(db, updated, through)
    plain = NarrativeShown(
        mind, event_id=updated.id, at=updated.at, cycle_id=updated.cycle_id, text=updated.text, plain=updated.text, rendered_by="plain",
        parts=NarrativeParts(**Narrative.from_data(updated.data).parts()),
    )
    if rephrased is not None:
        return replace(
            plain,
            text=rephrased.text,
            rendered_by=rephrased.data.get("rendered_by", "plain"),
            reason=rephrased.data.get("reason"),
            detail=rephrased.data.get("detail"),
            model_call=rephrased.data.get("model_call"),
            rephrased_event_id=rephrased.id,
        )
    if settings is None or not settings.narrative_llm:
        return replace(plain, reason="narrative_llm_off", detail=f"the mind's settings do not set {SETTING}: true")
    return replace(plain, reason="not_rephrased", detail="no rephrasing was recorded for this narrative")


def narrative_shown(db: Database, mind: str, settings: MindSettings | None = None, through: int | None = None) -> NarrativeShown:
    """The API's answer: `latest` (running `settings`; as of event `through` if given), or the mind's name alone before its first."""
    return latest(db, mind, settings, through) or NarrativeShown(mind)
