"""Secrets at rest: endpoint signing secrets and source secrets are stored sealed with a data
key from KMS (moto here) or a local master key; the receiver and the deliverer decrypt them;
they are shown only at creation and rotation, never in lists, errors or logs."""

from __future__ import annotations

import json

import boto3
import pytest

from hookline.db import Database
from hookline.repositories.endpoints import active_secrets
from hookline.repositories.sources import get_source
from hookline.secretbox import PREFIX, LocalWrapper, SecretBox, encrypt_existing_secrets
from hookline.settings import get_settings
from tests.support.lambdas import ApiClient
from tests.support.signers import standard_headers

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"


def stored_secrets(db: Database) -> list[str]:
    with db.connection() as conn:
        endpoint = [r["secret"] for r in conn.execute("SELECT secret FROM endpoint_secrets")]
        source = [s for r in conn.execute("SELECT secrets FROM sources") for s in r["secrets"]]
    return endpoint + source


def create_everything(mgmt) -> tuple[dict, dict, dict]:
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    source = mgmt.post("/v1/sources", {"tenant_id": tenant["id"], "scheme": "standard"}).json()
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": PUBLIC_URL}).json()
    return tenant, source, endpoint


def receiver() -> ApiClient:
    from functions.receiver.handler import lambda_handler

    return ApiClient(lambda_handler)


def test_secrets_are_stored_sealed_and_read_back_by_receiver_and_deliverer(mgmt, db):
    _, source, endpoint = create_everything(mgmt)
    stored = stored_secrets(db)
    assert len(stored) == 2 and all(s.startswith(PREFIX) for s in stored)
    assert source["secret"] not in json.dumps(stored) and endpoint["secret"] not in json.dumps(
        stored
    )
    with db.connection() as conn:
        assert active_secrets(conn, endpoint["id"]) == [endpoint["secret"]]
        assert get_source(conn, source["id"]).secrets == (source["secret"],)
    # A provider signing with the secret shown at creation is verified by the receiver.
    body = json.dumps({"type": "invoice.paid"}).encode()
    headers = standard_headers(source["secret"], body, "msg_1")
    assert receiver().post(source["path"], headers=headers, body=body).status == 200


def test_secrets_are_never_in_lists_errors_or_logs(mgmt, capsys):
    tenant, source, endpoint = create_everything(mgmt)
    rotated = mgmt.post(f"/v1/endpoints/{endpoint['id']}/rotate-secret").json()
    shown = [
        mgmt.get("/v1/endpoints").body,
        mgmt.get(f"/v1/endpoints/{endpoint['id']}").body,
        mgmt.get("/v1/sources").body,
        mgmt.get(f"/v1/sources/{source['id']}").body,
        mgmt.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": "http://x/"}).body,
    ]
    logs = capsys.readouterr()
    for secret in (source["secret"], endpoint["secret"], rotated["secret"]):
        assert all(secret.encode() not in body for body in shown)
        assert secret not in logs.out and secret not in logs.err


def test_existing_plaintext_secrets_are_sealed_in_place(mgmt, db):
    _, source, endpoint = create_everything(mgmt)
    with db.connection() as conn:  # rows as written before 0006
        conn.execute("UPDATE endpoint_secrets SET secret = %s", (endpoint["secret"],))
        conn.execute("UPDATE sources SET secrets = %s", ([source["secret"]],))
        # Legacy plaintext is still readable meanwhile.
        assert active_secrets(conn, endpoint["id"]) == [endpoint["secret"]]
    assert encrypt_existing_secrets(db) == 2
    assert encrypt_existing_secrets(db) == 0  # idempotent
    assert all(s.startswith(PREFIX) for s in stored_secrets(db))
    with db.connection() as conn:
        assert active_secrets(conn, endpoint["id"]) == [endpoint["secret"]]
        assert get_source(conn, source["id"]).secrets == (source["secret"],)


def test_a_wrong_master_key_is_a_503_not_a_leak(mgmt, db, tmp_path):
    _, source, _ = create_everything(mgmt)
    stranger = SecretBox(LocalWrapper.from_file(tmp_path / "other.key"))
    with db.connection() as conn, pytest.raises(Exception) as caught:
        stranger.open(conn, stored_secrets(db)[1])
    assert "another master key" in str(caught.value)
    assert source["secret"] not in str(caught.value)


def test_with_a_kms_key_the_data_key_is_wrapped_by_kms(mgmt, db, moto_endpoint, monkeypatch):
    kms = boto3.client("kms", endpoint_url=moto_endpoint, region_name="us-east-1")
    key_id = kms.create_key(Description="hookline secrets")["KeyMetadata"]["KeyId"]
    monkeypatch.setenv("HOOKLINE_KMS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    get_settings.cache_clear()
    _, source, endpoint = create_everything(mgmt)
    with db.connection() as conn:
        keys = conn.execute("SELECT wrapped_by FROM secret_keys").fetchall()
    assert keys == [{"wrapped_by": key_id}]
    # Another process (a fresh box) unwraps the data key through KMS and reads the secrets.
    from hookline.secretbox import build_box

    fresh = build_box(get_settings())
    with db.connection() as conn:
        sealed = conn.execute("SELECT secret FROM endpoint_secrets").fetchone()["secret"]
        assert fresh.open(conn, sealed) == endpoint["secret"]
    body = json.dumps({"type": "invoice.paid"}).encode()
    headers = standard_headers(source["secret"], body, "msg_kms")
    assert receiver().post(source["path"], headers=headers, body=body).status == 200
