"""The console's DLQ, sources, endpoint edit (the console's and the portal's) and status
charts, through the console function as API Gateway calls it (real Postgres, moto SQS): each
action is the management service's, audited under the console's (or the portal's) name;
secrets are shown only in the one reveal."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from hookline.db import get_database
from hookline.management import endpoint_service, event_service, source_service
from hookline.management.access import OPERATOR, Caller
from hookline.management.portal_links import create_portal_link
from hookline.replay import wait_for_local_replays
from hookline.runtime import reset_runtime
from hookline.settings import get_settings
from tests.support import operator
from tests.support.console import ConsoleClient, text
from tests.support.pipeline import Pipeline
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

OPERATOR_CALLER = Caller("test-operator", OPERATOR)
PROVIDER_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def console(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[ConsoleClient]:
    """An operator's browser on the dev stack's loopback front (local mode)."""
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    monkeypatch.delenv("HOOKLINE_REPLAY_FUNCTION", raising=False)
    get_settings.cache_clear()
    reset_runtime()
    from functions.console.handler import lambda_handler

    yield ConsoleClient(lambda_handler)
    assert wait_for_local_replays(30), "a replay thread is still running"


def audit(db: Any, object_type: str) -> list[dict[str, Any]]:
    """Audit entries about one kind of object (replays: by action), oldest first."""
    column = "action" if object_type == "replay" else "object_type"
    with db.connection() as conn:
        rows = conn.execute(
            f"SELECT actor, action, object_id, params FROM audit_log WHERE {column} = %s "
            "ORDER BY id",
            (object_type,),
        ).fetchall()
    return [dict(r) for r in rows]


def queued_delivery(pipeline: Pipeline, sink: Sink, tenant: str) -> dict[str, Any]:
    """A delivery fanned out to the tenant's endpoint, its message waiting on the queue."""
    db = pipeline.db
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/dlq"))
    event_service.publish_event(
        db, get_settings(), OPERATOR_CALLER, tenant_id=tenant, type="order.paid", payload={"n": 1},
        idempotency_key=None,
    )  # fmt: skip
    pipeline.fanout()
    return pipeline.delivery(endpoint_id=endpoint["id"])


def move_to_dlq(pipeline: Pipeline, group: str) -> None:
    """What SQS does after max_receive_count failed receives: the message moves to the DLQ."""
    sqs, queues = pipeline.sqs, pipeline.queues[group]
    messages = sqs.receive_message(QueueUrl=queues.url, MaxNumberOfMessages=10)["Messages"]
    for message in messages:
        sqs.send_message(QueueUrl=queues.dlq_url, MessageBody=message["Body"])
        sqs.delete_message(QueueUrl=queues.url, ReceiptHandle=message["ReceiptHandle"])


# -- DLQ --------------------------------------------------------------------------------------


