"""A source's inline catch-up API key (`options.catchup.api_key`) is a secret: stored sealed,
shown as "<redacted>" by every API answer, the CLI and the audit, kept by a PATCH that sends the
placeholder back, and opened only by the catch-up that calls the provider with it
(docs/decisions/0020-catch-up-credentials-sealed.md)."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hookline.catchup import CatchupContext, CatchupResult, catch_up_source
from hookline.db import Database
from hookline.guarded_http import guarded_client
from hookline.observability import logger
from hookline.secretbox import PREFIX, encrypt_existing_secrets
from tests.support.fake_providers import ProviderServer, running_providers

pytestmark = pytest.mark.integration

KEY = "sk_live_catchup_key_do_not_show_4c1e"
REDACTED = "<redacted>"


@pytest.fixture
def providers() -> Iterator[ProviderServer]:
    with running_providers() as server:
        yield server


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """Every log line, formatted as CloudWatch gets it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    targets = [logging.getLogger(logger.name), logging.getLogger()]
    for target in targets:
        target.addHandler(handler)
    yield stream
    for target in targets:
        target.removeHandler(handler)


def stored_key(db: Database, source_id: str) -> Any:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT options -> 'catchup' -> 'api_key' AS key, options::text AS raw"
            " FROM sources WHERE id = %s",
            (source_id,),
        ).fetchone()
    assert row is not None
    return row


def catch_up(db: Database, source_id: str) -> CatchupResult:
    """One catch-up of the source against the provider its options name, as reconcile runs it."""
    with guarded_client(allow_private=True, allow_http=True, timeout=5) as http:
        ctx = CatchupContext(db, http, read_secret=lambda tenant, arn: "unused")
        result, _ = catch_up_source(ctx, source_id, {})
    return result


def stripe_options(providers: ProviderServer, key: str) -> dict[str, Any]:
    return {"catchup": {"enabled": True, "api_base": providers.url, "api_key": key}}


def new_source(mgmt, options: dict[str, Any]) -> dict[str, Any]:
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    body = {"tenant_id": tenant["id"], "scheme": "stripe", "secret": "whsec_x", "options": options}
    response = mgmt.post("/v1/sources", body)
    assert response.status == 201, response.body
    return response.json()


def test_a_catch_up_key_is_stored_sealed_and_never_shown(mgmt, cli, db, logs, providers):
    # Given a source created through the API with an inline catch-up key
    created = new_source(mgmt, stripe_options(providers, KEY))
    source_id = created["id"]
    # Then the database holds it sealed, never as given
    row = stored_key(db, source_id)
    assert row["key"].startswith(PREFIX) and KEY not in row["raw"]
    # And every answer shows the placeholder: create, get, list, patch, errors
    assert created["options"]["catchup"]["api_key"] == REDACTED
    path = f"/v1/sources/{source_id}"
    changed = stripe_options(providers, KEY) | {"note": "x"}
    answers = [
        mgmt.get(path),
        mgmt.get("/v1/sources"),
        mgmt.patch(path, {"name": "renamed", "options": changed}),
        mgmt.patch(path, {"tolerance_seconds": -1, "options": changed}),  # 422
        mgmt.patch(path, {"name": " ", "options": changed}),  # 400
    ]
    assert [a.status for a in answers] == [200, 200, 200, 422, 400]
    assert answers[0].json()["options"]["catchup"]["api_key"] == REDACTED
    assert answers[1].json()["items"][0]["options"]["catchup"]["api_key"] == REDACTED
    assert answers[2].json()["options"] == {
        "catchup": {"enabled": True, "api_base": providers.url, "api_key": REDACTED},
        "note": "x",
    }
    # And the CLI's table and JSON show it redacted too
    shown = [cli("sources", "show", source_id, "--json"), cli("sources", "list"),
             cli("--json", "sources", "list")]  # fmt: skip
    assert all(code == 0 for code, _, _ in shown)
    assert json.loads(shown[0][1])["options"]["catchup"]["api_key"] == REDACTED
    # And the audit of the change has the plain values and only the key's name
    with db.connection() as conn:
        audit = [r["params"] for r in conn.execute("SELECT params FROM audit_log")]
    assert {
        "changed": {
            "name": {"from": "stripe", "to": "renamed"},
            "options.note": {"from": None, "to": "x"},
        },
        "secrets_changed": ["options.catchup.api_key"],
    } in audit
    # And a delete wipes the key with the other secrets
    deleted = mgmt.delete(path)
    assert deleted.status == 200 and "api_key" not in deleted.json()["options"]["catchup"]
    assert stored_key(db, source_id)["key"] is None
    # And the key was in none of it, nor in any log line
    everything = [a.body.decode() for a in [*answers, deleted]]
    everything += [out + err for _, out, err in shown] + [json.dumps(audit), logs.getvalue()]
    assert all(KEY not in text for text in everything)


