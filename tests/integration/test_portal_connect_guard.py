"""An endpoint a tenant's customer added in the portal reaches public addresses only at
connect time too (decision 0059, after 0043's check at save): re-pointed later at a private
address (by the tenant's own key, where the deployment allows private targets; or by DNS that
answers a private address), its attempts are refused as `unsafe_address` and nothing reaches
the private host, while the tenant's own endpoints there are delivered as the deployment
allows."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

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


def test_a_portal_endpoint_re_pointed_at_a_private_address_is_refused_at_connect(
    pipeline: Pipeline, sink: Sink, db: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # Given a deployment that allows private targets (the dev stack), and a customer who
    # added a public endpoint in the tenant's portal
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    get_settings.cache_clear()
    reset_runtime()
    from functions.console.handler import lambda_handler

    console = ConsoleClient(lambda_handler)
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    made = create_portal_link(
        get_database(), get_settings(), OPERATOR_CALLER, tenant, own_url="",
        ttl=timedelta(minutes=15),
    )  # fmt: skip
    assert console.get(made["url"]).status == 200  # the page that asks to confirm
    token = made["url"].split("token=", 1)[1]
    assert console.post("/portal/login", {"token": token}).status == 303
    console.get("/portal")
    added = console.post("/portal/endpoints", {"url": "https://93.184.215.14/hooks"})
    assert added.status == 200, text(added)
    [portal_endpoint] = [
        e for e in endpoint_service.list_endpoints(
            db, OPERATOR_CALLER, tenant_id=tenant, enabled=None, cursor=None, limit=10
        )["items"]
    ]  # fmt: skip
    # And the tenant's own endpoint on a loopback subscriber
    own = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/own"))
    # When the portal's endpoint is re-pointed at the same loopback subscriber (the tenant's
    # key may: this deployment allows private targets) and an event is published
    endpoint_service.update_endpoint(
        db, get_settings(), OPERATOR_CALLER, portal_endpoint["id"], {"url": sink.url("/portal")}
    )
    event_service.publish_event(
        db, get_settings(), OPERATOR_CALLER, tenant_id=tenant, type="order.paid",
        payload={"n": 1}, idempotency_key=None,
    )  # fmt: skip

    def attempted() -> bool:
        with db.connection() as conn:
            rows = conn.execute(
                "SELECT endpoint_id, state, attempt_count FROM deliveries"
            ).fetchall()
        seen = {r["endpoint_id"]: r for r in rows}
        return (
            seen.get(portal_endpoint["id"], {}).get("attempt_count", 0) >= 1
            and seen.get(own["id"], {}).get("state") == "delivered"
        )

    pipeline.run_until(attempted)
    # Then the tenant's own endpoint got the event, and the portal's endpoint never reached
    # the private address: its attempt is refused at connect time
    assert len(sink.requests("/own")) == 1
    assert sink.requests("/portal") == []
    refused = pipeline.delivery(endpoint_id=portal_endpoint["id"])
    [attempt] = pipeline.attempts(refused["id"])
    assert attempt["error_class"] == "unsafe_address"
    assert re.fullmatch(r"unsafe_address", refused["last_error"] or "")
