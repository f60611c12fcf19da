"""Done-when of issue 26 on a real `hookline dev` (decision 0068): an endpoint that keeps
failing produces exactly one endpoint.failing at the endpoint subscribed to operational
events (verified with the Standard Webhooks library), then endpoint.recovered when it answers
2xx again, one e-mail in moto's SES and one chat message per state change; deliveries whose
deadline passed (retries ran out) produce delivery.dead. The monitor runs as a step of
reconcile (`hookline reconcile --once`, what the schedule runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import boto3
import httpx
from standardwebhooks.webhooks import Webhook

from tests.e2e.conftest import Stack, wait_until
from tests.support.sinks import Sink


def publish(stack: Stack, tenant: str, n: int) -> list[str]:
    ids = []
    for i in range(n):
        answer = httpx.post(
            stack.url + "/v1/events",
            json={"tenant_id": tenant, "type": "order.created", "payload": {"n": i}},
            headers=stack.auth,
        )
        assert answer.status_code in (200, 201, 202), answer.text
        ids.append(answer.json()["id"])
    return ids


def reconcile(stack: Stack) -> dict:
    """`hookline reconcile --once --json` against the stack: the run's operational finding (the
    report follows any log lines the run printed)."""
    result = subprocess.run(
        [sys.executable, "-m", "hookline_dev.cli", "reconcile", "--once", "--json"],
        env={**os.environ, **stack.state.env()}, capture_output=True, text=True, timeout=120,
        check=True,
    )  # fmt: skip
    out = result.stdout
    report = json.loads(out[out.index("{\n") :] if not out.startswith("{\n") else out)
    return dict(report["findings"]["operational"])


def reconcile_until_dead(stack: Stack, events: list[str], timeout: float = 60) -> list[dict]:
    """Reconcile until every delivery of `events` is dead, then once more: the findings of each
    run, the last one last. A delivery the deliverer holds when a run starts is killed by the
    deliverer itself, after that run's scan; the next run announces it."""
    runs = []
    deadline = time.monotonic() + timeout
    while True:
        runs.append(reconcile(stack))
        if {d["state"] for e in events for d in stack.deliveries(event_id=e)} == {"dead"}:
            runs.append(reconcile(stack))
            return runs
        assert time.monotonic() < deadline, f"deliveries not dead after {timeout}s"
        time.sleep(0.5)


def emails_sent(stack: Stack) -> int:
    ses = boto3.client(
        "ses", endpoint_url=stack.state.aws_endpoint_url, region_name=stack.state.aws_region,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    return int(ses.get_send_quota()["SentLast24Hours"])


def operational(sink: Sink, secret: str) -> list[dict]:
    found = []
    for request in sink.requests("/ops"):
        Webhook(secret).verify(request.body, dict(request.headers))  # raises if not signed
        found.append({"type": request.headers.get("webhook-id"), **json.loads(request.body)})
    return found


def test_a_failing_endpoint_is_announced_once_then_recovered_and_dead_ones_too(
    stack: Stack, sink: Sink
) -> None:
    # Given a tenant whose orders endpoint answers 500, an endpoint subscribed to the
    # operational events, and e-mail and chat messages the tenant opted in to
    sink.behave("/down", statuses=[500])
    tenant = stack.tenant(name="ops-e2e")
    orders = stack.endpoint(tenant, sink.url("/down"), event_types=["order.*"])
    ops = stack.endpoint(tenant, sink.url("/ops"), event_types=["endpoint.*", "delivery.dead"])
    opted = httpx.put(
        f"{stack.url}/v1/tenants/{tenant}/notifications",
        json={"emails": ["oncall@ops-e2e.example"], "chat_url": sink.url("/chat")},
        headers=stack.auth,
    )
    assert opted.status_code == 200, opted.text
    emails_before = emails_sent(stack)
    # When five events fail every attempt (retried each second) until their deadline passes
    events = publish(stack, tenant, 5)
    wait_until(lambda: len(sink.requests("/down")) >= 10, timeout=60, what="failed attempts")
    stack.query(
        "UPDATE deliveries SET deadline_at = now() WHERE event_id = ANY(%s) RETURNING id", events
    )
    # And reconcile runs until they are dead, and once more (which must announce nothing new)
    runs = reconcile_until_dead(stack, events)
    wait_until(lambda: len(sink.requests("/ops")) >= 6, timeout=30, what="6 operational events")
    # Then the subscribed endpoint got exactly one endpoint.failing and a delivery.dead per
    # event, each signed
    got = operational(sink, ops["secret"])
    failing = [p for p in got if p.get("state") == "failing"]
    dead = [p for p in got if "delivery_id" in p]
    assert len(failing) == 1 and failing[0]["endpoint_id"] == orders["id"]
    assert failing[0]["last_error"]["status"] == 500
    assert sorted(p["event_id"] for p in dead) == sorted(events)
    assert {d["state"] for e in events for d in stack.deliveries(event_id=e)} == {"dead"}
    assert runs[0]["endpoint_failing"] >= 1 and runs[-1]["endpoint_failing"] == 0
    # And one e-mail and one chat message said it
    assert emails_sent(stack) - emails_before == 1
    [chat] = sink.requests("/chat")
    assert "is failing" in json.loads(chat.body)["text"]
    # When the endpoint answers 2xx again and reconcile runs
    sink.behave("/down", statuses=[200])
    [healthy] = publish(stack, tenant, 1)
    wait_until(
        lambda: [d["state"] for d in stack.deliveries(event_id=healthy)] == ["delivered"],
        what="the endpoint answered 2xx",
    )
    reconcile(stack)
    wait_until(lambda: len(sink.requests("/ops")) >= 7, timeout=30, what="endpoint.recovered")
    # Then endpoint.recovered follows once, with one more e-mail and chat message
    recovered = [p for p in operational(sink, ops["secret"]) if p.get("state") == "healthy"]
    assert len(recovered) == 1 and recovered[0]["endpoint_id"] == orders["id"]
    assert emails_sent(stack) - emails_before == 2
    assert len(sink.requests("/chat")) == 2
