"""The management API's input guards on their own (no I/O): what every route could store
passes untouched; what none could is refused naming the field, never repeating the value."""

from __future__ import annotations

import json

import pytest

from hookline.api.inputs import MAX_DEPTH, refusal
from hookline_dev.local.apigw import build_rest_event

pytestmark = pytest.mark.unit


def post(body: bytes, headers: dict[str, str] | None = None) -> dict:
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    return build_rest_event("POST", "/v1/events", hdrs, body)


def refused_fields(event: dict) -> list[str]:
    answer = refusal(event)
    assert answer is not None and answer["statusCode"] == 400
    return [e["field"] for e in json.loads(answer["body"])["errors"]]


@pytest.mark.parametrize(
    "payload",
    [
        {"text": "naïve café ☕ 東京", "tab\there": "a\tb\nc"},
        {"n": int("9" * 1000), "f": 1.5e300, "neg": -int("9" * 1000)},
        {"text": "a\x00b"},  # a NUL in the payload is data (stored as bytes)
    ],
    ids=["unicode and escapes", "big but bounded numbers", "nul in payload"],
)
def test_what_a_route_can_store_passes(payload):
    body = json.dumps({"tenant_id": "ten_1", "type": "x", "payload": payload}).encode()
    assert refusal(post(body, {"Idempotency-Key": "order-42", "User-Agent": "a\tb"})) is None


def test_nesting_is_refused_only_past_the_limit():
    def body(depth: int) -> bytes:
        return b'{"type": "x", "payload": ' + b"[" * depth + b"]" * depth + b"}"

    assert refusal(post(body(MAX_DEPTH - 1))) is None
    assert refused_fields(post(body(MAX_DEPTH + 1))) == ["payload"]


def test_a_bad_header_is_named_and_its_value_never_repeated():
    event = post(b"{}", {"X-Token": "secret-value\r\nInjected: 1"})
    answer = refusal(event)
    assert answer is not None and "secret-value" not in answer["body"]
    assert refused_fields(event) == ["X-Token"]


def test_a_key_that_is_not_text_is_not_repeated_either():
    event = post(b'{"options": {"k\\u0000\\ud800": 1}}')
    answer = refusal(event)
    assert answer is not None and "\\u0000" not in answer["body"]
    assert refused_fields(event) == ["options"]


def test_a_body_that_says_it_is_not_json_is_a_415():
    event = build_rest_event("POST", "/v1/tenants", {"Content-Type": "text/plain"}, b"name=x")
    answer = refusal(event)
    assert answer is not None and answer["statusCode"] == 415
