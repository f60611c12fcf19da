"""Each tenant group's delivery queue and dead-letter queue, created on an emulator.

The local runner and the tests create what the CDK stack declares (infra/components/queues.py):
the DLQ first, then the queue whose redrive policy points at it, with the same visibility
timeout and retention, so redrive behaves locally as it does on AWS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from hookline.config import HooklineConfig

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.literals import QueueAttributeNameType

# AWS recommends a visibility timeout of at least six times the function timeout, so a batch
# that the event source retries internally is not received twice; the stack uses the same factor.
VISIBILITY_TIMEOUT_FACTOR = 6
MESSAGE_RETENTION_SECONDS = 4 * 24 * 3600  # Postgres is the source of truth; reconcile re-enqueues
DLQ_RETENTION_SECONDS = 14 * 24 * 3600  # the SQS maximum: time to look and redrive

# SQS answers a create with different attributes with this code (boto3 names it QueueNameExists).
_QUEUE_EXISTS_CODES = frozenset({"QueueAlreadyExists", "QueueNameExists"})


@dataclass(frozen=True)
class GroupQueues:
    """Where one tenant group's queue and dead-letter queue are."""

    url: str
    arn: str
    dlq_url: str
    dlq_arn: str


def ensure_queues(
    sqs: SQSClient,
    config: HooklineConfig,
    *,
    visibility_timeout_seconds: int | None = None,
) -> dict[str, GroupQueues]:
    """Create (or bring up to date) every tenant group's DLQ and queue; keyed by group name.

    Idempotent: queues that exist are kept, with their messages, and their attributes set to
    what the configuration says. `visibility_timeout_seconds` overrides the configured
    `deliver_function_timeout_seconds` x 6, so tests can see a failed message come back soon.
    """
    visibility = (
        visibility_timeout_seconds
        if visibility_timeout_seconds is not None
        else config.deliver_function_timeout_seconds * VISIBILITY_TIMEOUT_FACTOR
    )
    found: dict[str, GroupQueues] = {}
    for group in config.tenant_groups:
        dlq_url = _ensure_queue(
            sqs, group.dlq_name, {"MessageRetentionPeriod": str(DLQ_RETENTION_SECONDS)}
        )
        dlq_arn = queue_arn(sqs, dlq_url)
        redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": group.max_receive_count}
        url = _ensure_queue(
            sqs,
            group.queue_name,
            {
                "VisibilityTimeout": str(visibility),
                "MessageRetentionPeriod": str(MESSAGE_RETENTION_SECONDS),
                "RedrivePolicy": json.dumps(redrive),
            },
        )
        found[group.name] = GroupQueues(
            url=url, arn=queue_arn(sqs, url), dlq_url=dlq_url, dlq_arn=dlq_arn
        )
    return found


def queue_arn(sqs: SQSClient, queue_url: str) -> str:
    """The ARN of the queue at `queue_url`, as SQS reports it."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    return attributes["Attributes"]["QueueArn"]


def _ensure_queue(
    sqs: SQSClient, name: str, attributes: Mapping[QueueAttributeNameType, str]
) -> str:
    try:
        return sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in _QUEUE_EXISTS_CODES:
            raise
    # It exists with other attributes (the configuration changed): converge, keep its messages.
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    return url
