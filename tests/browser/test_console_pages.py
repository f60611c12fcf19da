"""The console's DLQ redrive, source rotation, endpoint edit and status charts in Chromium,
against the running `hookline dev`."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
from psycopg import sql

from tests.browser.conftest import Watched
from tests.browser.test_console import SECRET, delivered, publish
from tests.e2e.conftest import Stack, wait_until
from tests.support.signers import standard_headers
from tests.support.sinks import Sink

pytestmark = pytest.mark.browser

GROUP = "priority"  # this file's DLQ: the other browser tests use the standard group


def dlq_depth(stack: Stack, group: str) -> int:
    attributes = stack.sqs().get_queue_attributes(
        QueueUrl=stack.state.queues[group]["dlq_url"],
        AttributeNames=["ApproximateNumberOfMessages"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


@pytest.fixture
def dead_lettered(stack: Stack, sink: Sink) -> Iterator[dict[str, str]]:
    """A delivery whose message SQS moved to the priority group's DLQ: every handling of it
    crashed the deliver function (a trigger makes its claim fail), until the fault was
    fixed (the trigger dropped)."""
    tenant = stack.tenant(group=GROUP, name=f"dlq-{uuid.uuid4().hex[:6]}")
    endpoint = stack.endpoint(tenant, sink.url("/redriven"))
    trigger = sql.Identifier(f"browser_crash_{endpoint['id'].lower()}")
    crash = sql.SQL(
        "CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'browser: the deliver function crashes'; END $$;"
        " CREATE TRIGGER {name} BEFORE INSERT ON deliveries_in_flight FOR EACH ROW"
        " WHEN (NEW.endpoint_id = {endpoint})"
        " EXECUTE FUNCTION {name}()"
    ).format(name=trigger, endpoint=sql.Literal(endpoint["id"]))
    with stack.db.connection() as conn:
        conn.execute(crash)
    try:
        event = publish(stack, tenant, {"order": "D-1"})
        wait_until(lambda: dlq_depth(stack, GROUP) == 1, timeout=30, what="the DLQ message")
    finally:
        with stack.db.connection() as conn:
            conn.execute(sql.SQL("DROP TRIGGER {} ON deliveries_in_flight").format(trigger))
            conn.execute(sql.SQL("DROP FUNCTION {}()").format(trigger))
    [delivery] = stack.deliveries(event_id=event)
    yield {"tenant": tenant, "event": event, "delivery": delivery["id"]}


def test_an_operator_redrives_a_dlq_message_and_sees_it_delivered(
    page: Watched, dead_lettered: dict[str, str], stack: Stack, sink: Sink
) -> None:
    # Given the DLQ page, showing the priority group's one message
    p = page.page
    p.goto("/console/dlq")
    row = p.locator(f"tr.dlq[data-group={GROUP}]")
    assert row.locator("td.depth").inner_text() == "1"
    assert sink.requests("/redriven") == []
    # When the operator gives a reason and previews the redrive, it says what it would move
    p.get_by_label(f"Reason for redriving {GROUP}").fill("fixed the crash in the claim")
    p.get_by_role("button", name=f"Preview redrive of {GROUP}").click()
    assert p.locator("#would").inner_text() == "1"
    assert dlq_depth(stack, GROUP) == 1
    # When they confirm, the replay runs, and the delivery is made
    p.get_by_role("button", name="Redrive 1 message(s)").click()
    p.locator("#replay-state").filter(has_text="succeeded").wait_for(timeout=30_000)
    wait_until(lambda: sink.requests("/redriven"), timeout=30, what="the redriven delivery")
    wait_until(lambda: delivered(stack, dead_lettered["event"]), what="the delivery recorded")
    p.goto(f"/console/deliveries/{dead_lettered['delivery']}")
    p.locator("#state").filter(has_text="delivered").wait_for()
    assert dlq_depth(stack, GROUP) == 0
    audit = stack.query(
        "SELECT actor, params FROM audit_log WHERE action = 'replay' "
        "AND params->'request'->>'redrive_dlq' = %s ORDER BY id",
        GROUP,
    )
    assert [a["actor"] for a in audit] == ["console:local", "console:local"]
    assert not page.errors and not page.dialogs


def test_a_rotated_source_secret_is_shown_once_and_verifies(page: Watched, stack: Stack) -> None:
    # Given a tenant's standard-webhooks source, on its console page
    tenant = stack.tenant(name=f"src-{uuid.uuid4().hex[:6]}")
    path = stack.source(tenant, "standard", SECRET)
    source_id = path.rsplit("/", 1)[1]
    p = page.page
    p.goto(f"/console/sources?tenant_id={tenant}")
    assert p.locator("code.inbound-url").inner_text() == f"{stack.url}{path}"
    p.locator(f"a[href='/console/sources/{source_id}']").click()
    p.wait_for_url(f"**/console/sources/{source_id}")
    assert p.locator("#rotated-at").inner_text() == "never"
    # When the operator rotates its secret, dropping the previous one
    p.get_by_label("Keep verifying with the previous secret").uncheck()
    p.get_by_role("button", name="Rotate the secret").click()
    # Then the new secret is revealed once
    p.get_by_text("Reveal the secret").click()
    secret = p.locator("#secret").inner_text()
    assert secret.startswith("whsec_") and secret != SECRET
    # And the source's page shows when, but never the secret again
    p.goto(f"/console/sources/{source_id}")
    assert p.locator("#rotated-at").inner_text() != "never"
    assert secret not in p.content() and SECRET not in p.content()
    # And a provider signing with the new secret is accepted, with the old one refused
    body = json.dumps({"type": "profile.updated", "data": {"n": 1}}).encode()
    new = standard_headers(secret, body, f"msg_{uuid.uuid4().hex}")
    old = standard_headers(SECRET, body, f"msg_{uuid.uuid4().hex}")
    assert httpx.post(stack.url + path, content=body, headers=new).status_code < 300
    assert httpx.post(stack.url + path, content=body, headers=old).status_code >= 400


def test_an_endpoint_filter_is_refused_inline_then_saved(
    page: Watched, stack: Stack, sink: Sink
) -> None:
    # Given an endpoint's edit form
    tenant = stack.tenant(name=f"edit-{uuid.uuid4().hex[:6]}")
    endpoint = stack.endpoint(tenant, sink.url("/edited"))
    p = page.page
    p.goto(f"/console/endpoints/{endpoint['id']}")
    p.get_by_role("link", name="Edit filters and limits").click()
    p.wait_for_url(f"**/console/endpoints/{endpoint['id']}/edit")
    # When the operator saves a pattern whose value is not an array
    p.get_by_label("Content filter").fill('{"payload": {"amount": 100}}')
    p.get_by_role("button", name="Save changes").click()
    # Then the service's message is shown next to the filter, and the page stays the form
    error = p.locator("#content_filter-error")
    error.wait_for()
    assert error.inner_text().startswith("filter at payload.amount")
    assert p.get_by_label("Content filter").get_attribute("aria-invalid") == "true"
    assert p.url.endswith("/edit")
    # When they correct it and add a rate limit, it is saved and shown on the endpoint
    p.get_by_label("Content filter").fill('{"payload": {"amount": [{"numeric": [">", 50]}]}}')
    p.get_by_label("Rate limit").fill("20")
    p.get_by_role("button", name="Save changes").click()
    p.get_by_role("status").filter(has_text="saved").wait_for()
    assert '"numeric"' in p.locator("#content-filter").inner_text()
    assert p.locator("#rate-limit").inner_text() == "20/s"
    # And only events the pattern matches are delivered
    publish(stack, tenant, {"amount": 10})
    matching = publish(stack, tenant, {"amount": 99})
    wait_until(lambda: sink.requests("/edited"), timeout=30, what="the matching delivery")
    assert [d["event_id"] for d in stack.query(
        "SELECT event_id FROM deliveries WHERE endpoint_id = %s", endpoint["id"]
    )] == [matching]  # fmt: skip
    assert not page.errors and not page.csp_violations


def test_the_status_page_draws_latency_and_backlog(page: Watched, stack: Stack, sink: Sink) -> None:
    # Given a delivery made this hour, and one still in flight (its subscriber is slow)
    tenant = stack.tenant(name=f"charts-{uuid.uuid4().hex[:6]}")
    stack.endpoint(tenant, sink.url("/charts"))
    done = publish(stack, tenant, {"n": 1})
    wait_until(lambda: delivered(stack, done), timeout=30, what="the first delivery")
    sink.behave("/slow", delay=6)
    slow_tenant = stack.tenant(name=f"slow-{uuid.uuid4().hex[:6]}")
    stack.endpoint(slow_tenant, sink.url("/slow"))
    slow = publish(stack, slow_tenant, {"n": 2})
    wait_until(lambda: stack.deliveries(event_id=slow), timeout=30, what="the slow delivery")
    # When the operator opens the status page
    p = page.page
    p.goto("/console")
    # Then the latency chart has a p50 and a p99 point for the hour, each with its value
    latency = p.locator("#latency-chart")
    latency.wait_for()
    assert latency.locator(".series-p50 circle.point").count() >= 1
    assert latency.locator(".series-p99 circle.point").count() >= 1
    label = latency.locator(".series-p99 circle.point title").last.text_content() or ""
    assert re.fullmatch(r"\d\d:00 p99 \d+ ms of \d+ attempts", label)
    # And the backlog chart has this hour's bar, counting the delivery still in flight
    bars = p.locator("#backlog-chart rect.bar")
    assert bars.count() >= 1
    last = bars.last.locator("title").text_content() or ""
    assert int(re.match(r"\d\d:00 (\d+) deliveries", last).group(1)) >= 1  # type: ignore[union-attr]
    assert p.get_by_role("img", name=re.compile("Attempt latency")).count() == 1
    assert not page.csp_violations
    wait_until(lambda: sink.requests("/slow"), timeout=30, what="the slow delivery's attempt")