def test_get_modify_patch_keeps_the_key_and_the_catch_up_authenticates(mgmt, db, logs, providers):
    # Given a Stripe source whose catch-up key is the fake Stripe's, and a missed event
    source_id = new_source(mgmt, stripe_options(providers, providers.stripe.api_key))["id"]
    providers.stripe.add("evt_missed", int(time.time()) - 60)
    sealed = stored_key(db, source_id)["key"]
    # When a client reads the source, changes another option and sends the options back whole
    options = mgmt.get(f"/v1/sources/{source_id}").json()["options"]
    options["catchup"]["page_size"] = 50
    response = mgmt.patch(f"/v1/sources/{source_id}", {"options": options})
    # Then the stored key is the one it had, not the placeholder
    assert response.status == 200
    assert response.json()["options"]["catchup"] == {**options["catchup"], "api_key": REDACTED}
    assert stored_key(db, source_id)["key"] == sealed
    # And the catch-up still authenticates with it and brings the event
    result = catch_up(db, source_id)
    assert (result.error, result.stored) == (None, 1)
    calls = providers.requests("GET", "/v1/events")
    assert [c.headers["authorization"] for c in calls] == ["Bearer sk_test_fake"]
    assert calls[0].query["limit"] == ["50"]

    # When the key is changed to a new value
    options["catchup"]["api_key"] = KEY
    assert mgmt.patch(f"/v1/sources/{source_id}", {"options": options}).status == 200
    # Then the new one is sealed in its place, and the catch-up uses it (Stripe refuses it
    # until it is Stripe's key; the failure names the status, never the key)
    assert stored_key(db, source_id)["key"] not in (sealed, KEY)
    assert catch_up(db, source_id).error == "stripe API answered 401 to GET /v1/events"
    providers.stripe.api_key = KEY
    assert catch_up(db, source_id).error is None
    assert providers.requests("GET", "/v1/events")[-1].headers["authorization"] == f"Bearer {KEY}"
    assert "catch-up failed" in logs.getvalue() and KEY not in logs.getvalue()


def test_the_placeholder_is_refused_where_there_is_no_key_to_keep(mgmt, providers):
    # Given a source without an inline key
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    body = {"tenant_id": tenant["id"], "scheme": "stripe", "secret": "whsec_x"}
    # When a client creates one with the placeholder as its key, or patches one in
    refused = mgmt.post("/v1/sources", body | {"options": stripe_options(providers, REDACTED)})
    source = mgmt.post("/v1/sources", body).json()
    patched = mgmt.patch(
        f"/v1/sources/{source['id']}", {"options": stripe_options(providers, REDACTED)}
    )
    # Then both are 400s that say what to send, and nothing changed
    for answer in (refused, patched):
        assert answer.status == 400
        assert "no key to keep: send the key itself" in answer.json()["detail"]
    assert mgmt.get(f"/v1/sources/{source['id']}").json()["options"] == {}
    assert len(mgmt.get("/v1/sources").json()["items"]) == 1


def test_a_legacy_plaintext_key_still_works_and_is_sealed_in_place(mgmt, db, providers):
    # Given a source whose key was stored in plaintext before keys were sealed
    source_id = new_source(mgmt, stripe_options(providers, "placeholder-key"))["id"]
    with db.connection() as conn:
        conn.execute(
            "UPDATE sources SET options ="
            " jsonb_set(options, '{catchup,api_key}', to_jsonb(%s::text))",
            (providers.stripe.api_key,),
        )
    providers.stripe.add("evt_legacy", int(time.time()) - 60)
    # Then it is answered redacted and the catch-up authenticates with it as it is
    shown = mgmt.get(f"/v1/sources/{source_id}").json()
    assert shown["options"]["catchup"]["api_key"] == REDACTED
    assert catch_up(db, source_id).error is None
    # When the existing secrets are encrypted
    sealed = encrypt_existing_secrets(db)
    # Then the key is sealed in place (the source's secret already was), once
    assert sealed == 1
    row = stored_key(db, source_id)
    assert row["key"].startswith(PREFIX) and providers.stripe.api_key not in row["raw"]
    assert encrypt_existing_secrets(db) == 0
    # And the catch-up still authenticates with it
    providers.stripe.add("evt_after", int(time.time()) - 30)
    result = catch_up(db, source_id)
    assert (result.error, result.stored, result.duplicates) == (None, 1, 1)
    auth = {c.headers["authorization"] for c in providers.requests("GET", "/v1/events")}
    assert auth == {"Bearer sk_test_fake"}
