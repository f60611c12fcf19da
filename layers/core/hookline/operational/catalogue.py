"""The operational event types: name, what it means, its payload's JSON Schema and an
example. Published by `hookline.operational.monitor` (and `endpoint.disabled` by the
deliverer) through the ordinary publish path, so they are signed, retried and logged like
any other event; listed in the portal's event catalogue and in docs/operational-events.md."""

from __future__ import annotations

from typing import Any

from hookline.records import frozen

ENDPOINT_FAILING = "endpoint.failing"
ENDPOINT_RECOVERED = "endpoint.recovered"
ENDPOINT_DISABLED = "endpoint.disabled"
DELIVERY_DEAD = "delivery.dead"


@frozen
class OperationalType:
    """One operational event type, documented."""

    name: str
    description: str
    schema: dict[str, Any]
    example: dict[str, Any]


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": sorted(required),
        "properties": {**required, **(optional or {})},
    }


_TEXT = {"type": "string"}
_TIME = {"type": "string", "format": "date-time"}
_MAYBE_TEXT = {"type": ["string", "null"]}
_MAYBE_TIME = {"type": ["string", "null"], "format": "date-time"}
_MAYBE_INT = {"type": ["integer", "null"]}
_ENDPOINT = {"endpoint_id": _TEXT, "tenant_id": _TEXT, "url": _TEXT, "description": _TEXT}
_LAST_ERROR = {
    "type": ["object", "null"],
    "required": ["at"],
    "properties": {"at": _TIME, "status": _MAYBE_INT, "error": _MAYBE_TEXT,
                   "excerpt": _MAYBE_TEXT},
}  # fmt: skip

TYPES: tuple[OperationalType, ...] = (
    OperationalType(
        ENDPOINT_FAILING,
        "An endpoint crossed its failure threshold: N consecutive failed attempts, or an "
        "error rate over its window (defaults 5, and 50 % over 15 minutes). Sent once per "
        "state change; endpoint.recovered follows its first success.",
        _object(
            {
                **_ENDPOINT,
                "state": {"const": "failing"},
                "since": _TIME,
                "reason": _TEXT,
                "consecutive_failures": {"type": "integer"},
                "attempts_in_window": {"type": "integer"},
                "failures_in_window": {"type": "integer"},
                "window_seconds": {"type": "integer"},
                "last_error": _LAST_ERROR,
            },
        ),
        {
            "endpoint_id": "ep_01HZX3K6Q2",
            "tenant_id": "ten_01HZX3J9A1",
            "url": "https://hooks.example.com/in",
            "description": "orders service",
            "state": "failing",
            "since": "2026-12-01T22:41:07+00:00",
            "reason": "5 consecutive failed attempts",
            "consecutive_failures": 5,
            "attempts_in_window": 5,
            "failures_in_window": 5,
            "window_seconds": 900,
            "last_error": {
                "at": "2026-12-01T22:41:05+00:00",
                "status": 503,
                "error": "HTTP 503",
                "excerpt": '{"error": "maintenance"}',
            },
        },
    ),
    OperationalType(
        ENDPOINT_RECOVERED,
        "A failing endpoint answered an attempt with 2xx again.",
        _object(
            {
                **_ENDPOINT,
                "state": {"const": "healthy"},
                "recovered_at": _TIME,
                "failing_since": _TIME,
                "last_success_at": _TIME,
            },
        ),
        {
            "endpoint_id": "ep_01HZX3K6Q2",
            "tenant_id": "ten_01HZX3J9A1",
            "url": "https://hooks.example.com/in",
            "description": "orders service",
            "state": "healthy",
            "recovered_at": "2026-12-01T23:02:11+00:00",
            "failing_since": "2026-12-01T22:41:07+00:00",
            "last_success_at": "2026-12-01T23:02:10+00:00",
        },
    ),
    OperationalType(
        ENDPOINT_DISABLED,
        "Hookline stopped delivering to an endpoint (it answered 410 Gone, or failed "
        "continuously for days). Nothing is sent to it until it is enabled again.",
        _object(
            {
                "endpoint_id": _TEXT,
                "url": _TEXT,
                "reason": _TEXT,
                "disabled_at": _TIME,
                "how_to_reenable": _TEXT,
            },
            {"tenant_id": _TEXT, "description": _TEXT},
        ),
        {
            "endpoint_id": "ep_01HZX3K6Q2",
            "tenant_id": "ten_01HZX3J9A1",
            "url": "https://hooks.example.com/in",
            "reason": "the endpoint answered 410 Gone",
            "disabled_at": "2026-12-01T22:50:00+00:00",
            "how_to_reenable": "POST /v1/endpoints/ep_01HZX3K6Q2/enable, or Enable on the "
            "endpoint's page in the portal or console",
        },
    ),
    OperationalType(
        DELIVERY_DEAD,
        "A delivery ran out of retries or passed its deadline: the event will not be sent "
        "to this endpoint again unless it is replayed or resent.",
        _object(
            {
                **_ENDPOINT,
                "delivery_id": _TEXT,
                "event_id": _TEXT,
                "event_type": _TEXT,
                "attempts": {"type": "integer"},
                "last_status": _MAYBE_INT,
                "last_error": _MAYBE_TEXT,
                "dead_at": _TIME,
            },
        ),
        {
            "delivery_id": "dlv_01HZX4F1M8",
            "event_id": "evt_01HZX4EZQ0",
            "event_type": "order.paid",
            "endpoint_id": "ep_01HZX3K6Q2",
            "tenant_id": "ten_01HZX3J9A1",
            "url": "https://hooks.example.com/in",
            "description": "orders service",
            "attempts": 10,
            "last_status": 500,
            "last_error": "deadline passed after 10 attempts; last: HTTP 500",
            "dead_at": "2026-12-04T22:41:07+00:00",
        },
    ),
)

NAMES: tuple[str, ...] = tuple(t.name for t in TYPES)
BY_NAME: dict[str, OperationalType] = {t.name: t for t in TYPES}


def how_to_reenable(endpoint_id: str) -> str:
    """The sentence an endpoint.disabled payload carries."""
    return (
        f"POST /v1/endpoints/{endpoint_id}/enable, or Enable on the endpoint's page in the "
        "portal or console"
    )
