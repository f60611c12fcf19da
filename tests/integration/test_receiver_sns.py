"""AWS SNS against a local HTTPS server playing SNS with a test CA, through the SSRF-guarded
client and real Postgres: signatures checked with the certificate at SigningCertURL (fetched
once, SignatureVersion 1 and 2), a foreign certificate host refused without a fetch, a forged
signature 401, and SubscriptionConfirmation confirmed (SubscribeURL fetched), never stored."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hookline.db import Database
from hookline.errors import HandshakeRefused, VerificationFailed
from hookline.ingest import Accepted, Handshook, receive_inbound
from hookline.verifiers.sns import CERTIFICATES
from tests.support import operator
from tests.support.fake_sns import TOPIC, FakeSns, can_listen_on_443, running_sns

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not can_listen_on_443(), reason="the fake SNS listens on port 443"),
]
HEADERS = {"Content-Type": "text/plain; charset=UTF-8"}


@pytest.fixture
def sns() -> Iterator[FakeSns]:
    CERTIFICATES.clear()
    with running_sns() as fake:
        yield fake
    CERTIFICATES.clear()


@pytest.fixture
def sns_source(db: Database, tenant: dict[str, str]) -> dict[str, str]:
    return operator.add_source(db, tenant_id=tenant["id"], scheme="sns", secrets=[TOPIC])


def post(db, sns, source, message, kind="Notification"):
    body = json.dumps(message).encode()
    headers = {**HEADERS, "x-amz-sns-message-type": kind}
    with sns.client() as http:
        return receive_inbound(
            db, source["id"], headers, body, max_body_bytes=2**20, http=lambda: http
        )


def events(db: Database) -> int:
    with db.connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM events").fetchone()
    return int(row["n"])


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_signed_notification_is_stored_and_the_certificate_fetched_once(
    db, sns, sns_source, version
):
    # Given two notifications SNS signed (SHA1withRSA for version 1, SHA256withRSA for 2)
    first = post(db, sns, sns_source, sns.message(version=version, MessageId="m-1"))
    second = post(db, sns, sns_source, sns.message(version=version, MessageId="m-2"))
    # Then both are stored, keyed by MessageId
    assert isinstance(first, Accepted) and isinstance(second, Accepted)
    assert events(db) == 2
    # And the certificate was fetched once, from SNS's host
    assert sns.hits == ["/SimpleNotificationService-0000000000000000000000.pem"]


def test_a_forged_signature_is_401(db, sns, sns_source):
    # Given a notification whose message changed after SNS signed it
    message = sns.message()
    message["Message"] = '{"order": 666}'
    # When / Then it is refused and nothing is stored
    with pytest.raises(VerificationFailed):
        post(db, sns, sns_source, message)
    assert events(db) == 0


def test_a_certificate_on_a_foreign_host_is_refused_without_fetching_it(db, sns, sns_source):
    # Given a message naming a certificate on another host (signed there, by anyone)
    message = sns.message(SigningCertURL="https://evil.example.com/cert.pem")
    # When / Then it is refused, and nothing was fetched
    with pytest.raises(VerificationFailed, match=r"sns\.us-east-1\.amazonaws\.com"):
        post(db, sns, sns_source, message)
    assert sns.hits == [] and events(db) == 0


def test_a_message_of_another_topic_is_refused(db, sns, sns_source):
    message = sns.message(TopicArn="arn:aws:sns:us-east-1:999999999999:theirs")
    with pytest.raises(VerificationFailed, match="another topic"):
        post(db, sns, sns_source, message)


def test_subscription_confirmation_fetches_the_subscribe_url_and_stores_nothing(
    db, sns, sns_source
):
    # Given SNS's SubscriptionConfirmation
    message = sns.message("SubscriptionConfirmation")
    # When it arrives
    answer = post(db, sns, sns_source, message, "SubscriptionConfirmation")
    # Then the subscription is confirmed at SNS, and nothing is stored
    assert isinstance(answer, Handshook) and answer.answer.kind == "SubscriptionConfirmation"
    assert any(hit.startswith("/?Action=ConfirmSubscription") for hit in sns.hits)
    assert events(db) == 0


def test_a_subscribe_url_off_sns_is_not_fetched(db, sns, sns_source):
    # Given a (validly signed) confirmation whose SubscribeURL points elsewhere
    message = sns.message("SubscriptionConfirmation", SubscribeURL="https://evil.example.com/x")
    # When / Then it is refused and the URL is never fetched
    with pytest.raises(HandshakeRefused):
        post(db, sns, sns_source, message, "SubscriptionConfirmation")
    assert not any("Action" in hit for hit in sns.hits)


def test_an_sns_source_takes_a_topic_arn_not_a_secret(db, tenant):
    from hookline.errors import BadRequest

    with pytest.raises(BadRequest, match="topic ARN"):
        operator.add_source(db, tenant_id=tenant["id"], scheme="sns", secrets=["a-shared-secret"])
