"""The routes of the mind as it stood at a time: a belief's history, and what changed in a window.

The `?at=` reads of beliefs, memories, the narrative and a mind's overview
are on their routes in `noemad.api.app`; what they share is here.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from fastapi.routing import APIRouter

from noemad.cognition.asof import DEFAULT_THRESHOLD, Changes
from noemad.fields import Id
from noemad.runtime.asof_reads import BeliefHistory
from noemad.runtime.supervisor import Supervisor

MindName = Annotated[str, Path(description="The mind's name.")]
V1 = "/api/v1"

AT_HELP = "As the mind stood then: an event id, a span back from now (30m, 24h, 3d) or an ISO date or time."
At = Annotated[str | None, Query(min_length=1, max_length=40, description=AT_HELP)]


def add_asof_routes(api: APIRouter, sup: Supervisor) -> None:
    """Register the routes on the app's router (see `create_app` for why not an included router)."""

    @api.get(V1 + "/beliefs/{belief_id}/history", response_model=BeliefHistory, summary="Every change of a belief's confidence and status")
    def belief_history(belief_id: Annotated[Id, Path()]) -> BeliefHistory:
        """Oldest first, each with the event that made it, who or what made it (`by`: evidence, warning, operator, outcome), its
        cause, the item or batch of evidence (or the withdrawn items) behind it, and the evidence counted after it. Evidence
        that moved neither confidence nor status is not a change."""
        return sup.asof.belief_history(belief_id)

    @api.get(V1 + "/minds/{mind}/changes", response_model=Changes, summary="What a mind changed its mind about in a window")
    def changes(
        mind: MindName,
        since: Annotated[str, Query(min_length=1, max_length=40, description="The window's start: " + AT_HELP)],
        until: Annotated[str | None, Query(min_length=1, max_length=40, description="The window's end (default now): " + AT_HELP)] = None,
        threshold: Annotated[float, Query(ge=0.0, le=1.0, description="How far a belief's confidence must move to be named.")] = DEFAULT_THRESHOLD,
    ) -> Changes:
        """Beliefs created, moved by more than `threshold`, contested or rejected; memories retracted; lessons learnt — each with
        the event that made it and that event's cause."""
        return sup.asof.changes(mind, since, until, threshold)
