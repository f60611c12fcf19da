"""Content filters in the fan-out: an event an endpoint's pattern does not match gets no
delivery to it; the pattern is checked when the endpoint is saved (decision 0044)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management import endpoint_service
from hookline.repositories.deliveries import fan_out_batch
from hookline.repositories.ledger import NewEvent, store_event
from hookline.repositories.reconcile import create_missing_deliveries
from hookline.settings import Settings
from tests.support import operator
from tests.support.operator import OPERATOR

pytestmark = pytest.mark.integration

BIG = {"payload": {"amount": [{"numeric": [">", 100]}]}}


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings.from_env(
        {"DATABASE_URL": database_url, "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
         "HOOKLINE_ALLOW_HTTP_TARGETS": "1"}
    )  # fmt: skip


def add(db: Database, settings: Settings, tenant: dict[str, str], **options: Any) -> str:
    return str(
        operator.add_endpoint(
            db, settings, tenant_id=tenant["id"], url="http://127.0.0.1:9/x", **options
        )["id"]
    )


def delivered_pairs(db: Database) -> set[tuple[str, str]]:
    with db.connection() as conn:
        rows = conn.execute("SELECT event_id, endpoint_id FROM deliveries").fetchall()
    return {(r["event_id"], r["endpoint_id"]) for r in rows}


def test_only_matching_events_get_a_delivery_to_a_filtered_endpoint(
    db: Database, settings: Settings, tenant: dict[str, str]
) -> None:
    # Given an endpoint for big amounts, one for EU customers only (with a type filter too),
    # and one without a content filter
    big = add(db, settings, tenant, content_filter=BIG)
    eu = add(
        db, settings, tenant, event_types=["invoice.*"],
        content_filter={"payload": {"customer": {"region": [{"prefix": "eu-"}]}}},
    )  # fmt: skip
    everything = add(db, settings, tenant)
    payloads = {
        "small": ("invoice.paid", {"amount": 5, "customer": {"region": "eu-west-1"}}),
        "big": ("invoice.paid", {"amount": 500, "customer": {"region": "us-east-1"}}),
        "as-string": ("invoice.paid", {"amount": "500"}),
        "big-order": ("order.created", {"amount": 101, "customer": [{"region": "eu-north-1"}]}),
    }
    with db.connection() as conn, conn.transaction():
        ids = {
            name: hookline.publish(conn, tenant_id=tenant["id"], type=t, payload=p).id
            for name, (t, p) in payloads.items()
        }
    # When the fan-out runs
    with db.connection() as conn:
        events, created = fan_out_batch(conn, limit=100, deadline=timedelta(hours=1))
    # Then each endpoint got exactly the events its pattern (and type filter) matches
    expected = {(ids[n], everything) for n in payloads} | {
        (ids["big"], big), (ids["big-order"], big),
        (ids["small"], eu),  # "big-order" is EU but not an invoice
    }  # fmt: skip
    assert delivered_pairs(db) == expected
    assert (events, created) == (4, len(expected))
    # And a second run, or the reconciler, creates nothing for the non-matches
    with db.connection() as conn:
        assert fan_out_batch(conn, limit=100, deadline=timedelta(hours=1)) == (0, 0)
    with db.connection() as conn:
        repaired = create_missing_deliveries(
            conn, window=timedelta(hours=1), deadline=timedelta(hours=1), limit=100
        )
    assert repaired.created == []
    assert delivered_pairs(db) == expected


def test_a_bad_filter_is_refused_at_save_and_an_update_can_set_or_clear_it(
    db: Database, settings: Settings, tenant: dict[str, str]
) -> None:
    body = {"tenant_id": tenant["id"], "url": "http://127.0.0.1:9/x"}
    with pytest.raises(BadRequest, match=r"filter at payload.amount\[0\]: numeric bound"):
        endpoint_service.create_endpoint(
            db, settings, OPERATOR,
            {**body, "content_filter": {"payload": {"amount": [{"numeric": [">", "100"]}]}}},
        )  # fmt: skip
    endpoint = endpoint_service.create_endpoint(db, settings, OPERATOR, body)
    assert endpoint["content_filter"] is None
    with pytest.raises(BadRequest, match="filter at detail: unknown field"):
        endpoint_service.update_endpoint(
            db, settings, OPERATOR, endpoint["id"], {"content_filter": {"detail": {"a": [1]}}}
        )
    updated = endpoint_service.update_endpoint(
        db, settings, OPERATOR, endpoint["id"], {"content_filter": BIG}
    )
    assert updated["content_filter"] == BIG
    cleared = endpoint_service.update_endpoint(
        db, settings, OPERATOR, endpoint["id"], {"clear_content_filter": True}
    )
    assert cleared["content_filter"] is None


def test_a_deep_body_does_not_stop_the_fan_out_of_anyone(
    db: Database, settings: Settings, tenant: dict[str, str]
) -> None:
    # Given tenant A's filtered endpoint, and a 6 KB body 3,000 levels deep stored as the
    # receiver stores a non-JSON-checked body (before: RecursionError, the batch rolled back)
    filtered = add(db, settings, tenant, content_filter={"payload": [{"exists": False}]})
    other = operator.add_tenant(db, HooklineConfig(), name="other", group="standard")
    plain = add(db, settings, other)
    with db.connection() as conn, conn.transaction():
        deep = store_event(
            conn,
            NewEvent(tenant["id"], "publish", "raw.deep", "k-deep", b"[" * 3000 + b"]" * 3000),
        ).id
        later = hookline.publish(conn, tenant_id=other["id"], type="x", payload={}).id
    # When the fan-out runs
    with db.connection() as conn:
        events, created = fan_out_batch(conn, limit=100, deadline=timedelta(hours=1))
    # Then the deep body is an absent payload (as a non-JSON one) and both events fan out
    assert delivered_pairs(db) == {(deep, filtered), (later, plain)}
    assert (events, created) == (2, 2)


def test_a_forty_star_wildcard_is_refused_when_the_endpoint_is_saved(
    db: Database, settings: Settings, tenant: dict[str, str]
) -> None:
    with pytest.raises(BadRequest, match=r"filter at payload.s: its wildcards hold 40 '\*'"):
        add(db, settings, tenant, content_filter={"payload": {"s": [{"wildcard": "a*" * 40}]}})
