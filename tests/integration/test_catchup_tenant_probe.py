"""Issue 12, the critical finding: a tenant pointed its source's provider catch-up at its own
sink and at another tenant's Secrets Manager secret, and the next reconcile run sent that
tenant's Stripe key to the sink. Now where catch-up connects and which secret it reads are an
operator's (docs/decisions/0026-catch-up-options-are-operator-territory.md): the API refuses a
tenant that sets them, a secret outside the source's tenant's prefix is never read, every
catch-up request goes through the SSRF guard, and source changes are audited without secrets.

Real Postgres, moto Secrets Manager, a loopback fake Stripe and a loopback sink."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest

from hookline.db import Database
from hookline.runtime import reset_runtime
from hookline.settings import Settings, get_settings
from hookline_dev.local.apigw import LocalContext
from tests.support.fake_providers import ProviderServer, running_providers
from tests.support.management import as_tenant, principal_of

pytestmark = pytest.mark.integration

KEY_A = "sk_live_tenant_a_stripe_key_7f3e"
KEY_B = "sk_live_tenant_b_own_key_91d0"
SOURCE_SECRET = "whsec_probe_source_secret_5a"

Configure = Callable[..., None]


@pytest.fixture
def providers() -> Iterator[ProviderServer]:
    with running_providers() as server:
        yield server


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch) -> Iterator[Configure]:
    """Sets the deployment's catch-up settings for the next reconcile run."""

    def apply(*, bases: dict[str, str] | None = None, allow_private: bool) -> None:
        value = ",".join(f"{k}={v}" for k, v in (bases or {}).items())
        monkeypatch.setenv("HOOKLINE_CATCHUP_API_BASES", value)
        monkeypatch.setenv("HOOKLINE_CATCHUP_ALLOW_PRIVATE", "1" if allow_private else "0")
        get_settings.cache_clear()
        reset_runtime()

    yield apply
    get_settings.cache_clear()
    reset_runtime()


@pytest.fixture
def secrets(moto_endpoint: str) -> Any:
    return boto3.client("secretsmanager", endpoint_url=moto_endpoint, region_name="us-east-1")


def reconcile() -> dict[str, Any]:
    """One invocation of the reconcile handler, as the schedule makes it."""
    from functions.reconcile.handler import lambda_handler

    return lambda_handler({"trigger": "test"}, LocalContext(function_name="reconcile"))


def sql(db: Database, statement: str, params: Any = None) -> list[dict[str, Any]]:
    with db.connection() as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def new_tenant(mgmt: Any, name: str) -> str:
    return str(mgmt.post("/v1/tenants", {"name": name}).json()["id"])


def stripe_body(catchup: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"scheme": "stripe", "secret": SOURCE_SECRET, "options": {"catchup": catchup}, **extra}


