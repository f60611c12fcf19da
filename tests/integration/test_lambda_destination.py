"""The `lambda` destination kind (decision 0057): the function is invoked synchronously
through the customer's role (STS AssumeRole on moto, with the tenant's ExternalId), with the
Standard Webhooks headers and the exact signed body in an envelope a consumer can verify with
an independent implementation; Lambda's refusals and the function's own errors become attempts
like the other kinds'. moto's Lambda without Docker (the "simple" backend) answers every
invocation by echoing its payload, so it shows what reached the Invoke API; the errors are
played by a loopback server speaking the Invoke API (tests/support/fake_lambda.py)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.settings import get_settings
from tests.support import operator
from tests.support.aws import REGION
from tests.support.customer_aws import ACCOUNT, ROLE
from tests.support.fake_lambda import Answer, FakeLambda, running_fake_lambda

pytestmark = pytest.mark.integration

FUNCTION = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:orders-hook"


def moto_lambda_config(endpoint: str, *, use_docker: bool) -> None:
    request = urllib.request.Request(
        f"{endpoint}/moto-api/config", method="POST",
        data=json.dumps({"lambda": {"use_docker": use_docker}}).encode(),
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


@pytest.fixture
def fake_lambda(
    make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, FakeLambda]]:
    """The pipeline, with the customers' targets reached at the fake Lambda API (STS and the
    group queues stay on moto)."""
    with running_fake_lambda() as fake:
        monkeypatch.setenv("HOOKLINE_DESTINATION_ENDPOINT_URL", fake.url)
        yield make_pipeline(), fake


def add_function(db: Database, target: str = FUNCTION) -> tuple[str, dict[str, Any]]:
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(
        db, get_settings(), tenant_id=t, url=None, kind="lambda", target=target, role_arn=ROLE
    )
    return t, endpoint


def publish(db: Database, tenant_id: str, payload: dict[str, Any]) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="order.paid", payload=payload).id


def verified(endpoint: dict[str, Any], envelope: bytes) -> dict[str, Any]:
    """The body of an invocation's envelope, once its signature verifies."""
    parsed = json.loads(envelope)
    assert set(parsed) == {"headers", "body"}
    Webhook(endpoint["secret"]).verify(parsed["body"].encode(), parsed["headers"])
    return dict(json.loads(parsed["body"]))


def test_moto_lambda_receives_the_signed_envelope(pipeline, db, moto_endpoint):
    # Given moto's Lambda without Docker, which answers an invocation with its payload
    moto_lambda_config(moto_endpoint, use_docker=False)
    try:
        t, endpoint = add_function(db)
        # When an event is published and delivered
        event_id = publish(db, t, {"order": "ord_1", "amount": 12})
        pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    finally:
        moto_lambda_config(moto_endpoint, use_docker=True)
    # Then the attempt records the function's answer: the envelope it was invoked with,
    # whose signature verifies over the exact body, with the delivery's webhook-id
    delivery = pipeline.delivery(event_id=event_id)
    [attempt] = pipeline.attempts(delivery["id"])
    assert attempt["status_code"] == 200
    assert verified(endpoint, attempt["response_excerpt"].encode()) == {
        "order": "ord_1", "amount": 12,
    }  # fmt: skip
    assert json.loads(attempt["response_excerpt"])["headers"]["webhook-id"] == delivery["id"]


def test_the_function_is_invoked_synchronously_with_the_envelope(db, fake_lambda):
    pipeline, fake = fake_lambda
    fake.answers = [Answer.result({"accepted": True})]
    t, endpoint = add_function(db, f"{FUNCTION}:live")
    event_id = publish(db, t, {"order": "ord_2"})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    [invocation] = fake.invocations
    assert invocation.function == f"{FUNCTION}:live"
    assert invocation.invocation_type == "RequestResponse"
    assert verified(endpoint, invocation.payload) == {"order": "ord_2"}
    [attempt] = pipeline.attempts(pipeline.delivery(event_id=event_id)["id"])
    assert json.loads(attempt["response_excerpt"]) == {"accepted": True}


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        (Answer.api_error(429, "TooManyRequestsException", "Rate exceeded"),
         "TooManyRequestsException: Rate exceeded"),
        (Answer.api_error(500, "ServiceException", "internal"), "ServiceException: internal"),
        (Answer.raised("ValueError", "no such customer"),
         "FunctionError (Unhandled): ValueError: no such customer"),
    ],
)  # fmt: skip
def test_throttling_5xx_and_function_errors_are_retried(db, fake_lambda, first, reason):
    pipeline, fake = fake_lambda
    fake.answers = [first, Answer.result(None)]
    t, _ = add_function(db)
    event_id = publish(db, t, {"order": "ord_3"})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    failed, ok = pipeline.attempts(pipeline.delivery(event_id=event_id)["id"])
    assert failed["error_class"] == reason and failed["status_code"] is None
    assert ok["status_code"] == 200 and len(fake.invocations) == 2


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (Answer.api_error(403, "AccessDeniedException", "not authorized to invoke"),
         "AccessDeniedException: not authorized to invoke"),
        (Answer.api_error(404, "ResourceNotFoundException", "Function not found"),
         "ResourceNotFoundException: Function not found"),
    ],
)  # fmt: skip
def test_access_denied_and_not_found_fail_the_delivery_with_the_reason(
    db, fake_lambda, answer, reason
):
    pipeline, fake = fake_lambda
    fake.answers = [answer]
    t, _ = add_function(db)
    event_id = publish(db, t, {"order": "ord_4"})
    pipeline.run_until(lambda: pipeline.states() == {"failed": 1})
    delivery = pipeline.delivery(event_id=event_id)
    [attempt] = pipeline.attempts(delivery["id"])
    assert attempt["error_class"] == reason
    assert reason in delivery["last_error"]
    assert len(fake.invocations) == 1


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (f"arn:aws:lambda:{REGION}:{ACCOUNT}:layer:x:1", "is not an lambda ARN"),
        (f"arn:aws:sqs:{REGION}:{ACCOUNT}:q", "is an sqs ARN, not an lambda one"),
        (f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:a b", "is not an lambda ARN"),
    ],
)
def test_a_target_that_is_not_a_function_is_refused_at_save(db, target, message):
    with pytest.raises(BadRequest, match=message):
        add_function(db, target)
