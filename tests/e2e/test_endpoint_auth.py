"""Endpoint auth through a real `hookline dev` (decision 0067): one endpoint that wants an
OAuth2 bearer token, a client certificate from its private CA, and Ed25519 signatures."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.conftest import Stack, wait_until
from tests.support.endpoint_auth import CLIENT_ID, CLIENT_SECRET, TestCA, serve_mtls, token_server
from tests.support.signers import verify_ed25519
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e


def test_a_bank_endpoint_gets_a_token_a_client_certificate_and_v1a_signatures(
    stack: Stack, tmp_path
) -> None:
    # Given an HTTPS receiver requiring a client certificate from its CA, its token server,
    # and an endpoint set up with all three
    ca = TestCA()
    client = ca.issue("hookline-client", server=False)
    receiver = serve_mtls(Sink(), ca, tmp_path)
    with token_server() as tokens:
        try:
            tenant = stack.tenant(name="bank")
            endpoint = stack.endpoint(
                tenant,
                receiver.url("/bank"),
                signing="ed25519",
                auth={"type": "oauth2_client_credentials", "token_url": tokens.url,
                      "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
                tls={"client_certificate": client.certificate, "client_key": client.key,
                     "ca_bundle": ca.pem},
            )  # fmt: skip
            # When two events are published through the stack's front
            ids = []
            for n in range(2):
                answer = httpx.post(
                    f"{stack.url}/v1/events",
                    json={"tenant_id": tenant, "type": "payment.settled", "payload": {"n": n}},
                    headers=stack.auth,
                )
                assert answer.status_code == 200, answer.text
                ids.append(answer.json()["id"])
            # Then both arrive over mutual TLS, with the one token, signed v1a
            for event_id in ids:
                wait_until(
                    lambda e=event_id: (
                        [d["state"] for d in stack.deliveries(event_id=e)] == ["delivered"]
                    ),
                    timeout=30,
                    what=f"{event_id} delivered",
                )
        finally:
            receiver.stop()
    received = receiver.requests("/bank")
    assert len(received) == 2 and len(tokens.requests) == 1
    for request in received:
        assert request.headers["authorization"] == "Bearer tok-1"
        assert verify_ed25519(endpoint["public_keys"], request.headers, request.body)
