"""The delivery queues: one SQS queue per tenant group. SQS is transport only — the
database holds the state, so a lost message is found again by the reconciler."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from hookline.carried import CarriedEvent
from hookline.config import DEFAULT_RESOURCE_PREFIX, HooklineConfig
from hookline.errors import BadRequest
from hookline.records import frozen

MAX_DELAY_SECONDS = 900  # SQS's longest DelaySeconds: 15 minutes
BATCH = 10  # SendMessageBatch takes at most 10 entries
TRACEPARENT = "traceparent"  # the message attribute that carries a trace (decision 0070)


@frozen
class DeadLetter:
    """A message received from a tenant group's dead-letter queue, to be moved back."""

    message_id: str
    body: str
    receipt_handle: str
    attributes: dict[str, Any]  # its message attributes, as SendMessage takes them
    group_id: str | None  # its MessageGroupId, kept when it is moved back

    @classmethod
    def from_sqs(cls, message: dict[str, Any]) -> DeadLetter:
        """A message as ReceiveMessage returned it."""
        attributes = {
            name: {
                k: v for k, v in value.items() if k in ("DataType", "StringValue", "BinaryValue")
            }
            for name, value in (message.get("MessageAttributes") or {}).items()
        }
        return cls(
            message_id=str(message.get("MessageId", "?")),
            body=message["Body"],
            receipt_handle=message["ReceiptHandle"],
            attributes=attributes,
            group_id=(message.get("Attributes") or {}).get("MessageGroupId"),
        )

    def label(self) -> str:
        """The delivery id of a delivery message, else the SQS message id."""
        try:
            return DeliveryMessage.parse(self.body)[0]
        except BadRequest:
            return self.message_id


@frozen
class DeliveryMessage:
    """What a queue message says: which delivery, and which enqueue generation; for a
    deferral sent back to the queue, how many times in a row it was deferred."""

    delivery_id: str
    seq: int
    endpoint_id: str
    tenant_group: str
    deferrals: int = 0
    # The W3C traceparent of a traced event's enqueue span, sent as a message attribute (not
    # in the body): None when tracing is off or the event was not sampled (decision 0070).
    traceparent: str | None = None
    # How long SQS hides the message once sent (a retry's wait); None: the send's delay.
    delay_seconds: float | None = None
    # The event, carried by a first message sent at receipt (decision 0108).
    carried: CarriedEvent | None = None

    def body(self) -> str:
        """The message body."""
        doc: dict[str, Any] = {"delivery_id": self.delivery_id, "seq": self.seq}
        if self.deferrals:
            doc["deferrals"] = self.deferrals
        if self.carried is None:
            return json.dumps(doc)
        doc["endpoint_id"], doc["tenant_group"] = self.endpoint_id, self.tenant_group
        # the event's part, encoded once for all of its deliveries' messages
        return json.dumps(doc)[:-1] + ', "event": ' + self.carried.encoded + "}"

    @staticmethod
    def carrying(body: str) -> DeliveryMessage | None:
        """The message a body is, when it carries its event (decision 0108); None for one that
        carries none, or not well formed (claimed as any other)."""
        try:
            doc = json.loads(body)
            delivery_id, seq = doc["delivery_id"], doc["seq"]
            endpoint_id, group = doc["endpoint_id"], doc["tenant_group"]
        except (ValueError, KeyError, TypeError):
            return None
        texts = (delivery_id, endpoint_id, group)
        if not all(isinstance(t, str) for t in texts) or not isinstance(seq, int):
            return None
        event = CarriedEvent.from_doc(doc.get("event"))
        if event is None:
            return None
        return DeliveryMessage(delivery_id, seq, endpoint_id, group, carried=event)

    @staticmethod
    def deferrals_in(body: str) -> int:
        """How many times in a row the message's delivery was deferred (0 if not said)."""
        try:
            value = json.loads(body).get("deferrals", 0)
        except (ValueError, AttributeError):
            return 0
        return value if isinstance(value, int) and value > 0 else 0

    @staticmethod
    def parse(body: str) -> tuple[str, int]:
        """(delivery id, generation) of a message body; BadRequest if it is not ours."""
        try:
            doc = json.loads(body)
            delivery_id, seq = doc["delivery_id"], doc["seq"]
        except (ValueError, KeyError, TypeError) as err:
            raise BadRequest("not a delivery message") from err
        if not isinstance(delivery_id, str) or not isinstance(seq, int):
            raise BadRequest("not a delivery message")
        return delivery_id, seq


