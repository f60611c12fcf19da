"""Inbound signature verifiers, fed requests signed the way each provider documents.

The signatures are made by the small signers in tests/support/providers.py, written from
the providers' specs (Standard Webhooks, Stripe, GitHub, Shopify, Slack, Razorpay) with
plain hmac, hashlib and base64, never by the code under test.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any
from urllib.parse import urlencode

import pytest

from hookline.errors import BadRequest, UnsupportedMediaType, VerificationFailed
from hookline.verifiers import SourceConfig, verifier_for
from hookline.verifiers.schemes import SCHEMES
from tests.support.providers import (
    BODY,
    FORM_TYPE,
    JSON_TYPE,
    MSG_ID,
    NOW,
    PROVIDERS,
    TIMED,
    TOLERANCE,
    WITH_TIMESTAMP_HEADER,
    Provider,
    hmac_b64,
    hmac_hex,
    sign_github,
    sign_plain_hmac,
    sign_razorpay,
    sign_shopify,
    sign_slack,
    sign_standard,
    sign_stripe,
    sign_timed_hmac,
    standard_signature,
    stripe_signature,
)

pytestmark = pytest.mark.unit


def by_name(providers: list[Provider]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("provider", providers, ids=[p.name for p in providers])


@by_name(PROVIDERS)
def test_a_request_signed_with_the_source_secret_is_accepted(provider: Provider) -> None:
    # Given a request signed by the provider with the source's secret
    headers = provider.sign(provider.secret, BODY, NOW)

    # When it is verified
    verified = provider.verifier().verify(headers, BODY)

    # Then it passes, with the JSON payload parsed
    assert verified.payload == json.loads(BODY)


@by_name(PROVIDERS)
def test_a_body_changed_after_signing_is_rejected(provider: Provider) -> None:
    # Given a signed request whose body was re-serialised on the way (one space removed)
    headers = provider.sign(provider.secret, BODY, NOW)
    tampered = BODY.replace(b'"id": ', b'"id":')

    # When / Then it fails verification
    with pytest.raises(VerificationFailed):
        provider.verifier().verify(headers, tampered)


@by_name(PROVIDERS)
def test_a_request_signed_with_another_secret_is_rejected(provider: Provider) -> None:
    # Given a request signed with a secret the source does not have
    headers = provider.sign(provider.old_secret, BODY, NOW)

    # When / Then it fails, and the error names neither the secret nor the right signature
    with pytest.raises(VerificationFailed) as caught:
        provider.verifier(provider.secret).verify(headers, BODY)
    expected = provider.sign(provider.secret, BODY, NOW)[provider.signature_header]
    assert provider.secret not in str(caught.value)
    assert expected not in str(caught.value)


@by_name(PROVIDERS)
def test_during_rotation_either_secret_verifies(provider: Provider) -> None:
    # Given a source rotating from its old secret to a new one
    verifier = provider.verifier(provider.secret, provider.old_secret)

    # When requests arrive signed with the new secret and with the old one
    signed_new = provider.sign(provider.secret, BODY, NOW)
    signed_old = provider.sign(provider.old_secret, BODY, NOW)

    # Then both pass
    assert verifier.verify(signed_new, BODY).payload == json.loads(BODY)
    assert verifier.verify(signed_old, BODY).payload == json.loads(BODY)


@by_name(PROVIDERS)
def test_a_request_without_a_signature_is_rejected(provider: Provider) -> None:
    # Given a request with every header but the signature
    headers = provider.sign(provider.secret, BODY, NOW)
    del headers[provider.signature_header]

    # When / Then it fails, naming the missing header
    with pytest.raises(VerificationFailed, match=r"(?i)missing"):
        provider.verifier().verify(headers, BODY)


@by_name(PROVIDERS)
@pytest.mark.parametrize("garbage", ["not a signature", "v1=zz,t=", "é", "sha256=" + "g" * 64])
def test_a_malformed_signature_header_is_rejected(provider: Provider, garbage: str) -> None:
    # Given a request whose signature header is not in the provider's format
    headers = provider.sign(provider.secret, BODY, NOW)
    headers[provider.signature_header] = garbage

    # When / Then it fails verification (never an unexpected exception)
    with pytest.raises(VerificationFailed):
        provider.verifier().verify(headers, BODY)


@by_name(PROVIDERS)
def test_header_names_are_matched_whatever_their_case(provider: Provider) -> None:
    # Given a signed request whose header names were lower- or upper-cased by a proxy
    headers = provider.sign(provider.secret, BODY, NOW)

    # When it is verified either way
    lowered = provider.verifier().verify({k.lower(): v for k, v in headers.items()}, BODY)
    raised = provider.verifier().verify({k.upper(): v for k, v in headers.items()}, BODY)

    # Then both pass and learn the same thing
    assert lowered == raised


@by_name(PROVIDERS)
def test_a_body_declared_as_plain_text_is_refused_as_unsupported(provider: Provider) -> None:
    # Given a validly signed request declared as text/plain
    headers = {**provider.sign(provider.secret, BODY, NOW), "Content-Type": "text/plain"}

    # When / Then it is refused with 415, before the signature is even looked at
    with pytest.raises(UnsupportedMediaType):
        provider.verifier().verify(headers, BODY)


@by_name(PROVIDERS)
def test_a_signed_body_that_is_not_json_is_a_bad_request(provider: Provider) -> None:
    # Given a request correctly signed over a body that is not JSON
    body = b"<xml>not json</xml>"
    headers = provider.sign(provider.secret, body, NOW)

    # When / Then it is a 400, not a 401 and not a crash
    with pytest.raises(BadRequest):
        provider.verifier().verify(headers, body)


@by_name(PROVIDERS)
def test_an_unsigned_body_that_is_not_json_is_rejected_as_unverified(provider: Provider) -> None:
    # Given a forged request with a malformed body
    body = b"<xml>not json</xml>"
    headers = provider.sign(provider.old_secret, body, NOW)

    # When / Then the caller learns only that the signature is bad (401, not 400)
    with pytest.raises(VerificationFailed):
        provider.verifier().verify(headers, body)


@by_name(PROVIDERS)
def test_a_deeply_nested_signed_body_is_a_bad_request_not_a_crash(provider: Provider) -> None:
    # Given a signed body nested deeper than any JSON parser recurses
    body = b"[" * 200_000 + b"]" * 200_000
    headers = provider.sign(provider.secret, body, NOW)

    # When / Then it is a 400
    with pytest.raises(BadRequest):
        provider.verifier().verify(headers, body)


# --- timestamps -------------------------------------------------------------------------


@by_name(TIMED)
@pytest.mark.parametrize("offset", [-TOLERANCE - 1, TOLERANCE + 1], ids=["stale", "future"])
def test_a_timestamp_outside_the_tolerance_is_rejected(provider: Provider, offset: int) -> None:
    # Given a request correctly signed, but too long ago or too far ahead of our clock
    headers = provider.sign(provider.secret, BODY, NOW + offset)

    # When / Then it fails as a possible replay
    with pytest.raises(VerificationFailed, match="tolerance"):
        provider.verifier().verify(headers, BODY)


@by_name(TIMED)
@pytest.mark.parametrize("offset", [-TOLERANCE, TOLERANCE], ids=["oldest", "newest"])
def test_a_timestamp_at_the_edge_of_the_tolerance_is_accepted(
    provider: Provider, offset: int
) -> None:
    # Given a request signed exactly at the edge of the tolerance (clock skew either way)
    headers = provider.sign(provider.secret, BODY, NOW + offset)

    # When / Then it passes
    assert provider.verifier().verify(headers, BODY).payload == json.loads(BODY)


@by_name(WITH_TIMESTAMP_HEADER)
def test_a_replay_with_a_refreshed_timestamp_is_rejected(provider: Provider) -> None:
    # Given a captured request, replayed later with its timestamp header set to now
    headers = provider.sign(provider.secret, BODY, NOW - 3600)
    headers[provider.timestamp_header or ""] = str(NOW)

    # When / Then the signature no longer matches
    with pytest.raises(VerificationFailed, match="signature"):
        provider.verifier().verify(headers, BODY)


@by_name(WITH_TIMESTAMP_HEADER)
@pytest.mark.parametrize(
    "timestamp",
    [None, "", "yesterday", "1.7e9", "\uff11\uff17" + "\uff10" * 8, "9" * 400, "17000 00000"],
    ids=["missing", "empty", "word", "float", "fullwidth-digits", "huge", "spaced"],
)
def test_a_missing_or_malformed_timestamp_is_rejected(
    provider: Provider, timestamp: str | None
) -> None:
    # Given a signed request whose timestamp header is absent or not unix seconds
    headers = provider.sign(provider.secret, BODY, NOW)
    header = provider.timestamp_header or ""
    if timestamp is None:
        del headers[header]
    else:
        headers[header] = timestamp

    # When / Then it fails verification (never a ValueError or OverflowError)
    with pytest.raises(VerificationFailed):
        provider.verifier().verify(headers, BODY)


# --- Standard Webhooks and Svix ---------------------------------------------------------

STANDARD = PROVIDERS[0]
SVIX = PROVIDERS[1]
USER_CREATED = b'{"type":"user.created","timestamp":"2023-11-14T22:13:20Z","data":{"id":"u_1"}}'


@pytest.mark.parametrize("provider", [STANDARD, SVIX], ids=["standard", "svix"])
def test_standard_accepts_one_valid_signature_among_several_versions(provider: Provider) -> None:
    # Given a signature header listing a stale v1, an asymmetric v1a and the right v1
    prefix = "webhook" if provider is STANDARD else "svix"
    headers = provider.sign(provider.secret, USER_CREATED, NOW)
    right = headers[f"{prefix}-signature"]
    wrong = standard_signature(provider.old_secret, MSG_ID, NOW, USER_CREATED)
    headers[f"{prefix}-signature"] = f"{wrong} v1a,{right[3:]} {right}"

    # When it is verified
    verified = provider.verifier().verify(headers, USER_CREATED)

    # Then it passes, keyed by the message id and typed by the payload's type
    assert verified.dedupe_key == MSG_ID
    assert verified.event_type == "user.created"
    assert verified.kept_headers == {f"{prefix}-id": MSG_ID, f"{prefix}-timestamp": str(NOW)}


def test_standard_ignores_a_valid_mac_under_another_version() -> None:
    # Given the right MAC, but labelled v2 (a scheme we do not know)
    headers = STANDARD.sign(STANDARD.secret, USER_CREATED, NOW)
    headers["webhook-signature"] = headers["webhook-signature"].replace("v1,", "v2,")

    # When / Then it is not accepted
    with pytest.raises(VerificationFailed):
        STANDARD.verifier().verify(headers, USER_CREATED)


def test_standard_requires_the_message_id_because_it_is_signed() -> None:
    # Given a signed request without its webhook-id
    headers = STANDARD.sign(STANDARD.secret, USER_CREATED, NOW)
    del headers["webhook-id"]

    # When / Then it fails
    with pytest.raises(VerificationFailed, match="webhook-id"):
        STANDARD.verifier().verify(headers, USER_CREATED)


@pytest.mark.parametrize("prefix", ["webhook", "svix"])
def test_a_message_id_no_sender_could_sign_is_refused_not_a_crash(prefix: str) -> None:
    # Given a signed request whose id header holds a lone surrogate (text that has no UTF-8
    # bytes, so no sender signed it; found by the coverage-guided fuzzer, tests/fuzz)
    provider = STANDARD if prefix == "webhook" else SVIX
    headers = provider.sign(provider.secret, USER_CREATED, NOW)
    headers[f"{prefix}-id"] = "msg_\ud800"

    # When / Then it is unverified (401), not an exception escaping the receiver (a 500)
    with pytest.raises(VerificationFailed, match=f"malformed {prefix}-id header"):
        provider.verifier().verify(headers, USER_CREATED)


def test_a_generic_hmac_signed_id_no_sender_could_sign_is_refused_not_a_crash() -> None:
    options = {"header": "X-Sig", "id_header": "X-Id", "signed_template": "{id}.{body}"}
    verifier = SCHEMES["hmac"](SourceConfig(secrets=["s3cret"], options=options))
    headers = {**JSON_TYPE, "X-Id": "\udfff", "X-Sig": hmac_hex(b"s3cret", b"x." + BODY)}
    with pytest.raises(VerificationFailed, match="malformed X-Id header"):
        verifier.verify(headers, BODY)


def test_standard_accepts_a_secret_given_without_the_whsec_prefix() -> None:
    # Given a source whose secret was pasted as bare base64
    bare = STANDARD.secret.removeprefix("whsec_")
    headers = STANDARD.sign(STANDARD.secret, USER_CREATED, NOW)

    # When / Then requests signed with the whsec_ form pass
    assert STANDARD.verifier(bare).verify(headers, USER_CREATED).event_type == "user.created"


def test_standard_refuses_a_secret_that_is_not_base64_when_the_source_is_saved() -> None:
    # Given a secret that cannot be decoded
    secret = "whsec_not*base64!"

    # When / Then building the verifier says so, without echoing the secret
    with pytest.raises(ValueError, match="base64") as caught:
        verifier_for("standard", SourceConfig(secrets=[secret]))
    assert secret not in str(caught.value)


def test_svix_does_not_accept_unbranded_webhook_headers() -> None:
    # Given a Standard Webhooks request sent to a source configured for Svix
    headers = sign_standard("webhook")(SVIX.secret, USER_CREATED, NOW)

    # When / Then the svix-* headers are missing
    with pytest.raises(VerificationFailed, match="svix-"):
        SVIX.verifier().verify(headers, USER_CREATED)


# --- Stripe ----------------------------------------------------------------------------

STRIPE = PROVIDERS[2]
INVOICE_PAID = b'{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"invoice.paid"}'


def test_stripe_accepts_a_header_with_v0_unknown_keys_and_two_v1_signatures() -> None:
    # Given a header as Stripe sends it while a secret is rolled: two v1 plus a v0
    ours = stripe_signature(STRIPE.secret, NOW, INVOICE_PAID)
    theirs = stripe_signature(STRIPE.old_secret, NOW, INVOICE_PAID)
    header = f"t={NOW},v1={theirs},v1={ours.upper()},v0={'0' * 64},scheme=x"

    # When it is verified
    verified = STRIPE.verifier().verify({"Stripe-Signature": header}, INVOICE_PAID)

    # Then it passes, keyed by the event id and typed by the event type
    assert verified.dedupe_key == "evt_1NG8Du2eZvKYlo2CUI79vXWy"
    assert verified.event_type == "invoice.paid"
    assert verified.kept_headers == {}


@pytest.mark.parametrize(
    "header",
    [
        "v1={sig}",
        "t={now},t={now},v1={sig}",
        "t={now},v0={sig}",
        "t={now},v1={sig}x",
        "t={now};v1={sig}",
        "t=,v1={sig}",
    ],
    ids=["no-t", "two-t", "only-v0", "bad-hex", "wrong-separator", "empty-t"],
)
def test_stripe_rejects_a_malformed_signature_header(header: str) -> None:
    # Given a Stripe-Signature header that does not follow t=…,v1=…
    sig = stripe_signature(STRIPE.secret, NOW, INVOICE_PAID)
    headers = {"Stripe-Signature": header.format(now=NOW, sig=sig)}

    # When / Then it fails verification
    with pytest.raises(VerificationFailed):
        STRIPE.verifier().verify(headers, INVOICE_PAID)


def test_stripe_rejects_a_replay_with_a_refreshed_t() -> None:
    # Given a captured request whose t= was moved to now
    sig = stripe_signature(STRIPE.secret, NOW - 3600, INVOICE_PAID)
    headers = {"Stripe-Signature": f"t={NOW},v1={sig}"}

    # When / Then the signature no longer matches
    with pytest.raises(VerificationFailed, match="signature"):
        STRIPE.verifier().verify(headers, INVOICE_PAID)


def test_stripe_dedupes_on_the_body_digest_when_the_event_has_no_id() -> None:
    # Given a signed event without an id
    body = b'{"type":"invoice.paid"}'

    # When it is verified
    verified = STRIPE.verifier().verify(sign_stripe(STRIPE.secret, body, NOW), body)

    # Then the dedupe key is the body's sha256
    assert verified.dedupe_key == "sha256:" + hashlib.sha256(body).hexdigest()


# --- GitHub ----------------------------------------------------------------------------

GITHUB = PROVIDERS[3]
ISSUE_OPENED = b'{"action":"opened","issue":{"number":1347},"repository":{"id":1296269}}'


def test_github_types_an_event_with_its_action_and_dedupes_on_the_delivery() -> None:
    # Given an issues event with action "opened"
    headers = sign_github(GITHUB.secret, ISSUE_OPENED, NOW)

    # When it is verified
    verified = GITHUB.verifier().verify(headers, ISSUE_OPENED)

    # Then its type is issues.opened, keyed by the delivery, with GitHub's headers kept
    assert verified.event_type == "issues.opened"
    assert verified.dedupe_key == "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    assert verified.kept_headers == {
        "x-github-event": "issues",
        "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "x-github-hook-id": "292430182",
    }


def test_github_types_an_event_without_action_by_the_event_header_alone() -> None:
    # Given a push event (no action) without a delivery id
    body = b'{"ref":"refs/heads/main","action":{"not":"a string"}}'
    headers = {**sign_github(GITHUB.secret, body, NOW), "X-GitHub-Event": "push"}
    del headers["X-GitHub-Delivery"]

    # When it is verified
    verified = GITHUB.verifier().verify(headers, body)

    # Then its type is push and it dedupes on the body digest
    assert verified.event_type == "push"
    assert verified.dedupe_key == "sha256:" + hashlib.sha256(body).hexdigest()


def test_github_accepts_a_form_encoded_payload() -> None:
    # Given a webhook configured as application/x-www-form-urlencoded
    body = urlencode({"payload": ISSUE_OPENED.decode()}).encode()
    headers = {**sign_github(GITHUB.secret, body, NOW), **FORM_TYPE}

    # When it is verified
    verified = GITHUB.verifier().verify(headers, body)

    # Then the JSON inside the payload field is the event
    assert verified.payload == json.loads(ISSUE_OPENED)
    assert verified.event_type == "issues.opened"


def test_github_rejects_a_form_without_a_payload_field() -> None:
    # Given a signed form body that carries no payload field
    body = b"action=opened"
    headers = {**sign_github(GITHUB.secret, body, NOW), **FORM_TYPE}

    # When / Then it is a bad request
    with pytest.raises(BadRequest, match="payload"):
        GITHUB.verifier().verify(headers, body)


def test_github_accepts_upper_case_hex() -> None:
    # Given the right signature with its hex digits in upper case
    headers = sign_github(GITHUB.secret, ISSUE_OPENED, NOW)
    hex_digits = headers["X-Hub-Signature-256"].removeprefix("sha256=")
    headers["X-Hub-Signature-256"] = "sha256=" + hex_digits.upper()

    # When / Then it passes
    assert GITHUB.verifier().verify(headers, ISSUE_OPENED).event_type == "issues.opened"


def test_github_rejects_a_signature_without_its_sha256_prefix() -> None:
    # Given the right hex MAC without "sha256="
    headers = sign_github(GITHUB.secret, ISSUE_OPENED, NOW)
    headers["X-Hub-Signature-256"] = headers["X-Hub-Signature-256"].removeprefix("sha256=")

    # When / Then it is malformed
    with pytest.raises(VerificationFailed, match="malformed"):
        GITHUB.verifier().verify(headers, ISSUE_OPENED)


def test_github_does_not_fall_back_to_the_sha1_signature() -> None:
    # Given only the legacy X-Hub-Signature (sha1), correct for the body
    headers = sign_github(GITHUB.secret, ISSUE_OPENED, NOW)
    del headers["X-Hub-Signature-256"]
    headers["X-Hub-Signature"] = "sha1=" + hmac_hex(GITHUB.secret.encode(), ISSUE_OPENED, "sha1")

    # When / Then it is not enough
    with pytest.raises(VerificationFailed, match="X-Hub-Signature-256"):
        GITHUB.verifier().verify(headers, ISSUE_OPENED)


# --- Shopify ---------------------------------------------------------------------------

SHOPIFY = PROVIDERS[4]
ORDER = b'{"id":820982911946154508,"email":"jon@example.com"}'


def test_shopify_types_by_topic_and_dedupes_on_the_webhook_id() -> None:
    # Given an orders/create webhook
    headers = sign_shopify(SHOPIFY.secret, ORDER, NOW)

    # When it is verified
    verified = SHOPIFY.verifier().verify(headers, ORDER)

    # Then its type is the topic, its key the webhook id, and the shop is kept
    assert verified.event_type == "orders/create"
    assert verified.dedupe_key == "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"
    assert verified.kept_headers["x-shopify-shop-domain"] == "example.myshopify.com"
    assert verified.kept_headers["x-shopify-topic"] == "orders/create"
    assert "x-shopify-hmac-sha256" not in verified.kept_headers


def test_shopify_dedupes_on_the_event_id_then_the_digest() -> None:
    # Given a webhook without a webhook id, and one without either id
    with_event_id = sign_shopify(SHOPIFY.secret, ORDER, NOW)
    del with_event_id["X-Shopify-Webhook-Id"]
    without_ids = dict(with_event_id)
    del without_ids["X-Shopify-Event-Id"]

    # When they are verified
    first = SHOPIFY.verifier().verify(with_event_id, ORDER)
    second = SHOPIFY.verifier().verify(without_ids, ORDER)

    # Then the first is keyed by the event id and the second by the body digest
    assert first.dedupe_key == "98880550-7158-44d4-b7cd-2c97c8a091b5"
    assert second.dedupe_key == "sha256:" + hashlib.sha256(ORDER).hexdigest()


def test_shopify_rejects_a_hex_signature_where_base64_is_expected() -> None:
    # Given the right HMAC, but hex-encoded
    headers = sign_shopify(SHOPIFY.secret, ORDER, NOW)
    headers["X-Shopify-Hmac-Sha256"] = hmac_hex(SHOPIFY.secret.encode(), ORDER)

    # When / Then it does not verify
    with pytest.raises(VerificationFailed):
        SHOPIFY.verifier().verify(headers, ORDER)


# --- Slack -----------------------------------------------------------------------------

SLACK = PROVIDERS[5]
MESSAGE_EVENT = (
    b'{"token":"x","team_id":"T1","type":"event_callback","event_id":"Ev08MFMKH6",'
    b'"event":{"type":"message","text":"hi"}}'
)


def test_slack_types_an_events_api_callback_by_its_inner_event() -> None:
    # Given an Events API callback carrying a message event
    headers = sign_slack(SLACK.secret, MESSAGE_EVENT, NOW)

    # When it is verified
    verified = SLACK.verifier().verify(headers, MESSAGE_EVENT)

    # Then it is typed "message" and keyed by the event id Slack keeps across retries
    assert verified.event_type == "message"
    assert verified.dedupe_key == "Ev08MFMKH6"


def test_slack_types_a_url_verification_by_its_own_type() -> None:
    # Given the url_verification handshake
    body = b'{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",'
    body += b'"type":"url_verification"}'
    headers = sign_slack(SLACK.secret, body, NOW)

    # When it is verified
    verified = SLACK.verifier().verify(headers, body)

    # Then its type says so
    assert verified.event_type == "url_verification"


def test_slack_accepts_an_interactivity_form_with_a_json_payload() -> None:
    # Given an interactivity request: a form whose payload field is JSON
    action = {"type": "block_actions", "user": {"id": "U1"}, "actions": [{"value": "ok"}]}
    body = urlencode({"payload": json.dumps(action)}).encode()
    headers = {**sign_slack(SLACK.secret, body, NOW), **FORM_TYPE}

    # When it is verified
    verified = SLACK.verifier().verify(headers, body)

    # Then the payload is the JSON, typed block_actions, keyed by the body digest
    assert verified.payload == action
    assert verified.event_type == "block_actions"
    assert verified.dedupe_key == "sha256:" + hashlib.sha256(body).hexdigest()


def test_slack_accepts_a_slash_command_form() -> None:
    # Given a slash command: a plain form with no payload field
    body = b"command=%2Fweather&text=94070&team_id=T1"
    headers = {**sign_slack(SLACK.secret, body, NOW), **FORM_TYPE}

    # When it is verified
    verified = SLACK.verifier().verify(headers, body)

    # Then its fields are the payload and its type falls back to "slack"
    assert verified.payload == {"command": "/weather", "text": "94070", "team_id": "T1"}
    assert verified.event_type == "slack"


def test_slack_rejects_a_signature_without_its_version_prefix() -> None:
    # Given the right hex MAC without "v0="
    headers = sign_slack(SLACK.secret, MESSAGE_EVENT, NOW)
    headers["X-Slack-Signature"] = headers["X-Slack-Signature"].removeprefix("v0=")

    # When / Then it is malformed
    with pytest.raises(VerificationFailed, match="malformed"):
        SLACK.verifier().verify(headers, MESSAGE_EVENT)


# --- Razorpay --------------------------------------------------------------------------

RAZORPAY = PROVIDERS[6]
PAYMENT = b'{"entity":"event","event":"payment.captured","payload":{"payment":{}}}'


def test_razorpay_types_by_event_and_dedupes_on_the_event_id_header() -> None:
    # Given a payment.captured webhook, and the same without its event id header
    headers = sign_razorpay(RAZORPAY.secret, PAYMENT, NOW)
    without_id = {k: v for k, v in headers.items() if k != "X-Razorpay-Event-Id"}

    # When they are verified
    verified = RAZORPAY.verifier().verify(headers, PAYMENT)
    anonymous = RAZORPAY.verifier().verify(without_id, PAYMENT)

    # Then the type is the event and the key the header, else the body digest
    assert verified.event_type == "payment.captured"
    assert verified.dedupe_key == "Jbq2nPR8xqUS5Q"
    assert verified.kept_headers == {"x-razorpay-event-id": "Jbq2nPR8xqUS5Q"}
    assert anonymous.dedupe_key == "sha256:" + hashlib.sha256(PAYMENT).hexdigest()


def test_razorpay_accepts_upper_case_hex() -> None:
    # Given the right signature in upper-case hex
    headers = sign_razorpay(RAZORPAY.secret, PAYMENT, NOW)
    headers["X-Razorpay-Signature"] = headers["X-Razorpay-Signature"].upper()

    # When / Then it passes
    assert RAZORPAY.verifier().verify(headers, PAYMENT).event_type == "payment.captured"


# --- generic HMAC ----------------------------------------------------------------------

TIMED_HMAC_SOURCE = PROVIDERS[7]
PLAIN_HMAC_SOURCE = PROVIDERS[8]


def test_generic_hmac_reads_type_from_a_field_and_dedupes_on_the_id_header() -> None:
    # Given a sender configured with a timestamp, a delivery header and a type field
    body = b'{"type":"order.paid","amount":100}'
    headers = sign_timed_hmac(TIMED_HMAC_SOURCE.secret, body, NOW)

    # When it is verified
    verified = TIMED_HMAC_SOURCE.verifier().verify(headers, body)

    # Then the type comes from the field and the key from the delivery header
    assert verified.event_type == "order.paid"
    assert verified.dedupe_key == "dlv_42"
    assert verified.kept_headers == {"x-acme-delivery": "dlv_42", "x-acme-timestamp": str(NOW)}


def test_generic_hmac_reads_type_from_a_header() -> None:
    # Given a sender configured with a type header
    headers = sign_plain_hmac(PLAIN_HMAC_SOURCE.secret, BODY, NOW)

    # When it is verified
    verified = PLAIN_HMAC_SOURCE.verifier().verify(headers, BODY)

    # Then the type is the header's value
    assert verified.event_type == "order.shipped"


def test_generic_hmac_signs_an_id_in_a_custom_template_with_sha512() -> None:
    # Given a sender that signs "{id}:{timestamp}:{body}" with sha512, base64
    options = {
        "header": "X-Sig",
        "algorithm": "sha512",
        "encoding": "base64",
        "timestamp_header": "X-Ts",
        "id_header": "X-Id",
        "signed_template": "{id}:{timestamp}:{body}",
    }
    verifier = SCHEMES["hmac"](SourceConfig(["k1"], options=options), clock=lambda: NOW)
    message = f"abc:{NOW}:".encode() + BODY
    headers = {"X-Id": "abc", "X-Ts": str(NOW), "X-Sig": hmac_b64(b"k1", message, "sha512")}

    # When it is verified, and again with the id changed
    verified = verifier.verify(headers, BODY)

    # Then the first passes and the changed id does not
    assert verified.dedupe_key == "abc"
    with pytest.raises(VerificationFailed):
        verifier.verify({**headers, "X-Id": "abd"}, BODY)


def test_generic_hmac_can_accept_a_body_that_is_not_json() -> None:
    # Given a source that does not require JSON, and a signed binary body
    options = {"header": "X-Sig", "require_json": False}
    verifier = SCHEMES["hmac"](SourceConfig(["k1"], options=options), clock=lambda: NOW)
    body = b"\xff\xfe raw bytes \x00"
    headers = {"Content-Type": "application/octet-stream", "X-Sig": hmac_hex(b"k1", body)}

    # When it is verified
    verified = verifier.verify(headers, body)

    # Then it passes with no JSON payload, typed by the scheme
    assert verified.payload is None
    assert verified.event_type == "hmac"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "header"),
        ({"header": "X-Sig", "algorithm": "md5"}, "algorithm"),
        ({"header": "X-Sig", "encoding": "base32"}, "encoding"),
        ({"header": "X-Sig", "algoritm": "sha1"}, "unknown"),
        ({"header": "X-Sig", "require_json": "yes"}, "require_json"),
        ({"header": 7}, "string"),
        ({"header": "X-Sig", "type_header": "X-T", "type_field": "type"}, "not both"),
        ({"header": "X-Sig", "signed_template": "{timestamp}"}, "body"),
        ({"header": "X-Sig", "signed_template": "{body}{body}"}, "body"),
        ({"header": "X-Sig", "signed_template": "{timestamp}.{body}"}, "timestamp_header"),
        ({"header": "X-Sig", "timestamp_header": "X-T", "signed_template": "{body}"}, "timestamp"),
        ({"header": "X-Sig", "signed_template": "{id}.{body}"}, "id_header"),
        ({"header": "X-Sig", "signed_template": "{secret}.{body}"}, "only use"),
        ({"header": "X-Sig", "signed_template": "{body!r}"}, "only use"),
        ({"header": "X-Sig", "signed_template": "{body"}, "malformed"),
    ],
)
def test_generic_hmac_refuses_an_invalid_configuration_when_saved(
    options: dict[str, Any], message: str
) -> None:
    # Given options a user might save by mistake
    config = SourceConfig(secrets=["k1"], options=options)

    # When / Then building the verifier explains what is wrong
    with pytest.raises(ValueError, match=message):
        verifier_for("hmac", config)


def test_generic_hmac_defaults_the_template_to_timestamp_dot_body() -> None:
    # Given a source with a timestamp header and no template
    options = {"header": "X-Sig", "timestamp_header": "X-Ts"}
    verifier = SCHEMES["hmac"](SourceConfig(["k1"], options=options), clock=lambda: NOW)
    headers = {"X-Ts": str(NOW), "X-Sig": hmac_hex(b"k1", f"{NOW}.".encode() + BODY)}

    # When / Then a request signed over "{timestamp}.{body}" passes
    assert verifier.verify(headers, BODY).payload == json.loads(BODY)


# --- the registry and source configuration ----------------------------------------------


def test_every_scheme_is_registered_under_its_name() -> None:
    # Given the schemes the design lists
    expected = {"standard", "svix", "stripe", "github", "shopify", "slack", "razorpay", "hmac"}

    # When / Then each is in the registry (with the entries of tests/unit/test_provider_entries.py)
    assert expected <= set(SCHEMES)


def test_verifier_for_uses_the_real_clock() -> None:
    # Given a Stripe source built the way the receiver builds it
    verifier = verifier_for("stripe", SourceConfig(secrets=[STRIPE.secret]))
    now = int(time.time())

    # When a request signed just now arrives
    verified = verifier.verify(sign_stripe(STRIPE.secret, INVOICE_PAID, now), INVOICE_PAID)

    # Then it passes
    assert verified.event_type == "invoice.paid"


def test_verifier_for_an_unknown_scheme_lists_the_known_ones() -> None:
    # When / Then
    with pytest.raises(ValueError, match="stripe"):
        verifier_for("paypal", SourceConfig(secrets=["x"]))


@pytest.mark.parametrize(
    ("secrets", "tolerance", "message"),
    [
        ([], 300, "at least one secret"),
        ("one-string-secret", 300, "not one string"),
        (["  "], 300, "non-empty"),
        (["k"], -1, "tolerance"),
    ],
    ids=["no-secret", "bare-string", "blank-secret", "negative-tolerance"],
)
def test_a_source_with_unusable_secrets_or_tolerance_is_refused(
    secrets: Any, tolerance: int, message: str
) -> None:
    # Given a source configuration that could never verify anything safely
    config = SourceConfig(secrets=secrets, tolerance_seconds=tolerance)

    # When / Then building its verifier fails with a clear message
    with pytest.raises(ValueError, match=message):
        verifier_for("github", config)