def test_a_tenant_cannot_send_another_tenants_key_to_its_sink(
    mgmt, db, pipeline, providers, sink, secrets, configure
):
    # Given tenants A and B, A's Stripe key in A's secret, and A's source using it (set up by
    # an operator); the deployment's Stripe is the fake on loopback
    configure(bases={"stripe": providers.url}, allow_private=True)
    a, b = new_tenant(mgmt, "a"), new_tenant(mgmt, "b")
    arn_a = secrets.create_secret(Name=f"hookline/catchup/{a}/stripe", SecretString=KEY_A)["ARN"]
    catchup_a = {"enabled": True, "api_key_secret_arn": arn_a}
    source_a = mgmt.post("/v1/sources", stripe_body(catchup_a, tenant_id=a)).json()["id"]
    tenant_b = as_tenant(mgmt, db, b)
    # (an operator cannot give B's source A's secret either: it is not under B's prefix)
    misfiled = mgmt.post("/v1/sources", stripe_body(catchup_a, tenant_id=b))
    assert misfiled.status == 400
    assert f"must name a secret under hookline/catchup/{b}/" in misfiled.json()["detail"]
    sink_url = sink.url("/steal")

    # When B creates a source pointed at its sink and at A's secret, or at either alone
    attempts = {
        "api_base": {"enabled": True, "api_base": sink_url, "api_key_secret_arn": arn_a},
        "api_key_secret_arn": {"enabled": True, "api_key_secret_arn": arn_a},
    }
    created = {f: tenant_b.post("/v1/sources", stripe_body(c)) for f, c in attempts.items()}
    # Then each is refused, naming the field, and nothing is created
    for field, answer in created.items():
        assert answer.status == 403, answer.body
        assert f"options.catchup.{field}" in answer.json()["detail"]
    assert tenant_b.get("/v1/sources").json()["items"] == []

    # When B makes a source of its own, then patches it towards the sink and A's secret
    own = tenant_b.post("/v1/sources", stripe_body({"enabled": True, "api_key": KEY_B}))
    assert own.status == 201, own.body
    source_b = own.json()["id"]
    patched = {
        field: tenant_b.patch(
            f"/v1/sources/{source_b}",
            {"options": {"catchup": {"enabled": True, "api_key": "<redacted>", field: value}}},
        )
        for field, value in (("api_base", sink_url), ("api_key_secret_arn", arn_a))
    }
    # Then each patch is refused, naming the field, and the source is unchanged
    for field, answer in patched.items():
        assert answer.status == 403 and f"options.catchup.{field}" in answer.json()["detail"]
    assert tenant_b.get(f"/v1/sources/{source_b}").json()["options"] == {
        "catchup": {"enabled": True, "api_key": "<redacted>"}
    }

    # Given B's options rewritten to the attack anyway (as the old code stored them), with
    # the test configuration letting catch-up reach loopback: only the tenant check stands
    sql(
        db,
        "UPDATE sources SET options = %s::jsonb WHERE id = %s",
        (json.dumps({"catchup": attempts["api_base"]}), source_b),
    )
    providers.stripe.api_key = KEY_A
    providers.stripe.add("evt_of_a", int(time.time()) - 60)
    # When reconcile runs
    report = reconcile()
    # Then the sink received nothing, so never A's key
    assert sink.requests() == []
    # And B's catch-up failed, saying why, before reading any secret
    found = report["findings"]["catchup"]
    assert found[source_b]["error"] == (
        f"options.catchup.api_key_secret_arn must name a secret under hookline/catchup/{b}/ "
        "(the source's own tenant)"
    )
    # And A's catch-up read A's key, reached the fake Stripe only, and stored A's event in A's
    # source; nothing a catch-up fetched is an event of B
    assert found[source_a]["error"] is None and found[source_a]["stored"] == 1
    calls = providers.requests("GET", "/v1/events")
    assert [c.headers["authorization"] for c in calls] == [f"Bearer {KEY_A}"]
    stored = sql(db, "SELECT tenant_id, source_id, dedupe_key FROM events")
    assert stored == [{"tenant_id": a, "source_id": source_a, "dedupe_key": "evt_of_a"}]
    assert KEY_A not in json.dumps(report)


def test_only_an_operator_overrides_where_catch_up_connects(mgmt, db, pipeline, secrets, configure):
    # Given two fake Stripes on loopback: the deployment's, and another
    with running_providers() as deployed, running_providers() as other:
        configure(bases={"stripe": deployed.url}, allow_private=True)
        b = new_tenant(mgmt, "b")
        tenant_b = as_tenant(mgmt, db, b)
        # And B's source with its own inline key and no base of its own
        catchup = {"enabled": True, "api_key": deployed.stripe.api_key}
        source = tenant_b.post("/v1/sources", stripe_body(catchup)).json()["id"]
        # When reconcile runs, then the catch-up goes to the deployment's Stripe
        assert reconcile()["findings"]["catchup"][source]["error"] is None
        assert len(deployed.requests("GET", "/v1/events")) == 1

        # When an operator points the source at the other Stripe
        path = f"/v1/sources/{source}"
        options = mgmt.get(path).json()["options"]
        options["catchup"]["api_base"] = other.url
        assert mgmt.patch(path, {"options": options}).status == 200
        # And B reads the source, changes another option and sends it back, then sends
        # options without the base at all
        mine = tenant_b.get(path).json()["options"]
        mine["catchup"]["page_size"] = 50
        echoed = tenant_b.patch(path, {"options": mine})
        omitted = tenant_b.patch(
            path, {"options": {"catchup": {"enabled": True, "api_key": "<redacted>"}}}
        )
        # Then both are accepted and the operator's base is kept
        assert (echoed.status, omitted.status) == (200, 200)
        assert omitted.json()["options"]["catchup"]["api_base"] == other.url
        # And the next run goes to the operator's Stripe
        reconcile()
        assert len(other.requests("GET", "/v1/events")) == 1
        assert len(deployed.requests("GET", "/v1/events")) == 1
        # And B changing it is still refused
        changed = {"catchup": {"enabled": True, "api_base": deployed.url}}
        refused = tenant_b.patch(path, {"options": changed})
        assert refused.status == 403 and "options.catchup.api_base" in refused.json()["detail"]


