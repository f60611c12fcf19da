"""`/v1/tenants/{id}/portal-links` and `DELETE /v1/tenants/{id}?erase=true`: what a SaaS's
backend and an operator call over the management API (real Postgres, the API handler)."""

from __future__ import annotations

import pytest

from hookline.settings import get_settings
from tests.support.management import as_tenant

pytestmark = pytest.mark.integration


def tenant(mgmt, name: str) -> str:
    created = mgmt.post("/v1/tenants", {"name": name})
    assert created.status == 201, created.body
    return created.json()["id"]


def test_a_portal_link_opens_the_portal_of_that_tenant_only(mgmt, db, monkeypatch):
    # Given two tenants, and a portal address the operator lists
    monkeypatch.setenv("HOOKLINE_PORTAL_BASE_URLS", "https://app.example")
    get_settings.cache_clear()
    a, b = tenant(mgmt, "a"), tenant(mgmt, "b")
    # When the operator's backend asks for a link to A's portal there
    link = mgmt.post(
        f"/v1/tenants/{a}/portal-links", {"ttl_seconds": 600, "base_url": "https://app.example"}
    )
    # Then it is a portal URL on that base, expiring when asked
    assert link.status == 201, link.body
    assert link.json()["url"].startswith("https://app.example/portal")
    assert link.json()["expires_at"] and link.json()["id"].startswith("pl_")
    # And a principal scoped to B cannot get one for A (A is not in its scope)
    refused = as_tenant(mgmt, db, b).post(f"/v1/tenants/{a}/portal-links", {})
    assert refused.status == 404, refused.body


def test_a_portal_link_refuses_a_ttl_out_of_bounds(mgmt):
    a = tenant(mgmt, "a")
    for ttl in (0, 10**9):
        refused = mgmt.post(f"/v1/tenants/{a}/portal-links", {"ttl_seconds": ttl})
        assert refused.status == 422, refused.body
        assert "ttl_seconds" in refused.body.decode()


def test_erasing_a_tenant_needs_erase_true_and_an_operator(mgmt, db):
    a = tenant(mgmt, "a")
    published = mgmt.post("/v1/events", {"tenant_id": a, "type": "x.y", "payload": {"n": 1}})
    assert published.status == 200, published.body
    # Without erase=true nothing happens, and says why
    refused = mgmt.request("DELETE", f"/v1/tenants/{a}")
    assert refused.status == 400 and "erase=true" in refused.body.decode()
    # A tenant's own principal may not erase itself
    assert (
        as_tenant(mgmt, db, a)
        .request("DELETE", f"/v1/tenants/{a}", params={"erase": "true"})
        .status
        == 403
    )
    # The operator's erasure removes the tenant's events and says how many
    erased = mgmt.request("DELETE", f"/v1/tenants/{a}", params={"erase": "true"})
    assert erased.status == 200, erased.body
    assert erased.json()["tenant_id"] == a
    with db.connection() as conn:
        left = conn.execute("SELECT count(*) AS n FROM events WHERE tenant_id = %s", (a,))
        assert left.fetchone()["n"] == 0
    # And a second run finds nothing more to erase
    again = mgmt.request("DELETE", f"/v1/tenants/{a}", params={"erase": "true"})
    assert again.status == 200, again.body


def test_an_endpoints_preview_shows_the_transformed_body_over_the_api(mgmt):
    # Given an endpoint with a content filter and an input transformer
    a = tenant(mgmt, "a")
    created = mgmt.post(
        "/v1/endpoints",
        {
            "tenant_id": a,
            "url": "https://93.184.216.34/hooks",  # saved, never sent to
            "content_filter": {"payload": {"amount": [{"numeric": [">", 100]}]}},
            "input_transformer": {
                "InputPathsMap": {"amount": "$.payload.amount"},
                "InputTemplate": '{"charged": <amount>}',
            },
        },
    )
    assert created.status == 201, created.body
    endpoint = created.json()["id"]
    # When an event is previewed against it
    big = mgmt.post(
        f"/v1/endpoints/{endpoint}/preview", {"type": "charge", "payload": {"amount": 250}}
    )
    small = mgmt.post(
        f"/v1/endpoints/{endpoint}/preview", {"type": "charge", "payload": {"amount": 5}}
    )
    # Then the matching one shows the body that would be signed and sent, the other no match
    assert big.status == 200, big.body
    assert big.json()["matches"] is True
    assert big.json()["body"].replace(" ", "") == '{"charged":250}'
    assert small.status == 200 and small.json()["matches"] is False
