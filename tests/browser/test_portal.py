"""The tenant portal in Chromium: a session from a link, endpoints added and edited (the SSRF
refusal shown inline), a test event in the log, a secret revealed once, tenants kept apart, expired
and forged links refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hookline.management import endpoint_service
from hookline.management.access import Caller
from hookline.sessions import portal_link
from tests.browser.conftest import Watched
from tests.e2e.conftest import Stack

pytestmark = pytest.mark.browser

PUBLIC = "http://93.184.215.14/hooks"  # a public address: saved, never reached in the test


def link(stack: Stack, tenant: str) -> str:
    """A portal link, made by the CLI as an operator would (to the stack it talks to)."""
    made = stack.cli("portal", "link", "--tenant", tenant, "--ttl", "15m")
    assert set(made) == {"id", "url", "expires_at"}
    assert made["url"].startswith(f"{stack.url}/portal/login?token=")
    return str(made["url"])


def open_portal(p: Any, url: str) -> None:
    """Open a portal link and confirm, as a customer does (the link works once)."""
    p.goto(url)
    p.get_by_role("button", name="Open the portal").click()
    p.wait_for_url("**/portal")


def test_an_endpoint_is_refused_for_a_private_url_then_added_and_sent_a_test_event(
    page: Watched, stack: Stack
) -> None:
    # Given a tenant's customer who opened their portal link
    tenant = stack.tenant(name="Acme Portal")
    p = page.page
    open_portal(p, link(stack, tenant))
    p.get_by_role("heading", name="Your endpoints").wait_for()
    cookie = next(c for c in p.context.cookies() if c["name"] == "hl_portal")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    # When they add an endpoint on a private address, the SSRF check's refusal is shown inline
    p.get_by_label("URL").fill("http://10.0.0.7/hooks")
    p.get_by_role("button", name="Add endpoint").click()
    alert = p.locator("#url-error")
    assert "public addresses only" in alert.inner_text()
    assert p.get_by_label("URL").get_attribute("aria-invalid") == "true"
    assert stack.query("SELECT id FROM endpoints WHERE tenant_id = %s", tenant) == []
    # When they add one on a public address, its secret is revealed this once
    p.get_by_label("URL").fill(PUBLIC)
    p.get_by_role("button", name="Add endpoint").click()
    p.get_by_text("Reveal the secret").click()
    assert p.locator("#secret").inner_text().startswith("whsec_")
    # When they open it and send a test event, it is in its delivery log
    p.get_by_role("link", name=PUBLIC).click()
    p.get_by_role("button", name="Send a test event").click()
    p.get_by_role("status").filter(has_text="test event").wait_for()
    assert p.locator("table.deliveries tbody tr a").count() == 1
    p.get_by_role("link", name="Delivery log").click()
    assert p.locator("table.deliveries tbody tr a").count() == 1


def test_a_rotated_secret_is_revealed_once(page: Watched, stack: Stack) -> None:
    # Given a tenant's endpoint, opened in the portal
    tenant = stack.tenant(name="Rotator")
    endpoint = stack.endpoint(tenant, PUBLIC)
    p = page.page
    open_portal(p, link(stack, tenant))
    p.goto(f"/portal/endpoints/{endpoint['id']}")
    # When the secret is rotated, the new one is revealed
    p.get_by_role("button", name="Rotate the signing secret").click()
    p.get_by_text("Reveal the secret").click()
    secret = p.locator("#secret").inner_text()
    assert secret.startswith("whsec_") and secret != endpoint["secret"]
    # Then no page shows it again
    for path in (f"/portal/endpoints/{endpoint['id']}", "/portal", "/portal/deliveries"):
        p.goto(path)
        assert secret not in p.content()
    assert p.locator("#secret").count() == 0


def test_an_endpoint_url_edit_is_refused_for_a_private_address_then_saved(
    page: Watched, stack: Stack
) -> None:
    # Given a tenant's customer on one of their endpoints in the portal
    tenant = stack.tenant(name="Editor")
    endpoint = stack.endpoint(tenant, PUBLIC)
    p = page.page
    open_portal(p, link(stack, tenant))
    p.goto(f"/portal/endpoints/{endpoint['id']}")
    p.get_by_role("link", name="Edit this endpoint").click()
    p.wait_for_url(f"**/portal/endpoints/{endpoint['id']}/edit")
    assert p.get_by_label("Max concurrency").count() == 0  # limits are the operator's
    # When they change its URL to a private address, the SSRF check's refusal is shown inline
    p.get_by_label("URL").fill("http://192.168.1.20/hooks")
    p.get_by_role("button", name="Save changes").click()
    error = p.locator("#url-error")
    error.wait_for()
    assert "public addresses only" in error.inner_text()
    assert p.get_by_label("URL").get_attribute("aria-invalid") == "true"
    assert p.url.endswith("/edit")
    stored = stack.query("SELECT url FROM endpoints WHERE id = %s", endpoint["id"])
    assert stored == [{"url": PUBLIC}]
    # When they give a public one with a description, it is saved and shown on the endpoint
    moved = "http://93.184.215.14/moved-hooks"
    p.get_by_label("URL").fill(moved)
    p.get_by_label("Description").fill("orders, moved")
    p.get_by_role("button", name="Save changes").click()
    p.get_by_role("status").filter(has_text="saved").wait_for()
    assert p.locator("#endpoint-url").inner_text() == moved
    assert p.locator("#description").inner_text() == "orders, moved"
    stored = stack.query("SELECT url FROM endpoints WHERE id = %s", endpoint["id"])
    assert stored == [{"url": moved}]
    assert not page.errors and not page.csp_violations


def test_a_tenants_link_never_shows_another_tenants_data(page: Watched, stack: Stack) -> None:
    # Given tenants A and B, each with an endpoint and a delivery
    a, b = stack.tenant(name="Tenant A"), stack.tenant(name="Tenant B")
    stack.endpoint(a, "http://93.184.215.14/a-hooks")
    b_endpoint = stack.endpoint(b, "http://93.184.215.14/b-hooks")
    b_sent = endpoint_service.send_test_event(
        stack.db, stack.settings, Caller("test", b), b_endpoint["id"], type="t.x", payload=None
    )
    p = page.page
    # When A's customer opens A's link and walks the portal
    open_portal(p, link(stack, a))
    seen = ""
    for path in ("/portal", "/portal/deliveries", "/portal/event-types"):
        p.goto(path)
        seen += p.content()
    # Then nothing of B is there
    assert "a-hooks" in seen
    assert "b-hooks" not in seen and "Tenant B" not in seen and b_sent["delivery_id"] not in seen
    # And editing B's ids into the URLs is answered as not found
    p.goto("/portal")
    token = p.locator("input[name=csrf_token]").first.input_value()
    for path in (
        f"/portal/endpoints/{b_endpoint['id']}",
        f"/portal/deliveries/{b_sent['delivery_id']}",
    ):
        answer = p.goto(path)
        assert answer is not None and answer.status == 404
        assert "b-hooks" not in p.content()
    rotated = p.request.post(
        f"/portal/endpoints/{b_endpoint['id']}/rotate", form={"csrf_token": token}
    )
    assert rotated.status == 404 and "whsec_" not in rotated.text()
    audited = stack.query(
        "SELECT count(*) AS n FROM audit_log WHERE object_id = %s AND action = 'rotate_secret'",
        b_endpoint["id"],
    )
    assert audited[0]["n"] == 0


def expired_link(stack: Stack, tenant: str) -> str:
    made = portal_link(
        stack.settings, tenant, "pl_expired", base_url=stack.url,
        expires_at=datetime.now(UTC) - timedelta(minutes=55),
    )  # fmt: skip
    return made["url"]


@pytest.mark.parametrize("kind", ["expired", "forged"])
def test_an_expired_or_forged_link_is_refused(page: Watched, stack: Stack, kind: str) -> None:
    # Given a link that expired an hour ago, or a valid one with its signature changed
    tenant = stack.tenant(name="Late")
    url: Any = (
        expired_link(stack, tenant) if kind == "expired" else link(stack, tenant)[:-3] + "abc"
    )
    # When it is opened
    answer = page.page.goto(url)
    # Then the page says why, with a 401, and no session was started
    assert answer is not None and answer.status == 401
    message = page.page.locator("#refusal").inner_text()
    assert ("expired" in message) if kind == "expired" else ("not a valid" in message)
    assert not [c for c in page.page.context.cookies() if c["name"] == "hl_portal"]
    assert page.page.goto("/portal").status == 401


def test_an_operator_brands_a_tenants_portal_and_says_who_may_frame_it(
    page: Watched, stack: Stack
) -> None:
    # Given a tenant's page in the console
    tenant = stack.tenant(name="Branded")
    p = page.page
    p.goto(f"/console/tenants/{tenant}")
    # When an accent that is not a colour is saved, it is refused and nothing is stored
    p.get_by_label("Accent colour").fill("red; background: url(//evil)")
    p.get_by_role("button", name="Save portal settings").click()
    assert "accent must be a colour" in p.locator("#portal-error").inner_text()
    assert stack.query("SELECT * FROM portal_settings WHERE tenant_id = %s", tenant) == []
    # When a title, a logo, an accent and an embedding site are saved
    p.get_by_label("Title").fill("Branded Webhooks")
    p.get_by_label("Logo URL (https)").fill("https://cdn.example/logo.png")
    p.get_by_label("Accent colour").fill("#aa3300")
    p.get_by_label("Sites that may embed").fill("https://app.branded.example")
    p.get_by_role("button", name="Save portal settings").click()
    p.get_by_role("status").filter(has_text="saved").wait_for()
    # Then the tenant's portal shows them, and only that site may frame it
    open_portal(p, link(stack, tenant))
    answer = p.goto("/portal")
    assert answer is not None
    assert p.locator("#portal-title").inner_text() == "Branded Webhooks"
    assert p.locator("header img.logo").get_attribute("src") == "https://cdn.example/logo.png"
    colour = p.evaluate("() => getComputedStyle(document.querySelector('header')).backgroundColor")
    assert colour == "rgb(170, 51, 0)"
    csp = answer.headers["content-security-policy"]
    assert "frame-ancestors https://app.branded.example" in csp
    assert not page.csp_violations
