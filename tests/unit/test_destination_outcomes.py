"""What an AWS refusal does to a delivery: throttling and 5xx are retried, AccessDenied (a
customer role that stopped trusting Hookline) and the like fail with the reason; temporary
credentials are reused until shortly before they expire (decision 0046). AWS answers are
played by botocore's Stubber: no I/O in this tier."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hookline.destinations.credentials import RoleCredentialCache
from hookline.destinations.senders import AwsSenders, OutgoingMessage

pytestmark = pytest.mark.unit

ROLE = "arn:aws:iam::123456789012:role/hookline-delivery-acme"
QUEUE = "arn:aws:sqs:us-east-1:123456789012:orders"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def client(service: str) -> Any:
    return boto3.client(
        service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )


def credentials(expires_in: timedelta) -> dict[str, Any]:
    return {
        "Credentials": {
            "AccessKeyId": "ASIAEXAMPLEEXAMPLE01", "SecretAccessKey": "s" * 40,
            "SessionToken": "t" * 40, "Expiration": NOW + expires_in,
        }
    }  # fmt: skip


MESSAGE = OutgoingMessage(
    "dlv_1", 1_700_000_000, "v1,abc", b'{"a":1}', "application/json", "evt_1", "order.paid",
    {"type": "order.paid", "tenant_id": "ten_1", "source_id": None, "payload": {"a": 1}},
)  # fmt: skip


def test_a_role_that_no_longer_trusts_hookline_fails_the_delivery_with_access_denied() -> None:
    sts = client("sts")
    with Stubber(sts) as stub:
        stub.add_client_error(
            "assume_role", "AccessDenied", "User is not authorized to perform sts:AssumeRole",
            http_status_code=403,
        )  # fmt: skip
        senders = AwsSenders(RoleCredentialCache(sts, clock=lambda: NOW))
        result = senders.send("sqs", QUEUE, ROLE, "hkl-x", {}, MESSAGE)
    assert result.error is not None and result.error.startswith("AccessDenied: User is not")
    assert result.retry is False


@pytest.mark.parametrize(
    ("code", "status", "retry"),
    [
        ("ThrottlingException", 400, True),
        ("RequestThrottled", 403, True),
        ("InternalError", 500, True),
        ("ServiceUnavailable", 503, True),
        ("AccessDenied", 403, False),
        ("AWS.SimpleQueueService.NonExistentQueue", 400, False),
        ("KMS.AccessDeniedException", 400, False),
    ],
)
def test_aws_error_codes_decide_retry_or_failure(code: str, status: int, retry: bool) -> None:
    sts, sqs = client("sts"), client("sqs")
    with Stubber(sts) as sts_stub, Stubber(sqs) as sqs_stub:
        sts_stub.add_response("assume_role", credentials(timedelta(hours=1)))
        sqs_stub.add_response("get_queue_url", {"QueueUrl": "https://sqs.local/1/orders"})
        sqs_stub.add_client_error("send_message", code, "no", http_status_code=status)
        senders = AwsSenders(
            RoleCredentialCache(sts, clock=lambda: NOW), client_factory=lambda *a, **k: sqs
        )
        result = senders.send("sqs", QUEUE, ROLE, "hkl-x", {}, MESSAGE)
    assert result.error == f"{code}: no"
    assert result.retry is retry


def test_credentials_are_reused_until_shortly_before_they_expire() -> None:
    sts = client("sts")
    now = [NOW]
    cache = RoleCredentialCache(sts, clock=lambda: now[0])
    with Stubber(sts) as stub:
        stub.add_response("assume_role", credentials(timedelta(minutes=15)))
        stub.add_response("assume_role", credentials(timedelta(minutes=30)))
        first = cache.get(ROLE, "hkl-x", "hookline")
        now[0] = NOW + timedelta(minutes=11)
        assert cache.get(ROLE, "hkl-x", "hookline") is first  # 4 minutes left: still good
        now[0] = NOW + timedelta(minutes=13)
        assert cache.get(ROLE, "hkl-x", "hookline") is not first  # 2 minutes left: renewed
    assert cache.assumed == 2


def test_a_message_over_the_target_limit_fails_with_that_reason() -> None:
    sts = client("sts")
    big = OutgoingMessage(
        "dlv_1", 1, "v1,abc", b'"' + b"x" * 300_000 + b'"', "application/json", "evt_1", "t",
        MESSAGE.document,
    )  # fmt: skip
    with Stubber(sts) as stub:
        stub.add_response("assume_role", credentials(timedelta(hours=1)))
        senders = AwsSenders(RoleCredentialCache(sts, clock=lambda: NOW))
        result = senders.send("sqs", QUEUE, ROLE, "hkl-x", {}, big)
    assert result.error is not None and "over the sqs limit of 262144" in result.error
    assert result.retry is False
