"""An endpoint's OAuth2 client, TLS material and signing scheme through the management API
(decision 0067): set once, the secret parts never shown again, bad input a 400 naming the
field, and the audit log keeping neither the client secret nor the key."""

from __future__ import annotations

import json

import pytest

from tests.support.endpoint_auth import TestCA

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"
PUBLIC_TOKEN_URL = "https://93.184.216.34/oauth/token"
CLIENT_SECRET = "client-secret-never-shown"


def tenant_id(mgmt) -> str:
    result = mgmt.post("/v1/tenants", {"name": "bank"})
    assert result.status == 201, result.body
    return str(result.json()["id"])


def oauth2(token_url: str = PUBLIC_TOKEN_URL) -> dict[str, str]:
    return {"type": "oauth2_client_credentials", "token_url": token_url,
            "client_id": "hookline", "client_secret": CLIENT_SECRET}  # fmt: skip


def test_the_client_secret_and_key_are_set_once_and_never_shown(mgmt, db):
    # Given a client certificate from a private CA
    ca = TestCA()
    client = ca.issue("hookline-client", server=False, days=30)
    tls = {"client_certificate": client.certificate, "client_key": client.key, "ca_bundle": ca.pem}
    # When an endpoint is created with OAuth2, mutual TLS and Ed25519 signing, then read
    created = mgmt.post(
        "/v1/endpoints",
        {"tenant_id": tenant_id(mgmt), "url": PUBLIC_URL, "auth": oauth2(), "tls": tls,
         "signing": "ed25519"},
    )  # fmt: skip
    assert created.status == 201, created.body
    endpoint = created.json()
    read = mgmt.get(f"/v1/endpoints/{endpoint['id']}")
    # Then neither answer holds the client secret, the key or a private signing key; they
    # say that a secret and a certificate are set, when it expires, and the public key
    for answer in (created, read):
        text = answer.body.decode()
        assert CLIENT_SECRET not in text and "PRIVATE KEY" not in text and "whsk_" not in text
    shown = read.json()
    assert shown["auth"] == {
        "type": "oauth2_client_credentials", "token_url": PUBLIC_TOKEN_URL,
        "client_id": "hookline", "scope": None, "audience": None, "has_client_secret": True,
    }  # fmt: skip
    assert shown["tls"]["has_client_certificate"] and shown["tls"]["has_ca_bundle"]
    assert shown["tls"]["certificate_expires_at"].startswith(client.not_after.date().isoformat())
    assert shown["signing"] == "ed25519" and endpoint["secret"] is None
    assert [k[:5] for k in shown["public_keys"]] == ["whpk_"]
    # And the audit log kept neither
    with db.connection() as conn:
        audit = json.dumps(conn.execute("SELECT * FROM audit_log").fetchall(), default=str)
    assert CLIENT_SECRET not in audit and "PRIVATE KEY" not in audit
    # When the TLS material is cleared and the rotation of the key pair asked for
    cleared = mgmt.patch(f"/v1/endpoints/{endpoint['id']}", {"clear_tls": True})
    rotated = mgmt.post(f"/v1/endpoints/{endpoint['id']}/rotate-secret")
    # Then the endpoint has no TLS, and two public keys sign during the overlap
    assert cleared.status == 200 and cleared.json()["tls"] is None, cleared.body
    assert rotated.status == 200, rotated.body
    assert rotated.json()["secret"] is None and rotated.json()["public_key"].startswith("whpk_")
    keys = mgmt.get(f"/v1/endpoints/{endpoint['id']}").json()["public_keys"]
    assert keys == [rotated.json()["public_key"], shown["public_keys"][0]]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"auth": oauth2("https://127.0.0.1/token")}, "auth.token_url: token URL must resolve"),
        ({"auth": oauth2("http://93.184.216.34/token")}, "auth.token_url: token URL must use"),
        ({"tls": {"client_certificate": "-----BEGIN CERTIFICATE-----\nnope\n"
                  "-----END CERTIFICATE-----\n", "client_key": "x"}},
         "tls.client_certificate: not a PEM certificate"),
        ({"tls": {"ca_bundle": "not pem"}}, "tls.ca_bundle: not a PEM certificate"),
        ("mismatched", "tls.client_key: does not match the client certificate"),
        ({"tls": {"client_key": "only a key"}}, "tls.client_certificate: a client certificate"),
        ({"signing": "rsa"}, "signing"),
    ],
)  # fmt: skip
def test_bad_auth_input_is_a_400_naming_the_field(mgmt, fields, named):
    # Given an endpoint body with one bad part (a key of another certificate, for "mismatched")
    if fields == "mismatched":
        ca = TestCA()
        one, other = ca.issue("one", server=False), ca.issue("other", server=False)
        fields = {"tls": {"client_certificate": one.certificate, "client_key": other.key}}
    # When it is created
    answer = mgmt.post("/v1/endpoints", {"tenant_id": tenant_id(mgmt), "url": PUBLIC_URL, **fields})
    # Then it is refused with a 400 that names the field, and nothing was stored
    assert answer.status in (400, 422), answer.body
    assert named in answer.body.decode()
    assert mgmt.get("/v1/endpoints").json()["items"] == []
