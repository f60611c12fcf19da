"""Every registry provider, signed as the provider signs (tests/support/provider_signers.py):
valid, tampered, wrong secret, stale timestamp; the event type and dedupe key it routes by."""

from __future__ import annotations

import pytest

from hookline.errors import VerificationFailed
from hookline.verifiers import SourceConfig, Verifier
from hookline.verifiers.providers import ENTRIES
from hookline.verifiers.schemes import SCHEMES
from tests.support.provider_signers import CASES, UNSIGNED_BODY, Case, body_of, digest

NOW = 1_700_000_000
pytestmark = pytest.mark.unit


def verifier(case: Case, secret: str | None = None) -> Verifier:
    from hookline.verifiers.base import RequestContext
    from tests.support.provider_signers import URL

    cls = SCHEMES[case.scheme]
    v = cls(SourceConfig([secret or case.secret], 300, case.options or {}), clock=lambda: NOW)
    v.context = RequestContext("POST", {}, URL)
    return v


def request(case: Case, secret: str, ts: int = NOW) -> tuple[dict[str, str], bytes]:
    body = body_of(case, secret, ts)
    return case.sign(secret, body, ts), body


def test_every_entry_has_a_signed_case() -> None:
    # Given the registry / When its schemes are listed / Then each has a provider test case
    # (SNS needs its certificate server: tests/integration/test_receiver_sns.py)
    assert {e.scheme for e in ENTRIES} - {"sns"} == {c.scheme for c in CASES}
    assert len(SCHEMES) >= 40


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.scheme)
def test_a_request_signed_by_the_provider_verifies_and_routes(case: Case) -> None:
    # Given a request the provider signed
    headers, body = request(case, case.secret)
    # When it is verified
    verified = verifier(case).verify(headers, body)
    # Then it is typed and keyed by the provider's own type and id
    assert verified.event_type == case.event_type
    assert verified.dedupe_key == (case.dedupe_key or digest(body))


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.scheme not in UNSIGNED_BODY], ids=lambda c: c.scheme
)
def test_a_tampered_body_is_refused(case: Case) -> None:
    # Given a signed request whose body changed on the way
    headers, body = request(case, case.secret)
    tampered = body.replace(b"}", b',"x":1}', 1) if b"}" in body else body + b"&x=1"
    # When / Then it does not verify
    with pytest.raises(VerificationFailed):
        verifier(case).verify(headers, tampered)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.scheme)
def test_a_request_signed_with_another_secret_is_refused(case: Case) -> None:
    # Given a signed request, and a source holding another secret (or public key)
    headers, body = request(case, case.secret)
    # When / Then it does not verify
    with pytest.raises(VerificationFailed):
        verifier(case, case.wrong).verify(headers, body)


@pytest.mark.parametrize("case", [c for c in CASES if c.timed], ids=lambda c: c.scheme)
def test_a_stale_timestamp_is_refused(case: Case) -> None:
    # Given a correctly signed request from ten minutes ago
    headers, body = request(case, case.secret, NOW - 600)
    # When / Then it is outside the tolerance
    with pytest.raises(VerificationFailed):
        verifier(case).verify(headers, body)


@pytest.mark.parametrize(
    ("scheme", "secret", "reason"),
    [
        ("discord", "whsec_not-a-public-key", "Ed25519 public key"),
        ("discord", "ab" * 31, "Ed25519 public key"),
        ("sendgrid", "a-shared-secret", "ECDSA P-256 public key"),
        ("airtable", "not base64!", "base64"),
        ("meta", "app-secret", "verify token"),
    ],
)
def test_material_a_scheme_cannot_use_is_refused_with_the_reason(
    scheme: str, secret: str, reason: str
) -> None:
    # Given a source created with material its scheme cannot use
    # When / Then the verifier refuses it, saying why
    with pytest.raises(ValueError, match=reason):
        SCHEMES[scheme](SourceConfig([secret], 300, {}))


def test_standard_webhooks_aliases_verify_like_their_scheme() -> None:
    # Given Clerk (a Svix sender) signing with the standardwebhooks SDK
    import base64

    from standardwebhooks.webhooks import Webhook

    secret = "whsec_" + base64.b64encode(b"k" * 24).decode()
    body = b'{"type":"user.created","data":{}}'
    from datetime import UTC, datetime

    stamp = datetime.fromtimestamp(NOW, UTC)
    signature = Webhook(secret).sign("msg_1", stamp, body.decode())
    headers = {"svix-id": "msg_1", "svix-timestamp": str(NOW), "svix-signature": signature}
    # When a clerk source verifies it
    verified = SCHEMES["clerk"](SourceConfig([secret]), clock=lambda: NOW).verify(headers, body)
    # Then it is typed and keyed by the message id
    assert (verified.event_type, verified.dedupe_key) == ("user.created", "msg_1")
