"""Fan-out at receipt (decision 0076): with HOOKLINE_FANOUT_AT_RECEIPT on, as the stack
deploys the receiver, an event's deliveries are created in the statement that stores it and
sent to their group's queue before the provider gets its 200; no fan-out run is needed.
Real Postgres, moto SQS, the real receiver and deliver handlers, a loopback subscriber."""

from __future__ import annotations

import json

import pytest

from hookline.db import Database
from hookline.repositories.ledger import get_event
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from hookline_dev.local.queues import ensure_queues
from tests.integration.conftest import STRIPE_SECRET
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.pipeline import Pipeline
from tests.support.signers import stripe_event, stripe_headers, verify_standard

pytestmark = pytest.mark.integration


@pytest.fixture
def at_receipt(make_pipeline, monkeypatch) -> Pipeline:
    """The pipeline, with the receiver fanning out as it stores."""
    monkeypatch.setenv("HOOKLINE_FANOUT_AT_RECEIPT", "true")
    return make_pipeline()


def post(api: ApiClient, source: dict[str, str], event_id: str) -> dict:
    body = stripe_event(event_id)
    result = api.post(source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    assert result.status == 200, result.body
    return result.json()


def stored(db: Database, event_id: str) -> tuple[dict, bool]:
    """The event as the ledger shows it (the API's and the console's read), and whether it
    has an outbox row."""
    with db.connection() as conn:
        event = get_event(conn, event_id)
        row = conn.execute("SELECT 1 FROM outbox WHERE event_id = %s", (event_id,)).fetchone()
    return event, row is not None


def endpoint(db: Database, tenant_id: str, url: str, **options) -> dict:
    return operator.add_endpoint(db, get_settings(), tenant_id=tenant_id, url=url, **options)


def metric_sums(out: str) -> dict[str, float]:
    """The counts the EMF lines in `out` carry, summed by metric name."""
    sums: dict[str, float] = {}
    for line in out.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            doc = json.loads(line)
            for metric in doc["_aws"]["CloudWatchMetrics"][0]["Metrics"]:
                value = doc[metric["Name"]]
                sums[metric["Name"]] = sums.get(metric["Name"], 0) + (
                    sum(value) if isinstance(value, list) else value
                )
    return sums


def test_an_accepted_event_is_sent_to_its_endpoints_without_a_fan_out_run(
    at_receipt, api, db, tenant, stripe_source, sink, capsys
):
    # Given a tenant with an endpoint for payment events and one for invoices only
    wants = endpoint(db, tenant["id"], sink.url("/pay"), event_types=["payment_intent.*"])
    endpoint(db, tenant["id"], sink.url("/inv"), event_types=["invoice.paid"])
    # When Stripe posts a payment event
    capsys.readouterr()
    answer = post(api, stripe_source, "evt_receipt_1")
    # Then the receiver counts the delivery as fanned out and enqueued, for the dashboard
    sums = metric_sums(capsys.readouterr().out)
    assert sums["DeliveriesFannedOut"] == 1 and sums["DeliveriesEnqueued"] == 1
    # Then its delivery exists already, queued, and the event shows as fanned out when it was
    # received, with no outbox row written for it (decision 0096)
    delivery = at_receipt.delivery(event_id=answer["id"])
    assert delivery["endpoint_id"] == wants["id"] and delivery["state"] == "queued"
    event, has_outbox_row = stored(db, answer["id"])
    assert event["fanned_out_at"] == event["received_at"] and not has_outbox_row
    # And the deliver function finds it on the queue with no fan-out run in between
    assert at_receipt.deliver_once("standard") == 1
    [request] = sink.requests("/pay")
    assert json.loads(request.body)["id"] == "evt_receipt_1"
    assert verify_standard([wants["secret"]], request.headers, request.body)
    assert sink.requests("/inv") == []
    assert at_receipt.states() == {"delivered": 1}
    # And a fan-out run finds nothing left to do
    assert at_receipt.fanout()["events"] == 0


def test_a_retried_post_is_stored_and_sent_once(at_receipt, api, db, tenant, stripe_source, sink):
    endpoint(db, tenant["id"], sink.url("/once"))
    first = post(api, stripe_source, "evt_receipt_twice")
    again = post(api, stripe_source, "evt_receipt_twice")
    assert again == {"id": first["id"], "duplicate": True}
    assert at_receipt.deliver_once("standard") == 1
    assert at_receipt.deliver_once("standard") == 0
    assert len(sink.requests("/once")) == 1


def test_a_tenant_with_a_content_filter_waits_for_the_fan_out(
    at_receipt, api, db, tenant, stripe_source, sink
):
    # Given a tenant one of whose endpoints filters on content (matched by the fan-out)
    endpoint(db, tenant["id"], sink.url("/all"))
    endpoint(
        db, tenant["id"], sink.url("/eu"), content_filter={"payload": {"id": [{"prefix": "evt_"}]}}
    )
    # When an event arrives, nothing is created at receipt: its outbox row waits
    answer = post(api, stripe_source, "evt_receipt_filtered")
    assert at_receipt.states() == {}
    event, has_outbox_row = stored(db, answer["id"])
    assert event["fanned_out_at"] is None and has_outbox_row
    # Then the fan-out makes both deliveries, and both arrive
    at_receipt.run_until(lambda: at_receipt.states() == {"delivered": 2})
    assert len(sink.requests("/all")) == 1 and len(sink.requests("/eu")) == 1


def test_deliveries_the_queue_refuses_go_back_to_pending_for_the_fan_out(
    at_receipt, api, db, tenant, stripe_source, sink, sqs
):
    # Given the group's queue is gone (SQS refuses the send)
    endpoint(db, tenant["id"], sink.url("/later"))
    sqs.delete_queue(QueueUrl=at_receipt.queues["standard"].url)
    # When an event is accepted, the provider still gets its 200
    answer = post(api, stripe_source, "evt_receipt_refused")
    # Then its delivery is back to pending, due now, not waiting out a lease
    delivery = at_receipt.delivery(event_id=answer["id"])
    assert delivery["state"] == "pending" and delivery["lease_expires_at"] is None
    # And once the queue is back, the fan-out's due arm sends it and it arrives
    ensure_queues(sqs, at_receipt.config, visibility_timeout_seconds=1)
    at_receipt.run_until(lambda: at_receipt.states() == {"delivered": 1})
    assert len(sink.requests("/later")) == 1


def test_an_event_published_through_the_api_is_sent_without_a_fan_out_run(
    mgmt, at_receipt, db, tenant, sink
):
    # Given a tenant's endpoint for its own order events
    wants = endpoint(db, tenant["id"], sink.url("/orders"), event_types=["order.*"])
    # When the tenant's service publishes one through the API
    result = mgmt.post(
        "/v1/events", {"tenant_id": tenant["id"], "type": "order.paid", "payload": {"n": 7}}
    )
    assert result.status == 200, result.body
    # Then its delivery is on the queue already, and arrives signed
    assert at_receipt.delivery(event_id=result.json()["id"])["state"] == "queued"
    assert at_receipt.deliver_once("standard") == 1
    [request] = sink.requests("/orders")
    assert json.loads(request.body) == {"n": 7}
    assert verify_standard([wants["secret"]], request.headers, request.body)


def test_a_send_that_cannot_even_start_puts_the_deliveries_back_for_the_fan_out(
    at_receipt, api, db, tenant, stripe_source, sink, monkeypatch
):
    # Given the receiver cannot build its SQS client at all
    import functions.receiver.handler as receiver

    def no_client(_settings):
        raise RuntimeError("no SQS client today")

    monkeypatch.setattr(receiver, "receipt_queues", no_client)
    endpoint(db, tenant["id"], sink.url("/anyway"))
    # When an event is accepted, the provider still gets its 200
    answer = post(api, stripe_source, "evt_receipt_no_client")
    # Then its delivery is pending and due, not queued under a 15-minute lease
    delivery = at_receipt.delivery(event_id=answer["id"])
    assert delivery["state"] == "pending" and delivery["lease_expires_at"] is None
    # And the fan-out sends it
    at_receipt.run_until(lambda: at_receipt.states() == {"delivered": 1})
    assert len(sink.requests("/anyway")) == 1


def test_a_lost_delivery_of_an_event_fanned_out_at_receipt_is_made_again(
    at_receipt, api, db, tenant, stripe_source, sink
):
    # Given an event fanned out at receipt (it has no outbox row, decision 0096) and delivered
    # to two endpoints, one of whose deliveries was then lost
    endpoint(db, tenant["id"], sink.url("/kept"))
    lost_to = endpoint(db, tenant["id"], sink.url("/lost"))
    answer = post(api, stripe_source, "evt_receipt_lost")
    at_receipt.run_until(lambda: at_receipt.states() == {"delivered": 2})
    lost = at_receipt.delivery(event_id=answer["id"], endpoint_id=lost_to["id"])["id"]
    with db.connection() as conn:
        conn.execute("DELETE FROM attempts WHERE delivery_id = %s", (lost,))
        conn.execute("DELETE FROM deliveries WHERE id = %s", (lost,))
    # When reconcile's repair walk runs
    from functions.reconcile.handler import lambda_handler

    report = lambda_handler({"trigger": "test"}, LocalContext(function_name="reconcile"))
    # Then it takes the event as fanned out, and makes the lost delivery again, which arrives
    assert report["repairs"]["missing_deliveries_created"] == 1
    at_receipt.run_until(lambda: at_receipt.states() == {"delivered": 2})
    assert len(sink.requests("/lost")) == 2 and len(sink.requests("/kept")) == 1
