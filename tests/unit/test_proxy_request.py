"""The receiver reads each front door's event itself (decision 0074): what it must find in
each shape, as the dev stack's builders and AWS make them."""

from __future__ import annotations

import pytest

from hookline.ingress import proxy_request, proxy_response
from hookline_dev.local.apigw import build_http_event, build_rest_event

pytestmark = pytest.mark.unit

HEADERS = {"Content-Type": "application/json", "Host": "h.example", "Stripe-Signature": "t=1"}


@pytest.mark.parametrize(
    "event",
    [
        build_rest_event("POST", "/in/src_1", HEADERS, b"{}", query="a=1"),
        build_http_event("POST", "/in/src_1", HEADERS, b"{}", query="a=1"),
        build_http_event("POST", "/in/src_1", HEADERS, b"{}", query="a=1", function_url=True),
    ],
    ids=["rest", "http", "function_url"],
)
def test_each_shape_gives_the_route_headers_query_and_body(event):
    request = proxy_request(event)
    assert (request.method, request.path_parameter("/in/")) == ("POST", "src_1")
    assert request.header("stripe-signature") == "t=1"  # names lower-cased, values kept
    assert request.query == {"a": "1"}
    assert request.base64_encoded and request.body == "e30="


def test_a_rest_url_keeps_its_stage_and_a_named_http_stage_is_not_part_of_the_route():
    rest = proxy_request(build_rest_event("POST", "/in/src_1", HEADERS, b"", stage="prod"))
    assert (rest.path, rest.url_path) == ("/in/src_1", "/prod/in/src_1")
    http = build_http_event("POST", "/in/src_1", HEADERS, b"")
    http["rawPath"], http["requestContext"]["stage"] = "/prod/in/src_1", "prod"
    assert proxy_request(http).path_parameter("/in/") == "src_1"


@pytest.mark.parametrize("path", ["/in/", "/in/a/b", "/v1/sources", "/in"])
def test_only_one_segment_after_the_prefix_is_a_source_id(path):
    request = proxy_request(build_rest_event("POST", path, HEADERS, b""))
    assert request.path_parameter("/in/") is None


def test_the_answer_carries_its_content_type_and_headers():
    answer = proxy_response(405, "{}", "application/problem+json", {"Allow": "POST"})
    assert answer["statusCode"] == 405 and answer["isBase64Encoded"] is False
    assert answer["headers"] == {"Content-Type": "application/problem+json", "Allow": "POST"}
