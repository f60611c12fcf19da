"""Idempotent creates (decision 0028): a create's answer is kept for its Idempotency-Key
for a time to live (24 h by default, `HOOKLINE_IDEMPOTENCY_TTL_SECONDS`), after which the
key is free again; a replayed answer never carries the secret the first one showed."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"


@pytest.fixture
def tenant_id(mgmt):
    return mgmt.post("/v1/tenants", {"name": "acme"}).json()["id"]


def age_keys(db, by: timedelta) -> None:
    """Move every kept answer `by` into the past (the clock moved on)."""
    with db.connection() as conn:
        conn.execute("UPDATE api_idempotency SET created_at = created_at - %s", (by,))


def endpoint_ids(mgmt):
    return [e["id"] for e in mgmt.get("/v1/endpoints").json()["items"]]


def test_a_replayed_endpoint_create_says_its_secret_was_shown_once(mgmt, tenant_id, db):
    # Given an endpoint created with an Idempotency-Key (its secret shown in the answer)
    body = {"tenant_id": tenant_id, "url": PUBLIC_URL}
    key = {"Idempotency-Key": "ep-1"}
    first = mgmt.post("/v1/endpoints", body, headers=key)
    assert first.status == 201 and first.json()["secret"].startswith("whsec_")
    # When the same request comes again
    again = mgmt.post("/v1/endpoints", body, headers=key)
    # Then the same endpoint is answered, without its secret, saying why
    assert again.status == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["secret"] is None
    assert "shown once" in again.json()["secret_note"]
    assert first.json()["secret"] not in again.body.decode()
    # and the kept answer at rest does not hold it either (sealed or not)
    with db.connection() as conn:
        from hookline.secretbox import reveal

        kept = conn.execute("SELECT response FROM api_idempotency").fetchone()["response"]
        assert first.json()["secret"] not in reveal(conn, kept["sealed"])


def test_a_replayed_source_create_withholds_the_generated_secret(mgmt, tenant_id):
    body = {"tenant_id": tenant_id, "scheme": "standard"}
    key = {"Idempotency-Key": "src-1"}
    first = mgmt.post("/v1/sources", body, headers=key).json()
    again = mgmt.post("/v1/sources", body, headers=key).json()
    assert first["secret"].startswith("whsec_")
    assert again["id"] == first["id"]
    assert again["secret"] is None and "shown once" in again["secret_note"]


def test_a_create_without_a_secret_replays_unchanged(mgmt):
    key = {"Idempotency-Key": "tenant-1"}
    first = mgmt.post("/v1/tenants", {"name": "beta"}, headers=key)
    again = mgmt.post("/v1/tenants", {"name": "beta"}, headers=key)
    assert again.json() == first.json() and "secret_note" not in again.json()


def test_a_key_older_than_a_day_creates_afresh(mgmt, tenant_id, db):
    # Given a create 23 hours ago: still the same answer
    body = {"tenant_id": tenant_id, "url": PUBLIC_URL}
    key = {"Idempotency-Key": "ep-day"}
    first = mgmt.post("/v1/endpoints", body, headers=key).json()
    age_keys(db, timedelta(hours=23))
    assert mgmt.post("/v1/endpoints", body, headers=key).json()["id"] == first["id"]
    assert len(endpoint_ids(mgmt)) == 1
    # When the clock passes 24 hours since it
    age_keys(db, timedelta(hours=2))
    later = mgmt.post("/v1/endpoints", body, headers=key)
    # Then the key is free again: a new endpoint, with its own secret shown
    assert later.status == 201 and "Idempotent-Replayed" not in later.headers
    assert later.json()["id"] != first["id"] and later.json()["secret"].startswith("whsec_")
    assert len(endpoint_ids(mgmt)) == 2


def test_an_expired_key_may_serve_a_different_request(mgmt, tenant_id, db):
    key = {"Idempotency-Key": "reused"}
    mgmt.post("/v1/endpoints", {"tenant_id": tenant_id, "url": PUBLIC_URL}, headers=key)
    other = {"tenant_id": tenant_id, "url": PUBLIC_URL, "description": "other"}
    assert mgmt.post("/v1/endpoints", other, headers=key).status == 409
    age_keys(db, timedelta(hours=25))
    assert mgmt.post("/v1/endpoints", other, headers=key).status == 201


def test_the_time_to_live_is_a_setting(mgmt, tenant_id, db, monkeypatch):
    from hookline.settings import get_settings

    monkeypatch.setenv("HOOKLINE_IDEMPOTENCY_TTL_SECONDS", "3600")
    get_settings.cache_clear()
    try:
        body = {"tenant_id": tenant_id, "url": PUBLIC_URL}
        key = {"Idempotency-Key": "ep-hour"}
        first = mgmt.post("/v1/endpoints", body, headers=key).json()
        age_keys(db, timedelta(minutes=50))
        assert mgmt.post("/v1/endpoints", body, headers=key).json()["id"] == first["id"]
        age_keys(db, timedelta(minutes=20))
        assert mgmt.post("/v1/endpoints", body, headers=key).json()["id"] != first["id"]
    finally:
        get_settings.cache_clear()


def test_expired_answers_are_removed_by_later_creates(mgmt, db):
    for n in range(3):
        mgmt.post("/v1/tenants", {"name": f"t{n}"}, headers={"Idempotency-Key": f"k{n}"})
    age_keys(db, timedelta(days=2))
    mgmt.post("/v1/tenants", {"name": "new"}, headers={"Idempotency-Key": "fresh"})
    with db.connection() as conn:
        keys = [r["key"] for r in conn.execute("SELECT key FROM api_idempotency").fetchall()]
    assert keys == ["fresh"]
