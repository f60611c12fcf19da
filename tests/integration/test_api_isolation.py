"""Tenant isolation: a caller scoped to tenant A can never read or change tenant B. B's
objects answer 404 exactly like objects that do not exist (nothing leaks); actions no tenant
may take answer 403."""

from __future__ import annotations

import pytest

from tests.support.management import as_tenant, key_principal_for, scope_principal

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"


@pytest.fixture
def world(mgmt, db):
    """Two tenants, each with a source, an endpoint, an event and a delivery."""
    objects = {}
    for name in ("a", "b"):
        tenant = mgmt.post("/v1/tenants", {"name": name}).json()
        source = mgmt.post("/v1/sources", {"tenant_id": tenant["id"], "scheme": "standard"})
        endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": PUBLIC_URL})
        sent = mgmt.post(f"/v1/endpoints/{endpoint.json()['id']}/test").json()
        objects[name] = {
            "tenant": tenant["id"],
            "source": source.json()["id"],
            "endpoint": endpoint.json()["id"],
            "event": sent["event_id"],
            "delivery": sent["delivery_id"],
        }
    client_a = as_tenant(mgmt, db, objects["a"]["tenant"])
    return client_a, objects["a"], objects["b"]


def reads(ids):
    return [
        f"/v1/tenants/{ids['tenant']}",
        f"/v1/sources/{ids['source']}",
        f"/v1/endpoints/{ids['endpoint']}",
        f"/v1/events/{ids['event']}",
        f"/v1/deliveries/{ids['delivery']}",
        f"/v1/deliveries/{ids['delivery']}/attempts",
    ]


def writes(ids):
    return [
        ("POST", f"/v1/sources/{ids['source']}/disable", None),
        ("POST", f"/v1/sources/{ids['source']}/enable", None),
        ("POST", f"/v1/sources/{ids['source']}/rotate-secret", {}),
        ("PATCH", f"/v1/endpoints/{ids['endpoint']}", {"description": "mine now"}),
        ("POST", f"/v1/endpoints/{ids['endpoint']}/disable", None),
        ("POST", f"/v1/endpoints/{ids['endpoint']}/enable", None),
        ("POST", f"/v1/endpoints/{ids['endpoint']}/rotate-secret", None),
        ("POST", f"/v1/endpoints/{ids['endpoint']}/test", None),
        ("POST", f"/v1/deliveries/{ids['delivery']}/resend", None),
        ("PATCH", f"/v1/sources/{ids['source']}", {"name": "mine now"}),
        ("DELETE", f"/v1/sources/{ids['source']}", None),
        ("DELETE", f"/v1/endpoints/{ids['endpoint']}", None),
    ]


def test_a_tenant_reads_its_own_objects(world):
    client, mine, _ = world
    for path in reads(mine):
        assert client.get(path).status == 200, path


def test_another_tenants_objects_are_not_found_exactly_like_missing_ones(world):
    client, _, theirs = world
    for path in reads(theirs):
        result = client.get(path)
        assert result.status == 404, path
        asked = path.split("/")[3]
        missing = client.get(path.replace(asked, "x_missing"))
        # The same answer as for an id that does not exist (only the id asked for differs).
        assert result.body.decode().replace(asked, "x_missing") == missing.body.decode()


def test_another_tenants_objects_cannot_be_changed(world, mgmt):
    client, _, theirs = world
    before = {path: mgmt.get(path).json() for path in reads(theirs)[:3]}
    for method, path, body in writes(theirs):
        assert client.request(method, path, body).status == 404, path
    assert {path: mgmt.get(path).json() for path in reads(theirs)[:3]} == before
    assert len(mgmt.get("/v1/deliveries", tenant_id=theirs["tenant"]).json()["items"]) == 1


