"""Outbound signatures verify with a Standard Webhooks verifier written from the spec."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from hookline.signing import generate_secret, secret_key, sign

pytestmark = pytest.mark.unit

# The published Standard Webhooks test vector.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def receiver_verifies(headers: dict[str, str], body: bytes, secret: str) -> bool:
    """A receiver's verification, written from the Standard Webhooks specification.

    The key is the base64 part of the `whsec_` secret, decoded; the signed
    content is `{webhook-id}.{webhook-timestamp}.{body}`; the header is a
    space-separated list of `v1,<base64 HMAC-SHA256>`, any of which may match.
    """
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    for versioned in headers["webhook-signature"].split(" "):
        version, _, candidate = versioned.partition(",")
        if version == "v1" and hmac.compare_digest(candidate, expected):
            return True
    return False


def test_the_published_test_vector_is_reproduced_exactly() -> None:
    # Given the specification's secret, id, timestamp and body
    # When Hookline signs them
    headers = sign(SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY, [SPEC_SECRET])
    # Then the signature is the one every Standard Webhooks library expects
    assert headers == {
        "webhook-id": SPEC_ID,
        "webhook-timestamp": str(SPEC_TIMESTAMP),
        "webhook-signature": SPEC_SIGNATURE,
    }


def test_a_receiver_verifies_a_signed_delivery() -> None:
    # Given an endpoint with a freshly generated secret
    secret = generate_secret()
    body = b'{"type":"invoice.paid","data":{"id":"in_1"}}'
    # When a delivery is signed
    headers = sign("msg_2bXqA", 1_700_000_000, body, [secret])
    # Then the receiver, knowing the secret, accepts it
    assert receiver_verifies(headers, body, secret)


def test_a_tampered_body_or_timestamp_does_not_verify() -> None:
    # Given a signed delivery
    secret = generate_secret()
    headers = sign("msg_1", 1_700_000_000, b'{"amount":100}', [secret])
    # When an attacker changes the body or replays it with a new timestamp
    replayed = {**headers, "webhook-timestamp": "1700009999"}
    # Then the receiver refuses both
    assert not receiver_verifies(headers, b'{"amount":999}', secret)
    assert not receiver_verifies(replayed, b'{"amount":100}', secret)


def test_during_rotation_both_the_new_and_the_old_secret_verify() -> None:
    # Given an endpoint rotating from an old secret to a new one
    old, new = generate_secret(), generate_secret()
    body = b"{}"
    # When a delivery is signed with both active secrets
    headers = sign("msg_rot", 1_700_000_000, body, [new, old])
    # Then the header carries two space-separated v1 signatures
    parts = headers["webhook-signature"].split(" ")
    assert len(parts) == 2
    assert all(p.startswith("v1,") for p in parts)
    # And a receiver that still has the old secret accepts it, as does one with the new
    assert receiver_verifies(headers, body, old)
    assert receiver_verifies(headers, body, new)
    # And a stranger's secret does not
    assert not receiver_verifies(headers, body, generate_secret())


def test_the_same_secret_listed_twice_signs_once() -> None:
    secret = generate_secret()
    headers = sign("msg_1", 1, b"x", [secret, secret])
    assert " " not in headers["webhook-signature"]


def test_generated_secrets_are_whsec_32_random_bytes() -> None:
    # When two secrets are generated
    first, second = generate_secret(), generate_secret()
    # Then each is whsec_ plus 32 bytes of base64, and they differ
    assert first.startswith("whsec_")
    assert len(base64.b64decode(first.removeprefix("whsec_"), validate=True)) == 32
    assert secret_key(first) == base64.b64decode(first.removeprefix("whsec_"))
    assert first != second


@pytest.mark.parametrize(
    "malformed",
    [
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",  # no prefix
        "whsec_",  # nothing after it
        "whsec_not base64!!",
        "whsec_" + base64.b64encode(b"short").decode(),  # 5 bytes, far too short for a key
        "whsec_" + base64.b64encode(b"x" * 65).decode(),  # longer than the spec allows
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",  # truncated: bad padding
    ],
)
def test_a_malformed_secret_is_refused_without_repeating_it(malformed: str) -> None:
    # When a malformed secret is used
    with pytest.raises(ValueError) as refused:
        secret_key(malformed)
    # Then the error says what is wrong but never contains the secret itself
    message = str(refused.value)
    assert "signing secret" in message
    body = malformed.removeprefix("whsec_")
    if body:
        assert body not in message


def test_signing_needs_at_least_one_secret_and_an_id() -> None:
    with pytest.raises(ValueError, match="at least one"):
        sign("msg_1", 1, b"", [])
    with pytest.raises(ValueError, match="message id"):
        sign("", 1, b"", [generate_secret()])
    with pytest.raises(TypeError):
        sign("msg_1", 1, b"", generate_secret())  # one string, not a list of secrets


def test_an_ed25519_key_signs_v1a_that_pynacl_verifies_with_the_public_key() -> None:
    # Given an Ed25519 signing key and its public key
    from nacl.signing import VerifyKey

    from hookline.signing import generate_signing_key, public_key

    key = generate_signing_key()
    public = public_key(key)
    body = b'{"type":"invoice.paid"}'
    # When a message is signed with it
    headers = sign("msg_ed", 1_700_000_000, body, [key])
    # Then the signature is `v1a,<base64>` and libsodium verifies it over "{id}.{ts}.{body}"
    version, _, encoded = headers["webhook-signature"].partition(",")
    assert version == "v1a" and key.startswith("whsk_") and public.startswith("whpk_")
    verifier = VerifyKey(base64.b64decode(public.removeprefix("whpk_")))
    assert verifier.verify(b"msg_ed.1700000000." + body, base64.b64decode(encoded))


def test_during_a_rotation_an_hmac_secret_and_an_ed25519_key_both_sign() -> None:
    # Given the secrets of an endpoint moving from HMAC to Ed25519
    from hookline.signing import generate_signing_key

    secret, key = generate_secret(), generate_signing_key()
    # When a message is signed
    headers = sign("msg_mix", 1_700_000_000, b"{}", [key, secret])
    # Then both signatures are there, space-separated, and the HMAC one still verifies
    assert [s.split(",")[0] for s in headers["webhook-signature"].split(" ")] == ["v1a", "v1"]
    assert receiver_verifies(headers, b"{}", secret)
