"""Changing and deleting sources and endpoints through the management API and the CLI.

A source's name, tolerance and scheme options change in place (checked as on create); a
delete is soft (docs/decisions/0019-soft-delete.md): the object is gone for the API and for
the pipeline, keeps no secret, and the events and deliveries that refer to it stay readable."""

from __future__ import annotations

import json
import time

import psycopg
import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.repositories import audit as audit_repo
from hookline.settings import get_settings
from tests.integration.conftest import STANDARD_SECRET
from tests.support import operator
from tests.support.signers import standard_headers

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"
# The receiver keeps a source this long (decision 0074): a change that takes something away
# (a shorter tolerance, a deletion) reaches it within that bound.
SOURCE_TTL = 0.2


@pytest.fixture
def short_source_ttl(monkeypatch):
    """The receiver keeps sources SOURCE_TTL seconds (settings read again from here on)."""
    from hookline.db import reset_database

    monkeypatch.setenv("HOOKLINE_SOURCE_CACHE_SECONDS", str(SOURCE_TTL))
    reset_database()


def make_tenant(mgmt, name="acme"):
    return mgmt.post("/v1/tenants", {"name": name}).json()["id"]


def make_source(mgmt, tenant_id, **fields):
    body = {"tenant_id": tenant_id, "scheme": "standard", "secret": STANDARD_SECRET, **fields}
    created = mgmt.post("/v1/sources", body)
    assert created.status == 201, created.body
    return created.json()


def signed_post(api, source, msg_id, *, age_seconds=0):
    body = json.dumps({"type": "invoice.paid", "data": {"id": msg_id}}).encode()
    ts = int(time.time()) - age_seconds
    headers = standard_headers(STANDARD_SECRET, body, msg_id, timestamp=ts)
    return api.post(source["path"], headers=headers, body=body)


def count_events(db):
    with db.connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM events").fetchone()
    return row["n"]


def audit_actions(db, object_type):
    with db.connection() as conn:
        entries = audit_repo.list_audit_entries(conn)
    return [e["action"] for e in entries if e["object_type"] == object_type]


# -- PATCH /v1/sources/<id> -----------------------------------------------------------------


def test_patching_a_source_tolerance_changes_what_the_receiver_accepts(
    short_source_ttl, mgmt, api, db
):
    # Given a source that accepts webhooks signed up to 5 minutes ago
    source = make_source(mgmt, make_tenant(mgmt), tolerance_seconds=300)
    assert signed_post(api, source, "msg_1", age_seconds=120).status == 200
    # When its tolerance is cut to one minute and it is renamed
    patched = mgmt.patch(
        f"/v1/sources/{source['id']}", {"tolerance_seconds": 60, "name": "billing"}
    )
    # Then the API shows the change, and a webhook two minutes old is now refused as stale
    assert patched.status == 200, patched.body
    assert (patched.json()["tolerance_seconds"], patched.json()["name"]) == (60, "billing")
    assert patched.json()["scheme"] == "standard" and patched.json()["enabled"] is True
    assert mgmt.get(f"/v1/sources/{source['id']}").json() == patched.json()
    time.sleep(SOURCE_TTL + 0.05)  # once the receiver's copy of the source has expired
    assert signed_post(api, source, "msg_2", age_seconds=120).status == 401
    assert signed_post(api, source, "msg_3").status == 200
    assert count_events(db) == 2
    assert "update" in audit_actions(db, "source")


def test_a_source_patch_is_checked_like_a_create_and_never_touches_secret_or_scheme(mgmt):
    # Given an hmac source signing in X-Sig
    tenant = make_tenant(mgmt)
    source = mgmt.post(
        "/v1/sources",
        {"tenant_id": tenant, "scheme": "hmac", "secret": "s3cret", "options": {"header": "X-Sig"}},
    ).json()
    path = f"/v1/sources/{source['id']}"
    # When options the scheme does not know, a secret, a scheme or a bad tolerance are sent
    bad_option = mgmt.patch(path, {"options": {"header": "X-Sig", "bogus": 1}})
    no_header = mgmt.patch(path, {"options": {}})
    secret = mgmt.patch(path, {"secret": "new"})
    scheme = mgmt.patch(path, {"scheme": "stripe"})
    tolerance = mgmt.patch(path, {"tolerance_seconds": 0})
    # Then each is refused with a reason, and nothing changed
    assert bad_option.status == 400 and "bogus" in bad_option.json()["detail"]
    assert no_header.status == 400
    assert (secret.status, scheme.status, tolerance.status) == (422, 422, 422)
    assert mgmt.get(path).json()["options"] == {"header": "X-Sig"}
    # And valid options replace the old ones whole
    moved = mgmt.patch(path, {"options": {"header": "X-Other", "encoding": "base64"}})
    assert moved.status == 200, moved.body
    assert moved.json()["options"] == {"header": "X-Other", "encoding": "base64"}


