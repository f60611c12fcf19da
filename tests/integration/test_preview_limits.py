"""`POST /v1/endpoints/{id}/preview` and endpoint saves hold what a tenant sends to the
pipeline's limits (decision 0060): a payload over the publish limits, a filter over its
budget, a wildcard EventBridge would call too complex: each a 4xx naming the limit, in
milliseconds (real Postgres, the API handler)."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.integration

FAST = 1.0  # seconds, on a loaded 2-core machine


@pytest.fixture
def endpoint(mgmt) -> str:
    created = mgmt.post("/v1/tenants", {"name": "a"})
    assert created.status == 201, created.body
    saved = mgmt.post(
        "/v1/endpoints",
        {"tenant_id": created.json()["id"], "url": "https://93.184.216.34/hooks"},
    )
    assert saved.status == 201, saved.body
    return str(saved.json()["id"])


def test_a_preview_over_the_publish_size_is_413(mgmt, endpoint: str) -> None:
    # Given a payload of 1.2 MiB (a publish of it would be refused)
    payload = {"blob": "x" * (1200 * 1024)}
    # When it is previewed
    answer = mgmt.post(f"/v1/endpoints/{endpoint}/preview", {"type": "t", "payload": payload})
    # Then it is refused as the publish would be, naming the limit
    assert answer.status == 413, answer.body
    assert "payload_max_bytes" in answer.body.decode()


def test_a_preview_deeper_than_a_publish_may_be_is_400(mgmt, endpoint: str) -> None:
    payload: dict = {"leaf": 1}
    for _ in range(100):
        payload = {"a": payload}
    answer = mgmt.post(f"/v1/endpoints/{endpoint}/preview", {"type": "t", "payload": payload})
    assert answer.status == 400, answer.body
    assert "payload_max_depth" in answer.body.decode()


def test_a_preview_whose_filter_runs_out_of_budget_is_400_at_once(mgmt, endpoint: str) -> None:
    # Given a filter of 200 prefixes and a 500 KB array of strings that none of them starts
    pattern = {"payload": {"s": [{"prefix": f"p{i}"} for i in range(200)]}}
    body = {"type": "t", "payload": {"s": ["x"] * 100_000}, "content_filter": pattern}
    # When it is previewed
    began = time.perf_counter()
    answer = mgmt.post(f"/v1/endpoints/{endpoint}/preview", body)
    # Then the evaluation stops at its budget and says so, instead of holding the API
    assert answer.status == 400, answer.body
    assert "filter_max_steps" in answer.body.decode()
    assert time.perf_counter() - began < FAST


def test_a_forty_star_wildcard_is_refused_when_saved_over_the_api(mgmt, endpoint: str) -> None:
    answer = mgmt.patch(
        f"/v1/endpoints/{endpoint}",
        {"content_filter": {"payload": {"s": [{"wildcard": "a*" * 40}]}}},
    )
    assert answer.status == 400, answer.body
    assert "payload.s: its wildcards hold 40 '*'" in answer.body.decode()
