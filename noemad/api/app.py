"""The FastAPI application served on the daemon's socket (`/api/v1`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse, Response, StreamingResponse

from noemad import __version__
from noemad.api.fastpath import FrontDoorAPI, ingest as ingest_body
from noemad.api.archive import add_archive_routes
from noemad.api.asof import At, add_asof_routes
from noemad.api.backup import add_backup_routes
from noemad.api.connectors import add_connectors_routes
from noemad.api.transfer import IMPORT_PATH, add_transfer_routes
from noemad.api.gate import add_gate_routes
from noemad.api.metrics import CONTENT_TYPE as METRICS_TYPE, exposition
from noemad.api.operations import add_operations_routes
from noemad.api.operator import Op
from noemad.dashboard import add_dashboard_routes
from noemad.api.problems import PROBLEM, install_error_handlers
from noemad.api.schemas import (
    ClockAdvance,
    EventList,
    MindCreate,
    MindDelete,
    MindDeleted,
    MindList,
    MindPatch,
    Problem,
    TrustIn,
    TrustOut,
    BeliefList,
    BeliefOut,
    GoalList,
    ListedBelief,
    MemoryIn,
    MemoryList,
    PredictionList,
    PredictionOut,
    NotificationList,
    JobIn,
    JobList,
    RejectIn,
    RetractIn,
    NewsList,
    RetractOut,
    TrustList,
    ScheduleIn,
    ScheduleList,
)
from noemad.cognition.narrative.stored import NarrativeShown
from noemad.fields import Id, Since, Source
from noemad.clock import ManualClock, parse_since
from noemad.errors import InvalidInput, NoReplica
from noemad.background.jobs import Job
from noemad.cognition.calibration import Calibration
from noemad.cognition.goals import Goal
from noemad.cognition.memory.model import Memory
from noemad.cognition.notifications.table import Notification
from noemad.cognition.predictions import Prediction
from noemad.events import MAX_GREP, MAX_TAIL, Event, EventQuery, matches
from noemad.minds import Mind
from noemad.timeline import Timeline
from noemad.wire import dump, dump_json, extend
from noemad.runtime.asof_reads import BeliefsThen, MindThen
from noemad.runtime.ingested import Ingested, StimulusTurn
from noemad.runtime.cognition_edits import Rejected
from noemad.runtime.job_control import Schedule
from noemad.runtime.reads import Usage
from noemad.runtime.metrics import collect
from noemad.runtime.status import DaemonStatus, MindOverview, daemon_status, mind_overview
from noemad.runtime.supervisor import Supervisor
from noemad.connectors.manager import Connectors
from noemad.connectors.view import connectors_view, families as view_families, summary
from noemad.store.replica.child import ReplicaStatus
from noemad.stimuli import StimulusIn

MindName = Annotated[str, Path(description="The mind's name.")]
_PROBLEM_SCHEMA = {"schema": {"$ref": "#/components/schemas/Problem"}}
V1 = "/api/v1"  # every route's prefix
_ERROR_TEXTS = (
    (400, "Malformed body"),
    (404, "Not found"),
    (409, "Conflict"),
    (413, "Body too large"),
    (422, "Invalid input"),
    (503, "Shutting down"),
    (507, "Storage full: the disk holding the database is full; nothing was stored (Retry-After)"),
)
# The errors every route documents, given as the schema reference itself rather than as a `model`: for a
# model FastAPI builds an answer model of Problem for each code of each route (some 500 of them, about a
# twentieth of the daemon's start) only to write this same reference into the document.
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"description": text, "content": {PROBLEM: _PROBLEM_SCHEMA, "application/json": _PROBLEM_SCHEMA}} for code, text in _ERROR_TEXTS
}
# Given with the model on one route, /metrics: it answers text/plain, under which FastAPI documents its errors'
# schema, and a route with the model is what puts Problem among the document's components.
_ERRORS_BY_MODEL: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "description": text, "content": {PROBLEM: _PROBLEM_SCHEMA}} for code, text in _ERROR_TEXTS
}


def _sse(event: Event) -> bytes:
    return f"id: {event.id}\nevent: {event.kind}\ndata: {json.dumps(dump(event))}\n\n".encode()


def create_app(sup: Supervisor, connectors: Connectors | None = None) -> FastAPI:
    """Build the API over one supervisor and the connectors running beside it (none started when not given)."""
    connectors = connectors if connectors is not None else Connectors(sup)
    return build_app(sup, connectors, manual_clock=isinstance(sup.clock, ManualClock))


def build_app(sup: Supervisor, connectors: Connectors, manual_clock: bool) -> FastAPI:
    """The API whose routes and middlewares call `sup` and `connectors` when a request comes.

    They are read at request time only, never while building, so they may stand for the engine of
    the request being served (`noemad.api.shared`). `manual_clock` adds the route that moves the clock.
    """

    def limit() -> int:
        return sup.config.daemon.max_body_bytes  # read per request: a reload may change it

    app = FrontDoorAPI(
        sup=sup,
        limit=limit,
        unlimited=(IMPORT_PATH,),
        title="noemad",
        version=__version__,
        description="The API of noemad, served over its Unix socket. Errors are problem+json.",
        openapi_url=V1 + "/openapi.json",
        responses=_ERRORS,
        docs_url=None,
        redoc_url=None,
        # noemad exports no telemetry (nor lets the Anthropic client): off, FastAPI's native OpenTelemetry
        # skips asking for its three providers on every request.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    install_error_handlers(app)
    # Routes go on the app's own router: one included from an APIRouter has its
    # state (every parameter and answer model) built a second time on the first request.
    api = app.router

    def with_overdue(prediction: Prediction, now: float) -> PredictionOut:
        """A prediction as the API shows it: with whether it is overdue at `now`."""
        return extend(prediction, PredictionOut, overdue=prediction.is_overdue(now))

    # Routes that read the actors' live state (turns, pauses, retries, gates) are coroutines: that state is
    # changed on the event loop, so it is read there, never from the thread pool a sync route runs in.
    @api.get(V1 + "/status", response_model=DaemonStatus, summary="The daemon's state")
    async def status() -> DaemonStatus:
        await sup.replica_status()  # Litestream asked now, so the status shows the replica as it is
        return replace(daemon_status(sup), connectors=summary(await connectors_view(connectors)))

    @api.get(V1 + "/replica", response_model=ReplicaStatus, summary="The store's replica")
    async def replica() -> ReplicaStatus:
        """How the Litestream replica is doing: its state, how far it is behind the store, its last sync and position, its errors.

        404 when noemad.toml has no [replica].
        """
        found = await sup.replica_status()
        if found is None:
            raise NoReplica("noemad.toml has no [replica], so the store is not replicated; add one (see the README, Backups and replicas) and restart noemad")
        return found

    @api.get(V1 + "/minds", response_model=MindList, summary="List minds")
    def minds() -> dict[str, Any]:
        return {"minds": sup.reads.minds()}

    @api.post(V1 + "/minds", response_model=Mind, status_code=201, summary="Create a mind")
    async def create(body: MindCreate, op: Op) -> Mind:
        return await sup.create_mind(body.name, body.settings, actor=op.actor)

    @api.get(V1 + "/minds/{mind}", response_model=MindOverview | MindThen, summary="A mind's overview")
    async def show(mind: MindName, at: At = None) -> MindOverview | MindThen:
        """With `at`, the mind as it stood then: its events up to then, its beliefs by status and memories then, its narrative as it read."""
        if at is not None:
            return await run_in_threadpool(sup.asof.mind_then, mind, at)
        return await mind_overview(sup, mind)

    @api.patch(V1 + "/minds/{mind}", response_model=Mind, summary="Change a mind's settings, keeping its history")
    async def change(mind: MindName, body: MindPatch, op: Op) -> Mind:
        """A JSON merge patch of the stored settings: a value sets its key, null unsets it (the file's or the default applies again).

        Checked whole; recorded as `settings_changed` with each key's old and new value; the mind's next turn runs with them.
        """
        return await sup.change_settings(mind, body.settings, actor=op.actor)

    @api.delete(V1 + "/minds/{mind}", response_model=MindDeleted, summary="Delete a mind and all it holds")
    async def delete(mind: MindName, body: MindDelete) -> dict[str, Any]:
        return {"name": mind, "events_removed": await sup.delete_mind(mind, body.confirm)}

    @api.post(V1 + "/minds/{mind}/pause", response_model=Mind, summary="Pause a mind: no turns, no auxiliary model calls")
    async def pause(mind: MindName, op: Op) -> Mind:
        """Stimuli keep being stored; a turn under way finishes. Pausing a paused mind changes nothing."""
        return await sup.set_paused(mind, True, actor=op.actor)

    @api.post(V1 + "/minds/{mind}/resume", response_model=Mind, summary="Resume a paused mind")
    async def resume(mind: MindName, op: Op) -> Mind:
        """The mind takes one turn over everything that arrived while it was paused."""
        return await sup.set_paused(mind, False, actor=op.actor)

    @api.post(V1 + "/minds/{mind}/events", response_model=Ingested, status_code=201, summary="Ingest a stimulus")
    async def ingest(mind: MindName, body: Annotated[StimulusIn, Body()], op: Op) -> Ingested:
        """Store a stimulus; answered once it is committed and offered to the mind's gate, with the gate's decision (`gate`).

        JSON bodies are served by `FastIngest` before they reach this route.
        """
        return await ingest_body(sup, mind, body, op)

    @api.get(V1 + "/minds/{mind}/events", response_model=EventList, summary="A mind's events")
    def events(
        mind: MindName,
        kind: Annotated[list[str], Query(description="Only these kinds (repeatable).")] = [],  # noqa: B006
        since: Annotated[Since, Query(description="Only events with a larger id.")] = 0,
        limit: Annotated[int, Query(ge=1, le=1000, description="The oldest N events after the filters.")] = 100,
        tail: Annotated[
            int | None, Query(ge=1, le=MAX_TAIL, description="Instead of `limit`: the newest N events after the filters, oldest first.")
        ] = None,
        since_time: Annotated[
            str | None,
            Query(max_length=64, description="Only events at or after this: an ISO date or time, or a span back from now (10m, 2h, 3d)."),
        ] = None,
        grep: Annotated[
            str | None, Query(min_length=1, max_length=MAX_GREP, description="Only events whose text, or a value in their data (not a key), holds this, ignoring case.")
        ] = None,
    ) -> dict[str, Any]:
        """Unknown kinds are refused (422) with the list of kinds; `tail` and `grep` count matching events only."""
        start = parse_since(since_time, sup.clock.now()) if since_time else None
        query = EventQuery(kinds=kind, since=since, since_time=start, grep=grep, limit=limit, tail=tail)
        found, last = sup.event_reads.query_events(mind, query)
        return {"events": found, "next_since": found[-1].id if found else since, "last_id": last}

    @api.get(
        V1 + "/minds/{mind}/events/stream",
        summary="Follow a mind's new events (server-sent events)",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def stream(
        mind: MindName,
        request: Request,
        since: Annotated[Since | None, Query(description="Replay events after this id first; default: only new ones.")] = None,
        kind: Annotated[list[str], Query(description="Only these kinds (repeatable).")] = [],  # noqa: B006
        grep: Annotated[
            str | None, Query(min_length=1, max_length=MAX_GREP, description="Only events whose text, or a value in their data (not a key), holds this, ignoring case.")
        ] = None,
    ) -> StreamingResponse:
        """Each event as `data:` JSON, filtered as GET /minds/{mind}/events filters (unknown kinds are refused, 422)."""
        await run_in_threadpool(sup.reads.mind, mind)
        kinds = frozenset(await run_in_threadpool(sup.event_reads.check_kinds, kind))
        following = sup.follow(mind, since)  # subscribed now, before the response starts

        async def body() -> AsyncIterator[bytes]:
            try:
                if since is None:
                    yield b": following\n\n"
                async for event in following:
                    if (not kinds or event.kind in kinds) and (grep is None or matches(event, grep)):
                        yield _sse(event)
                yield b"event: end\ndata: {\"reason\": \"the mind was deleted or the daemon is stopping\"}\n\n"
            finally:
                following.close()

        return StreamingResponse(body(), media_type="text/event-stream", headers={"cache-control": "no-store"})

    @api.get(V1 + "/events/{event_id}", response_model=Event, summary="One event")
    def event(event_id: Annotated[Id, Path()]) -> Event:
        return sup.event_reads.event(event_id)

    @api.get(V1 + "/events/{event_id}/turn", response_model=StimulusTurn, summary="Where a stimulus is on its way to a turn")
    async def stimulus_turn(event_id: Annotated[Id, Path()]) -> StimulusTurn:
        """Waiting (with the gate's verdict and rule when it did not wake the mind) or taken; the turn that took it starts with a `cycle_started` citing it."""
        return await sup.stimulus_turn(event_id)

    @api.get(V1 + "/events/{event_id}/chain", response_model=Timeline, summary="The causal walk around an event")
    def chain(
        event_id: Annotated[Id, Path()],
        back: Annotated[int | None, Query(ge=0, le=6, description="Hops toward causes (at most 6).")] = None,
        forward: Annotated[int | None, Query(ge=0, le=6, description="Hops toward consequences (at most 6).")] = None,
        limit: Annotated[int | None, Query(ge=1, le=200, description="Most events (at most 200).")] = None,
    ) -> Response:
        # ~200 nodes and ~300 edges: written straight to JSON from the walk's
        # dataclasses, as the fast ingest path does, with none of FastAPI's
        # per-response work. tests/test_openapi.py checks answers match the schema.
        return Response(dump_json(sup.event_reads.chain(event_id, back, forward, limit)), media_type="application/json")

    # `:path`: a source is a name, and a name may hold "/" (sensor/3), sent as %2F and decoded before routing.
    @api.put(V1 + "/minds/{mind}/trust/{source:path}", response_model=TrustOut, summary="Set how far a mind trusts a source")
    async def put_trust(mind: MindName, source: Annotated[Source, Path(description="Who or what is trusted: a name.")], body: TrustIn, op: Op) -> dict[str, Any]:
        """Later evidence from the source counts with this credibility; evidence already held keeps its own."""
        await sup.edits.set_trust(mind, source, body.value, actor=op.actor)
        return {"mind": mind, "source": source, "value": body.value}

    @api.get(V1 + "/minds/{mind}/trust", response_model=TrustList, summary="The trust levels a mind was told, by source")
    def list_trust(mind: MindName) -> dict[str, Any]:
        """A source not listed counts at `default`."""
        default, levels = sup.reads.trust_levels(mind)
        return {"mind": mind, "default": default, "trust": levels}

    @api.get(V1 + "/minds/{mind}/beliefs", response_model=BeliefList | BeliefsThen, summary="A mind's beliefs, most confident first")
    def beliefs(
        mind: MindName,
        subject: Annotated[str | None, Query(description="Only beliefs about this subject.")] = None,
        status: Annotated[Literal["active", "contested", "rejected", "pinned"] | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        at: At = None,
    ) -> BeliefList | BeliefsThen:
        """With `at`, each belief as it stood then (from its history, not today's row), with the cutoff: beliefs created later are absent."""
        if at is not None:
            return sup.asof.beliefs_then(mind, at, subject, status, limit)
        return BeliefList(beliefs=[extend(b, ListedBelief) for b in sup.reads.beliefs(mind, subject, status, limit)])

    @api.get(V1 + "/beliefs/{belief_id}", response_model=BeliefOut, summary="One belief with its evidence")
    def belief(belief_id: Annotated[Id, Path()]) -> BeliefOut:
        found, events = sup.reads.belief(belief_id)
        return extend(found, BeliefOut, events=events)

    @api.post(V1 + "/minds/{mind}/memories", response_model=Memory, status_code=201, summary="Give a mind a memory (operators)")
    async def remember(mind: MindName, body: MemoryIn, op: Op) -> Memory:
        """Semantic and procedural memories come from consolidation, reflection and operators; episodes only from stimuli."""
        return await sup.edits.remember(mind, body.kind, body.text, body.derived_from, body.importance, actor=op.actor, tags=body.tags)

    @api.get(V1 + "/minds/{mind}/memories", response_model=MemoryList, summary="A mind's memories, or those matching a search")
    def memories(
        mind: MindName,
        search: Annotated[str | None, Query(description="Full-text search, best matches first (no side effects).")] = None,
        kind: Annotated[Literal["episodic", "semantic", "procedural"] | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        status: Annotated[
            Literal["active", "retracted"] | None, Query(description="Only memories of this status (not with `search`, which finds active ones).")
        ] = None,
        at: At = None,
    ) -> dict[str, Any]:
        """With `at`, the memories as they stood then, oldest first: written by then, retracted or not then, recalled as often as by then."""
        if search is not None and status is not None:
            raise InvalidInput("a search finds active memories only; drop status or search")
        if at is not None:
            if search is not None:
                raise InvalidInput("a search looks at today's memories; drop search or at")
            return {"memories": sup.asof.memories_then(mind, at, kind, limit, status)}
        return {"memories": sup.reads.memories(mind, search, kind, limit, status)}

    @api.post(V1 + "/memories/{memory_id}/retract", response_model=RetractOut, summary="Retract a memory: it is no longer recalled")
    async def retract(memory_id: Annotated[Id, Path()], body: RetractIn, op: Op) -> dict[str, Any]:
        """Recorded as `memory_retracted` with the reason, by the operator who asked; the memory stays listed, marked retracted. Retracting it twice is a conflict."""
        memory, event = await sup.edits.retract_memory(memory_id, body.reason, actor=op.actor)
        return {"memory": memory, "event": event}

    @api.get(V1 + "/memories/{memory_id}", response_model=Memory, summary="One memory")
    def memory(memory_id: Annotated[Id, Path()]) -> Memory:
        return sup.reads.memory(memory_id)

    @api.get(V1 + "/minds/{mind}/goals", response_model=GoalList, summary="A mind's goals, oldest first")
    def goals(
        mind: MindName,
        status: Annotated[Literal["active", "completed", "abandoned"] | None, Query(description="Only goals of this status.")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        return {"goals": sup.reads.goals(mind, status, limit)}

    @api.get(V1 + "/goals/{goal_id}", response_model=Goal, summary="One goal")
    def goal(goal_id: Annotated[Id, Path()]) -> Goal:
        return sup.reads.goal(goal_id)

    @api.get(V1 + "/minds/{mind}/predictions", response_model=PredictionList, summary="A mind's predictions, soonest due first")
    def predictions(
        mind: MindName,
        status: Annotated[Literal["open", "hit", "miss"] | None, Query(description="Only predictions of this status.")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        now = sup.clock.now()  # one instant for the whole list
        return {"predictions": [with_overdue(p, now) for p in sup.reads.predictions(mind, status, limit)]}

    @api.get(V1 + "/predictions/{prediction_id}", response_model=PredictionOut, summary="One prediction")
    def prediction(prediction_id: Annotated[Id, Path()]) -> PredictionOut:
        return with_overdue(sup.reads.prediction(prediction_id), sup.clock.now())

    @api.get(V1 + "/minds/{mind}/notifications", response_model=NotificationList, summary="A mind's notifications, newest first")
    def notifications(
        mind: MindName,
        status: Annotated[Literal["open", "acked"] | None, Query(description="Only notifications of this status.")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        """New ones arrive as `notification` events (repeats as `notification_suppressed`) on the event stream."""
        return {"notifications": sup.reads.notifications(mind, status, limit)}

    @api.post(V1 + "/notifications/{notification_id}/ack", response_model=Notification, summary="Acknowledge a notification")
    async def ack(notification_id: Annotated[Id, Path()], op: Op) -> Notification:
        """Recorded as `notification_acked`; acknowledging one twice is a conflict. A later repeat notifies anew."""
        return await sup.edits.ack(notification_id, actor=op.actor)

    @api.get(V1 + "/minds/{mind}/narrative", response_model=NarrativeShown, summary="What a mind would say it is doing, and why")
    def narrative(mind: MindName, at: At = None) -> NarrativeShown:
        """The newest narrative: its five parts and the prose as shown (the narrate model's if it added nothing). Null fields before the first.

        With `at`, the narrative as it read then: the newest written by then, as rephrased by then."""
        return sup.reads.narrative(mind) if at is None else sup.asof.narrative_then(mind, at)

    @api.get(V1 + "/minds/{mind}/calibration", response_model=Calibration, summary="A mind's stated confidence against outcomes")
    def calibration(mind: MindName) -> Calibration:
        """Bins of stated confidence with hit rates, the Brier score, and whether the mind is overconfident."""
        return sup.reads.calibration(mind)

    @api.get(
        V1 + "/metrics",
        summary="The daemon's metrics (Prometheus text format)",
        response_class=PlainTextResponse,
        responses={200: {"content": {"text/plain": {}}}, **_ERRORS_BY_MODEL},
    )
    async def metrics() -> PlainTextResponse:
        """Events by kind, stimuli per mind, turns and their latency, gate and governance counts, the writer, model calls by role, jobs: in the text exposition format 0.0.4."""
        # On the loop: it reads every gate; its two small grouped queries cost ~ms (bench/metrics.py).
        await sup.replica_status()
        families = collect(sup) + view_families(await connectors_view(connectors))
        return PlainTextResponse(exposition(families), media_type=METRICS_TYPE)

    @api.get(V1 + "/usage", response_model=Usage, summary="Model spend with cache hit rates")
    def usage(
        mind: Annotated[str | None, Query(description="Only this mind's calls.")] = None,
        by: Annotated[Literal["role", "model", "day", "mind"], Query(description="Group by this.")] = "role",
        since: Annotated[
            str | None, Query(description="Only calls at or after this: an ISO date or time, or a span back from now (30m, 24h, 7d).")
        ] = None,
    ) -> Usage:
        return sup.reads.usage(mind, by, parse_since(since, sup.clock.now()) if since else None)

    @api.post(V1 + "/minds/{mind}/jobs", response_model=Job, status_code=202, summary="Run reflection or consolidation now")
    async def run_job(mind: MindName, body: JobIn, op: Op) -> Job:
        """Answers at once with the running job; follow it with GET /jobs/{id}. A job of that kind already running for the mind is a conflict that names it. A paused schedule never blocks this."""
        return await sup.job_control.run_job(mind, body.kind, actor=op.actor)

    @api.get(V1 + "/jobs", response_model=JobList, summary="Background jobs, newest first")
    def jobs(
        mind: Annotated[str | None, Query(description="Only this mind's jobs.")] = None,
        kind: Annotated[Literal["reflection", "consolidation"] | None, Query(description="Only jobs of this kind.")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    ) -> dict[str, Any]:
        return {"jobs": sup.reads.list_jobs(mind, kind, limit)}

    @api.get(V1 + "/jobs/{job_id}", response_model=Job, summary="One job, with its progress or outcome")
    def job(job_id: Annotated[Id, Path()]) -> Job:
        return sup.reads.job(job_id)

    @api.get(V1 + "/schedules", response_model=ScheduleList, summary="Whether each kind's scheduled runs are paused")
    def schedules() -> dict[str, Any]:
        return {"schedules": sup.job_control.schedules()}

    @api.get(V1 + "/schedules/{kind}/news", response_model=NewsList, summary="Which minds have news for a kind of job")
    def schedule_news(kind: Annotated[Literal["reflection", "consolidation"], Path()]) -> dict[str, Any]:
        """A mind has news when an event not written by a job arrived since its last job of the kind started (or since it was created): the scheduler runs only those, and so does `noemactl reflect` with no mind."""
        return {"kind": kind, "minds": sup.job_control.news(kind)}

    @api.put(V1 + "/schedules/{kind}", response_model=Schedule, summary="Pause or resume a kind's scheduled runs for every mind")
    async def set_schedule(kind: Annotated[Literal["reflection", "consolidation"], Path()], body: ScheduleIn, op: Op) -> Schedule:
        """The pause is stored, so it survives a restart. It never blocks a run-now."""
        return await sup.job_control.pause_schedule(kind, body.paused, actor=op.actor)

    @api.post(V1 + "/memories/{memory_id}/reject", response_model=Rejected, summary="Reject a generalisation consolidation made")
    async def reject(memory_id: Annotated[Id, Path()], op: Op, body: RejectIn | None = None) -> Rejected:
        """The semantic memory is retracted and its belief set rejected (not moved by evidence); the episodes are untouched."""
        return await sup.edits.reject_generalisation(memory_id, (body or RejectIn()).reason, actor=op.actor)

    add_gate_routes(api, sup, connectors)
    add_connectors_routes(api, connectors)
    add_backup_routes(api, sup)
    add_transfer_routes(api, sup)
    add_archive_routes(api, sup)
    add_asof_routes(api, sup)
    add_operations_routes(api, sup)
    add_dashboard_routes(app)  # the pages, outside /api/v1 and the OpenAPI document

    if manual_clock:

        @api.post(V1 + "/clock/advance", summary="Move the manual clock forward (test daemons only)")
        async def advance(body: ClockAdvance) -> dict[str, Any]:
            clock = sup.clock
            assert isinstance(clock, ManualClock)  # the route is built only for engines on a manual clock
            clock.advance(body.seconds)
            await asyncio.sleep(0)  # let the woken timers run before answering
            return {"now": clock.now()}

    return app
