"""Restore requests (the replay function's console event, and what the API records): what is
accepted, and how a refusal names the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hookline.errors import BadRequest
from hookline.restore_requests import parse_restore, start_payload

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
GOOD = {
    "tenant_id": "ten_1",
    "since": "2026-11-01T00:00:00Z",
    "until": "2026-11-02T00:00:00Z",
    "reason": "INC-42",
    "requested_by": "ana@example.com",
}


def test_a_request_reads_iso_times_durations_ago_and_a_dry_run():
    request = parse_restore({**GOOD, "since": "7d", "until": "now", "dry_run": True}, now=NOW)
    assert (request.since, request.until) == (NOW - timedelta(days=7), NOW)
    assert request.dry_run and request.reason == "INC-42"
    assert request.stored() == {
        "since": (NOW - timedelta(days=7)).isoformat(), "until": NOW.isoformat(), "dry_run": True
    }  # fmt: skip
    naive = parse_restore({**GOOD, "since": "2026-11-01T00:00:00"}, now=NOW)
    assert naive.since == datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"since": "2026-11-03T00:00:00Z"}, "since must be before until"),
        ({"until": "2026-11-01T00:00:00Z"}, "since must be before until"),
        ({"since": "last week"}, "since 'last week' is not a time"),
        ({"until": None}, "until must be an ISO 8601 time"),
        ({"reason": "  "}, "reason is required"),
        ({"tenant_id": ""}, "tenant_id is required"),
        ({"requested_by": None}, "requested_by is required"),
        ({"dry_run": "yes"}, "dry_run must be true or false"),
        ({"delivery_ids": ["dlv_1"]}, "unknown field delivery_ids"),
    ],
)
def test_a_bad_request_is_refused_naming_the_field(change, message):
    with pytest.raises(BadRequest, match=message):
        parse_restore({**GOOD, **change}, now=NOW)


def test_a_request_that_is_not_an_object_is_refused():
    with pytest.raises(BadRequest, match="a restore request is a JSON object"):
        parse_restore(["ten_1"], now=NOW)


def test_the_function_is_started_with_the_restore_id_only():
    assert start_payload("rst_1") == b'{"restore_id": "rst_1"}'