def test_catch_up_goes_through_the_ssrf_guard(mgmt, db, pipeline, providers, configure):
    # Given a source an operator pointed at a loopback "provider", and a deployment whose
    # configuration does not allow private addresses (as on AWS)
    configure(allow_private=False)
    t = new_tenant(mgmt, "a")
    catchup = {"enabled": True, "api_base": providers.url, "api_key": providers.stripe.api_key}
    source = mgmt.post("/v1/sources", stripe_body(catchup, tenant_id=t)).json()["id"]
    providers.stripe.add("evt_1", int(time.time()) - 60)
    # When reconcile runs
    result = reconcile()["findings"]["catchup"][source]
    # Then the guard refused the connection: nothing reached the loopback server
    assert result["error"].startswith("stripe API refused by the SSRF guard")
    assert providers.served == []
    # And the same holds for a deployment base on loopback
    del catchup["api_base"]
    assert mgmt.patch(f"/v1/sources/{source}", {"options": {"catchup": catchup}}).status == 200
    configure(bases={"stripe": providers.url}, allow_private=False)
    assert reconcile()["findings"]["catchup"][source]["error"].startswith(
        "stripe API refused by the SSRF guard"
    )
    assert providers.served == []
    # When the test configuration allows private addresses, the same catch-up goes through
    configure(bases={"stripe": providers.url}, allow_private=True)
    result = reconcile()["findings"]["catchup"][source]
    assert (result["error"], result["stored"]) == (None, 1)


def test_source_create_update_delete_are_audited_without_secret_values(mgmt, db):
    # Given a tenant-scoped caller
    b = new_tenant(mgmt, "b")
    tenant_b = as_tenant(mgmt, db, b)
    # When it creates a source with a secret and an inline catch-up key, changes it twice
    # (plain fields, then the key) and deletes it
    catchup = {"enabled": True, "api_key": KEY_B, "page_size": 50}
    source = tenant_b.post("/v1/sources", stripe_body(catchup, name="shop")).json()["id"]
    path = f"/v1/sources/{source}"
    renamed = {"enabled": True, "api_key": "<redacted>", "page_size": 100}
    assert tenant_b.patch(path, {"name": "store", "options": {"catchup": renamed}}).status == 200
    new_key = {**renamed, "api_key": "sk_live_rotated_b_0c2a"}
    assert tenant_b.patch(path, {"options": {"catchup": new_key}}).status == 200
    assert tenant_b.delete(path).status == 200
    # Then each is an audit entry under B's principal, with the values of plain fields and the
    # names of secret ones
    entries = sql(
        db,
        "SELECT actor, action, params FROM audit_log WHERE object_id = %s ORDER BY id",
        (source,),
    )
    assert {e["actor"] for e in entries} == {principal_of(b)}
    assert [(e["action"], e["params"]) for e in entries] == [
        (
            "create",
            {
                "set": {
                    "tenant_id": b,
                    "name": "shop",
                    "scheme": "stripe",
                    "tolerance_seconds": 300,
                    "options.catchup.enabled": True,
                    "options.catchup.page_size": 50,
                },
                "secrets_set": ["secret", "options.catchup.api_key"],
            },
        ),
        (
            "update",
            {
                "changed": {
                    "name": {"from": "shop", "to": "store"},
                    "options.catchup.page_size": {"from": 50, "to": 100},
                },
                "secrets_changed": [],
            },
        ),
        ("update", {"changed": {}, "secrets_changed": ["options.catchup.api_key"]}),
        (
            "delete",
            {
                "was": {
                    "tenant_id": b,
                    "name": "store",
                    "scheme": "stripe",
                    "tolerance_seconds": 300,
                },
                "secrets_wiped": ["secret", "options.catchup.api_key"],
            },
        ),
    ]
    # And no secret, sealed or not, is in any of them
    text = json.dumps([e["params"] for e in entries])
    for secret in (KEY_B, "sk_live_rotated_b_0c2a", SOURCE_SECRET, "hlenc1:", "<redacted>"):
        assert secret not in text


def test_a_secret_is_read_through_a_session_tagged_with_the_sources_tenant(moto_endpoint, secrets):
    # Given a deployment with a catch-up secret reader role (moto plays STS and the secret)
    secrets.create_secret(Name="hookline/catchup/ten_a/stripe", SecretString=KEY_A)
    settings = Settings(
        database_url="",
        aws_endpoint_url=moto_endpoint,
        catchup_secret_role_arn="arn:aws:iam::123456789012:role/hookline-catchup-reader",
    )
    # When the catch-up reads tenant A's secret, then it gets the value through that role
    from hookline.catchup.secrets import secret_reader

    read = secret_reader(settings)
    assert read("ten_a", "hookline/catchup/ten_a/stripe") == KEY_A
