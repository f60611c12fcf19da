"""One sender per AWS destination kind, behind `AwsSenders.send` (decision 0046).

Every message carries the Standard Webhooks `webhook-id`, `webhook-timestamp` and
`webhook-signature` computed over the exact body bytes: as message attributes (SQS, SNS),
in the event detail's `metadata` (EventBridge, with the body as `body`), as object metadata
(S3), and in an envelope `{headers, body}` (Kinesis, which has no attributes, and Lambda,
whose payload is one JSON document). The AWS error code becomes the attempt's outcome:
throttling and 5xx are retried on the schedule, a Lambda function's own error is a failed
attempt retried too, anything else (AccessDenied, not found, validation) fails the delivery
with its reason."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from hookline.destinations import SIZE_LIMITS, OwnResources, Target, parse_target
from hookline.destinations.credentials import RoleCredentialCache, RoleCredentials
from hookline.records import frozen
from hookline.transformers import TransformFailed, lookup_path

# Our own retry schedule retries; botocore tries once (`max_attempts` would count retries).
_CONFIG = Config(
    retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=5, read_timeout=10
)
THROTTLING = frozenset(
    {
        "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottled",
        "RequestThrottledException", "TooManyRequestsException", "SlowDown",
        "ProvisionedThroughputExceededException", "KMSThrottlingException",
        "RequestLimitExceeded", "LimitExceededException",
    }
)  # fmt: skip


@frozen
class OutgoingMessage:
    """One signed message to a destination."""

    webhook_id: str
    timestamp: int
    signature: str
    body: bytes
    content_type: str
    event_id: str
    event_type: str
    document: dict[str, Any]  # the event as filters and transformers see it

    def signature_headers(self) -> dict[str, str]:
        """The Standard Webhooks headers, and the body's content type."""
        return {
            "webhook-id": self.webhook_id,
            "webhook-timestamp": str(self.timestamp),
            "webhook-signature": self.signature,
            "content-type": self.content_type,
        }

    def text(self) -> str:
        """The body as text (SQS, SNS, EventBridge carry text only)."""
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _Refused("the body is not UTF-8 text, which this target requires") from err


@frozen
class SendResult:
    """How a send went: `error` None when the target took it; else whether to retry.
    `answer` is what the target answered, where it answers (a Lambda function's result)."""

    error: str | None
    retry: bool = False
    answer: str | None = None


# A client of another service with the same credentials and region ("s3" for offloading).
Clients = Callable[[str], Any]
POINTER_CLASS = "software.amazon.payloadoffloading.PayloadS3Pointer"


class _Refused(Exception):
    """A message this target cannot take, whatever is retried."""


class _FunctionFailed(Exception):
    """The function ran and failed: a failed attempt, retried on the schedule."""

    def __init__(self, reason: str, answer: str) -> None:
        super().__init__(reason)
        self.answer = answer


ANSWER_CHARS = 4096  # of a function's result kept for the attempt (bounded again there)


class AwsSenders:
    """Sends to the AWS kinds, through the assumed role's credentials (cached)."""

    def __init__(
        self,
        credentials: RoleCredentialCache,
        *,
        endpoint_url: str | None = None,
        client_factory: Callable[..., Any] = boto3.client,
        own: OwnResources | None = None,
    ) -> None:
        self.credentials = credentials
        # Checked again at send: an endpoint saved before the check, or a setting changed
        # since, never reaches Hookline's own resources (decision 0061).
        self.own = own or OwnResources()
        self.endpoint_url = endpoint_url
        self.client_factory = client_factory
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str, str], Any] = {}
        self._queue_urls: dict[str, str] = {}

    def send(
        self,
        kind: str,
        target_arn: str,
        role_arn: str,
        external_id: str,
        options: dict[str, Any],
        message: OutgoingMessage,
    ) -> SendResult:
        """Send one message; never raises for the target's or STS's refusals."""
        target = parse_target(kind, target_arn)
        refused = self.own.refusal(kind, target_arn, role_arn, options)
        if refused is not None:
            return SendResult(f"refused: {refused}")
        try:
            creds = self.credentials.get(role_arn, external_id, f"hookline-{message.webhook_id}")
            answer = SENDERS[kind](
                self, self._client(kind, target, creds), target, options, message,
                lambda service: self._client(service, target, creds),
            )  # fmt: skip
        except _Refused as err:
            return SendResult(str(err))
        except _FunctionFailed as err:
            return SendResult(str(err), retry=True, answer=err.answer)
        except TransformFailed as err:
            return SendResult(f"destination: {err}")
        except ClientError as err:
            return _classified(err)
        except BotoCoreError as err:  # connection, timeout, ...: retried
            return SendResult(f"{type(err).__name__}: {err}"[:500], retry=True)
        return SendResult(None, answer=answer)

    def _client(self, kind: str, target: Target, creds: RoleCredentials) -> Any:
        service = {
            "sqs": "sqs", "sns": "sns", "eventbridge": "events", "kinesis": "kinesis",
            "lambda": "lambda",
        }  # fmt: skip
        name = service.get(kind, "s3")  # "s3": the s3 kind, or an offload bucket
        region = target.region or "us-east-1"
        key = (name, region, creds.access_key_id)
        with self._lock:
            client = self._clients.get(key)
        if client is None:
            client = self.client_factory(
                name,
                region_name=region,
                endpoint_url=self.endpoint_url,
                aws_access_key_id=creds.access_key_id,
                aws_secret_access_key=creds.secret_access_key,
                aws_session_token=creds.session_token,
                config=_CONFIG,
            )
            with self._lock:
                self._clients[key] = client
        return client

    def queue_url(self, client: Any, target: Target) -> str:
        """The URL of a queue ARN (asked once per process)."""
        with self._lock:
            url = self._queue_urls.get(target.arn)
        if url is None:
            url = client.get_queue_url(
                QueueName=target.name, QueueOwnerAWSAccountId=target.account
            )["QueueUrl"]
            with self._lock:
                self._queue_urls[target.arn] = url
        return str(url)


