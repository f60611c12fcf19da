"""The dev stack's HTTP front turns real HTTP requests into API Gateway REST proxy events and
writes the handler's answer back as API Gateway does."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hookline_dev.local.front import LocalFront
from hookline_dev.local.powertools import isolate_resolver_state

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


# -- /v1 defends itself: no web page drives the dev stack (issue 12, decision 0030) ------------

OPERATOR_KEY = "the-stacks-operator-key"


@pytest.fixture
def guarded(handler: Recorder) -> Iterator[LocalFront]:
    """A front that holds the stack's operator key, as `hookline dev` builds it."""
    f = LocalFront(handler, port=0, operator_key=OPERATOR_KEY)
    f.start()
    try:
        yield f
    finally:
        f.stop()


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "null", "http://127.0.0.1.evil.example", "http://127.0.0.1:1"],
)
def test_a_cross_origin_post_to_v1_is_refused_before_the_api_runs(guarded, handler, origin):
    # Given a page on another origin that posts to the developer's stack
    answer = httpx.post(
        f"{guarded.url}/v1/tenants", json={"name": "pwned"}, headers={"Origin": origin}
    )
    # Then the front refuses it and the API function never sees it
    assert answer.status_code == 403
    assert answer.json() == {"message": "cross-origin requests to /v1 are refused"}
    assert handler.events == []


@pytest.mark.parametrize(
    "host", ["attacker.example:{port}", "127.0.0.1:1", "localhost", "[::1]:{port}"]
)
def test_a_foreign_host_is_refused_so_dns_rebinding_reaches_nothing(guarded, handler, host):
    # Given a page whose name was re-pointed at 127.0.0.1 (the browser sends its own Host)
    answer = httpx.get(
        f"{guarded.url}/v1/tenants", headers={"Host": host.format(port=guarded.port)}
    )
    # Then the front refuses it
    assert answer.status_code == 403 and "Host must be" in answer.json()["message"]
    assert handler.events == []


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_a_state_changing_body_that_is_not_json_is_refused(guarded, handler, content_type):
    # Given the kinds of body a page may send cross-origin without a CORS preflight (a form,
    # or fetch with mode no-cors), or a body without any content type
    headers = {"Content-Type": content_type} if content_type else {}
    answer = httpx.post(f"{guarded.url}/v1/replays", content=b'{"reason": "x"}', headers=headers)
    # Then it never reaches the API function
    assert answer.status_code == 415
    assert "must be JSON" in answer.json()["message"]
    assert handler.events == []


def test_json_bodies_and_bodyless_actions_pass_without_the_front_adding_a_key(guarded, handler):
    # A non-browser caller (curl, the CLI) with JSON, or a POST with no body at all
    assert httpx.post(f"{guarded.url}/v1/tenants", json={"name": "a"}).status_code == 200
    patch = b'{"description": "x"}'
    headers = {"Content-Type": "application/merge-patch+json; charset=utf-8"}
    assert httpx.patch(f"{guarded.url}/v1/endpoints/ep_1", content=patch, headers=headers)
    assert httpx.post(f"{guarded.url}/v1/endpoints/ep_1/test").status_code == 200
    # Then the API function gets them as sent: without a key of the front's (the API asks
    # for one)
    assert len(handler.events) == 3
    assert all("Authorization" not in (e["headers"] or {}) for e in handler.events)


def test_same_origin_requests_carry_the_operator_key_and_a_callers_own_key_is_kept(
    guarded, handler
) -> None:
    # Given a page of the front's own origin (a POST carries Origin; a GET, Sec-Fetch-Site)
    posted = httpx.post(
        f"{guarded.url}/v1/tenants",
        json={"name": "a"},
        headers={"Origin": f"http://localhost:{guarded.port}"},
    )
    fetched = httpx.get(f"{guarded.url}/v1/tenants", headers={"Sec-Fetch-Site": "same-origin"})
    # And a tenant's own key
    own = httpx.get(f"{guarded.url}/v1/tenants", headers={"Authorization": "Bearer tenant-key"})
    assert posted.status_code == fetched.status_code == own.status_code == 200
    # Then the same-origin ones reach the API as the operator; the tenant's stays the tenant's
    first, second, third = (e["multiValueHeaders"] for e in handler.events)
    assert first["Authorization"] == second["Authorization"] == [f"Bearer {OPERATOR_KEY}"]
    assert third["Authorization"] == ["Bearer tenant-key"]


