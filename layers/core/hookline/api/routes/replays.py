"""`/v1/replays`: replays recorded and run in the background (decision 0016); their progress."""

from __future__ import annotations

from http import HTTPStatus
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from hookline import replay as replays
from hookline.api.edge import Edge, new_router
from hookline.api.params import (
    Cursor,
    IdPath,
    Limit,
    ReplayStateFilter,
    TenantFilter,
    accepted_ok,
    ok,
)
from hookline.db import get_database
from hookline.management import replay_models as m
from hookline.runtime import replay_starter
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The replay routes."""
    routes = new_router()

    @routes.post(
        "/v1/replays",
        responses=accepted_ok(m.Replay),
        tags=["replays"],
        summary="Replay deliveries (runs in the background; GET its Location for progress)",
    )
    def create_replay(body: Annotated[m.ReplayCreate, Body()]) -> Response[m.Replay]:
        who = edge.caller()
        settings = get_settings()
        start = replay_starter(settings)  # the replay function, or a thread
        return edge.created(
            who,
            lambda: m.Replay(
                **replays.create_replay(
                    get_database(),
                    who,
                    body.model_dump(exclude_unset=True),
                    groups=settings.config.group_names,
                    start=start,
                )
            ),
            status=HTTPStatus.ACCEPTED,
            location=lambda answer: f"/v1/replays/{answer['id']}",
        )

    @routes.get("/v1/replays", responses=ok(m.ReplayPage), tags=["replays"], summary="List replays")
    def list_replays(
        tenant_id: TenantFilter = None,
        state: ReplayStateFilter = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.ReplayPage:
        page = replays.list_replays(
            get_database(),
            edge.caller(),
            tenant_id=tenant_id,
            state=state,
            cursor=cursor,
            limit=limit,
        )
        return m.ReplayPage(**page)

    @routes.get(
        "/v1/replays/<replay_id>",
        responses=ok(m.Replay),
        tags=["replays"],
        summary="Get a replay and its progress",
    )
    def get_replay(replay_id: IdPath) -> m.Replay:
        return m.Replay(**replays.get_replay(get_database(), edge.caller(), replay_id))

    return routes
