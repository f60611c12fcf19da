"""The dev stack's HTTP front turns real HTTP requests into API Gateway REST proxy events and
writes the handler's answer back as API Gateway does."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hookline.local.front import LocalFront
from hookline.local.powertools import isolate_resolver_state

pytestmark = pytest.mark.integration


class Recorder:
    """A handler that records each event and answers what the test asks."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.answer: dict[str, Any] = {"statusCode": 200, "body": "ok"}

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.events.append(event)
        assert context.get_remaining_time_in_millis() > 0
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.fixture
def handler() -> Recorder:
    return Recorder()


@pytest.fixture
def front(handler: Recorder) -> Iterator[LocalFront]:
    f = LocalFront(handler, port=0, health=lambda: {"status": "ok", "pid": 1})
    f.start()
    try:
        yield f
    finally:
        f.stop()


def test_a_request_becomes_the_proxy_event_api_gateway_builds(front, handler) -> None:
    body = b'{"signed": "bytes \xe2\x9c\x93"}'
    answer = httpx.post(
        f"{front.url}/in/src_123?a=1&a=2&b=",
        content=body,
        headers=[("X-Repeat", "one"), ("X-Repeat", "two"), ("Stripe-Signature", "t=1,v1=x")],
    )
    assert answer.status_code == 200 and answer.text == "ok"
    [event] = handler.events
    assert event["resource"] == "/in/{source_id}" and event["path"] == "/in/src_123"
    assert event["httpMethod"] == "POST"
    assert event["pathParameters"] == {"source_id": "src_123"}
    assert event["isBase64Encoded"] is True and base64.b64decode(event["body"]) == body
    assert event["multiValueHeaders"]["X-Repeat"] == ["one", "two"]
    assert event["headers"]["X-Repeat"] == "two"  # API Gateway keeps the last value
    assert event["headers"]["Stripe-Signature"] == "t=1,v1=x"
    assert event["multiValueQueryStringParameters"] == {"a": ["1", "2"], "b": [""]}
    assert event["requestContext"]["resourcePath"] == "/in/{source_id}"
    assert answer.headers["x-amzn-requestid"] == event["requestContext"]["requestId"]


def test_v1_takes_any_method_and_other_routes_get_api_gateways_403(front, handler) -> None:
    assert httpx.delete(f"{front.url}/v1/endpoints/ep_1").status_code == 200
    assert handler.events[-1]["pathParameters"] == {"proxy": "endpoints/ep_1"}
    for method, path in (("PUT", "/in/src_1"), ("POST", "/nowhere"), ("POST", "/in/a/b")):
        answer = httpx.request(method, front.url + path)
        assert answer.status_code == 403
        assert answer.json() == {"message": "Missing Authentication Token"}
    assert len(handler.events) == 1


def test_a_get_on_an_inbound_path_reaches_the_receiver_for_get_handshakes(front, handler) -> None:
    # Given Meta's subscription GET / When it reaches the front / Then the receiver gets it
    httpx.get(f"{front.url}/in/src_1", params={"hub.mode": "subscribe", "hub.challenge": "7"})
    event = handler.events[-1]
    assert (event["httpMethod"], event["queryStringParameters"]["hub.challenge"]) == ("GET", "7")


def test_the_handlers_answer_is_written_back_with_every_header(front, handler) -> None:
    handler.answer = {
        "statusCode": 201,
        "headers": {"X-Single": "s", "Content-Type": "text/plain"},
        "multiValueHeaders": {"Set-Cookie": ["a=1", "b=2"], "Content-Type": ["application/x"]},
        "body": base64.b64encode(b"\x00\x01binary").decode(),
        "isBase64Encoded": True,
    }
    answer = httpx.post(f"{front.url}/v1/x", content=b"")
    assert answer.status_code == 201
    assert answer.content == b"\x00\x01binary"
    assert answer.headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert answer.headers["content-type"] == "application/x"  # multi-value wins
    assert answer.headers["x-single"] == "s"


def test_a_crashing_handler_is_a_502_as_on_api_gateway(front, handler) -> None:
    handler.answer = RuntimeError("bug")  # type: ignore[assignment]
    answer = httpx.post(f"{front.url}/in/src_1", content=b"{}")
    assert answer.status_code == 502
    assert answer.json() == {"message": "Internal server error"}


def test_a_chunked_body_arrives_whole(front, handler) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"part": 1,'
        yield b' "part2": 2}'

    answer = httpx.post(f"{front.url}/in/src_1", content=chunks())
    assert answer.status_code == 200
    assert base64.b64decode(handler.events[0]["body"]) == b'{"part": 1, "part2": 2}'


def test_a_body_over_api_gateways_10_mb_is_refused_before_the_handler(front, handler) -> None:
    with socket.create_connection(("127.0.0.1", front.port)) as sock:
        sock.sendall(b"POST /in/src_1 HTTP/1.1\r\nHost: x\r\nContent-Length: 10485761\r\n\r\n")
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 413")
    assert handler.events == []


def test_the_health_check_is_the_fronts_own(front, handler) -> None:
    answer = httpx.get(f"{front.url}/_hookline/health")
    assert answer.json() == {"status": "ok", "pid": 1}
    assert handler.events == []
    assert front.stats.requests == 0


@pytest.mark.parametrize("isolated", [False, True], ids=["one-at-a-time", "per-thread-state"])
def test_concurrent_requests_are_never_cross_wired(isolated: bool) -> None:
    # Given a Powertools resolver app (which keeps the current event on a class attribute)
    # that yields between reading the path, a header and the body; invoked one at a time, or
    # concurrently once Powertools' resolver state is made per thread (what hookline dev does)
    import time
    from concurrent.futures import ThreadPoolExecutor

    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    if isolated:
        assert isolate_resolver_state()
    app = APIGatewayRestResolver()

    @app.post("/in/<source_id>")
    def echo(source_id: str) -> dict[str, str]:
        time.sleep(0.001)
        header = app.current_event.headers["x-n"]
        time.sleep(0.001)
        body = base64.b64decode(app.current_event.body or "").decode()
        return {"path": source_id, "header": header, "body": body}

    front = LocalFront(app.resolve, port=0, one_at_a_time=not isolated)
    front.start()
    try:
        # When 8 clients send 100 requests at once, each with its own path, header and body
        def send(n: int) -> bool:
            answer = httpx.post(
                f"{front.url}/in/s{n}", content=str(n).encode(), headers={"x-n": str(n)}
            ).json()
            return answer == {"path": f"s{n}", "header": str(n), "body": str(n)}

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(send, range(100)))
    finally:
        front.stop()
    # Then every answer is about its own request
    assert all(results)