def test_a_dlq_message_is_redriven_after_a_dry_run_and_then_delivered(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given a delivery whose message ended in the standard group's DLQ
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    delivery = queued_delivery(pipeline, sink, tenant)
    move_to_dlq(pipeline, "standard")
    # When the operator opens the DLQ page
    page = text(console.get("/console/dlq"))
    # Then the standard DLQ shows one message and how long it has waited
    row = re.search(r'data-group="standard">(.*?)</tr>', page, re.S)
    assert row and '<td class="depth">1</td>' in row.group(1)
    assert "<time datetime=" in row.group(1)
    # When they ask to redrive it with a reason, a dry run says how many it would move
    preview = console.post("/console/dlq/standard/redrive", {"reason": "fixed the bug"})
    assert preview.status == 200
    assert '<strong id="would">1</strong>' in text(preview)
    assert pipeline.queue_depth(pipeline.queues["standard"].dlq_url) == 1  # nothing moved yet
    # When they confirm, the replay moves it back and the delivery is made
    done = console.post(
        "/console/dlq/standard/redrive", {"reason": "fixed the bug", "confirm": "yes"}
    )
    assert done.status == 303 and done.headers["Location"].startswith("/console/replays/rpl")
    assert wait_for_local_replays(30)
    assert pipeline.queue_depth(pipeline.queues["standard"].dlq_url) == 0
    pipeline.run_until(lambda: pipeline.delivery(id=delivery["id"])["state"] == "delivered")
    assert len(sink.requests("/dlq")) == 1
    # And both steps are audited as the console's replays of that DLQ
    entries = audit(db, "replay")
    assert [e["actor"] for e in entries] == ["console:local", "console:local"]
    assert all(e["params"]["request"]["redrive_dlq"] == "standard" for e in entries)
    assert [bool(e["params"]["request"].get("dry_run")) for e in entries] == [True, False]


def test_a_redrive_needs_a_reason_and_its_csrf_token(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    queued_delivery(pipeline, sink, tenant)
    move_to_dlq(pipeline, "standard")
    console.get("/console/dlq")
    no_reason = console.post("/console/dlq/standard/redrive", {"reason": " ", "confirm": "yes"})
    assert no_reason.status == 400 and 'id="reason-error-standard"' in text(no_reason)
    console.csrf = "forged"
    forged = console.post("/console/dlq/standard/redrive", {"reason": "x", "confirm": "yes"})
    assert forged.status == 403
    assert audit(db, "replay") == []
    assert pipeline.queue_depth(pipeline.queues["standard"].dlq_url) == 1


# -- sources ----------------------------------------------------------------------------------


def test_a_source_is_listed_with_its_inbound_url_and_its_secret_shown_only_once(
    console: ConsoleClient, pipeline: Pipeline, db: Any
) -> None:
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    console.get("/console/sources")
    # When the operator adds a standard-webhooks source without a secret
    created = console.post(
        "/console/sources", {"tenant_id": tenant, "scheme": "standard", "name": "orders"}
    )
    # Then its generated secret is revealed, with the URL providers post to
    assert created.status == 200
    secret = re.search(r'<code id="secret">([^<]+)</code>', text(created))
    assert secret and secret.group(1).startswith("whsec_")
    [source] = source_service.list_sources(
        db, OPERATOR_CALLER, tenant_id=tenant, cursor=None, limit=5
    )["items"]
    assert f"http://127.0.0.1:8080/in/{source['id']}" in text(created)
    # And the list and the source's page show the URL, but never the secret
    listed = text(console.get(f"/console/sources?tenant_id={tenant}"))
    shown = text(console.get(f"/console/sources/{source['id']}"))
    for page in (listed, shown):
        assert f"http://127.0.0.1:8080/in/{source['id']}" in page
        assert secret.group(1) not in page
    assert 'id="rotated-at">never<' in shown
    # When they rotate it, the new one is shown once and the old one is not shown again
    rotated = console.post(f"/console/sources/{source['id']}/rotate", {"keep_previous": "yes"})
    new_secret = re.search(r'<code id="secret">([^<]+)</code>', text(rotated))
    assert new_secret and new_secret.group(1) != secret.group(1)
    assert "previous secret keeps verifying" in text(rotated)
    after = text(console.get(f"/console/sources/{source['id']}"))
    assert new_secret.group(1) not in after and secret.group(1) not in after
    assert 'id="rotated-at">never<' not in after
    assert [(e["action"], e["actor"]) for e in audit(db, "source")] == [
        ("create", "console:local"),
        ("rotate_secret", "console:local"),
    ]


def test_a_pasted_secret_is_not_shown_back_and_a_source_can_be_disabled_and_deleted(
    console: ConsoleClient, pipeline: Pipeline, db: Any
) -> None:
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    console.get("/console/sources")
    created = console.post(
        "/console/sources",
        {"tenant_id": tenant, "scheme": "standard", "secret": PROVIDER_SECRET},
    )
    assert PROVIDER_SECRET not in text(created) and 'id="secret-note"' in text(created)
    [source] = source_service.list_sources(
        db, OPERATOR_CALLER, tenant_id=tenant, cursor=None, limit=5
    )["items"]
    disabled = console.post(f"/console/sources/{source['id']}/disable", {})
    assert disabled.status == 303
    assert 'id="enabled">no<' in text(console.get(f"/console/sources/{source['id']}"))
    unconfirmed = console.post(f"/console/sources/{source['id']}/delete", {})
    assert unconfirmed.status == 400
    deleted = console.post(f"/console/sources/{source['id']}/delete", {"confirm": "yes"})
    assert deleted.status == 303
    assert console.get(f"/console/sources/{source['id']}").status == 404
    assert [e["action"] for e in audit(db, "source")] == ["create", "disable", "delete"]


def test_a_bad_scheme_is_refused_on_the_form(
    console: ConsoleClient, pipeline: Pipeline, db: Any
) -> None:
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    console.get("/console/sources")
    refused = console.post("/console/sources", {"tenant_id": tenant, "scheme": "carrier-pigeon"})
    assert refused.status == 400 and 'id="source-error"' in text(refused)
    assert "unknown scheme" in text(refused)
    assert audit(db, "source") == []


# -- endpoint edit ----------------------------------------------------------------------------


def test_an_endpoint_edit_shows_the_services_refusal_next_to_the_field_then_saves(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    console.get(f"/console/endpoints/{endpoint['id']}/edit")
    form = {
        "url": sink.url("/e"), "description": "", "event_types": "", "max_concurrency": "5",
        "rate_limit_per_second": "", "content_filter": '{"type": "order.paid"}',
        "input_transformer": "",
    }  # fmt: skip
    # When the operator saves a pattern EventBridge would refuse (a value must be an array)
    refused = console.post(f"/console/endpoints/{endpoint['id']}", form, htmx=True)
    # Then htmx gets only the form back, with the service's message next to the filter
    assert refused.status == 400
    body = text(refused)
    assert body.lstrip().startswith("<form") and "<html" not in body
    error = re.search(r'<p class="field-error" id="content_filter-error"[^>]*>([^<]+)</p>', body)
    assert error and error.group(1).startswith("filter at type")
    assert 'aria-describedby="content_filter-error"' in body
    assert (
        endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])["content_filter"] is None
    )
    # When they fix it and set a rate limit, it is saved and audited with just those changes
    fixed = {**form, "content_filter": '{"type": ["order.paid"]}', "rate_limit_per_second": "5"}
    saved = console.post(f"/console/endpoints/{endpoint['id']}", fixed, htmx=True)
    assert saved.status == 200
    assert saved.headers["HX-Redirect"] == f"/console/endpoints/{endpoint['id']}?notice=saved"
    stored = endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])
    assert stored["content_filter"] == {"type": ["order.paid"]}
    assert stored["rate_limit_per_second"] == 5
    [update] = [e for e in audit(db, "endpoint") if e["action"] == "update"]
    assert update["actor"] == "console:local"
    assert sorted(update["params"]) == ["content_filter", "rate_limit_per_second"]


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("max_concurrency", "0", "max concurrency"),
        ("max_concurrency", "many", "whole number"),
        ("rate_limit_per_second", "-1", "rate limit"),
        ("event_types", "order..paid", "empty segment"),
        ("input_transformer", '{"InputTemplate": 3}', "transform"),
        ("content_filter", "{not json", "not JSON"),
    ],
)
def test_each_bad_value_is_shown_next_to_its_own_field(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any, field: str, value: str,
    says: str,
) -> None:  # fmt: skip
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    console.get(f"/console/endpoints/{endpoint['id']}/edit")
    form = {"url": sink.url("/e"), "max_concurrency": "5", field: value}
    refused = console.post(f"/console/endpoints/{endpoint['id']}", form)
    assert refused.status == 400
    body = text(refused)
    assert "<html" in body  # without htmx the whole page comes back
    error = re.search(rf'id="{field}-error"[^>]*>([^<]+)</p>', body)
    assert error and says in error.group(1), body
    assert [e["action"] for e in audit(db, "endpoint")] == ["create"]