def _classified(err: ClientError) -> SendResult:
    info = err.response.get("Error", {})
    code = str(info.get("Code") or "Unknown")
    status = int(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    reason = f"{code}: {info.get('Message') or ''}".strip().removesuffix(":")[:500]
    return SendResult(reason, retry=code in THROTTLING or status >= 500)


def _check_size(kind: str, size: int) -> None:
    limit = SIZE_LIMITS.get(kind)
    if limit is not None and size > limit:
        raise _Refused(f"the message is {size} bytes, over the {kind} limit of {limit}")


def _attributes(message: OutgoingMessage) -> dict[str, dict[str, str]]:
    return {
        name: {"DataType": "String", "StringValue": value}
        for name, value in message.signature_headers().items()
    }


def _group_id(options: dict[str, Any], message: OutgoingMessage) -> str:
    path = options.get("message_group_path") or "$.tenant_id"
    value = lookup_path(message.document, path)
    return (value if isinstance(value, str) else json.dumps(value))[:128]


def _attributes_size(message: OutgoingMessage) -> int:
    return sum(len(k) + len(v) + 6 for k, v in message.signature_headers().items())


def _body_or_pointer(
    kind: str, options: dict[str, Any], m: OutgoingMessage, clients: Clients
) -> tuple[str, dict[str, dict[str, str]]]:
    """The message body and attributes: the body itself, or, over the size limit with an
    `offload_bucket`, the body stored at `{offload_prefix}{webhook-id}` in that bucket and
    the pointer of Amazon's SQS/SNS extended client libraries sent instead (the signature
    attributes still sign the stored bytes; `ExtendedPayloadSize` is their size)."""
    body = m.text()
    size = len(m.body) + _attributes_size(m)
    bucket = options.get("offload_bucket")
    if not bucket or size <= SIZE_LIMITS[kind]:
        _check_size(kind, size)
        return body, _attributes(m)
    key = f"{options.get('offload_prefix') or ''}{m.webhook_id}"
    _put_object(clients("s3"), bucket, key, m)
    pointer = json.dumps([POINTER_CLASS, {"s3BucketName": bucket, "s3Key": key}])
    attributes = _attributes(m)
    attributes["ExtendedPayloadSize"] = {"DataType": "Number", "StringValue": str(len(m.body))}
    return pointer, attributes


def _put_object(s3: Any, bucket: str, key: str, m: OutgoingMessage) -> None:
    # The signature headers as object metadata, the body's content type as the object's.
    metadata = {k: v for k, v in m.signature_headers().items() if k != "content-type"}
    s3.put_object(
        Bucket=bucket, Key=key, Body=m.body, ContentType=m.content_type, Metadata=metadata
    )


def _fifo_fields(target: Target, options: dict[str, Any], m: OutgoingMessage) -> dict[str, str]:
    """FIFO queues and topics: dedupe on the webhook-id, group by the configured path."""
    if not target.fifo:
        return {}
    return {"MessageDeduplicationId": m.webhook_id, "MessageGroupId": _group_id(options, m)}


def send_sqs(
    senders: AwsSenders,
    client: Any,
    target: Target,
    options: dict[str, Any],
    m: OutgoingMessage,
    clients: Clients,
) -> str | None:
    """SendMessage; FIFO: MessageDeduplicationId = webhook-id, MessageGroupId from a path."""
    body, attributes = _body_or_pointer("sqs", options, m, clients)
    extra = _fifo_fields(target, options, m)
    client.send_message(
        QueueUrl=senders.queue_url(client, target),
        MessageBody=body,
        MessageAttributes=attributes,
        **extra,
    )
    return None


def send_sns(
    senders: AwsSenders,
    client: Any,
    target: Target,
    options: dict[str, Any],
    m: OutgoingMessage,
    clients: Clients,
) -> str | None:
    """Publish, with the signature as message attributes."""
    body, attributes = _body_or_pointer("sns", options, m, clients)
    extra = _fifo_fields(target, options, m)
    client.publish(TopicArn=target.arn, Message=body, MessageAttributes=attributes, **extra)
    return None


def send_eventbridge(
    senders: AwsSenders,
    client: Any,
    target: Target,
    options: dict[str, Any],
    m: OutgoingMessage,
    clients: Clients,
) -> str | None:
    """PutEvents: detail-type = event type, source configurable; the detail carries the
    signature in `metadata`, the exact signed body in `body`, and the body parsed as `data`
    when it is JSON (for rules to match on)."""
    body = m.text()
    detail: dict[str, Any] = {"metadata": m.signature_headers(), "body": body}
    with contextlib.suppress(ValueError):
        detail["data"] = json.loads(body)
    entry = {
        "Source": options.get("source") or "hookline",
        "DetailType": m.event_type,
        "Detail": json.dumps(detail, ensure_ascii=False),
        "EventBusName": target.arn,
    }
    _check_size("eventbridge", sum(len(str(v).encode()) for v in entry.values()))
    answer = client.put_events(Entries=[entry])
    if answer.get("FailedEntryCount"):
        failed = answer["Entries"][0]
        raise ClientError(
            {"Error": {"Code": failed.get("ErrorCode"), "Message": failed.get("ErrorMessage")}},
            "PutEvents",
        )
    return None


def send_kinesis(
    senders: AwsSenders,
    client: Any,
    target: Target,
    options: dict[str, Any],
    m: OutgoingMessage,
    clients: Clients,
) -> str | None:
    """PutRecord of an envelope {headers, body}; partition key from a path, else event id."""
    path = options.get("partition_key_path")
    key = m.event_id if not path else lookup_path(m.document, path)
    key = (key if isinstance(key, str) else json.dumps(key))[:256]
    data = _envelope(m)
    _check_size("kinesis", len(data) + len(key.encode()))
    client.put_record(StreamName=target.name, Data=data, PartitionKey=key)
    return None


def send_s3(
    senders: AwsSenders,
    client: Any,
    target: Target,
    options: dict[str, Any],
    m: OutgoingMessage,
    clients: Clients,
) -> str | None:
    """PutObject, one object per delivery at `{prefix}{webhook-id}`, signature as metadata."""
    _put_object(client, target.name, f"{options.get('prefix') or ''}{m.webhook_id}", m)
    return None


def send_lambda(
    senders: AwsSenders,
    client: Any,
    target: Target,
    options: dict[str, Any],
    m: OutgoingMessage,
    clients: Clients,
) -> str | None:
    """Invoke the function synchronously (RequestResponse, decision 0057) with the envelope
    `{"headers": {...}, "body": "<the exact signed text>"}`; returns the function's result.
    An error the function raised (`FunctionError`) is a failed attempt with that error."""
    data = _envelope(m)
    _check_size("lambda", len(data))
    answer = client.invoke(FunctionName=target.arn, InvocationType="RequestResponse", Payload=data)
    stream = answer.get("Payload")
    result = stream.read(ANSWER_CHARS * 4).decode("utf-8", "replace") if stream else ""
    result = result[:ANSWER_CHARS]
    if answer.get("FunctionError"):
        raise _FunctionFailed(_function_error(answer["FunctionError"], result), result)
    return result


def _envelope(m: OutgoingMessage) -> bytes:
    return json.dumps({"headers": m.signature_headers(), "body": m.text()}).encode()


def _function_error(kind: str, result: str) -> str:
    # Lambda answers {"errorType": ..., "errorMessage": ...} for an error the function raised.
    try:
        error = json.loads(result)
    except ValueError:
        error = None
    if isinstance(error, dict) and ("errorType" in error or "errorMessage" in error):
        detail = f"{error.get('errorType') or 'Error'}: {error.get('errorMessage') or ''}"
    else:
        detail = result
    return f"FunctionError ({kind}): {detail}".strip().removesuffix(":")[:500]


SENDERS: dict[
    str, Callable[[AwsSenders, Any, Target, dict[str, Any], OutgoingMessage, Clients], str | None]
] = {
    "sqs": send_sqs,
    "sns": send_sns,
    "eventbridge": send_eventbridge,
    "kinesis": send_kinesis,
    "s3": send_s3,
    "lambda": send_lambda,
}
