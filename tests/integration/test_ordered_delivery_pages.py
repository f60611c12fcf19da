"""Ordered delivery in the console and the portal (decision 0069): held deliveries are listed
and filtered as `held`, their page says why they wait, and the endpoint form sets the key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from hookline.config import HooklineConfig
from hookline.db import get_database
from hookline.management import endpoint_service, event_service
from hookline.management.access import OPERATOR, Caller
from hookline.management.portal_links import create_portal_link
from hookline.runtime import reset_runtime
from hookline.settings import get_settings
from tests.support import operator
from tests.support.console import ConsoleClient, text
from tests.support.pipeline import Pipeline
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

OPERATOR_CALLER = Caller("test-operator", OPERATOR)


@pytest.fixture
def console(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[ConsoleClient]:
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    get_settings.cache_clear()
    reset_runtime()
    from functions.console.handler import lambda_handler

    yield ConsoleClient(lambda_handler)


def portal_session(console: ConsoleClient, tenant: str) -> None:
    made = create_portal_link(
        get_database(), get_settings(), OPERATOR_CALLER, tenant, own_url="",
        ttl=timedelta(minutes=15),
    )  # fmt: skip
    token = made["url"].split("token=", 1)[1]
    assert console.get(made["url"]).status == 200
    assert console.post("/portal/login", {"token": token}).status == 303


def test_held_deliveries_are_listed_filtered_and_explained_in_portal_and_console(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink
) -> None:
    # Given an endpoint ordered across itself whose receiver is down, and three events
    db = pipeline.db
    sink.behave("/down", statuses=[500])
    tenant = operator.add_tenant(db, HooklineConfig(), name="Acme", group="standard")["id"]
    endpoint = operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url=sink.url("/down"), ordering={"key": None}
    )
    for n in range(3):
        event_service.publish_event(
            db, get_settings(), OPERATOR_CALLER, tenant_id=tenant, type="order.paid",
            payload={"n": n}, idempotency_key=None,
        )  # fmt: skip
    pipeline.fanout()
    with db.connection() as conn:
        rows = conn.execute("SELECT id FROM deliveries WHERE state = 'held'").fetchall()
    held = sorted(r["id"] for r in rows)
    assert len(held) == 2
    # When the tenant's customer filters the portal's log by the state held
    portal_session(console, tenant)
    listed = text(console.get("/portal/deliveries?state=held"))
    # Then exactly the two waiting ones are there, shown as held
    assert all(h in listed for h in held)
    assert listed.count('class="state state-held"') == 2
    assert '<option value="held"' in listed
    # And a held delivery's page says what it waits for
    page = text(console.get(f"/portal/deliveries/{held[0]}"))
    assert "behind an earlier event with the same ordering key" in page
    # And the endpoint page says how it is ordered
    shown = text(console.get(f"/portal/endpoints/{endpoint['id']}"))
    assert "one order for the whole endpoint" in shown


def test_the_endpoint_form_sets_the_ordering_key_and_shows_a_bad_one_at_its_field(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink
) -> None:
    db = pipeline.db
    tenant = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    page = text(console.get(f"/console/endpoints/{endpoint['id']}/edit"))
    assert 'name="ordering"' in page
    form = {
        "url": sink.url("/e"), "description": "", "event_types": "", "max_concurrency": "5",
        "rate_limit_per_second": "", "content_filter": "", "input_transformer": "",
        "ordering": "customer_id",
    }  # fmt: skip
    # When the operator gives a key that is not a JSON path
    refused = console.post(f"/console/endpoints/{endpoint['id']}", form, htmx=True)
    # Then the form comes back with the reason next to the ordering field
    assert refused.status == 400
    error = re.search(r'<p class="field-error" id="ordering-error"[^>]*>([^<]+)</p>', text(refused))
    assert error and "ordering.key" in error.group(1)
    # And a path is saved, then emptied to remove it
    saved = console.post(
        f"/console/endpoints/{endpoint['id']}", {**form, "ordering": "$.payload.customer_id"},
        htmx=True,
    )  # fmt: skip
    assert saved.status == 200
    stored = endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])
    assert stored["ordering"] == {"key": "$.payload.customer_id"}
    console.post(f"/console/endpoints/{endpoint['id']}", {**form, "ordering": ""}, htmx=True)
    assert endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])["ordering"] is None


def test_a_customer_adds_an_ordered_endpoint_in_the_portal(
    console: ConsoleClient, pipeline: Pipeline
) -> None:
    # Given a tenant's customer in the portal
    tenant = operator.add_tenant(pipeline.db, HooklineConfig(), name="acme", group="standard")
    portal_session(console, tenant["id"])
    assert 'name="ordering"' in text(console.get("/portal"))
    # When they add an endpoint ordered by customer
    added = console.post(
        "/portal/endpoints",
        {"url": "https://93.184.215.14/hooks", "ordering": "$.payload.customer_id"},
    )
    # Then it is ordered so
    assert added.status == 200
    [endpoint] = endpoint_service.list_endpoints(
        pipeline.db, OPERATOR_CALLER, tenant_id=tenant["id"], enabled=None, cursor=None, limit=5
    )["items"]
    assert endpoint["ordering"] == {"key": "$.payload.customer_id"}
