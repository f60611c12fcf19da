"""Screenshots of every page for docs/console.md: run with HOOKLINE_SCREENSHOTS=docs/console
(skipped otherwise; the pictures are documentation, not assertions)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.test_console import SECRET, delivered, publish
from tests.browser.test_portal import PUBLIC, expired_link, link, open_portal
from tests.e2e.conftest import Stack, wait_until
from tests.support.signers import standard_headers
from tests.support.sinks import Sink

pytestmark = pytest.mark.browser

OUT = os.environ.get("HOOKLINE_SCREENSHOTS")
HOSTILE = {
    "bio": "<script>alert(1)</script>",
    "avatar": "<img src=x onerror=alert(2)>",
    "site": "javascript:alert(3)",
}


def _pages(stack: Stack, sink: Sink) -> dict[str, str]:
    tenant = stack.tenant(name="Acme Shop")
    sink.behave("/shots", statuses=[500, 200])
    endpoint = stack.endpoint(tenant, sink.url("/shots"))
    event = publish(stack, tenant, {"order": "A-1001", "amount": 4200, "currency": "EUR"})
    row = wait_until(lambda: delivered(stack, event), timeout=30)
    path = stack.source(tenant, "standard", SECRET)
    body = json.dumps({"type": "profile.updated", "data": HOSTILE}).encode()
    headers = standard_headers(SECRET, body, f"msg_{uuid.uuid4().hex}")
    httpx.post(stack.url + path, content=body, headers=headers)
    hostile = wait_until(
        lambda: stack.query(
            "SELECT id FROM events WHERE source_id IS NOT NULL AND tenant_id = %s", tenant
        )
    )[0]["id"]
    return {"tenant": tenant, "endpoint": endpoint["id"], "delivery": row["id"], "event": hostile}


@pytest.mark.skipif(not OUT, reason="set HOOKLINE_SCREENSHOTS=docs/console to take them")
def test_take_screenshots_of_every_page(browser: Any, stack: Stack, sink: Sink) -> None:
    out = Path(str(OUT))
    out.mkdir(parents=True, exist_ok=True)
    ids = _pages(stack, sink)

    def shoot(page: Any, name: str) -> None:
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)

    phone = browser.new_context(
        base_url=stack.url, viewport={"width": 390, "height": 800}, extra_http_headers=stack.auth
    )
    p = phone.new_page()
    p.goto("/console")
    shoot(p, "status-phone")
    open_portal(p, link(stack, ids["tenant"]))
    shoot(p, "portal-endpoints-phone")
    phone.close()

    wide = browser.new_context(
        base_url=stack.url, viewport={"width": 1100, "height": 800}, extra_http_headers=stack.auth
    )
    p = wide.new_page()
    p.goto("/console")
    shoot(p, "status")
    p.goto(f"/console/events?tenant_id={ids['tenant']}")
    shoot(p, "events")
    p.goto(f"/console/events/{ids['event']}")
    shoot(p, "event-detail")
    p.goto("/console/deliveries?state=delivered")
    shoot(p, "deliveries")
    p.goto(f"/console/deliveries/{ids['delivery']}")
    shoot(p, "delivery")
    p.goto("/console/replays")
    p.get_by_label("Since").fill("1h")
    p.get_by_label("Tenant").fill(ids["tenant"])
    p.get_by_label("State").fill("delivered")
    p.get_by_label("Reason").fill("subscriber restored from backup")
    p.get_by_role("button", name="Preview (dry run)").click()
    p.locator("#would").wait_for()
    shoot(p, "replay-preview")
    for name in ("endpoints", "tenants", "event-types", "audit"):
        p.goto(f"/console/{name}")
        shoot(p, name)
    _shoot_new_pages(p, stack, ids, shoot)
    p.goto(f"/console/tenants/{ids['tenant']}")
    p.get_by_label("Title").fill("Acme Shop webhooks")
    p.get_by_label("Accent colour").fill("#7a3db8")
    p.get_by_label("Sites that may embed").fill("https://app.acme.example")
    p.get_by_role("button", name="Save portal settings").click()
    p.get_by_role("status").wait_for()
    shoot(p, "tenant")
    open_portal(p, link(stack, ids["tenant"]))
    p.get_by_label("URL").fill("http://10.1.2.3/hooks")
    p.get_by_role("button", name="Add endpoint").click()
    p.locator("#url-error").wait_for()
    shoot(p, "portal-endpoints")
    p.get_by_label("URL").fill(PUBLIC)
    p.get_by_role("button", name="Add endpoint").click()
    p.get_by_text("Reveal the secret").click()
    shoot(p, "portal-secret")
    p.goto(f"/portal/endpoints/{ids['endpoint']}")
    shoot(p, "portal-endpoint")
    p.goto(f"/portal/endpoints/{ids['endpoint']}/edit")
    p.get_by_label("URL").fill("http://10.1.2.3/hooks")
    p.get_by_role("button", name="Save changes").click()
    p.locator("#url-error").wait_for()
    shoot(p, "portal-endpoint-edit")
    p.goto("/portal/deliveries")
    shoot(p, "portal-deliveries")
    p.goto(f"/portal/deliveries/{ids['delivery']}")
    shoot(p, "portal-delivery")
    p.goto(expired_link(stack, ids["tenant"]))
    shoot(p, "portal-expired")
    wide.close()

    phone = browser.new_context(
        base_url=stack.url, viewport={"width": 390, "height": 800}, extra_http_headers=stack.auth
    )
    p = phone.new_page()
    p.goto("/console/dlq")
    shoot(p, "dlq-phone")
    p.goto(f"/console/endpoints/{ids['endpoint']}/edit")
    shoot(p, "endpoint-edit-phone")
    phone.close()


def _shoot_new_pages(p: Any, stack: Stack, ids: dict[str, str], shoot: Any) -> None:
    """The DLQ (a message waiting in the bulk group's, and a redrive's dry run), sources (the
    list, one source, a rotation's one reveal) and the endpoint edit form refusing a pattern."""
    stack.sqs().send_message(
        QueueUrl=stack.state.queues["bulk"]["dlq_url"],
        MessageBody=json.dumps({"delivery_id": "dlv_screenshot", "seq": 1}),
    )
    p.goto("/console/dlq")
    shoot(p, "dlq")
    p.get_by_label("Reason for redriving bulk").fill("the claim crash is fixed")
    p.get_by_role("button", name="Preview redrive of bulk").click()
    p.locator("#would").wait_for()
    shoot(p, "dlq-redrive-preview")
    p.goto(f"/console/sources?tenant_id={ids['tenant']}")
    shoot(p, "sources")
    source = stack.query("SELECT id FROM sources WHERE tenant_id = %s", ids["tenant"])[0]["id"]
    p.goto(f"/console/sources/{source}")
    shoot(p, "source")
    p.get_by_role("button", name="Rotate the secret").click()
    p.get_by_text("Reveal the secret").click()
    shoot(p, "source-secret")
    p.goto(f"/console/endpoints/{ids['endpoint']}/edit")
    p.get_by_label("Content filter").fill('{"payload": {"currency": "EUR"}}')
    p.get_by_role("button", name="Save changes").click()
    p.locator("#content_filter-error").wait_for()
    shoot(p, "endpoint-edit")
