"""Endpoint health and who hears about it (decision 0068): `GET /v1/endpoints/{id}/health`,
an endpoint's failing thresholds, and a tenant's opt-in e-mail and chat notifications."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, ConfigDict, Field

from hookline.api.edge import Edge, new_router
from hookline.api.params import IdPath, ok
from hookline.db import get_database
from hookline.operational import subscriptions
from hookline.settings import get_settings


class HealthPeriod(BaseModel):
    """An endpoint's attempts over one period."""

    attempts: int
    successes: int
    success_rate: float | None = Field(description="successes / attempts; null without any")
    p50_ms: int | None
    p99_ms: int | None
    last_success_at: str | None
    consecutive_failures: int


class HealthHour(BaseModel):
    """Attempts and successes in one hour."""

    hour: str
    attempts: int
    successes: int


class Thresholds(BaseModel):
    """When an endpoint counts as failing: N consecutive failed attempts, or an error rate
    over a window (with enough attempts in it)."""

    model_config = ConfigDict(extra="forbid")

    failing_after_attempts: int | None = None
    failing_error_rate: float | None = None
    failing_window_seconds: int | None = None


class EndpointHealth(BaseModel):
    """An endpoint's state and its last hour and day."""

    endpoint_id: str
    state: str = Field(description="healthy, failing or disabled")
    state_since: str | None
    disabled_reason: str | None
    thresholds: Thresholds
    last_hour: HealthPeriod
    last_day: HealthPeriod
    hourly: list[HealthHour]


class EndpointThresholds(Thresholds):
    """An endpoint's thresholds in force."""

    endpoint_id: str


class Notifications(BaseModel):
    """A tenant's opt-in: e-mail addresses and a Slack-compatible incoming webhook URL."""

    model_config = ConfigDict(extra="forbid")

    emails: list[str] = Field(default_factory=list, max_length=10)
    chat_url: str | None = None


class TenantNotifications(Notifications):
    """A tenant's notification targets."""

    model_config = ConfigDict(extra="ignore")

    tenant_id: str


def router(edge: Edge) -> Router:
    """The health and notification routes."""
    routes = new_router()

    @routes.get(
        "/v1/endpoints/<endpoint_id>/health",
        responses=ok(EndpointHealth),
        tags=["endpoints"],
        summary="Health: state, success rate, p50/p99 latency, last success (hour, day)",
    )
    def get_health(endpoint_id: IdPath) -> EndpointHealth:
        answer: dict[str, Any] = subscriptions.get_endpoint_health(
            get_database(), get_settings(), edge.caller(), endpoint_id
        )
        return EndpointHealth(**answer)

    @routes.put(
        "/v1/endpoints/<endpoint_id>/health/thresholds",
        responses=ok(EndpointThresholds),
        tags=["endpoints"],
        summary="Set when the endpoint counts as failing (null: the default)",
    )
    def put_thresholds(
        endpoint_id: IdPath, body: Annotated[Thresholds, Body()]
    ) -> EndpointThresholds:
        answer = subscriptions.set_endpoint_thresholds(
            get_database(), get_settings(), edge.caller(), endpoint_id, body.model_dump()
        )
        return EndpointThresholds(**answer)

    @routes.get(
        "/v1/tenants/<tenant_id>/notifications",
        responses=ok(TenantNotifications),
        tags=["tenants"],
        summary="Who is told when the tenant's endpoints fail (e-mail, chat)",
    )
    def get_notifications(tenant_id: IdPath) -> TenantNotifications:
        answer = subscriptions.get_tenant_notifications(get_database(), edge.caller(), tenant_id)
        return TenantNotifications(**answer)

    @routes.put(
        "/v1/tenants/<tenant_id>/notifications",
        responses=ok(TenantNotifications),
        tags=["tenants"],
        summary="Opt in to e-mail and chat messages when the tenant's endpoints fail",
    )
    def put_notifications(
        tenant_id: IdPath, body: Annotated[Notifications, Body()]
    ) -> TenantNotifications:
        answer = subscriptions.set_tenant_notifications(
            get_database(), get_settings(), edge.caller(), tenant_id, body.model_dump()
        )
        return TenantNotifications(**answer)

    return routes