# -- DELETE /v1/sources/<id> ----------------------------------------------------------------


def test_a_deleted_source_answers_providers_like_an_unknown_one_and_its_events_stay(
    short_source_ttl, mgmt, api, db
):
    # Given a source that has received one event
    source = make_source(mgmt, make_tenant(mgmt))
    received = signed_post(api, source, "msg_1")
    assert received.status == 200
    event_id = received.json()["id"]
    # When it is deleted
    deleted = mgmt.delete(f"/v1/sources/{source['id']}")
    # Then the answer is the source as it now stands: disabled, with when it was deleted
    assert deleted.status == 200, deleted.body
    assert deleted.json()["enabled"] is False and deleted.json()["deleted_at"]
    assert "secret" not in deleted.json()
    # And once the receiver's copy of the source has expired, a correctly signed webhook gets
    # exactly the unknown-source answer, and nothing is stored
    time.sleep(SOURCE_TTL + 0.05)
    refused = signed_post(api, source, "msg_2")
    unknown = signed_post(api, {"path": "/in/src_missing"}, "msg_3")
    assert refused.status == unknown.status == 404
    assert refused.body == unknown.body
    assert count_events(db) == 1
    # And its secrets are wiped
    with db.connection() as conn:
        row = conn.execute("SELECT secrets FROM sources WHERE id = %s", (source["id"],)).fetchone()
    assert row["secrets"] == []
    # And the API no longer knows it, while its event stays readable
    assert mgmt.get(f"/v1/sources/{source['id']}").status == 404
    assert mgmt.get("/v1/sources").json()["items"] == []
    for method, suffix, body in [
        ("POST", "/enable", None),
        ("POST", "/disable", None),
        ("POST", "/rotate-secret", {}),
        ("PATCH", "", {"name": "back"}),
        ("DELETE", "", None),
    ]:
        assert mgmt.request(method, f"/v1/sources/{source['id']}{suffix}", body).status == 404
    event = mgmt.get(f"/v1/events/{event_id}")
    assert event.status == 200 and event.json()["source_id"] == source["id"]
    listed = mgmt.get("/v1/events", source_id=source["id"]).json()["items"]
    assert [e["id"] for e in listed] == [event_id]
    assert "delete" in audit_actions(db, "source")


# -- DELETE /v1/endpoints/<id> --------------------------------------------------------------


def test_a_deleted_endpoint_gets_nothing_new_and_its_queued_delivery_fails(
    mgmt, pipeline, db, sink
):
    # Given a tenant with two endpoints and an event fanned out to both (queued, not yet sent)
    tenant = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    gone = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/gone"))
    kept = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/kept"))
    first = publish(db, tenant)
    pipeline.fanout()
    assert pipeline.delivery(event_id=first, endpoint_id=gone["id"])["state"] == "queued"
    # When one endpoint is deleted
    deleted = mgmt.delete(f"/v1/endpoints/{gone['id']}")
    assert deleted.status == 200, deleted.body
    assert deleted.json()["enabled"] is False and deleted.json()["deleted_at"]
    # Then its queued delivery ends failed with the reason, without a request to it
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1, "failed": 1})
    failed = pipeline.delivery(event_id=first, endpoint_id=gone["id"])
    assert (failed["state"], failed["last_error"], failed["attempt_count"]) == (
        "failed",
        "endpoint deleted",
        0,
    )
    assert sink.requests("/gone") == []
    # And a new event fans out to the other endpoint only
    second = publish(db, tenant)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2, "failed": 1})
    assert len(sink.requests("/kept")) == 2 and sink.requests("/gone") == []
    with db.connection() as conn:
        to_gone = conn.execute(
            "SELECT count(*) AS n FROM deliveries WHERE endpoint_id = %s", (gone["id"],)
        ).fetchone()["n"]
        secrets = conn.execute(
            "SELECT count(*) AS n FROM endpoint_secrets WHERE endpoint_id = %s", (gone["id"],)
        ).fetchone()["n"]
    assert to_gone == 1 and second
    # And its signing secrets are wiped
    assert secrets == 0
    # And its history stays readable
    history = mgmt.get(f"/v1/deliveries/{failed['id']}")
    assert history.status == 200 and history.json()["last_error"] == "endpoint deleted"
    listed = mgmt.get("/v1/deliveries", endpoint_id=gone["id"]).json()["items"]
    assert [d["id"] for d in listed] == [failed["id"]]
    assert mgmt.get(f"/v1/events/{first}").status == 200
    assert kept["id"]