def test_lists_show_only_the_callers_tenant_whatever_the_filter(world):
    client, mine, theirs = world
    for path, key in [
        ("/v1/tenants", "tenant"),
        ("/v1/sources", "source"),
        ("/v1/endpoints", "endpoint"),
        ("/v1/events", "event"),
        ("/v1/deliveries", "delivery"),
    ]:
        assert [o["id"] for o in client.get(path).json()["items"]] == [mine[key]], path
        if path != "/v1/tenants":  # the others take a tenant_id filter
            assert client.get(path, tenant_id=theirs["tenant"]).json()["items"] == [], path
    other = client.get("/v1/deliveries", endpoint_id=theirs["endpoint"]).json()["items"]
    assert other == []


def test_a_tenant_cannot_create_in_another_tenant(world, mgmt):
    client, mine, theirs = world
    refused = [
        client.post("/v1/sources", {"tenant_id": theirs["tenant"], "scheme": "standard"}),
        client.post("/v1/endpoints", {"tenant_id": theirs["tenant"], "url": PUBLIC_URL}),
        client.post("/v1/events", {"tenant_id": theirs["tenant"], "type": "x", "payload": {}}),
    ]
    assert [r.status for r in refused] == [404, 404, 404]
    # Without tenant_id a tenant caller acts on its own tenant.
    own = client.post("/v1/endpoints", {"url": PUBLIC_URL})
    assert own.status == 201 and own.json()["tenant_id"] == mine["tenant"]
    published = client.post("/v1/events", {"type": "x", "payload": {}})
    assert mgmt.get(f"/v1/events/{published.json()['id']}").json()["tenant_id"] == mine["tenant"]


def test_operator_only_actions_are_forbidden_to_a_tenant(world):
    client, _, _ = world
    result = client.post("/v1/tenants", {"name": "sneaky"})
    assert result.status == 403 and "operator" in result.json()["detail"]


def test_status_counts_only_the_callers_tenant(world, mgmt):
    client, _, _ = world
    assert client.get("/v1/status").json()["deliveries"] == {"pending": 1}
    assert mgmt.get("/v1/status").json()["deliveries"] == {"pending": 2}


def test_idempotency_keys_are_per_tenant(world, mgmt, db):
    client, _, theirs = world
    client_b = as_tenant(mgmt, db, theirs["tenant"])
    headers = {"Idempotency-Key": "same-key"}
    mine = client.post("/v1/endpoints", {"url": PUBLIC_URL}, headers=headers)
    other = client_b.post("/v1/endpoints", {"url": PUBLIC_URL}, headers=headers)
    assert (mine.status, other.status) == (201, 201)
    assert mine.json()["id"] != other.json()["id"]


def test_an_assumed_role_session_gets_its_roles_scope(world, mgmt, db):
    _, mine, _ = world
    session = "arn:aws:sts::123456789012:assumed-role/tenant-" + mine["tenant"] + "/ci-run"
    caller = mgmt.as_(session)
    assert [t["id"] for t in caller.get("/v1/tenants").json()["items"]] == [mine["tenant"]]


def test_local_bearer_keys_scope_a_caller_in_local_mode(world, mgmt, db, monkeypatch):
    from hookline.settings import get_settings

    _, mine, theirs = world
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_API_KEY", "operator-key")
    get_settings.cache_clear()
    scope_principal(db, key_principal_for("tenant-key"), mine["tenant"])
    anonymous = mgmt.as_(None)
    assert anonymous.get("/v1/tenants").status == 403
    bearer = {"Authorization": "Bearer tenant-key"}
    assert (
        anonymous.request("GET", f"/v1/endpoints/{theirs['endpoint']}", headers=bearer).status
        == 404
    )
    assert (
        anonymous.request("GET", f"/v1/endpoints/{mine['endpoint']}", headers=bearer).status == 200
    )
    operator = {"Authorization": "Bearer operator-key"}
    assert (
        anonymous.request("GET", f"/v1/endpoints/{theirs['endpoint']}", headers=operator).status
        == 200
    )
    wrong = {"Authorization": "Bearer nope"}
    assert anonymous.request("GET", "/v1/tenants", headers=wrong).status == 403


def test_bearer_keys_are_ignored_outside_local_mode(world, mgmt):
    result = mgmt.as_(None).request("GET", "/v1/tenants", headers={"Authorization": "Bearer x"})
    assert result.status == 403
