"""Signing, OAuth2 and mutual TLS set through the endpoint forms in Chromium (decision 0067):
the console's and the portal's add forms choose Ed25519 (`v1a`) and take an OAuth2 client and
TLS material; the endpoint's page shows the public key, never a private key or a secret; the
edit forms show the scheme and take the OAuth2 and TLS parts."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import Watched
from tests.browser.test_portal import PUBLIC, link, open_portal
from tests.e2e.conftest import Stack, wait_until
from tests.support.endpoint_auth import CLIENT_ID, CLIENT_SECRET, TestCA, serve_mtls, token_server
from tests.support.signers import verify_ed25519
from tests.support.sinks import Sink

pytestmark = pytest.mark.browser

WHPK = re.compile(r"^whpk_[A-Za-z0-9+/=]+$")


def never_shown(html: str, *secrets: str) -> None:
    """No private signing key, client key or client secret in a page."""
    assert "whsk_" not in html and "PRIVATE KEY" not in html
    for secret in secrets:
        assert secret not in html


def test_an_operator_adds_an_ed25519_endpoint_with_oauth2_and_mtls_whose_delivery_verifies(
    page: Watched, stack: Stack, tmp_path: Path
) -> None:
    # Given a receiver that requires a client certificate from its CA, its token server, and
    # the console's endpoints page
    ca = TestCA()
    client = ca.issue("hookline-client", server=False)
    receiver = serve_mtls(Sink(), ca, tmp_path)
    tenant = stack.tenant(name=f"Bank-{uuid.uuid4().hex[:6]}")
    p = page.page
    with token_server() as tokens:
        try:
            p.goto("/console/endpoints")
            # When the operator adds an endpoint choosing Ed25519, an OAuth2 client and TLS
            p.get_by_label("Tenant").select_option(tenant)
            p.get_by_label("URL").fill(receiver.url("/bank"))
            p.get_by_role("radio", name=re.compile("^Ed25519")).check()
            p.get_by_label("Token endpoint (https)").fill(tokens.url)
            p.get_by_label("Client id", exact=True).fill(CLIENT_ID)
            p.get_by_label("Client secret", exact=True).fill(CLIENT_SECRET)
            p.get_by_label("Client certificate", exact=True).fill(client.certificate)
            p.get_by_label("Client key (unencrypted)").fill(client.key)
            p.get_by_label("CA bundle").fill(ca.pem)
            p.get_by_role("button", name="Add endpoint").click()
            # Then its public key is shown, and no secret or private key
            shown_key = p.locator("#public-key").inner_text()
            assert WHPK.match(shown_key) and p.locator("#secret").count() == 0
            never_shown(p.content(), CLIENT_SECRET)
            # And the endpoint's page shows the scheme, that key, the client and the certificate
            p.get_by_role("link", name=receiver.url("/bank")).click()
            assert p.locator("#signing").inner_text() == "Ed25519 (v1a)"
            assert p.locator("#public-keys").inner_text().strip() == shown_key
            assert p.locator("#oauth2").inner_text() == f"client {CLIENT_ID} at {tokens.url}"
            assert p.locator("#tls").inner_text().startswith("CN=hookline-client, expires 20")
            never_shown(p.content(), CLIENT_SECRET)
            # When they send it a test event
            p.get_by_role("button", name="Send a test event").click()
            p.get_by_role("status").filter(has_text="test event").wait_for()
            [request] = wait_until(
                lambda: receiver.requests("/bank"), timeout=30, what="the test event"
            )
        finally:
            receiver.stop()
    # Then it arrived over mutual TLS with the token, signed v1a: PyNaCl verifies it with the
    # public key the page showed
    assert request.headers["authorization"] == "Bearer tok-1"
    assert request.headers["webhook-signature"].startswith("v1a,")
    assert verify_ed25519([shown_key], request.headers, request.body) == [shown_key]
    assert not page.errors and not page.csp_violations


def test_a_customer_adds_an_ed25519_endpoint_with_oauth2_and_tls_in_the_portal(
    page: Watched, stack: Stack
) -> None:
    # Given a tenant's customer on their portal, with a client certificate for their receiver
    ca = TestCA()
    client = ca.issue("portal-client", server=False)
    tenant = stack.tenant(name="Portal Bank")
    p = page.page
    open_portal(p, link(stack, tenant))
    p.get_by_role("heading", name="Your endpoints").wait_for()

    def fill(token_url: str) -> None:
        p.get_by_label("URL").fill(PUBLIC)
        p.get_by_role("radio", name=re.compile("^Ed25519")).check()
        p.get_by_label("Token endpoint (https)").fill(token_url)
        p.get_by_label("Client id", exact=True).fill("portal-client")
        p.get_by_label("Client secret", exact=True).fill("portal-never-shows")
        p.get_by_label("Client certificate", exact=True).fill(client.certificate)
        p.get_by_label("Client key (unencrypted)").fill(client.key)
        p.get_by_role("button", name="Add endpoint").click()

    # When they give a token URL on a private address, it is refused next to the OAuth2 part,
    # the Ed25519 choice is kept, and nothing is saved
    fill("https://10.0.0.7/token")
    error = p.locator("#auth-error")
    assert error.inner_text().startswith("auth.token_url: token URL must resolve")
    assert p.get_by_label("Token endpoint (https)").get_attribute("aria-invalid") == "true"
    assert p.get_by_role("radio", name=re.compile("^Ed25519")).is_checked()
    assert p.locator("#url-error").count() == 0
    never_shown(p.content(), "portal-never-shows")
    assert stack.query("SELECT id FROM endpoints WHERE tenant_id = %s", tenant) == []
    # When they give a public one, the endpoint is added and its public key shown
    fill("https://93.184.215.14/token")
    shown_key = p.locator("#public-key").inner_text()
    assert WHPK.match(shown_key)
    never_shown(p.content(), "portal-never-shows")
    # Then the endpoint's page and the API agree: Ed25519 under that key, the client, the
    # certificate; no page shows a private key or the client secret
    p.get_by_role("link", name=PUBLIC).click()
    assert p.locator("#signing").inner_text() == "Ed25519 (v1a)"
    assert p.locator("#public-keys").inner_text().strip() == shown_key
    oauth2 = p.locator("#oauth2").inner_text()
    assert oauth2 == "client portal-client at https://93.184.215.14/token"
    assert p.locator("#tls").inner_text().startswith("CN=portal-client, expires 20")
    never_shown(p.content(), "portal-never-shows")
    endpoint_id = p.url.rsplit("/", 1)[1]
    stored = httpx.get(f"{stack.url}/v1/endpoints/{endpoint_id}", headers=stack.auth).json()
    assert (stored["signing"], stored["public_keys"]) == ("ed25519", [shown_key])
    assert stored["auth"]["client_id"] == "portal-client" and stored["tls"]
    # And its edit form names the scheme and offers the OAuth2 and TLS parts, empty
    p.get_by_role("link", name="Edit this endpoint").click()
    assert p.locator("#signing-now").inner_text().startswith("Ed25519 (v1a)")
    assert p.get_by_role("radio").count() == 0
    assert p.get_by_label("Client secret", exact=True).input_value() == ""
    assert p.get_by_label("Client key (unencrypted)").input_value() == ""
    never_shown(p.content(), "portal-never-shows")
    assert not page.errors and not page.csp_violations


def test_the_console_edit_form_sets_oauth2_and_tls_on_an_hmac_endpoint(
    page: Watched, stack: Stack
) -> None:
    # Given an HMAC endpoint, on the console's edit form
    ca = TestCA()
    client = ca.issue("edited-client", server=False)
    tenant = stack.tenant(name=f"Edit-{uuid.uuid4().hex[:6]}")
    endpoint = stack.endpoint(tenant, PUBLIC)
    p = page.page
    p.goto(f"/console/endpoints/{endpoint['id']}/edit")
    assert p.locator("#signing-now").inner_text().startswith("HMAC (v1)")
    # When the operator gives an OAuth2 client and a client certificate with its key
    p.get_by_label("Token endpoint (https)").fill("https://93.184.215.14/token")
    p.get_by_label("Client id", exact=True).fill("edited")
    p.get_by_label("Client secret", exact=True).fill("console-never-shows")
    p.get_by_label("Client certificate", exact=True).fill(client.certificate)
    p.get_by_label("Client key (unencrypted)").fill(client.key)
    p.get_by_role("button", name="Save changes").click()
    # Then the endpoint's page shows both, and neither the secret nor the key
    p.get_by_role("status").filter(has_text="saved").wait_for()
    assert p.locator("#signing").inner_text() == "HMAC (v1)"
    assert p.locator("#oauth2").inner_text() == "client edited at https://93.184.215.14/token"
    assert p.locator("#tls").inner_text().startswith("CN=edited-client, expires 20")
    never_shown(p.content(), "console-never-shows")
    assert not page.errors and not page.csp_violations
