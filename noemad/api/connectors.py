"""The connectors' routes: each connector's state and outbox, and retrying a given-up delivery by hand."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from fastapi.routing import APIRouter

from noemad.api.operator import Op
from noemad.connectors.manager import Connectors
from noemad.connectors.view import ConnectorsView, Retried, connectors_view
from noemad.fields import MAX_ID

MindName = Annotated[str, Path(description="The mind's name.")]
DeliveryId = Annotated[int, Path(ge=1, le=MAX_ID, description="The delivery's id (`noemactl connectors MIND` lists them).")]
V1 = "/api/v1"


def add_connectors_routes(api: APIRouter, connectors: Connectors) -> None:
    """Register the connectors' routes on the app's router (see `create_app` for why not an included router)."""

    @api.get(V1 + "/connectors", response_model=ConnectorsView, summary="Every mind's connectors and their outboxes")
    async def every(mind: Annotated[str | None, Query(description="Only this mind's connectors.")] = None) -> ConnectorsView:
        """Each connector's state (starting, connected, syncing, backing_off and why, stopped), rooms, last sync, restarts, last error; its outbox (pending, sent, given up, lag) with the deliveries pending and the newest given up."""
        return await connectors_view(connectors, mind)

    @api.get(V1 + "/minds/{mind}/connectors", response_model=ConnectorsView, summary="A mind's connectors and their outboxes")
    async def of_mind(mind: MindName) -> ConnectorsView:
        return await connectors_view(connectors, mind)

    @api.post(V1 + "/minds/{mind}/deliveries/{delivery}/retry", response_model=Retried, summary="Send a given-up delivery again")
    async def retry(mind: MindName, delivery: DeliveryId, op: Op) -> Retried:
        """Puts the delivery back in the outbox, due now, with a new give-up time; a `delivery` event (outcome retried) records it. Only a delivery given up can be retried (409 otherwise); one whose connector the mind no longer has is a conflict too."""
        row, event = await connectors.retry(mind, delivery, op.actor)
        return Retried(row, event.id)
