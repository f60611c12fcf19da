"""Provider handshakes through the real receiver and Postgres: each is answered as its
provider requires, nothing is stored or queued for fan-out, and the source's activity shows it.
A wrong verify token is 403 without the challenge; GET to a POST-only provider is 405."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import pytest
from slack_sdk.signature import SignatureVerifier

from hookline.db import Database
from hookline.repositories.source_activity import source_activity
from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support import operator
from tests.support.provider_signers import DISCORD_PUBLIC, discord, rfc3339

pytestmark = pytest.mark.integration


def send(api: Any, method: str, path: str, headers: dict[str, str], body: bytes = b"", query=""):
    event = build_rest_event(method, path, headers, body, query=query)
    response = api.handler(event, LocalContext(function_name="receiver"))
    raw = response.get("body") or ""
    data = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
    headers_out = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    for k, values in (response.get("multiValueHeaders") or {}).items():
        headers_out[k.lower()] = values[-1]
    return response["statusCode"], headers_out, data


def stored(db: Database) -> tuple[int, int]:
    with db.connection() as conn:
        events = conn.execute("SELECT count(*) AS n FROM events").fetchone()
        outbox = conn.execute("SELECT count(*) AS n FROM outbox").fetchone()
    assert events is not None and outbox is not None
    return int(events["n"]), int(outbox["n"])


def source(db: Database, tenant: dict[str, str], scheme: str, secret: str, **options: str):
    return operator.add_source(
        db, tenant_id=tenant["id"], scheme=scheme, secrets=[secret], options=options or None
    )


def activity(db: Database, tenant: dict[str, str], created: dict[str, str]) -> dict[str, Any]:
    with db.connection() as conn:
        return source_activity(conn, tenant["id"], created["id"])


def test_slack_url_verification_is_answered_with_the_challenge_and_not_stored(api, db, tenant):
    # Given a Slack source and Slack's url_verification, signed by slack_sdk's own signer
    created = source(db, tenant, "slack", "slack-signing-secret")
    body = json.dumps(
        {
            "token": "t",
            "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdAL",
            "type": "url_verification",
        }
    ).encode()
    ts = str(int(time.time()))
    signature = SignatureVerifier("slack-signing-secret").generate_signature(
        timestamp=ts, body=body.decode()
    )
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
    }
    # When Slack posts it
    status, _, answer = send(api, "POST", created["path"], headers, body)
    # Then the challenge is echoed, and nothing is stored or queued for fan-out
    assert status == 200
    assert json.loads(answer) == {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdAL"}
    assert stored(db) == (0, 0)
    # And the source's activity shows the handshake
    seen = activity(db, tenant, created)
    assert seen["handshakes"] == 1 and seen["last_handshake_kind"] == "url_verification"


def test_an_unsigned_slack_url_verification_is_401_and_not_answered(api, db, tenant):
    # Given a url_verification nobody signed
    created = source(db, tenant, "slack", "slack-signing-secret")
    body = b'{"challenge":"c","type":"url_verification"}'
    # When it arrives / Then it is refused, without the challenge, and counted as a rejection
    status, _, answer = send(
        api, "POST", created["path"], {"Content-Type": "application/json"}, body
    )
    assert status == 401 and b'"c"' not in answer
    assert activity(db, tenant, created)["rejected"] == {"VerificationFailed": 1}


def test_discord_ping_is_answered_with_pong(api, db, tenant):
    # Given a Discord source (its public key) and a PING signed with the app's key (PyNaCl)
    created = source(db, tenant, "discord", DISCORD_PUBLIC)
    body = b'{"id":"p1","type":1}'
    # When Discord posts it
    status, _, answer = send(
        api, "POST", created["path"], discord("", body, int(time.time())), body
    )
    # Then PONG, nothing stored
    assert (status, json.loads(answer)) == (200, {"type": 1})
    assert stored(db) == (0, 0)


def test_zoom_url_validation_answers_the_hmac_of_the_plain_token(api, db, tenant):
    # Given a Zoom source and Zoom's signed endpoint.url_validation
    created = source(db, tenant, "zoom", "zoom-secret-token")
    body = b'{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event":"endpoint.url_validation"}'
    ts = str(int(time.time()))
    sig = hmac.new(b"zoom-secret-token", f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "x-zm-request-timestamp": ts,
        "x-zm-signature": f"v0={sig}",
    }
    # When Zoom posts it
    status, _, answer = send(api, "POST", created["path"], headers, body)
    # Then the answer is plainToken and its HMAC-SHA256 (hex) under the secret token
    expected = hmac.new(b"zoom-secret-token", b"qgg8vlvZRS6UYooatFL8Aw", hashlib.sha256)
    assert status == 200
    assert json.loads(answer) == {
        "plainToken": "qgg8vlvZRS6UYooatFL8Aw",
        "encryptedToken": expected.hexdigest(),
    }
    assert stored(db) == (0, 0)


def test_meta_subscription_get_echoes_the_challenge_for_the_right_verify_token(api, db, tenant):
    # Given a Meta source with its verify token
    created = source(db, tenant, "meta", "app-secret", verify_token="my-verify-token")
    query = "hub.mode=subscribe&hub.verify_token=my-verify-token&hub.challenge=1158201444"
    # When Meta sends its GET
    status, headers, answer = send(api, "GET", created["path"], {}, query=query)
    # Then the challenge comes back as plain text, and nothing is stored
    assert (status, answer) == (200, b"1158201444")
    assert headers["content-type"].startswith("text/plain")
    assert stored(db) == (0, 0)


def test_meta_subscription_with_a_wrong_verify_token_is_403_without_the_challenge(api, db, tenant):
    # Given a Meta source and a GET with another verify token
    created = source(db, tenant, "meta", "app-secret", verify_token="my-verify-token")
    query = "hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1158201444"
    # When it arrives / Then 403, and the challenge is not in the answer
    status, _, answer = send(api, "GET", created["path"], {}, query=query)
    assert status == 403 and b"1158201444" not in answer
    assert activity(db, tenant, created)["rejected"] == {"HandshakeRefused": 1}


def test_x_crc_answers_the_response_token(api, db, tenant):
    # Given an X source and X's CRC GET
    created = source(db, tenant, "x", "consumer-secret")
    # When X sends it
    status, _, answer = send(api, "GET", created["path"], {}, query="crc_token=9b4507b3-9040")
    # Then response_token is sha256= + base64 HMAC-SHA256 of the token under the secret
    digest = hmac.new(b"consumer-secret", b"9b4507b3-9040", hashlib.sha256).digest()
    assert status == 200
    assert json.loads(answer) == {"response_token": "sha256=" + base64.b64encode(digest).decode()}


def test_a_crc_token_that_could_be_a_body_is_refused(api, db, tenant):
    # Given a "CRC" whose token is an event body (it would make the CRC a signing oracle)
    created = source(db, tenant, "x", "consumer-secret")
    # When / Then it is refused
    status, _, _ = send(api, "GET", created["path"], {}, query='crc_token={"a":1}')
    assert status == 403


def test_graph_validation_token_is_echoed_as_text(api, db, tenant):
    created = source(db, tenant, "microsoft_graph", "client-state")
    status, headers, answer = send(
        api, "POST", created["path"], {}, query="validationToken=Validation%3A+Testing"
    )
    assert (status, answer) == (200, b"Validation: Testing")
    assert headers["content-type"].startswith("text/plain")
    assert stored(db) == (0, 0)


def test_dropbox_challenge_is_echoed_not_sniffable(api, db, tenant):
    created = source(db, tenant, "dropbox", "app-secret")
    status, headers, answer = send(api, "GET", created["path"], {}, query="challenge=abc123")
    assert (status, answer) == (200, b"abc123")
    assert headers["x-content-type-options"] == "nosniff"


def test_okta_verification_needs_the_hook_authorization(api, db, tenant):
    # Given an Okta source whose hook sends "Authorization: okta-secret"
    created = source(db, tenant, "okta", "okta-secret")
    challenge = {"x-okta-verification-challenge": "Rhz3Rs9JtXd5lGQ8"}
    # When the verification carries it / Then the challenge is answered
    status, _, answer = send(
        api, "GET", created["path"], {**challenge, "Authorization": "okta-secret"}
    )
    assert (status, json.loads(answer)) == (200, {"verification": "Rhz3Rs9JtXd5lGQ8"})
    # And without it, 403 and no answer
    status, _, answer = send(api, "GET", created["path"], challenge)
    assert status == 403 and b"Rhz3Rs9JtXd5lGQ8" not in answer


def test_twitch_callback_verification_echoes_the_signed_challenge(api, db, tenant):
    created = source(db, tenant, "twitch", "twitch-secret-123")
    body = b'{"challenge":"pogchamp-kappa-360noscope","subscription":{"type":"channel.follow"}}'
    stamp = rfc3339(int(time.time()))
    sig = hmac.new(b"twitch-secret-123", b"m-9" + stamp.encode() + body, hashlib.sha256)
    headers = {
        "Content-Type": "application/json",
        "Twitch-Eventsub-Message-Id": "m-9",
        "Twitch-Eventsub-Message-Timestamp": stamp,
        "Twitch-Eventsub-Message-Type": "webhook_callback_verification",
        "Twitch-Eventsub-Message-Signature": "sha256=" + sig.hexdigest(),
    }
    status, _, answer = send(api, "POST", created["path"], headers, body)
    assert (status, answer) == (200, b"pogchamp-kappa-360noscope")
    assert stored(db) == (0, 0)


def test_get_to_a_provider_without_a_get_handshake_is_405(api, db, tenant):
    # Given a Stripe source / When something GETs it / Then 405, Allow: POST
    created = source(db, tenant, "stripe", "whsec_x")
    status, headers, _ = send(api, "GET", created["path"], {}, query="challenge=x")
    assert status == 405 and headers["allow"] == "POST"


def test_asanas_hook_secret_becomes_the_sources_secret_once(api, db, tenant):
    # Given an Asana source (created with a generated secret Asana does not know)
    created = source(db, tenant, "asana", "generated-at-creation")
    # When Asana's handshake brings its X-Hook-Secret
    status, headers, _ = send(api, "POST", created["path"], {"X-Hook-Secret": "b537207f20cb"})
    # Then it is echoed, and nothing is stored
    assert (status, headers["x-hook-secret"]) == (200, "b537207f20cb")
    assert stored(db) == (0, 0)
    # And events signed with it now verify
    body = b'{"events":[{"action":"added","resource":{"resource_type":"task"}}]}'
    signature = hmac.new(b"b537207f20cb", body, hashlib.sha256).hexdigest()
    event_headers = {"Content-Type": "application/json", "X-Hook-Signature": signature}
    status, _, _ = send(api, "POST", created["path"], event_headers, body)
    assert status == 200 and stored(db) == (1, 1)
    # And a second handshake (anyone who learnt the URL) cannot replace it
    status, headers, _ = send(api, "POST", created["path"], {"X-Hook-Secret": "attacker"})
    assert status == 403 and "x-hook-secret" not in headers
    status, _, _ = send(api, "POST", created["path"], event_headers, body)
    assert status == 200


def test_a_discord_command_is_stored_and_answered_with_a_deferral(api, db, tenant):
    # Given a Discord slash command (type 2), signed with the app's key
    created = source(db, tenant, "discord", DISCORD_PUBLIC)
    body = b'{"id":"i-7","type":2,"token":"tok","data":{"name":"ping"}}'
    # When Discord posts it
    status, _, answer = send(
        api, "POST", created["path"], discord("", body, int(time.time())), body
    )
    # Then it is stored for the subscribers, and Discord gets a deferred response (type 5), as
    # it shows "This interaction failed" for anything else
    assert (status, json.loads(answer)) == (200, {"type": 5})
    assert stored(db) == (1, 1)
