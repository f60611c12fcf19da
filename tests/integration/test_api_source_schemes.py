"""Sources of every scheme through the API and the CLI: material the scheme cannot use is
refused at creation with the reason, `sources schemes` lists what each needs, two secrets and
a verify token are taken, and a source's status shows its handshakes and rejections."""

from __future__ import annotations

import json

import pytest

from tests.support.provider_signers import DISCORD_PUBLIC

pytestmark = pytest.mark.integration


@pytest.fixture
def tenant_id(mgmt) -> str:
    return str(mgmt.post("/v1/tenants", {"name": "acme"}).json()["id"])


def test_an_hmac_secret_for_an_ed25519_provider_is_refused_with_the_reason(mgmt, tenant_id):
    # Given a Discord source created with a shared secret instead of the app's public key
    answer = mgmt.post(
        "/v1/sources", {"tenant_id": tenant_id, "scheme": "discord", "secret": "whsec_abc"}
    )
    # Then it is refused, and the reason names what Discord needs
    assert answer.status == 400
    assert "Ed25519 public key" in answer.json()["detail"]


def test_a_malformed_public_key_is_refused(mgmt, tenant_id):
    answer = mgmt.post(
        "/v1/sources", {"tenant_id": tenant_id, "scheme": "sendgrid", "secret": "MFkwEwYH"}
    )
    assert answer.status == 400 and "ECDSA P-256 public key" in answer.json()["detail"]


def test_a_meta_source_without_a_verify_token_is_refused(mgmt, tenant_id):
    answer = mgmt.post("/v1/sources", {"tenant_id": tenant_id, "scheme": "meta", "secret": "s"})
    assert answer.status == 400 and "verify token" in answer.json()["detail"]


def test_a_discord_source_takes_its_public_key(mgmt, tenant_id):
    answer = mgmt.post(
        "/v1/sources", {"tenant_id": tenant_id, "scheme": "discord", "secret": DISCORD_PUBLIC}
    )
    assert answer.status == 201 and answer.json()["scheme"] == "discord"


def test_sources_schemes_lists_every_scheme_with_what_it_needs(cli):
    # When the schemes are listed
    code, out, _ = cli("sources", "schemes", "--json")
    rows = {r["scheme"]: r for r in json.loads(out)}
    # Then there are at least 40, each saying what its material is, with its handshake
    assert code == 0 and len(rows) >= 40
    assert "public key" in rows["discord"]["needs"]
    assert rows["slack"]["handshake"].startswith("POST url_verification")
    assert "verify token" in rows["meta"]["handshake"]


def test_sources_add_takes_two_secrets_and_a_verify_token(cli, tenant_id, mgmt):
    # When a Meta source is added with a verify token and two secrets (a rotation)
    code, out, err = cli(
        "sources", "add", "--tenant", tenant_id, "--scheme", "meta", "--secret", "old",
        "--secret", "new", "--verify-token", "vt", "--json",
    )  # fmt: skip
    # Then it is created with the verify token among its options
    assert code == 0, err
    created = json.loads(out)
    assert created["options"] == {"verify_token": "vt"}


def test_a_sources_status_shows_handshakes_and_rejections(mgmt, tenant_id, api):
    # Given a Meta source, one answered handshake and one with a wrong token
    created = mgmt.post(
        "/v1/sources",
        {"tenant_id": tenant_id, "scheme": "meta", "secret": "s", "options": {"verify_token": "v"}},
    ).json()
    from hookline_dev.local.apigw import LocalContext, build_rest_event

    for token in ("v", "wrong"):
        query = f"hub.mode=subscribe&hub.verify_token={token}&hub.challenge=42"
        api.handler(build_rest_event("GET", created["path"], {}, b"", query=query), LocalContext())
    # When its status is read
    activity = mgmt.get(f"/v1/sources/{created['id']}").json()["activity"]
    # Then both are counted
    assert activity["handshakes"] == 1 and activity["last_handshake_kind"] == "subscribe"
    assert activity["rejected"] == {"HandshakeRefused": 1}
    assert activity["last_received_at"] == activity["last_rejected_at"]
