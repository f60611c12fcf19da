"""Webhooks through a real `hookline dev`: in over HTTP, out to subscribers on loopback."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest
from psycopg import sql

from hookline_dev.localpg import free_port
from tests.e2e.conftest import Stack, serve_sink_on, wait_until
from tests.support.signers import (
    github_headers,
    standard_headers,
    stripe_event,
    stripe_headers,
    verify_standard,
)
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e

STRIPE_SECRET = "whsec_e2e_stripe_secret_0123456789"
GITHUB_SECRET = "e2e-github-secret"
STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def delivered_once(stack: Stack, event_id: str) -> dict | None:
    rows = stack.deliveries(event_id=event_id)
    return rows[0] if len(rows) == 1 and rows[0]["state"] == "delivered" else None


def test_signed_provider_webhooks_reach_subscribers_signed(stack: Stack, sink: Sink) -> None:
    # Given a tenant with Stripe, GitHub and Standard Webhooks sources and one endpoint
    tenant = stack.tenant()
    stripe_path = stack.source(tenant, "stripe", STRIPE_SECRET)
    github_path = stack.source(tenant, "github", GITHUB_SECRET)
    standard_path = stack.source(tenant, "standard", STANDARD_SECRET)
    endpoint = stack.endpoint(tenant, sink.url("/all"))
    stripe_body = stripe_event(f"evt_{uuid.uuid4().hex}")
    github_body = json.dumps({"ref": "refs/heads/main", "commits": [{"id": "abc"}]}).encode()
    standard_body = json.dumps({"type": "invoice.paid", "data": {"n": 1}}).encode()
    # When each provider POSTs its signed webhook to the front
    answers = [
        httpx.post(
            stack.url + stripe_path,
            content=stripe_body,
            headers=stripe_headers(STRIPE_SECRET, stripe_body),
        ),
        httpx.post(
            stack.url + github_path,
            content=github_body,
            headers=github_headers(GITHUB_SECRET, github_body, str(uuid.uuid4())),
        ),
        httpx.post(
            stack.url + standard_path,
            content=standard_body,
            headers=standard_headers(STANDARD_SECRET, standard_body, f"msg_{uuid.uuid4().hex}"),
        ),
    ]
    # Then each is accepted, and delivered once, with the exact bytes, signed for the endpoint
    assert [a.status_code for a in answers] == [200, 200, 200], [a.text for a in answers]
    event_ids = [a.json()["id"] for a in answers]
    for event_id in event_ids:
        wait_until(lambda e=event_id: delivered_once(stack, e), what=f"{event_id} delivered")
    requests = sink.requests("/all")
    assert {r.body for r in requests} == {stripe_body, github_body, standard_body}
    for request in requests:
        assert verify_standard([endpoint["secret"]], request.headers, request.body)
    delivery_ids = {stack.deliveries(event_id=e)[0]["id"] for e in event_ids}
    assert {r.headers["webhook-id"] for r in requests} == delivery_ids


def test_duplicates_are_answered_once_and_forgeries_refused(stack: Stack, sink: Sink) -> None:
    tenant = stack.tenant()
    path = stack.source(tenant, "stripe", STRIPE_SECRET)
    stack.endpoint(tenant, sink.url("/dedupe"))
    body = stripe_event(f"evt_{uuid.uuid4().hex}")
    first = httpx.post(stack.url + path, content=body, headers=stripe_headers(STRIPE_SECRET, body))
    # When Stripe retries the same event, and someone sends one with a forged signature
    again = httpx.post(stack.url + path, content=body, headers=stripe_headers(STRIPE_SECRET, body))
    forged_body = stripe_event(f"evt_{uuid.uuid4().hex}")
    forged = httpx.post(
        stack.url + path,
        content=forged_body,
        headers=stripe_headers("whsec_somebody_else", forged_body),
    )
    # Then the retry gets the original id, the forgery a 401, and only one event exists
    assert first.status_code == 200 and again.status_code == 200
    assert again.json() == {"id": first.json()["id"], "duplicate": True}
    assert forged.status_code == 401
    assert forged.headers["content-type"] == "application/problem+json"
    wait_until(lambda: delivered_once(stack, first.json()["id"]))
    time.sleep(1.5)  # a fan-out period: nothing else arrives
    # (one delivery: a retry after a timeout on a loaded machine would carry the same id)
    assert len({r.headers["webhook-id"] for r in sink.requests("/dedupe")}) == 1
    assert len(stack.query("SELECT id FROM events WHERE tenant_id = %s", tenant)) == 1


def test_published_events_go_through_their_groups_queue(stack: Stack, sink: Sink) -> None:
    # Given a tenant of the priority group (its own queue and event source)
    tenant = stack.tenant("priority")
    endpoint = stack.endpoint(tenant, sink.url("/published"), event_types=["order.*"])
    # When the tenant's service publishes through /v1/events (local mode: no IAM signature)
    answer = httpx.post(
        stack.url + "/v1/events",
        json={"tenant_id": tenant, "type": "order.created", "payload": {"order": 7}},
        headers={"Idempotency-Key": str(uuid.uuid4()), **stack.auth},
    )
    assert answer.status_code == 200, answer.text
    # Then it is delivered through the priority group, signed
    delivery = wait_until(lambda: delivered_once(stack, answer.json()["id"]))
    assert delivery["tenant_group"] == "priority"
    request = sink.requests("/published")[-1]
    assert request.headers["webhook-id"] == delivery["id"]
    assert json.loads(request.body) == {"order": 7}
    assert verify_standard([endpoint["secret"]], request.headers, request.body)


def test_the_front_answers_like_api_gateway_outside_the_routes(stack: Stack) -> None:
    # (GET on /in/{source_id} is routed: providers handshake with it, decision 0038)
    for method, path in (("PUT", "/in/src_x"), ("POST", "/elsewhere"), ("DELETE", "/in/a/b")):
        answer = httpx.request(method, stack.url + path)
        assert answer.status_code == 403
        assert answer.json() == {"message": "Missing Authentication Token"}
    unknown = httpx.post(stack.url + "/in/src_unknown", content=b"{}")
    assert unknown.status_code == 404 and "x-amzn-requestid" in unknown.headers
    assert httpx.get(stack.url + "/in/src_unknown").status_code == 404


def test_a_subscriber_down_for_a_while_gets_the_event_when_it_is_back(
    stack: Stack, sink: Sink
) -> None:
    # Given an endpoint whose server is not running yet (connections are refused)
    port = free_port()
    tenant = stack.tenant()
    endpoint = stack.endpoint(tenant, f"http://127.0.0.1:{port}/back")
    answer = httpx.post(
        stack.url + "/v1/events",
        json={"tenant_id": tenant, "type": "order.created", "payload": {"n": 1}},
        headers=stack.auth,
    )
    event_id = answer.json()["id"]
    # When a few attempts have failed, and then the subscriber comes up
    wait_until(
        lambda: (d := stack.deliveries(event_id=event_id)) and d[0]["attempt_count"] >= 2,
        what="two failed attempts",
    )
    server = serve_sink_on(port, sink)
    try:
        delivery = wait_until(lambda: delivered_once(stack, event_id), what="delivered")
    finally:
        server.shutdown()
        server.server_close()
    # Then the retries were recorded as refused connections and the last one succeeded
    attempts = stack.attempts(delivery["id"])
    assert [a["error_class"] for a in attempts[:-1]] == ["connect_error"] * (len(attempts) - 1)
    assert attempts[-1]["status_code"] == 200 and len(attempts) >= 3
    request = sink.requests("/back")[-1]
    assert verify_standard([endpoint["secret"]], request.headers, request.body)


def test_a_subscriber_answering_410_has_its_endpoint_disabled(stack: Stack, sink: Sink) -> None:
    sink.behave("/gone", statuses=[410])
    tenant = stack.tenant()
    endpoint = stack.endpoint(tenant, sink.url("/gone"), event_types=["order.*"])
    answer = httpx.post(
        stack.url + "/v1/events",
        json={"tenant_id": tenant, "type": "order.created", "payload": {"n": 1}},
        headers=stack.auth,
    )
    wait_until(
        lambda: [d["state"] for d in stack.deliveries(event_id=answer.json()["id"])] == ["failed"],
        what="the delivery failed",
    )
    # The operator sees it with the CLI, pointed at the stack as `hookline dev --print-env` says
    shown = stack.cli("endpoints", "show", endpoint["id"])
    assert shown["enabled"] is False and "410" in shown["disabled_reason"]
    assert {r.headers["webhook-id"] for r in sink.requests("/gone")} == {
        stack.deliveries(event_id=answer.json()["id"])[0]["id"]
    }


def test_a_poison_message_ends_in_the_groups_dead_letter_queue(stack: Stack) -> None:
    # Given a message on the bulk queue that the deliver function cannot handle at all
    sqs = stack.sqs()
    queues = stack.state.queues["bulk"]
    sqs.send_message(QueueUrl=queues["url"], MessageBody="this is not a delivery")

    # When the event source has received it max_receive_count (2) times, failing each time
    def dead_letters() -> list[dict]:
        return sqs.receive_message(QueueUrl=queues["dlq_url"], WaitTimeSeconds=1).get(
            "Messages", []
        )

    [message] = wait_until(dead_letters, timeout=30, what="the message in the DLQ")
    # Then SQS's redrive moved it to the DLQ, and the queue is empty
    assert message["Body"] == "this is not a delivery"
    attributes = sqs.get_queue_attributes(QueueUrl=queues["url"], AttributeNames=["All"])
    assert attributes["Attributes"]["ApproximateNumberOfMessages"] == "0"
    assert attributes["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "0"
    sqs.delete_message(QueueUrl=queues["dlq_url"], ReceiptHandle=message["ReceiptHandle"])


def test_a_delivery_redriven_from_the_dlq_is_delivered(stack: Stack, sink: Sink) -> None:
    # Given a delivery whose every handling crashes the deliver function (here a trigger
    # makes its claim fail, as a bug or a broken dependency would), so SQS moves it to the DLQ
    tenant = stack.tenant()
    endpoint = stack.endpoint(tenant, sink.url("/redriven"))
    trigger = sql.Identifier(f"e2e_crash_{endpoint['id'].lower()}")
    crash = sql.SQL(
        "CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'e2e: the deliver function crashes'; END $$;"
        " CREATE TRIGGER {name} BEFORE INSERT ON deliveries_in_flight FOR EACH ROW"
        " WHEN (NEW.endpoint_id = {endpoint})"
        " EXECUTE FUNCTION {name}()"
    ).format(name=trigger, endpoint=sql.Literal(endpoint["id"]))
    with stack.db.connection() as conn:
        conn.execute(crash)
    try:
        answer = httpx.post(
            stack.url + "/v1/events",
            json={"tenant_id": tenant, "type": "order.created", "payload": {"n": 1}},
            headers=stack.auth,
        )
        event_id = answer.json()["id"]
        sqs = stack.sqs()
        dlq = stack.state.queues["standard"]["dlq_url"]

        def in_dlq() -> bool:
            attributes = sqs.get_queue_attributes(
                QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]
            return attributes["ApproximateNumberOfMessages"] == "1"

        wait_until(in_dlq, timeout=30, what="the delivery's message in the DLQ")
    finally:
        # When the fault is fixed and an operator redrives the group's DLQ
        with stack.db.connection() as conn:
            conn.execute(sql.SQL("DROP TRIGGER {} ON deliveries_in_flight").format(trigger))
            conn.execute(sql.SQL("DROP FUNCTION {}()").format(trigger))
    assert sink.requests("/redriven") == []
    result = stack.cli(
        "replay", "--redrive-dlq", "standard", "--requested-by", "e2e", "--reason", "bug fixed"
    )
    assert result["result"]["enqueued"] == 1, result
    # Then the delivery is made, once, signed, and the replay is audited
    wait_until(lambda: delivered_once(stack, event_id), what="delivered after the redrive")
    request = sink.requests("/redriven")[-1]
    assert verify_standard([endpoint["secret"]], request.headers, request.body)
    [audit] = stack.query(
        "SELECT actor, object_type FROM audit_log WHERE id = %s", result["audit_id"]
    )
    assert audit["actor"] == "e2e"
