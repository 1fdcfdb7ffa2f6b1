"""Narratives stored (`update`, when the parts changed) and read back with their rephrasing (`latest`, `narrative_json`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from noemad.events import Event, EventDraft, append, get_event, latest_events

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
    previous = last_updated(db, mind)
    before = Narrative.from_data(previous.data).parts() if previous else Narrative().parts()
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
            data={**narrative.parts(), "rendered_by": "plain", "previous": previous.id if previous else None},
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


def latest(db: Database, mind: str, settings: MindSettings | None = None, through: int | None = None) -> dict[str, Any] | None:
    """The mind's newest narrative: parts, the prose as shown, the plain prose, who rendered it and why; None if none yet.

    With `through`, the narrative as it read right after that event: the newest written by then, rephrased if it was by then.
    """
    updated = last_updated(db, mind, through)
    if updated is None:
        return None
    rephrased = _rephrased(db, updated, through)
    out: dict[str, Any] = {
        "event_id": updated.id,
        "at": updated.at,
        "cycle_id": updated.cycle_id,
        "text": updated.text,
        "plain": updated.text,
        "rendered_by": "plain",
        "reason": None,
        "detail": None,
        "model_call": None,
        "rephrased_event_id": None,
        "parts": Narrative.from_data(updated.data).parts(),
    }
    if rephrased is not None:
        out.update(
            text=rephrased.text,
            rendered_by=rephrased.data.get("rendered_by", "plain"),
            reason=rephrased.data.get("reason"),
            detail=rephrased.data.get("detail"),
            model_call=rephrased.data.get("model_call"),
            rephrased_event_id=rephrased.id,
        )
    elif settings is None or not settings.narrative_llm:
        out.update(reason="narrative_llm_off", detail=f"the mind's settings do not set {SETTING}: true")
    else:
        out.update(reason="not_rephrased", detail="no rephrasing was recorded for this narrative")
    return out


def empty_json(mind: str) -> dict[str, Any]:
    """What the API answers for a mind with no narrative yet."""
    return {
        "mind": mind, "event_id": None, "at": None, "cycle_id": None, "text": None, "plain": None, "rendered_by": None,
        "reason": None, "detail": None, "model_call": None, "rephrased_event_id": None, "parts": None,
    }


def narrative_json(db: Database, mind: str, settings: MindSettings | None = None, through: int | None = None) -> dict[str, Any]:
    """The API's answer: `latest` with the mind's name (running `settings`; as of event `through` if given), or `empty_json`."""
    found = latest(db, mind, settings, through)
    return {"mind": mind, **found} if found is not None else empty_json(mind)
