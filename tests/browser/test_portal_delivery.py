"""What was sent, in Chromium (issue 26): a tenant's customer finds a delivery in the portal's
log by its event type, opens it, and sees the event type, the payload as sent (markup shown as
text, never run), each attempt's response, and on the endpoint's page its health chart; the
catalogue documents the operational events. With HOOKLINE_SCREENSHOTS=docs/console the pages
are also photographed for docs/console.md."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Watched
from tests.browser.test_console import delivered, publish
from tests.browser.test_portal import link, open_portal
from tests.e2e.conftest import Stack, wait_until
from tests.support.sinks import Sink

pytestmark = pytest.mark.browser

OUT = os.environ.get("HOOKLINE_SCREENSHOTS")
HOSTILE = '<img src=x onerror="window.__pwned=true">'


def test_a_customer_sees_what_was_sent_and_what_the_endpoint_answered(
    page: Watched, stack: Stack, sink: Sink
) -> None:
    # Given an order event whose delivery failed once (500) and then succeeded
    tenant = stack.tenant(name="Acme Shop")
    sink.behave("/orders", statuses=[500, 200], headers={"X-Request-Id": "req-77"})
    endpoint = stack.endpoint(tenant, sink.url("/orders"), description="Orders service")
    event = publish(stack, tenant, {"order": "A-1001", "amount": 4200, "note": HOSTILE})
    row = wait_until(lambda: delivered(stack, event), timeout=30)
    p = page.page
    open_portal(p, link(stack, tenant))
    # When they filter the delivery log by the event type and open the delivery
    p.goto("/portal/deliveries")
    p.get_by_label("Event type").fill("order.paid")
    p.get_by_role("button", name="Show").click()
    # (the unfiltered list shows the same link: wait for the filtered one, or the click can
    # land while the filter's page is still loading and be lost with the page)
    p.wait_for_url(lambda url: "event_type=order.paid" in url)
    p.get_by_role("link", name=row["id"]).click()
    # Then the page names the event type and shows the payload as sent, as text
    assert p.locator("#event-type").inner_text() == "order.paid"
    payload = p.locator("#payload").inner_text()
    assert '"order": "A-1001"' in payload and HOSTILE.replace('"', '\\"') in payload
    assert not page.pwned() and page.dialogs == []
    # And each attempt: the 500, then the 200, with the response's headers
    attempts = p.locator("tr.attempt")
    assert attempts.count() == 2
    assert "500" in attempts.nth(0).inner_text() and "200" in attempts.nth(1).inner_text()
    p.get_by_text("Attempt 2: request and response headers").click()
    assert "req-77" in p.locator("details.attempt-detail").nth(1).inner_text()
    if OUT:
        _shoot(p, "portal-delivery-sent")
    # When they open the endpoint's page, its health and success chart are there
    p.goto(f"/portal/endpoints/{endpoint['id']}")
    assert p.locator("#health-state").inner_text() == "healthy"
    assert p.locator("#health-chart rect.bar").count() >= 1
    if OUT:
        _shoot(p, "portal-endpoint-health")
    # And the catalogue documents the operational events with an example each
    p.goto("/portal/event-types")
    assert p.locator("section.operational-type").count() == 4
    if OUT:
        p.locator("#operational").scroll_into_view_if_needed()
        _shoot(p, "portal-catalogue-operational")
    assert not page.pwned() and page.errors == []


def _shoot(p: Any, name: str) -> None:
    out = Path(str(OUT))
    out.mkdir(parents=True, exist_ok=True)
    p.wait_for_load_state("networkidle")
    p.screenshot(path=str(out / f"{name}.png"), full_page=True)
