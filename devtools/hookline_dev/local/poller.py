"""Lambda's SQS event source mapping, emulated for one queue.

No emulator runs Lambda code without Docker, so locally the deliver handler is called
in-process, and this module plays the part of the event source mapping that AWS runs in front
of it: pollers long-poll the queue, hand the function a real SQS event of up to `batch_size`
records, and delete what succeeded. The rules are AWS's, because the handler's retry and
dead-letter behaviour depends on them:

* a function error (the handler raises) fails the whole batch: nothing is deleted, SQS makes
  the messages visible again after the visibility timeout, and the redrive policy moves a
  message to the DLQ after `maxReceiveCount` receives;
* with ReportBatchItemFailures (what the stack enables), `{"batchItemFailures": [...]}` keeps
  exactly those messages; an empty or missing list means all succeeded; an item that names no
  message of the batch, or a response that is not a JSON object, fails the whole batch;
* `max_concurrency` caps the batches in flight (the mapping's MaximumConcurrency), here one
  worker thread per batch in flight;
* with a batching window, records are gathered for up to that long or until the batch is full.

Standard queues only: FIFO ordering (stop at the first failure of a message group) is not
emulated, because Hookline's queues are standard queues with `MessageGroupId` (fair queues).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hookline_dev.local.apigw import LocalContext

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import (
        DeleteMessageBatchRequestEntryTypeDef,
        MessageAttributeValueOutputTypeDef,
        MessageTypeDef,
    )

    from hookline.config import TenantGroup
    from hookline_dev.local.queues import GroupQueues

logger = logging.getLogger("hookline.local")

SqsHandler = Callable[[dict[str, Any], Any], dict[str, Any] | None]
"""A Lambda handler for SQS events: `(event, context) -> {"batchItemFailures": [...]} | None`."""

ContextFactory = Callable[[], Any]
"""Makes the Lambda context object of one invocation."""

MAX_RECEIVE = 10  # ReceiveMessage and DeleteMessageBatch take at most 10 messages
MAX_WAIT_SECONDS = 20  # the longest long poll SQS allows
MAX_BATCHING_WINDOW_SECONDS = 300
_IDLE_PAUSE_SECONDS = 0.05
_RETRY_PAUSE_SECONDS = (0.5, 5.0)  # a worker that cannot reach SQS backs off from .5 s to 5 s


@dataclass(frozen=True)
class EventSourceStats:
    """What an event source has done so far, for a status line."""

    batches: int = 0  # handler invocations
    messages: int = 0  # records handed to the handler (a redelivered message counts again)
    succeeded: int = 0  # records deleted as done
    failed: int = 0  # records left on the queue to be received again
    function_errors: int = 0  # invocations that raised or answered nonsense (whole batch failed)
    in_flight: int = 0  # batches in the handler right now

    def __str__(self) -> str:
        return (
            f"{self.batches} batches, {self.messages} messages: {self.succeeded} ok, "
            f"{self.failed} failed ({self.function_errors} function errors), "
            f"{self.in_flight} in flight"
        )


class SqsEventSource:
    """The Lambda SQS event source mapping of one queue, invoking `handler` in-process.

    Use `start()` / `stop()` (or `with source:`) to run it in the background, or `poll_once()`
    to process one batch synchronously in a test.
    """

    def __init__(
        self,
        sqs: SQSClient,
        queue_url: str,
        handler: SqsHandler,
        *,
        queue_arn: str | None = None,
        batch_size: int = 10,
        max_concurrency: int = 2,
        batching_window_seconds: float = 0,
        wait_seconds: int = 1,
        function_name: str = "hookline-local",
        context_factory: ContextFactory | None = None,
        region: str | None = None,
        report_batch_item_failures: bool = True,
    ) -> None:
        """Wire `handler` to the queue at `queue_url`; nothing is received until asked.

        `queue_arn` becomes each record's `eventSourceARN` (fetched from SQS when not given);
        `region` is `awsRegion` (default: the ARN's). `wait_seconds` is the long-poll wait of
        each ReceiveMessage: short by default so that `stop()` is prompt. `context_factory`
        makes each invocation's context (default: a `LocalContext` named `function_name`).
        The workers share `sqs` (boto3 clients are thread-safe); past 10 workers, give it a
        `Config(max_pool_connections=...)` as large as `max_concurrency`.
        """
        if not 1 <= batch_size <= 10_000:
            raise ValueError("batch_size must be 1..10000")
        if batch_size > MAX_RECEIVE and batching_window_seconds <= 0:
            raise ValueError("batch_size > 10 needs a batching window (as on AWS)")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if not 0 <= batching_window_seconds <= MAX_BATCHING_WINDOW_SECONDS:
            raise ValueError("batching_window_seconds must be 0..300")
        if not 0 <= wait_seconds <= MAX_WAIT_SECONDS:
            raise ValueError("wait_seconds must be 0..20")
        self._sqs = sqs
        self.queue_url = queue_url
        self.handler = handler
        if queue_arn is None:
            attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
            queue_arn = attributes["Attributes"]["QueueArn"]
        self.queue_arn = queue_arn
        self.region = region or queue_arn.split(":")[3]
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self.batching_window_seconds = batching_window_seconds
        self.wait_seconds = wait_seconds
        self.function_name = function_name
        self._context_factory = context_factory or (
            lambda: LocalContext(function_name=function_name)
        )
        self.report_batch_item_failures = report_batch_item_failures
        self._lock = threading.Lock()
        self._stats = EventSourceStats()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @classmethod
    def for_group(
        cls,
        sqs: SQSClient,
        group: TenantGroup,
        queues: GroupQueues,
        handler: SqsHandler,
        **options: Any,
    ) -> SqsEventSource:
        """The event source of a tenant group's queue, sized as the stack sizes it on AWS."""
        settings: dict[str, Any] = {
            "batch_size": group.batch_size,
            "max_concurrency": group.max_concurrency,
            "batching_window_seconds": group.batching_window_seconds,
            "function_name": f"hookline-deliver-{group.name}",
        }
        settings.update(options)
        return cls(sqs, queues.url, handler, queue_arn=queues.arn, **settings)

    @property
    def queue_name(self) -> str:
        """The queue's name (the last part of its ARN)."""
        return self.queue_arn.rsplit(":", 1)[-1]

    @property
    def stats(self) -> EventSourceStats:
        """A snapshot of the counters."""
        with self._lock:
            return self._stats

    @property
    def running(self) -> bool:
        """Whether worker threads are polling (or finishing their last batch)."""
        with self._lock:
            return any(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        """Start `max_concurrency` worker threads that poll, invoke and delete until stopped."""
        with self._lock:
            if any(thread.is_alive() for thread in self._threads):
                raise RuntimeError(f"event source of {self.queue_name} is already running")
            # Each run gets its own stop signal, so a restart cannot revive a stopping worker.
            self._stopping = threading.Event()
            self._threads = [
                threading.Thread(
                    target=self._work,
                    args=(self._stopping,),
                    name=f"sqs-{self.queue_name}-{n}",
                    # A forgotten stop() must not keep the interpreter alive; stop() joins them.
                    daemon=True,
                )
                for n in range(self.max_concurrency)
            ]
            threads = list(self._threads)
        for thread in threads:
            thread.start()
        logger.info(
            "polling %s: batch size %d, concurrency %d, window %ss",
            self.queue_name,
            self.batch_size,
            self.max_concurrency,
            self.batching_window_seconds,
        )

    def stop(self, timeout: float | None = None) -> bool:
        """Stop receiving and wait for in-flight batches to finish (up to `timeout` seconds).

        Returns whether every worker finished. A worker's current long poll ends within
        `wait_seconds`; messages it receives then are still processed, not abandoned.
        """
        with self._lock:
            stopping, threads = self._stopping, list(self._threads)
        stopping.set()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        alive = [thread for thread in threads if thread.is_alive()]
        with self._lock:
            self._threads = alive
        if alive:
            logger.warning(
                "%s: %d worker(s) still in a batch after %ss", self.queue_name, len(alive), timeout
            )
        return not alive

    def __enter__(self) -> SqsEventSource:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def poll_once(self, wait_seconds: int | None = None) -> int:
        """Receive and process at most one batch, here and now; the number of messages in it.

        For deterministic tests. Waits up to `wait_seconds` (default: the source's) for a
        first message, then applies the batching window as the workers do.
        """
        wait = self.wait_seconds if wait_seconds is None else wait_seconds
        messages = self._receive_batch(wait, threading.Event())
        if messages:
            self._process(messages)
        return len(messages)

    # -- the worker ---------------------------------------------------------------------------

    def _work(self, stopping: threading.Event) -> None:
        pause = _RETRY_PAUSE_SECONDS[0]
        while not stopping.is_set():
            try:
                messages = self._receive_batch(self.wait_seconds, stopping)
            except Exception:
                # The emulator restarting or the queue being recreated must not end the worker.
                logger.exception("%s: receiving failed; retrying in %ss", self.queue_name, pause)
                stopping.wait(pause)
                pause = min(pause * 2, _RETRY_PAUSE_SECONDS[1])
                continue
            pause = _RETRY_PAUSE_SECONDS[0]
            if not messages:
                if self.wait_seconds == 0:
                    stopping.wait(_IDLE_PAUSE_SECONDS)  # short polls: do not spin on an empty queue
                continue
            try:
                self._process(messages)
            except Exception:
                # _process already contains handler and delete errors; this is a bug here.
                logger.exception("%s: processing a batch failed", self.queue_name)

    def _receive_batch(self, wait_seconds: int, stopping: threading.Event) -> list[MessageTypeDef]:
        first = self._receive(min(self.batch_size, MAX_RECEIVE), wait_seconds)
        if not first or self.batching_window_seconds <= 0:
            return first
        # The window opens with the first record, as Lambda's does: gather until full or closed.
        # Keyed by message id: if the window outlasts the visibility timeout (AWS says it must
        # not), a message comes back with a new receipt handle, and only the newest deletes it.
        batch = {m["MessageId"]: m for m in first}
        closes = time.monotonic() + self.batching_window_seconds
        while len(batch) < self.batch_size and not stopping.is_set():
            remaining = closes - time.monotonic()
            if remaining <= 0:
                break
            # ReceiveMessage waits in whole seconds; below one, short-poll and pause briefly.
            wait = min(int(remaining), max(self.wait_seconds, 1), MAX_WAIT_SECONDS)
            more = self._receive(min(self.batch_size - len(batch), MAX_RECEIVE), wait)
            batch.update((m["MessageId"], m) for m in more)
            if not more and wait == 0:
                stopping.wait(min(remaining, _IDLE_PAUSE_SECONDS))
        return list(batch.values())

    def _receive(self, count: int, wait_seconds: int) -> list[MessageTypeDef]:
        response = self._sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=count,
            WaitTimeSeconds=wait_seconds,
            # Both spellings: older emulators know only AttributeNames, AWS prefers the new one.
            AttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return list(response.get("Messages", []))

    def _process(self, messages: Sequence[MessageTypeDef]) -> None:
        event = build_sqs_event(messages, event_source_arn=self.queue_arn, region=self.region)
        with self._lock:
            self._stats = _add(self._stats, batches=1, messages=len(messages), in_flight=1)
        message_ids = [m["MessageId"] for m in messages]
        # Until the handler has answered, the batch counts as failed (say, Ctrl-C in poll_once).
        retry, function_error = set(message_ids), True
        try:
            retry, function_error = self._invoke(event, message_ids)
        finally:
            done = [m for m in messages if m["MessageId"] not in retry]
            with self._lock:
                self._stats = _add(
                    self._stats,
                    succeeded=len(done),
                    failed=len(messages) - len(done),
                    function_errors=int(function_error),
                    in_flight=-1,
                )
        self._delete(done)

    def _invoke(self, event: dict[str, Any], message_ids: list[str]) -> tuple[set[str], bool]:
        """Call the handler; the ids to leave on the queue, and whether it was a function error."""
        everything = set(message_ids)
        try:
            response = self.handler(event, self._context_factory())
            # What the Lambda runtime would send back: an unserialisable result is an error there.
            answer = json.loads(json.dumps(response))
        except (Exception, SystemExit):  # sys.exit() in a handler is a function error on AWS too
            logger.exception(
                "%s: handler %s failed a batch of %d; it stays on the queue (message ids %s)",
                self.queue_name,
                self.function_name,
                len(message_ids),
                ", ".join(message_ids),
            )
            return everything, True
        if not self.report_batch_item_failures:
            return set(), False  # without ReportBatchItemFailures, Lambda ignores the response
        retry = batch_item_failures(answer, message_ids)
        if retry is None:
            logger.error(
                "%s: handler %s answered an invalid batch response %.200r; the whole batch "
                "of %d stays on the queue",
                self.queue_name,
                self.function_name,
                answer,
                len(message_ids),
            )
            return everything, True
        return retry, False

    def _delete(self, messages: Sequence[MessageTypeDef]) -> None:
        for start in range(0, len(messages), MAX_RECEIVE):
            chunk = messages[start : start + MAX_RECEIVE]
            entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(chunk)
            ]
            try:
                response = self._sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except Exception:
                # As on AWS, a message that could not be deleted is simply received again.
                logger.exception(
                    "%s: deleting %d done message(s) failed; they will be redelivered",
                    self.queue_name,
                    len(chunk),
                )
                continue
            for failure in response.get("Failed", []):
                logger.warning(
                    "%s: could not delete message %s (%s: %s); it will be redelivered",
                    self.queue_name,
                    chunk[int(failure["Id"])]["MessageId"],
                    failure.get("Code"),
                    failure.get("Message"),
                )


def batch_item_failures(response: object, message_ids: Sequence[str]) -> set[str] | None:
    """The message ids a partial batch response asks to retry; None when it fails the batch.

    Lambda's rules: no response, `{}`, or a null or empty `batchItemFailures` is full success;
    a response that is not an object, a list that is not a list of `{"itemIdentifier": id}`,
    or an id that is not in the batch fails the whole batch.
    """
    if response is None:
        return set()
    if not isinstance(response, dict):
        return None
    items = response.get("batchItemFailures")
    if items is None:
        return set()
    if not isinstance(items, list):
        return None
    known = set(message_ids)
    retry: set[str] = set()
    for item in items:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not isinstance(identifier, str) or identifier not in known:
            return None
        retry.add(identifier)
    return retry


def build_sqs_event(
    messages: Sequence[MessageTypeDef], *, event_source_arn: str, region: str
) -> dict[str, Any]:
    """The event Lambda's SQS event source hands a function for these received messages."""
    return {
        "Records": [
            sqs_record(message, event_source_arn=event_source_arn, region=region)
            for message in messages
        ]
    }


def sqs_record(message: MessageTypeDef, *, event_source_arn: str, region: str) -> dict[str, Any]:
    """One record of an SQS event, from one message as ReceiveMessage returned it."""
    record: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        # SQS's system attribute names are the event's: ApproximateReceiveCount, SentTimestamp,
        # SenderId, ApproximateFirstReceiveTimestamp, MessageGroupId, AWSTraceHeader...
        "attributes": dict(message.get("Attributes", {})),
        "messageAttributes": {
            name: _message_attribute(value)
            for name, value in message.get("MessageAttributes", {}).items()
        },
    }
    if "MD5OfMessageAttributes" in message:
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    record.update(
        {
            "md5OfBody": message["MD5OfBody"],
            "eventSource": "aws:sqs",
            "eventSourceARN": event_source_arn,
            "awsRegion": region,
        }
    )
    return record


def _message_attribute(value: MessageAttributeValueOutputTypeDef) -> dict[str, Any]:
    # boto3 decodes binary values to bytes; the Lambda event carries them base64-encoded.
    attribute: dict[str, Any] = {}
    if "StringValue" in value:
        attribute["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        attribute["binaryValue"] = _b64(value["BinaryValue"])
    attribute["stringListValues"] = list(value.get("StringListValues", []))
    attribute["binaryListValues"] = [_b64(b) for b in value.get("BinaryListValues", [])]
    attribute["dataType"] = value["DataType"]
    return attribute


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _add(stats: EventSourceStats, **deltas: int) -> EventSourceStats:
    return replace(stats, **{name: getattr(stats, name) + n for name, n in deltas.items()})