def test_a_plain_form_post_is_redirected_to_the_endpoint(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    console.get(f"/console/endpoints/{endpoint['id']}/edit")
    form = {"url": sink.url("/e"), "max_concurrency": "7", "description": "orders"}
    saved = console.post(f"/console/endpoints/{endpoint['id']}", form)
    assert saved.status == 303
    page = text(console.get(saved.headers["Location"]))
    assert 'id="max-concurrency">7<' in page and "Saved." in page


# -- status charts ----------------------------------------------------------------------------


def test_the_status_page_draws_latency_and_backlog_from_the_last_day(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given deliveries made (attempts with durations) and one still waiting on the queue
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/s"))
    for n in range(3):
        event_service.publish_event(
            db, get_settings(), OPERATOR_CALLER, tenant_id=tenant, type="order.paid",
            payload={"n": n}, idempotency_key=None,
        )  # fmt: skip
    pipeline.run_until(lambda: pipeline.states().get("delivered") == 3)
    event_service.publish_event(
        db, get_settings(), OPERATOR_CALLER, tenant_id=tenant, type="order.paid", payload={"n": 3},
        idempotency_key=None,
    )  # fmt: skip
    pipeline.fanout()
    with db.connection() as conn:
        durations = [
            r["duration_ms"]
            for r in conn.execute(
                "SELECT duration_ms FROM attempt_log a JOIN deliveries d ON d.id = a.delivery_id "
                "WHERE d.endpoint_id = %s",
                (endpoint["id"],),
            ).fetchall()
        ]
    # When the operator opens the status page
    page = text(console.get("/console"))
    # Then the latency chart has a p50 and a p99 point for this hour, labelled with its value
    latency = re.search(r'<svg class="chart" id="latency-chart".*?</svg>', page, re.S)
    assert latency
    p50 = re.findall(r"<title>\d\d:00 p50 (\d+) ms of (\d+) attempts</title>", latency.group(0))
    p99 = re.findall(r"<title>\d\d:00 p99 (\d+) ms of (\d+) attempts</title>", latency.group(0))
    assert len(p50) == 1 and len(p99) == 1
    assert p50[0][1] == "3"
    assert int(p99[0][0]) == pytest.approx(max(durations), abs=1)
    # And the backlog chart has a bar for this hour counting the one undelivered delivery
    backlog = re.search(r'<svg class="chart" id="backlog-chart".*?</svg>', page, re.S)
    assert backlog
    assert re.findall(
        r"<title>\d\d:00 (\d+) deliveries not finished</title>", backlog.group(0)
    ) == ["1"]


# -- portal endpoint edit ---------------------------------------------------------------------


def portal_session(console: ConsoleClient, tenant: str) -> None:
    """Open the tenant's portal from a portal link, as its customer would."""
    made = create_portal_link(
        get_database(), get_settings(), OPERATOR_CALLER, tenant, own_url="",
        ttl=timedelta(minutes=15),
    )  # fmt: skip
    token = made["url"].split("token=", 1)[1]
    assert console.get(made["url"]).status == 200  # the page that asks to confirm
    opened = console.post("/portal/login", {"token": token})
    assert opened.status == 303 and "hl_portal" in console.cookies


def test_a_customer_edits_an_endpoint_in_the_portal_public_urls_only_and_audited(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given a tenant's endpoint (on loopback: this deployment allows private targets) and its
    # customer on the portal's edit page, which has no limits to set
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    portal_session(console, tenant)
    page = text(console.get(f"/portal/endpoints/{endpoint['id']}/edit"))
    assert 'action="/portal/endpoints/' in page and 'name="content_filter"' in page
    assert 'name="max_concurrency"' not in page and 'name="rate_limit_per_second"' not in page
    form = {"url": "http://10.0.0.7/hooks", "description": "", "event_types": ""}
    # When they point it at a private address, htmx gets the form back with the refusal there
    refused = console.post(f"/portal/endpoints/{endpoint['id']}", form, htmx=True)
    assert refused.status == 400
    body = text(refused)
    assert body.lstrip().startswith("<form") and "<html" not in body
    error = re.search(r'<p class="field-error" id="url-error"[^>]*>([^<]+)</p>', body)
    assert error and "public addresses only" in error.group(1)
    assert endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])["url"] == sink.url(
        "/e"
    )
    # When they give a public URL, a description, event types and a filter (and a crafted
    # max concurrency, which the portal does not take)
    fixed = {
        **form, "url": "https://93.184.215.14/hooks", "description": "orders",
        "event_types": "order.paid, order.refunded", "content_filter": '{"type": ["order.paid"]}',
        "max_concurrency": "50",
    }  # fmt: skip
    saved = console.post(f"/portal/endpoints/{endpoint['id']}", fixed, htmx=True)
    # Then it is saved, audited under the portal's name with just those changes
    assert saved.status == 200
    assert saved.headers["HX-Redirect"] == f"/portal/endpoints/{endpoint['id']}?notice=saved"
    stored = endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])
    assert stored["url"] == "https://93.184.215.14/hooks" and stored["description"] == "orders"
    assert stored["event_types"] == ["order.paid", "order.refunded"]
    assert stored["content_filter"] == {"type": ["order.paid"]}
    assert stored["max_concurrency"] == endpoint["max_concurrency"]
    [update] = [e for e in audit(db, "endpoint") if e["action"] == "update"]
    assert update["actor"] == f"portal:{tenant}"
    assert sorted(update["params"]) == ["content_filter", "description", "event_types", "url"]
    # And the endpoint's page shows it
    shown = text(console.get(saved.headers["HX-Redirect"]))
    assert "https://93.184.215.14/hooks" in shown and "Saved." in shown