def test_in_stays_open_to_providers_on_any_origin(guarded, handler) -> None:
    # Providers post cross-origin by nature, with their own content types; the signature is
    # the receiver's auth
    answer = httpx.post(
        f"{guarded.url}/in/src_1",
        content=b"payload=x",
        headers={"Origin": "https://hooks.example", "Content-Type": "text/plain"},
    )
    assert answer.status_code == 200 and len(handler.events) == 1
    assert "Authorization" not in handler.events[0]["headers"]


# The variables `hookline dev` sets in its own process: registered so the test restores them.
_STACK_ENV = (
    "DATABASE_URL", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN", "HOOKLINE_LOCAL_MODE",
    "HOOKLINE_ALLOW_PRIVATE_TARGETS", "HOOKLINE_ALLOW_HTTP_TARGETS", "HOOKLINE_DB_POOL_SIZE",
    "POWERTOOLS_TRACE_DISABLED", "HOOKLINE_LOCAL_KEY_FILE", "HOOKLINE_API_KEY",
    "HOOKLINE_FANOUT_FUNCTION", "HOOKLINE_QUEUE_URL_PREFIX", "HOOKLINE_CONFIG",
    "HOOKLINE_OPERATOR_PRINCIPALS",
)  # fmt: skip


@pytest.fixture
def restored_environ() -> Iterator[None]:
    """The process environment put back whole after the test, after monkeypatch's own undo
    (set up before it, so torn down after it): the dev stack writes more of the environment
    than a test registers (its archive bucket, its e-mail sender, ...), and a test that exports
    what `--print-env` prints registers the stack's values as the ones to restore."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def dev_front(
    restored_environ, database_url, moto_endpoint, tmp_path, monkeypatch
) -> Iterator[Any]:
    """`hookline dev --role front` in this process, on this test's database and moto, with no
    key configured: the stack makes its own."""
    from hookline.db import reset_database
    from hookline.runtime import reset_runtime
    from hookline.settings import get_settings
    from hookline_dev.local.devoptions import DevOptions
    from hookline_dev.local.devstack import DevStack

    for name in _STACK_ENV:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    options = DevOptions(
        port=0,
        state_dir=tmp_path / ".hookline",
        roles=("front",),
        status="off",
        log_file=str(tmp_path / "dev.log"),
    )
    stack = DevStack(options)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
        reset_database()
        get_settings.cache_clear()
        reset_runtime()


def test_the_dev_front_takes_the_cli_with_the_printed_key_and_refuses_keyless_callers(
    dev_front, db, capsys, monkeypatch
) -> None:
    from hookline_dev.cli import main

    url = dev_front.state.url
    # Given a developer's other terminal, which takes what `hookline dev --print-env` prints
    assert main(["dev", "--print-env", "--state-dir", str(dev_front.state_dir), "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["HOOKLINE_API_KEY"] == dev_front.environ["HOOKLINE_API_KEY"]
    for name, value in exported.items():
        monkeypatch.setenv(name, value)
    # When the CLI goes through the front (`--api`), with no --key: the exported one is used
    assert main(["tenants", "add", "by-cli", "--api", url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "by-cli"
    # And a page of the front's own origin creates one (the front adds the operator key)
    page = httpx.post(f"{url}/v1/tenants", json={"name": "by-page"}, headers={"Origin": url})
    assert page.status_code == 201, page.text
    # But a caller without the key is no longer an operator, and a wrong key is refused
    keyless = httpx.post(f"{url}/v1/tenants", json={"name": "keyless"})
    wrong = httpx.get(f"{url}/v1/tenants", headers={"Authorization": "Bearer guessed"})
    assert keyless.status_code == wrong.status_code == 403
    assert "API key" in keyless.json()["detail"]
    # And pages elsewhere reach nothing, whatever they send
    form = {"Content-Type": "text/plain"}
    rebound = {"Host": f"rebound.example:{dev_front.state.port}"}
    attacks = [
        httpx.post(f"{url}/v1/tenants", json={"name": "csrf"}, headers={"Origin": "http://x.io"}),
        httpx.post(f"{url}/v1/tenants", content=b'{"name": "form"}', headers=form),
        httpx.get(f"{url}/v1/tenants", headers=rebound),
    ]
    assert [a.status_code for a in attacks] == [403, 415, 403]
    with db.connection() as conn:
        names = [r["name"] for r in conn.execute("SELECT name FROM tenants ORDER BY name")]
    assert names == ["by-cli", "by-page"]


def test_a_url_signing_provider_verifies_on_the_dev_front_without_public_url(dev_front, db):
    # Given a Twilio source (Twilio signs the URL it posts to) with no public_url option
    from twilio.request_validator import RequestValidator

    from hookline.config import HooklineConfig
    from tests.support import operator

    token = "twilio-auth-token-0123456789"
    tenant = operator.add_tenant(db, HooklineConfig(), name="voice", group="standard")
    source = operator.add_source(db, tenant_id=tenant["id"], scheme="twilio", secrets=[token])
    url = f"{dev_front.state.url}{source['path']}"
    params = {"CallSid": "CA123", "From": "+15550100"}
    # When Twilio posts to the front's URL, signed over that very URL
    signature = RequestValidator(token).compute_signature(url, params)
    answer = httpx.post(
        url,
        data=params,
        headers={"X-Twilio-Signature": signature, "I-Twilio-Idempotency-Token": "idem-1"},
    )
    # Then the receiver rebuilt the URL from what the front forwarded (proto, host, no stage)
    # and accepted it; a signature over the https URL API Gateway would show is refused here
    assert answer.status_code == 200, answer.text
    wrong = RequestValidator(token).compute_signature(url.replace("http:", "https:"), params)
    refused = httpx.post(url, data=params, headers={"X-Twilio-Signature": wrong})
    assert refused.status_code == 401


def test_the_dev_fronts_console_takes_the_key_v1_takes(dev_front) -> None:
    # Given the dev stack's front, whose /v1 takes the operator key (decision 0030)
    url, key = dev_front.state.url, dev_front.environ["HOOKLINE_API_KEY"]
    # When a browser without the key opens the console, it is sent to sign in, and sees nothing
    keyless = httpx.get(f"{url}/console/tenants")
    assert keyless.status_code == 303
    assert keyless.headers["Location"] == "/console/login?next=/console/tenants"
    assert httpx.post(f"{url}/console/replays", data={"csrf_token": "x"}).status_code == 401
    # And a wrong key is refused; the key as /v1 callers send it opens the console
    wrong = httpx.get(f"{url}/console", headers={"Authorization": "Bearer guessed"})
    assert wrong.status_code == 403
    assert (
        httpx.get(f"{url}/console", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    )
    # When a developer types the key into the sign-in page (a wrong one first)
    with httpx.Client(base_url=url) as browser:
        form = browser.get("/console/login", params={"next": "/console/tenants"})
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
        assert form.status_code == 200 and csrf
        fields = {"csrf_token": csrf.group(1), "next": "/console/tenants"}
        refused = browser.post("/console/login", data={**fields, "key": "guessed"})
        assert refused.status_code == 403 and "hl_operator" not in browser.cookies
        signed_in = browser.post("/console/login", data={**fields, "key": key})
        # Then the console opens where they were going, for this browser
        assert signed_in.status_code == 303
        assert signed_in.headers["Location"] == "/console/tenants"
        assert browser.get("/console/tenants").status_code == 200
