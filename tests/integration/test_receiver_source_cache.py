"""The receiver's sources kept for a few seconds (decision 0074), against real Postgres: a
change that revokes (disable, delete, a secret rotated out) takes effect within the TTL; one
that grants (a rotation's new secret, the grace of the previous one) takes effect at once."""

from __future__ import annotations

import time

import pytest

from hookline.db import Database
from hookline.errors import NotFound, VerificationFailed
from hookline.ingest import Accepted, receive_inbound
from hookline.management import source_service
from hookline.repositories.source_activity import source_activity
from hookline.repositories.sources_cache import SourceCache
from tests.integration.conftest import STRIPE_SECRET
from tests.support import operator
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration

TTL = 5.0


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def post(db: Database, source_id: str, secret: str, sources: SourceCache, n: str) -> Accepted:
    """One Stripe-signed event through the receiver's service."""
    body = stripe_event(f"evt_cache_{n}")
    result = receive_inbound(
        db, source_id, stripe_headers(secret, body), body, max_body_bytes=1 << 20, sources=sources
    )
    assert isinstance(result, Accepted)
    return result


def events_of(db: Database, source_id: str) -> int:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM events WHERE source_id = %s", (source_id,)
        ).fetchone()
    assert row is not None
    return int(row["n"])


def test_a_disabled_source_is_refused_once_its_kept_copy_expires(db, stripe_source):
    # Given a source the receiver has just verified with
    clock, source_id = Clock(), stripe_source["id"]
    sources = SourceCache(TTL, clock=clock)
    post(db, source_id, STRIPE_SECRET, sources, "1")
    # When an operator disables it
    source_service.set_source_enabled(db, operator.OPERATOR, source_id, enabled=False)
    # Then its kept copy still accepts for less than the TTL
    clock.now += TTL - 0.1
    post(db, source_id, STRIPE_SECRET, sources, "2")
    # And once the TTL has passed it is refused as unknown, and nothing more is stored
    clock.now += 0.2
    with pytest.raises(NotFound):
        post(db, source_id, STRIPE_SECRET, sources, "3")
    assert events_of(db, source_id) == 2


def test_a_deleted_source_is_refused_once_its_kept_copy_expires(db, stripe_source):
    clock, source_id = Clock(), stripe_source["id"]
    sources = SourceCache(TTL, clock=clock)
    post(db, source_id, STRIPE_SECRET, sources, "1")
    source_service.delete_source(db, operator.OPERATOR, source_id)
    clock.now += TTL
    with pytest.raises(NotFound):
        post(db, source_id, STRIPE_SECRET, sources, "2")


def test_a_rotations_new_secret_works_at_once_and_the_old_within_its_grace(db, stripe_source):
    # Given a source kept with its one secret
    clock, source_id = Clock(), stripe_source["id"]
    sources = SourceCache(TTL, clock=clock)
    post(db, source_id, STRIPE_SECRET, sources, "1")
    # When it is rotated, keeping the previous secret
    source_service.rotate_source_secret(
        db, operator.OPERATOR, source_id, secret="whsec_rotated_in", keep_previous=True
    )
    # Then the provider's first event signed with the new secret is accepted at once
    post(db, source_id, "whsec_rotated_in", sources, "2")
    # And the previous secret keeps verifying during the grace, long after the TTL
    clock.now += 10 * TTL
    post(db, source_id, STRIPE_SECRET, sources, "3")
    # When the grace ends (a rotation that does not keep the previous secret)
    source_service.rotate_source_secret(
        db, operator.OPERATOR, source_id, secret="whsec_third", keep_previous=False
    )
    # Then the secret rotated out is refused once the TTL has passed, and counted as refused
    clock.now += TTL
    with pytest.raises(VerificationFailed):
        post(db, source_id, STRIPE_SECRET, sources, "4")
    with db.connection() as conn:
        activity = source_activity(conn, stripe_source["tenant_id"], source_id)
    assert activity["rejected"] == {"VerificationFailed": 1}
    assert events_of(db, source_id) == 3


def test_the_receiver_refuses_a_disabled_source_after_the_configured_ttl(
    api, db, stripe_source, monkeypatch
):
    # Given the receiver keeping sources 0.2 s
    from hookline.db import reset_database

    monkeypatch.setenv("HOOKLINE_SOURCE_CACHE_SECONDS", "0.2")
    reset_database()  # settings read again
    body = stripe_event("evt_wire_1")
    path = stripe_source["path"]
    assert api.post(path, headers=stripe_headers(STRIPE_SECRET, body), body=body).status == 200
    # When the source is disabled and the TTL passes
    source_service.set_source_enabled(db, operator.OPERATOR, stripe_source["id"], enabled=False)
    time.sleep(0.25)
    # Then the provider is told the source is unknown, and nothing is stored
    body = stripe_event("evt_wire_2")
    assert api.post(path, headers=stripe_headers(STRIPE_SECRET, body), body=body).status == 404
    assert events_of(db, stripe_source["id"]) == 1


def test_kept_sources_are_bounded(db, tenant):
    # Given a cache that keeps two sources
    clock = Clock()
    sources = SourceCache(TTL, max_sources=2, clock=clock)
    ids = [
        operator.add_source(db, tenant_id=tenant["id"], scheme="stripe", secrets=[STRIPE_SECRET])[
            "id"
        ]
        for _ in range(3)
    ]
    # When three are used
    for n, source_id in enumerate(ids):
        post(db, source_id, STRIPE_SECRET, sources, f"b{n}")
    # Then the oldest read is no longer kept: disabling it takes effect at once
    source_service.set_source_enabled(db, operator.OPERATOR, ids[0], enabled=False)
    with pytest.raises(NotFound):
        post(db, ids[0], STRIPE_SECRET, sources, "b3")