def test_the_portal_answers_another_tenants_endpoint_edit_as_not_found(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given tenant A's customer in the portal and tenant B's endpoint
    a = operator.add_tenant(db, pipeline.config, name="a", group="standard")["id"]
    b = operator.add_tenant(db, pipeline.config, name="b", group="standard")["id"]
    theirs = operator.add_endpoint(db, get_settings(), tenant_id=b, url=sink.url("/b-hooks"))
    ours = operator.add_endpoint(db, get_settings(), tenant_id=a, url=sink.url("/a-hooks"))
    portal_session(console, a)
    assert console.get(f"/portal/endpoints/{ours['id']}/edit").status == 200
    # When A's customer opens or saves B's endpoint's edit form
    opened = console.get(f"/portal/endpoints/{theirs['id']}/edit")
    saved = console.post(f"/portal/endpoints/{theirs['id']}", {"description": "mine now"})
    # Then both are not found, B's URL is not shown, and nothing is changed or audited
    assert opened.status == 404 and saved.status == 404
    assert "b-hooks" not in text(opened) + text(saved)
    assert not endpoint_service.get_endpoint(db, OPERATOR_CALLER, theirs["id"])["description"]
    assert [e["action"] for e in audit(db, "endpoint")] == ["create", "create"]


def test_a_portal_edit_without_its_csrf_token_is_refused(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given a tenant's customer in the portal
    tenant = operator.add_tenant(db, pipeline.config, name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    portal_session(console, tenant)
    console.get(f"/portal/endpoints/{endpoint['id']}/edit")
    # When a form arrives without the page's CSRF token (another site posting it)
    body = urlencode({"url": sink.url("/e"), "description": "forged"})
    refused = console.request("POST", f"/portal/endpoints/{endpoint['id']}", body=body)
    # Then it is refused and nothing is changed
    assert refused.status == 403 and "expired" in text(refused)
    assert not endpoint_service.get_endpoint(db, OPERATOR_CALLER, endpoint["id"])["description"]
    assert [e["action"] for e in audit(db, "endpoint")] == ["create"]


def test_the_endpoint_page_shows_its_auth_and_an_ed25519_rotation_shows_the_public_key(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given an Ed25519 endpoint with an OAuth2 client and a client certificate (decision 0067)
    from tests.support.endpoint_auth import TestCA

    ca = TestCA()
    issued = ca.issue("hookline-client", server=False)
    tenant = operator.add_tenant(db, pipeline.config, name="bank", group="standard")["id"]
    endpoint = operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url=sink.url("/bank"), signing="ed25519",
        auth={"type": "oauth2_client_credentials", "token_url": sink.url("/token"),
              "client_id": "hookline", "client_secret": "console-never-shows"},
        tls={"client_certificate": issued.certificate, "client_key": issued.key},
    )  # fmt: skip
    # When the operator opens it, then rotates its signing key
    shown = text(console.get(f"/console/endpoints/{endpoint['id']}"))
    rotated = text(console.post(f"/console/endpoints/{endpoint['id']}/rotate", {}))
    # Then the page names the scheme, the public key, the OAuth2 client and the certificate's
    # expiry, never the secret or the key; the rotation shows the new public key, not "None"
    assert 'id="signing">Ed25519 (v1a)<' in shown
    assert endpoint["public_keys"][0] in shown
    assert "client hookline at" in shown and "CN=hookline-client, expires 20" in shown
    assert "console-never-shows" not in shown and "PRIVATE KEY" not in shown
    key = re.search(r'<code id="public-key">(whpk_[^<]+)</code>', rotated)
    assert key and key.group(1) != endpoint["public_keys"][0] and "None" not in rotated


def test_oauth2_and_tls_are_set_through_the_portal_form_and_never_filled_back_in(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink, db: Any
) -> None:
    # Given a customer on their endpoint's portal edit page (decision 0067)
    from tests.support.endpoint_auth import TestCA

    ca = TestCA()
    issued = ca.issue("hookline-client", server=False)
    tenant = operator.add_tenant(db, pipeline.config, name="bank", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/e"))
    portal_session(console, tenant)
    page = text(console.get(f"/portal/endpoints/{endpoint['id']}/edit"))
    assert 'name="oauth2_client_secret"' in page and 'name="tls_client_key"' in page
    form = {"url": sink.url("/e"), "description": "", "event_types": ""}
    oauth2 = {"oauth2_token_url": "https://10.0.0.7/token", "oauth2_client_id": "hookline",
              "oauth2_client_secret": "portal-never-shows"}  # fmt: skip
    # When they give a private token URL, then a key that does not parse
    private = console.post(f"/portal/endpoints/{endpoint['id']}", {**form, **oauth2}, htmx=True)
    bad_key = {"tls_client_certificate": issued.certificate, "tls_client_key": "not a key"}
    unparsed = console.post(f"/portal/endpoints/{endpoint['id']}", {**form, **bad_key}, htmx=True)
    # Then each refusal is shown next to its part of the form, and nothing secret comes back
    auth_error = re.search(r'id="auth-error"[^>]*>([^<]+)<', text(private))
    tls_error = re.search(r'id="tls-error"[^>]*>([^<]+)<', text(unparsed))
    assert auth_error and "auth.token_url: token URL must resolve" in auth_error.group(1)
    assert tls_error and tls_error.group(1).startswith("tls.client_key: not")
    assert "portal-never-shows" not in text(private)
    # When they give a public token URL and the certificate with its key
    good = {**form, **oauth2, "oauth2_token_url": "https://93.184.215.14/token",
            "tls_client_certificate": issued.certificate, "tls_client_key": issued.key}  # fmt: skip
    saved = console.post(f"/portal/endpoints/{endpoint['id']}", good, htmx=True)
    # Then both are stored, the endpoint page shows the client and the certificate's expiry,
    # and the audit names them without the secret or the key
    assert saved.status == 200, text(saved)
    shown = text(console.get(saved.headers["HX-Redirect"]))
    assert "client hookline at https://93.184.215.14/token" in shown
    assert "CN=hookline-client, expires" in shown and "portal-never-shows" not in shown
    [update] = [e for e in audit(db, "endpoint") if e["action"] == "update"]
    assert sorted(update["params"]) == ["auth", "tls"]
    assert "portal-never-shows" not in str(update) and "PRIVATE KEY" not in str(update)