class DeliveryQueues:
    """Sends delivery messages to the queue of their tenant group."""

    def __init__(
        self,
        sqs: Any,
        config: HooklineConfig,
        *,
        url_prefix: str | None = None,
        fair_queues: bool = True,
        name_prefix: str = DEFAULT_RESOURCE_PREFIX,
    ) -> None:
        self.sqs = sqs
        self.config = config
        self.url_prefix = url_prefix
        self.name_prefix = name_prefix
        self.fair_queues = fair_queues
        self._urls: dict[str, str] = {}

    def url(self, group: str) -> str:
        """The queue URL of a tenant group (from the prefix, else looked up once)."""
        if group not in self._urls:
            name = self.config.group(group).queue_name_for(self.name_prefix)
            if self.url_prefix:
                self._urls[group] = self.url_prefix.rstrip("/") + "/" + name
            else:
                self._urls[group] = self.sqs.get_queue_url(QueueName=name)["QueueUrl"]
        return self._urls[group]

    def dlq_url(self, group: str) -> str:
        """The dead-letter queue URL of a tenant group."""
        name = self.config.group(group).dlq_name_for(self.name_prefix)
        if self.url_prefix:
            return self.url_prefix.rstrip("/") + "/" + name
        return str(self.sqs.get_queue_url(QueueName=name)["QueueUrl"])

    def dlq_depth(self, group: str) -> int:
        """SQS's estimate of how many messages wait in a tenant group's dead-letter queue."""
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.dlq_url(group), AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attributes.get("ApproximateNumberOfMessages", 0))

    def oldest_dead_letter_sent_at(self, group: str) -> datetime | None:
        """When the oldest of up to BATCH dead letters SQS returns was first sent (None: it
        returned none). A peek: the messages stay visible (visibility 0), so a redrive is not
        held up. SQS samples a standard queue, so on a deep one this is an estimate (the
        `ApproximateAgeOfOldestMessage` metric in CloudWatch is the exact figure)."""
        messages = self.sqs.receive_message(
            QueueUrl=self.dlq_url(group),
            MaxNumberOfMessages=BATCH,
            WaitTimeSeconds=0,
            VisibilityTimeout=0,
            MessageSystemAttributeNames=["SentTimestamp"],
        ).get("Messages", [])
        sent = [int((m.get("Attributes") or {}).get("SentTimestamp", 0)) for m in messages]
        sent = [s for s in sent if s > 0]
        return datetime.fromtimestamp(min(sent) / 1000, UTC) if sent else None

    def receive_dead_letters(
        self, group: str, max_messages: int, *, wait_seconds: int, visibility_seconds: int
    ) -> list[DeadLetter]:
        """Up to `max_messages` (at most BATCH) messages of a group's dead-letter queue, hidden
        for `visibility_seconds`: not moved back by then, they reappear there."""
        messages = self.sqs.receive_message(
            QueueUrl=self.dlq_url(group),
            MaxNumberOfMessages=min(BATCH, max_messages),
            WaitTimeSeconds=wait_seconds,
            VisibilityTimeout=visibility_seconds,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["MessageGroupId"],
        ).get("Messages", [])
        return [DeadLetter.from_sqs(m) for m in messages]

    def redrive(self, group: str, letters: Sequence[DeadLetter]) -> list[DeadLetter]:
        """Move dead letters back to their group's queue, body, attributes and message group
        as they were; return those moved. One SQS did not accept stays in the dead-letter
        queue and reappears after its visibility timeout."""
        if not letters:
            return []
        entries = []
        for i, letter in enumerate(letters):
            entry: dict[str, Any] = {"Id": str(i), "MessageBody": letter.body}
            if letter.attributes:
                entry["MessageAttributes"] = letter.attributes
            if letter.group_id:
                entry["MessageGroupId"] = letter.group_id
            entries.append(entry)
        answer = self.sqs.send_message_batch(QueueUrl=self.url(group), Entries=entries)
        failed = {f["Id"] for f in answer.get("Failed", [])}
        sent = [(i, letter) for i, letter in enumerate(letters) if str(i) not in failed]
        if sent:
            self.sqs.delete_message_batch(
                QueueUrl=self.dlq_url(group),
                Entries=[{"Id": str(i), "ReceiptHandle": d.receipt_handle} for i, d in sent],
            )
        return [letter for _, letter in sent]

    def send(
        self, messages: Sequence[DeliveryMessage], delay_seconds: float = 0
    ) -> list[DeliveryMessage]:
        """Send messages (batched per group), each after its own delay or `delay_seconds`;
        return those SQS did not accept."""
        failed: list[DeliveryMessage] = []
        by_group: dict[str, list[DeliveryMessage]] = {}
        for message in messages:
            by_group.setdefault(message.tenant_group, []).append(message)
        for group, batch in by_group.items():
            for start in range(0, len(batch), BATCH):
                failed += self._send_batch(group, batch[start : start + BATCH], delay_seconds)
        return failed

    def _send_batch(
        self, group: str, batch: Sequence[DeliveryMessage], delay_seconds: float
    ) -> list[DeliveryMessage]:
        entries = []
        for i, message in enumerate(batch):
            delay = delay_seconds if message.delay_seconds is None else message.delay_seconds
            entry: dict[str, Any] = {
                "Id": str(i),
                "MessageBody": message.body(),
                "DelaySeconds": min(MAX_DELAY_SECONDS, max(0, math.ceil(delay))),
            }
            if self.fair_queues:
                # SQS fair queues: one noisy endpoint does not raise everyone's dwell time.
                entry["MessageGroupId"] = message.endpoint_id
            if message.traceparent:
                entry["MessageAttributes"] = {
                    TRACEPARENT: {"DataType": "String", "StringValue": message.traceparent}
                }
            entries.append(entry)
        try:
            answer = self.sqs.send_message_batch(QueueUrl=self.url(group), Entries=entries)
        except Exception:  # the database still says queued; the caller puts them back
            return list(batch)
        return [batch[int(f["Id"])] for f in answer.get("Failed", [])]
