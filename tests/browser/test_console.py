"""The operator console in Chromium: find a retried delivery, resend it, replay with a dry
run; payloads shown as inert text; a form posted without its CSRF token refused."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
import pytest

from tests.browser.conftest import Watched
from tests.e2e.conftest import Stack, wait_until
from tests.support.signers import standard_headers
from tests.support.sinks import Sink

pytestmark = pytest.mark.browser

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def publish(stack: Stack, tenant: str, payload: dict[str, Any], type: str = "order.paid") -> str:
    answer = httpx.post(
        f"{stack.url}/v1/events",
        json={"tenant_id": tenant, "type": type, "payload": payload},
        headers=stack.auth,
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


def delivered(stack: Stack, event_id: str) -> dict[str, Any] | None:
    rows = stack.deliveries(event_id=event_id)
    return rows[0] if rows and rows[0]["state"] == "delivered" else None


@pytest.fixture
def retried(stack: Stack, sink: Sink) -> dict[str, str]:
    """An event whose one delivery failed once (500), then was delivered."""
    tenant = stack.tenant(name=f"retried-{uuid.uuid4().hex[:6]}")
    sink.behave("/flaky", statuses=[500, 200])
    stack.endpoint(tenant, sink.url("/flaky"))
    event_id = publish(stack, tenant, {"order": "A-1"})
    row = wait_until(lambda: delivered(stack, event_id), timeout=30, what="the retried delivery")
    return {"tenant": tenant, "event": event_id, "delivery": row["id"]}


def test_an_event_delivered_after_a_failure_shows_both_attempts_and_resends(
    page: Watched, retried: dict[str, str], sink: Sink
) -> None:
    # Given the console's event search
    p = page.page
    p.goto("/console/events")
    # When the operator searches the tenant's events and opens the event, then its delivery
    p.get_by_label("Tenant").fill(retried["tenant"])
    p.get_by_role("button", name="Search").click()
    p.get_by_role("link", name=retried["event"]).click()
    p.wait_for_url(f"**/console/events/{retried['event']}")
    p.get_by_role("link", name=retried["delivery"]).click()
    p.wait_for_url(f"**/console/deliveries/{retried['delivery']}")
    # Then both attempts are listed: the 500, then the 200
    rows = p.locator("#attempts tr.attempt")
    rows.nth(1).wait_for()
    assert rows.count() == 2
    assert re.search(r"\b500\b", rows.nth(0).inner_text())
    assert re.search(r"\b200\b", rows.nth(1).inner_text())
    # When they resend it, the new attempt appears (the attempts table refreshes itself)
    p.get_by_role("button", name="Resend").click()
    p.get_by_role("status").filter(has_text="resent").wait_for()
    p.locator("#attempts tr.attempt").nth(2).wait_for(timeout=30_000)
    assert p.locator("#attempts tr.attempt").count() == 3
    assert len(sink.requests("/flaky")) == 3
    assert not page.errors and not page.dialogs


def test_a_replay_shows_its_dry_run_count_before_it_runs(
    page: Watched, retried: dict[str, str], stack: Stack, sink: Sink
) -> None:
    # Given the replay form: the tenant's deliveries of the last hour, and a reason
    p = page.page
    p.goto("/console/replays")
    p.get_by_label("Since").fill("1h")
    p.get_by_label("Tenant").fill(retried["tenant"])
    p.get_by_label("State").fill("delivered")
    p.get_by_label("Reason").fill("subscriber lost its database")
    # When the operator asks for the preview
    p.get_by_role("button", name="Preview (dry run)").click()
    # Then it says how many deliveries it would send, and nothing was sent yet
    assert p.locator("#would").inner_text() == "1"
    sent_before = len(sink.requests("/flaky"))
    # When they confirm, the replay runs and finishes; the subscriber gets the delivery again
    p.get_by_role("button", name="Replay 1 deliveries").click()
    p.locator("#replay-state").filter(has_text="succeeded").wait_for(timeout=30_000)
    wait_until(lambda: len(sink.requests("/flaky")) == sent_before + 1, what="the replayed send")
    audit = stack.query(
        "SELECT actor, params FROM audit_log WHERE action = 'replay' ORDER BY id DESC LIMIT 2"
    )
    assert [a["actor"] for a in audit] == ["console:local", "console:local"]


def test_an_inbound_payload_with_markup_renders_as_inert_text(
    page: Watched, stack: Stack, sink: Sink
) -> None:
    # Given an inbound webhook whose payload carries a script, an onerror image and a
    # javascript: link (anyone can post to an inbound URL)
    tenant = stack.tenant(name="markup")
    path = stack.source(tenant, "standard", SECRET)
    hostile = {
        "note": "<script>window.__pwned = true; alert('script')</script>",
        "avatar": "<img src=x onerror=\"window.__pwned = true; alert('img')\">",
        "link": "<a href=\"javascript:window.__pwned=true;alert('link')\">open</a>",
        "url": "javascript:window.__pwned=true",
    }
    body = json.dumps({"type": "profile.updated", "data": hostile}).encode()
    headers = standard_headers(SECRET, body, f"msg_{uuid.uuid4().hex}")
    assert httpx.post(stack.url + path, content=body, headers=headers).status_code < 300
    event = wait_until(
        lambda: stack.query("SELECT id FROM events WHERE tenant_id = %s", tenant), what="event"
    )[0]["id"]
    # When the operator opens the event
    p = page.page
    p.goto(f"/console/events/{event}")
    p.locator("#payload").wait_for()
    # Then the markup is shown as text, and none of it ran or became an element
    text = p.locator("#payload").inner_text()
    assert "<script>window.__pwned = true;" in text
    assert "onerror=" in text and "javascript:" in text
    assert p.locator("main img").count() == 0
    assert p.locator("a[href^='javascript']").count() == 0
    assert p.locator("main script").count() == 0
    assert not page.pwned() and not page.dialogs


def test_a_state_changing_request_without_its_csrf_token_is_refused(
    page: Watched, retried: dict[str, str], stack: Stack
) -> None:
    # Given an operator's browser that has loaded a console page (it has its cookie)
    p = page.page
    p.goto(f"/console/deliveries/{retried['delivery']}")
    token = p.locator("input[name=csrf_token]").first.input_value()
    url = f"/console/deliveries/{retried['delivery']}/resend"
    before = len(stack.attempts(retried["delivery"]))
    # When the resend is posted without a token, or with one made for another browser
    missing = p.request.post(url, form={})
    forged = p.request.post(url, form={"csrf_token": token[:-2] + "xx"})
    # Then both are refused with 403 and nothing is resent
    assert missing.status == 403 and forged.status == 403
    assert "expired" in missing.text()
    replays = stack.query(
        "SELECT count(*) AS n FROM audit_log WHERE action = 'replay' AND params::text LIKE %s",
        f"%{retried['delivery']}%",
    )
    assert replays[0]["n"] == 0
    assert len(stack.attempts(retried["delivery"])) == before
    # And with its token the same request is accepted
    assert p.request.post(url, form={"csrf_token": token}).status == 200


def test_pages_carry_a_strict_content_security_policy(page: Watched) -> None:
    # When the status page loads
    response = page.page.goto("/console")
    # Then its CSP allows no inline script or style, and the page loaded without violating it
    assert response is not None
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    page.page.get_by_role("heading", name="Status").wait_for()
    assert page.page.evaluate("() => typeof window.htmx") == "object"
    assert not page.csp_violations, page.csp_violations


def test_an_operator_adds_an_endpoint_sends_it_a_test_event_and_disables_it(
    page: Watched, stack: Stack, sink: Sink
) -> None:
    # Given a tenant, and the console's endpoints page
    tenant = stack.tenant(name=f"Ops-{uuid.uuid4().hex[:6]}")
    p = page.page
    p.goto("/console/endpoints")
    # When the operator adds an endpoint for it, its secret is revealed this once
    p.get_by_label("Tenant").select_option(tenant)
    p.get_by_label("URL").fill(sink.url("/ops"))
    p.get_by_role("button", name="Add endpoint").click()
    p.get_by_text("Reveal the secret").click()
    assert p.locator("#secret").inner_text().startswith("whsec_")
    # When they open it and send a test event, the subscriber gets it
    p.get_by_role("link", name=sink.url("/ops")).click()
    p.get_by_role("button", name="Send a test event").click()
    p.get_by_role("status").filter(has_text="test event").wait_for()
    wait_until(lambda: sink.requests("/ops"), what="the test event at the subscriber")
    # When they disable it, it says so, and the change is audited under the console's name
    p.get_by_role("button", name="Disable").click()
    p.get_by_role("status").filter(has_text="disabled").wait_for()
    assert p.locator("#enabled").inner_text() == "no"
    actions = stack.query(
        "SELECT action, actor FROM audit_log WHERE object_type = 'endpoint' AND object_id = "
        "(SELECT id FROM endpoints WHERE tenant_id = %s) ORDER BY id",
        tenant,
    )
    assert [a["action"] for a in actions] == ["create", "send_test_event", "disable"]
    assert {a["actor"] for a in actions} == {"console:local"}
