"""The operational event types are documented (decision 0068): each has a JSON Schema that its
example satisfies, and the monitor's payloads keep to it."""

from __future__ import annotations

from datetime import UTC, datetime

import jsonschema
import pytest

from hookline.operational.catalogue import BY_NAME, TYPES
from hookline.operational.monitor import OperationalMonitor
from hookline.operational.notify import Notifier
from hookline.settings import Settings

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("kind", TYPES, ids=lambda t: t.name)
def test_each_type_has_a_schema_its_example_satisfies(kind) -> None:
    jsonschema.Draft202012Validator.check_schema(kind.schema)
    jsonschema.validate(kind.example, kind.schema)
    assert kind.description


def stats(**overrides: object) -> dict[str, object]:
    row: dict[str, object] = {
        "endpoint_id": "ep_1", "tenant_id": "ten_1", "url": "https://x.example/in",
        "description": "", "enabled": True, "state": "healthy", "changed_at": None,
        "attempts": 5, "failures": 5, "streak": 5, "last_success_at": None, "last_ok": False,
        "last_attempt_at": datetime(2026, 12, 1, tzinfo=UTC), "last_failure_status": 503,
        "last_failure_error": None, "last_failure_excerpt": "down",
        "last_failure_at": datetime(2026, 12, 1, tzinfo=UTC), "failing_after_attempts": 5,
        "failing_error_rate": 0.5, "failing_window_seconds": 900,
    }  # fmt: skip
    row.update(overrides)
    return row


def monitor() -> OperationalMonitor:
    return OperationalMonitor(None, Settings(database_url=""), Notifier(None, None, None))  # type: ignore[arg-type]


def test_the_judged_payloads_keep_to_their_schemas() -> None:
    now = datetime(2026, 12, 1, 0, 5, tzinfo=UTC)
    failing = monitor().judge(stats(), now)
    assert failing is not None and failing.event_type == "endpoint.failing"
    jsonschema.validate(failing.payload, BY_NAME["endpoint.failing"].schema)
    recovered = monitor().judge(
        stats(state="failing", last_ok=True, changed_at=now, last_success_at=now), now
    )
    assert recovered is not None and recovered.event_type == "endpoint.recovered"
    jsonschema.validate(recovered.payload, BY_NAME["endpoint.recovered"].schema)


def test_too_few_failures_are_not_failing_and_a_disabled_endpoint_is_not_judged() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert monitor().judge(stats(streak=4, failures=4, attempts=9), now) is None
    assert monitor().judge(stats(enabled=False), now) is None
