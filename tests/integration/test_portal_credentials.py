"""Portal links and sessions as credentials (issue 23, finding 4(c), 4(d); issue 26 item 5(a);
decision 0061): a link opens one session, once, after a confirming POST no other site can
make; links are revocable through the API and the CLI, sessions end at sign-out; a link points
only where the operator allows; `?notice=` shows fixed text; an erasure revokes every
credential of the tenant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from hookline.db import get_database
from hookline.management.access import OPERATOR, Caller
from hookline.management.portal_links import create_portal_link
from hookline.settings import get_settings
from tests.support.console import ConsoleClient, text
from tests.support.management import as_tenant

pytestmark = pytest.mark.integration

OPERATOR_CALLER = Caller("test-operator", OPERATOR)
PUBLIC = "https://93.184.215.14/hooks"


@pytest.fixture
def portal(mgmt: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A browser factory for the console function (local mode), beside the management API."""
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    get_settings.cache_clear()
    from functions.console.handler import lambda_handler

    yield lambda: ConsoleClient(lambda_handler)


def new_tenant(mgmt: Any, name: str) -> str:
    created = mgmt.post("/v1/tenants", {"name": name})
    assert created.status == 201, created.body
    return str(created.json()["id"])


def new_link(mgmt: Any, tenant: str) -> dict[str, Any]:
    made = mgmt.post(f"/v1/tenants/{tenant}/portal-links", {"ttl_seconds": 900})
    assert made.status == 201, made.body
    return dict(made.json())


def path_of(link: dict[str, Any]) -> str:
    return "/portal/login?" + link["url"].split("/portal/login?", 1)[1]


def token_of(link: dict[str, Any]) -> str:
    return str(link["url"].split("token=", 1)[1])


def sign_in(browser: ConsoleClient, link: dict[str, Any]) -> None:
    """Open the link and confirm, as the customer would."""
    assert browser.get(path_of(link)).status == 200
    opened = browser.post("/portal/login", {"token": token_of(link)})
    assert opened.status == 303, opened.body
    assert browser.get("/portal").status == 200


def test_a_link_opens_one_session_once_and_only_after_confirming(mgmt, portal):
    # Given a link to Acme's portal
    tenant = new_tenant(mgmt, "Acme")
    link = new_link(mgmt, tenant)
    browser = portal()
    # When the customer opens it, the page names the portal and asks to confirm: no session yet
    page = browser.get(path_of(link))
    assert page.status == 200 and "Acme" in text(page) and 'id="open-portal"' in text(page)
    assert "hl_portal" not in browser.cookies
    # Then confirming opens the portal
    opened = browser.post("/portal/login", {"token": token_of(link)})
    assert opened.status == 303 and opened.headers["Location"] == "/portal"
    assert browser.get("/portal").status == 200
    # And the same link opens nothing for anyone else (also after a preview fetched it)
    other = portal()
    refused = other.get(path_of(link))
    assert refused.status == 401 and "used or revoked" in text(refused)
    assert other.post("/portal/login", {"token": token_of(link)}).status == 403
    assert "hl_portal" not in other.cookies


def test_another_site_cannot_sign_a_visitor_into_its_session(mgmt, portal):
    # Given an attacker's own valid link
    tenant = new_tenant(mgmt, "Attacker")
    link = new_link(mgmt, tenant)
    victim = portal()
    # When the attacker's page posts the login form from the victim's browser (no login cookie
    # from this site, no CSRF token of it), or guesses a token
    forged = victim.request(
        "POST", "/portal/login", body=urlencode({"token": token_of(link), "csrf_token": "x"})
    )
    # Then it is refused, the victim has no session, and the link is still unused
    assert forged.status == 403 and "hl_portal" not in victim.cookies
    [row] = mgmt.get(f"/v1/tenants/{tenant}/portal-links").json()["items"]
    assert row["used_at"] is None


def test_a_revoked_link_ends_its_session_and_sign_out_ends_a_session(mgmt, portal):
    # Given two customers in the portal, each from their own link
    tenant = new_tenant(mgmt, "Acme")
    first, second = new_link(mgmt, tenant), new_link(mgmt, tenant)
    one, two = portal(), portal()
    sign_in(one, first)
    sign_in(two, second)
    # When the operator revokes the first link through the API
    revoked = mgmt.delete(f"/v1/tenants/{tenant}/portal-links/{first['id']}")
    assert revoked.status == 200, revoked.body
    assert revoked.json() == {"id": first["id"], "revoked": True, "sessions_ended": 1}
    # Then its session is over, the other's is not
    assert one.get("/portal").status == 401
    assert two.get("/portal").status == 200
    # When the second customer signs out, the cookie they had opens nothing any more
    kept = dict(two.cookies)
    signed_out = two.post("/portal/signout", {})
    assert signed_out.status == 200 and "signed out" in text(signed_out)
    two.cookies = kept
    assert two.get("/portal").status == 401
    # And the links say what happened to them
    listed = {r["id"]: r for r in mgmt.get(f"/v1/tenants/{tenant}/portal-links").json()["items"]}
    assert listed[first["id"]]["revoked_at"] and listed[second["id"]]["used_at"]
    assert listed[second["id"]]["live_sessions"] == 0
    # And a link of another tenant is answered as unknown
    other = new_tenant(mgmt, "b")
    assert mgmt.delete(f"/v1/tenants/{other}/portal-links/{first['id']}").status == 404


