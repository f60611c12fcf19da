"""The customer's side of an AWS destination in tests: clients on moto, a queue to deliver
into, and what arrived in it (with its Standard Webhooks attributes)."""

from __future__ import annotations

from typing import Any

import boto3

from tests.support.aws import REGION

ACCOUNT = "123456789012"  # moto's
ROLE = f"arn:aws:iam::{ACCOUNT}:role/hookline-delivery-acme"


def client(endpoint: str, service: str) -> Any:
    """A client of `service` on moto, with dummy credentials."""
    return boto3.client(  # type: ignore[call-overload]  # any service, by name
        service, endpoint_url=endpoint, region_name=REGION,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip


def queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    """A new queue's (URL, ARN)."""
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    return url, arn["QueueArn"]


def received(sqs: Any, url: str, wait_seconds: int = 1) -> list[dict[str, Any]]:
    """Up to 10 messages waiting in the queue (left there, invisible for a while)."""
    answer = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
        AttributeNames=["All"], WaitTimeSeconds=wait_seconds,
    )  # fmt: skip
    return list(answer.get("Messages", []))


def attributes(message: dict[str, Any]) -> dict[str, str]:
    """A message's string attributes: the Standard Webhooks headers."""
    return {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}