def test_a_deleted_endpoint_cannot_be_read_enabled_changed_or_tested(mgmt, db):
    # Given an endpoint, deleted
    tenant = make_tenant(mgmt)
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL}).json()
    path = f"/v1/endpoints/{endpoint['id']}"
    assert mgmt.delete(path).status == 200
    # When anything is asked of it, Then it is not found
    assert mgmt.get(path).status == 404
    assert mgmt.get("/v1/endpoints").json()["items"] == []
    assert mgmt.get("/v1/endpoints", enabled="false").json()["items"] == []
    for method, suffix, body in [
        ("POST", "/enable", None),
        ("POST", "/disable", None),
        ("POST", "/rotate-secret", None),
        ("POST", "/test", None),
        ("PATCH", "", {"description": "back"}),
        ("DELETE", "", None),
    ]:
        assert mgmt.request(method, f"{path}{suffix}", body).status == 404, (method, suffix)
    # And the database refuses to enable it, whatever path would try
    with db.connection() as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE endpoints SET enabled = true WHERE id = %s", (endpoint["id"],))
    assert "delete" in audit_actions(db, "endpoint")


def test_a_deleted_endpoint_leaves_the_status_and_cannot_be_replayed(mgmt):
    # Given two disabled endpoints, one of them then deleted
    tenant = make_tenant(mgmt)
    kept, gone = (
        mgmt.post("/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL}).json()
        for _ in range(2)
    )
    for endpoint in (kept, gone):
        assert mgmt.post(f"/v1/endpoints/{endpoint['id']}/disable", {}).status == 200
    assert mgmt.delete(f"/v1/endpoints/{gone['id']}").status == 200
    # When the status is read, Then only the one that still exists counts as disabled
    status = mgmt.get("/v1/status").json()
    assert status["endpoints_disabled"] == 1, status
    # And a replay of the deleted one is refused up front, as for an unknown endpoint
    replay = {"endpoint_id": gone["id"], "since": "1h", "reason": "retry"}
    answer = mgmt.post("/v1/replays", replay)
    assert answer.status == 404, answer.body
    assert gone["id"] in answer.json()["detail"]


def test_another_tenant_cannot_delete_or_patch(mgmt, db):
    from tests.support.management import as_tenant

    # Given tenant A's source and endpoint, and a caller scoped to tenant B
    a, b = make_tenant(mgmt, "a"), make_tenant(mgmt, "b")
    source = make_source(mgmt, a)
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": a, "url": PUBLIC_URL}).json()
    intruder = as_tenant(mgmt, db, b)
    # When B tries to delete or change them, Then they are not found, and unchanged
    assert intruder.delete(f"/v1/sources/{source['id']}").status == 404
    assert intruder.patch(f"/v1/sources/{source['id']}", {"name": "x"}).status == 404
    assert intruder.delete(f"/v1/endpoints/{endpoint['id']}").status == 404
    assert mgmt.get(f"/v1/sources/{source['id']}").json()["name"] == source["name"]
    assert mgmt.get(f"/v1/endpoints/{endpoint['id']}").json()["enabled"] is True
    # And A's own caller can
    owner = as_tenant(mgmt, db, a)
    assert owner.delete(f"/v1/endpoints/{endpoint['id']}").status == 200


# -- the CLI --------------------------------------------------------------------------------


def test_the_cli_updates_and_deletes_sources_and_endpoints(cli, mgmt):
    # Given a source and an endpoint
    tenant = make_tenant(mgmt)
    source = make_source(mgmt, tenant)
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL}).json()
    # When the CLI updates the source, Then it prints the API's answer
    code, out, _ = cli(
        "sources", "update", source["id"], "--tolerance", "60", "--name", "billing", "--json"
    )
    assert code == 0
    assert json.loads(out) == mgmt.get(f"/v1/sources/{source['id']}").json()
    assert json.loads(out)["tolerance_seconds"] == 60
    # And an update with nothing to change is an error, asked of no one
    code, _, err = cli("sources", "update", source["id"])
    assert code != 0 and "nothing to change" in err
    # When the CLI deletes both, Then they are gone
    code, out, _ = cli("sources", "delete", source["id"], "--json")
    assert code == 0 and json.loads(out)["deleted_at"]
    code, out, _ = cli("endpoints", "delete", endpoint["id"], "--json")
    assert code == 0 and json.loads(out)["id"] == endpoint["id"]
    code, _, err = cli("endpoints", "show", endpoint["id"])
    assert code == 1 and endpoint["id"] in err
    code, _, err = cli("sources", "delete", source["id"])
    assert code == 1 and source["id"] in err


def publish(db, tenant_id):
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="order.created", payload={}).id