def test_a_link_points_only_at_the_deployment_or_an_address_the_operator_lists(mgmt, monkeypatch):
    tenant = new_tenant(mgmt, "Acme")
    # When a caller asks for a link to a site of its choosing
    refused = mgmt.post(f"/v1/tenants/{tenant}/portal-links", {"base_url": "https://evil.example"})
    # Then it is refused, naming the field
    assert refused.status == 400 and refused.json()["detail"].startswith("base_url: ")
    # While the deployment's own address, and one the operator lists, are taken
    assert new_link(mgmt, tenant)["url"].startswith("https://")
    monkeypatch.setenv("HOOKLINE_PORTAL_BASE_URLS", "https://portal.example")
    get_settings.cache_clear()
    listed = mgmt.post(
        f"/v1/tenants/{tenant}/portal-links", {"base_url": "https://portal.example/"}
    )
    assert listed.status == 201 and listed.json()["url"].startswith("https://portal.example/")


def test_a_notice_shows_fixed_text_only(mgmt, db, portal):
    # Given a customer in the portal, on their endpoint's page
    tenant = new_tenant(mgmt, "Acme")
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC}).json()
    browser = portal()
    sign_in(browser, new_link(mgmt, tenant))
    page = f"/portal/endpoints/{endpoint['id']}"
    # When a link carries text of its author's choosing, the page does not print it
    crafted = text(browser.get(f"{page}?notice=Your+account+is+locked:+call+555-0100"))
    assert "locked" not in crafted and 'class="notice"' not in crafted
    # While a code of the portal's own shows its text
    assert "A test event was sent" in text(browser.get(f"{page}?notice=test-sent"))


def test_the_cli_makes_links_to_the_stack_it_talks_to_and_revokes_them(cli, mgmt, monkeypatch):
    # Given the stack this shell talks to
    tenant = new_tenant(mgmt, "Acme")
    monkeypatch.setenv("HOOKLINE_URL", "https://hooks.example.net")
    # When the operator makes a link with the CLI
    code, out, err = cli("portal", "link", "--tenant", tenant, "--json")
    assert code == 0, err
    made = json.loads(out)
    # Then it points at that stack, not at the dev stack's default address
    assert made["url"].startswith("https://hooks.example.net/portal/login?token=")
    # And the CLI revokes every link of the tenant
    code, out, err = cli("portal", "revoke", "--tenant", tenant, "--all", "--json")
    assert code == 0, err
    assert json.loads(out)["links_revoked"] == 1
    code, out, _ = cli("portal", "links", "--tenant", tenant, "--json")
    assert json.loads(out)[0]["revoked_at"] is not None


def test_erasing_a_tenant_revokes_every_credential_of_it(mgmt, db, portal):
    # Given a tenant with an API principal, an open portal session and an unused link
    tenant = new_tenant(mgmt, "Acme")
    as_acme = as_tenant(mgmt, db, tenant)
    assert as_acme.get(f"/v1/tenants/{tenant}").status == 200
    browser = portal()
    sign_in(browser, new_link(mgmt, tenant))
    unused = create_portal_link(
        get_database(), get_settings(), OPERATOR_CALLER, tenant, own_url="https://x",
        ttl=timedelta(hours=1),
    )  # fmt: skip
    # When the operator erases the tenant
    erased = mgmt.delete(f"/v1/tenants/{tenant}", params={"erase": "true"})
    assert erased.status == 200, erased.body
    # Then none of them works any more, and the erasure says how many it revoked
    assert as_acme.get(f"/v1/tenants/{tenant}").status == 403
    assert browser.get("/portal").status == 401
    assert portal().get(path_of(unused)).status == 401
    counts = erased.json()
    assert (counts["api_principals"], counts["portal_links"], counts["portal_sessions"]) == (
        1, 1, 1,
    )  # fmt: skip


def test_a_tenants_key_cannot_set_the_operators_limits(mgmt, db):
    # Given a tenant's own principal
    tenant = new_tenant(mgmt, "Acme")
    as_acme = as_tenant(mgmt, db, tenant)
    # When it creates an endpoint with a concurrency of its choosing, or sets a rate limit
    created = as_acme.post("/v1/endpoints", {"url": PUBLIC, "max_concurrency": 1000})
    assert created.status == 403
    assert created.json()["detail"].startswith("max_concurrency: ")
    endpoint = as_acme.post("/v1/endpoints", {"url": PUBLIC}).json()
    for change in ({"rate_limit_per_second": 100000}, {"clear_rate_limit": True}):
        refused = as_acme.patch(f"/v1/endpoints/{endpoint['id']}", change)
        assert refused.status == 403 and "operator" in refused.json()["detail"]
    # Then the endpoint keeps the defaults, while the operator sets limits as before
    assert as_acme.get(f"/v1/endpoints/{endpoint['id']}").json()["max_concurrency"] == 5
    changed = mgmt.patch(f"/v1/endpoints/{endpoint['id']}", {"max_concurrency": 9})
    assert changed.status == 200 and changed.json()["max_concurrency"] == 9
    # And the tenant may still change what is its own
    assert as_acme.patch(f"/v1/endpoints/{endpoint['id']}", {"description": "x"}).status == 200
