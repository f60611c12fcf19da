"""The local SQS event source: Lambda's polling, batching, deleting and retry rules on moto."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes import SQSEvent
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from hookline.config import HooklineConfig, TenantGroup
from hookline_dev.local.poller import SqsEventSource
from hookline_dev.local.queues import GroupQueues, ensure_queues
from tests.support.aws import moto_endpoint, sqs  # noqa: F401

pytestmark = pytest.mark.integration

# A short visibility timeout, so a failed message is back within a second.
VISIBILITY = 1


@pytest.fixture
def config() -> HooklineConfig:
    return HooklineConfig(tenant_groups=(TenantGroup("standard", max_receive_count=2),))


@pytest.fixture
def queues(sqs, config) -> GroupQueues:  # noqa: F811
    return ensure_queues(sqs, config, visibility_timeout_seconds=VISIBILITY)["standard"]


def send(sqs, queues: GroupQueues, *bodies: str) -> list[str]:  # noqa: F811
    """Send each body as one message; their message ids."""
    return [sqs.send_message(QueueUrl=queues.url, MessageBody=b)["MessageId"] for b in bodies]


def counts(sqs, url: str) -> tuple[int, int]:  # noqa: F811
    """(visible, in flight) messages of a queue."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return int(attributes[names[0]]), int(attributes[names[1]])


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def powertools_handler(fail_bodies: set[str]) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """A deliver-style handler: Powertools' BatchProcessor, one record raising to be retried."""
    processor = BatchProcessor(event_type=EventType.SQS)

    def record_handler(record: SQSRecord) -> None:
        if record.body in fail_bodies:
            raise RuntimeError(f"cannot deliver {record.body}")

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )

    return handler


def test_ensure_queues_wires_redrive_and_is_idempotent(sqs, config):  # noqa: F811
    first = ensure_queues(sqs, config)
    again = ensure_queues(sqs, config)

    assert again == first
    attributes = sqs.get_queue_attributes(QueueUrl=first["standard"].url, AttributeNames=["All"])
    assert json.loads(attributes["Attributes"]["RedrivePolicy"]) == {
        "deadLetterTargetArn": first["standard"].dlq_arn,
        "maxReceiveCount": 2,
    }
    assert attributes["Attributes"]["VisibilityTimeout"] == str(
        config.deliver_function_timeout_seconds * 6
    )


def test_ensure_queues_converges_a_changed_queue_and_keeps_its_messages(sqs, config):  # noqa: F811
    before = ensure_queues(sqs, config)["standard"]
    send(sqs, before, "kept")
    changed = HooklineConfig(tenant_groups=(TenantGroup("standard", max_receive_count=7),))

    after = ensure_queues(sqs, changed, visibility_timeout_seconds=5)["standard"]

    assert after == before
    attributes = sqs.get_queue_attributes(QueueUrl=after.url, AttributeNames=["All"])
    assert json.loads(attributes["Attributes"]["RedrivePolicy"])["maxReceiveCount"] == 7
    assert attributes["Attributes"]["VisibilityTimeout"] == "5"
    assert counts(sqs, after.url) == (1, 0)


def test_a_tenant_groups_event_source_is_sized_like_on_aws(sqs, queues):  # noqa: F811
    group = TenantGroup("standard", max_concurrency=3, batch_size=4, batching_window_seconds=2)

    source = SqsEventSource.for_group(sqs, group, queues, lambda event, context: None)

    assert (source.batch_size, source.max_concurrency, source.batching_window_seconds) == (4, 3, 2)
    assert (source.queue_arn, source.queue_name) == (queues.arn, "hookline-deliver-standard")
    assert source.function_name == "hookline-deliver-standard"


def test_handler_sees_real_sqs_records_and_successes_are_deleted(sqs, queues):  # noqa: F811
    # Given two messages, one with attributes and a message group, as fan-out sends them
    plain = send(sqs, queues, "plain")[0]
    grouped = sqs.send_message(
        QueueUrl=queues.url,
        MessageBody='{"delivery": "d1"}',
        MessageGroupId="endpoint-1",
        MessageAttributes={
            "kind": {"DataType": "String", "StringValue": "delivery"},
            "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
        },
    )["MessageId"]
    events: list[dict[str, Any]] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        events.append(event)

    source = SqsEventSource(sqs, queues.url, handler, batch_size=10, function_name="deliver")

    # When one batch is polled
    processed = source.poll_once()

    # Then the handler got one real SQS event with both records
    assert processed == 2
    [event] = events
    records = {r.message_id: r for r in SQSEvent(event).records}
    assert set(records) == {plain, grouped}
    assert records[plain].body == "plain"
    assert records[grouped].json_body == {"delivery": "d1"}
    for record in records.values():
        assert record.attributes.approximate_receive_count == "1"
        assert record.event_source == "aws:sqs"
        assert record.event_source_arn == queues.arn
        assert record.aws_region == "us-east-1"
        assert record.receipt_handle
        assert record.md5_of_body
    assert records[grouped].attributes.message_group_id == "endpoint-1"
    assert records[grouped].raw_event["messageAttributes"] == {
        "kind": {
            "stringValue": "delivery",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "String",
        },
        "blob": {
            "binaryValue": "AP8=",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "Binary",
        },
    }
    assert records[plain].raw_event["messageAttributes"] == {}
    # And both messages are deleted, not merely hidden
    assert counts(sqs, queues.url) == (0, 0)
    assert (source.stats.batches, source.stats.succeeded, source.stats.failed) == (1, 2, 0)


def test_a_partial_batch_failure_leaves_only_the_failed_message(sqs, queues):  # noqa: F811
    # Given three messages and a Powertools handler that cannot deliver "b"
    ids = dict(zip("abc", send(sqs, queues, "a", "b", "c"), strict=True))
    source = SqsEventSource(sqs, queues.url, powertools_handler({"b"}))

    # When the batch is processed
    assert source.poll_once() == 3

    # Then only "b" is left, in flight until its visibility timeout ends
    assert counts(sqs, queues.url) == (0, 1)
    assert (source.stats.succeeded, source.stats.failed, source.stats.function_errors) == (2, 1, 0)
    # And it comes back, received for the second time
    seen: list[dict[str, Any]] = []
    again = SqsEventSource(sqs, queues.url, lambda event, context: seen.append(event))
    assert again.poll_once(wait_seconds=VISIBILITY + 2) == 1
    [record] = seen[0]["Records"]
    assert (record["messageId"], record["body"]) == (ids["b"], "b")
    assert record["attributes"]["ApproximateReceiveCount"] == "2"


def test_a_failure_naming_an_unknown_message_fails_the_whole_batch(sqs, queues):  # noqa: F811
    send(sqs, queues, "a", "b")

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"batchItemFailures": [{"itemIdentifier": "not-in-this-batch"}]}

    source = SqsEventSource(sqs, queues.url, handler)
    assert source.poll_once() == 2

    assert counts(sqs, queues.url) == (0, 2)
    assert (source.stats.succeeded, source.stats.failed, source.stats.function_errors) == (0, 2, 1)


def test_a_message_that_always_fails_ends_in_the_dlq(sqs, queues, caplog):  # noqa: F811
    # Given a handler that crashes on every batch, and maxReceiveCount 2
    caplog.set_level(logging.ERROR, logger="hookline.local")
    [message_id] = send(sqs, queues, "poison")
    receive_counts: list[str] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        receive_counts.extend(r["attributes"]["ApproximateReceiveCount"] for r in event["Records"])
        raise RuntimeError("boom")

    # When the event source runs until SQS gives up on the message
    with SqsEventSource(sqs, queues.url, handler, max_concurrency=1) as source:
        wait_until(lambda: counts(sqs, queues.dlq_url) == (1, 0))
        # Then the worker survived both crashes
        assert source.running

    # And the handler saw it twice before it moved to the DLQ, untouched
    assert receive_counts == ["1", "2"]
    assert source.stats.function_errors == 2
    dead = sqs.receive_message(QueueUrl=queues.dlq_url)["Messages"]
    assert [(m["MessageId"], m["Body"]) for m in dead] == [(message_id, "poison")]
    assert counts(sqs, queues.url) == (0, 0)
    # And each crash was logged with its traceback
    crashes = [r for r in caplog.records if r.name == "hookline.local" and r.exc_info]
    assert len(crashes) == 2
    assert message_id in crashes[0].getMessage()


def test_max_concurrency_caps_the_batches_in_flight(sqs, queues):  # noqa: F811
    # Given 20 messages and a handler that takes 0.2 s per batch of one
    bodies = {f"m{n}" for n in range(20)}
    send(sqs, queues, *sorted(bodies))
    lock = threading.Lock()
    active, peak = 0, 0
    handled: list[str] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.2)
        with lock:
            active -= 1
            handled.extend(r["body"] for r in event["Records"])

    # When the event source runs with a concurrency of 2
    with SqsEventSource(sqs, queues.url, handler, batch_size=1, max_concurrency=2) as source:
        wait_until(lambda: source.stats.succeeded >= 20)

    # Then every message was handled, never more than two batches at once, and both slots used
    assert set(handled) == bodies
    assert peak == 2
    assert counts(sqs, queues.url) == (0, 0)


def test_stop_lets_the_batch_in_flight_finish(sqs, queues):  # noqa: F811
    # Given a batch in the middle of a slow handler
    entered, finished = threading.Event(), threading.Event()

    def handler(event: dict[str, Any], context: Any) -> None:
        entered.set()
        time.sleep(0.5)
        finished.set()

    source = SqsEventSource(sqs, queues.url, handler, max_concurrency=2)
    source.start()
    send(sqs, queues, "slow")
    assert entered.wait(5)

    # When the event source is stopped
    stopped = source.stop(timeout=5)

    # Then stop returned only after the handler finished and its message was deleted
    assert stopped
    assert finished.is_set()
    assert not source.running
    assert counts(sqs, queues.url) == (0, 0)
    assert source.stats.in_flight == 0


@pytest.mark.parametrize("wait_seconds", [0, 1])
def test_an_idle_source_neither_spins_nor_delays_stop(sqs, queues, wait_seconds):  # noqa: F811
    # Given a running source on an empty queue
    receives: list[str] = []
    sqs.meta.events.register(
        "before-call.sqs.ReceiveMessage", lambda **kwargs: receives.append("call")
    )
    source = SqsEventSource(
        sqs, queues.url, lambda event, context: None, max_concurrency=2, wait_seconds=wait_seconds
    )
    source.start()
    time.sleep(0.5)

    # When it is stopped
    started = time.monotonic()
    assert source.stop(timeout=5)

    # Then it stopped within one long poll, having polled at a modest rate meanwhile
    assert time.monotonic() - started < wait_seconds + 1.5
    assert len(receives) < 60  # ~20 for short polls with a pause; hundreds if it spun


def test_the_batching_window_gathers_messages_that_arrive_later(sqs, queues):  # noqa: F811
    # Given one message now and two more 0.2 s later (the window stays within the 1 s
    # visibility timeout, as AWS requires, so "first" is not received twice)
    send(sqs, queues, "first")
    later = threading.Timer(0.2, send, args=(sqs, queues, "second", "third"))
    later.start()
    batches: list[list[str]] = []
    source = SqsEventSource(
        sqs,
        queues.url,
        lambda event, context: batches.append([r["body"] for r in event["Records"]]),
        batching_window_seconds=0.6,
    )

    # When one batch is polled with a 0.6 s window
    processed = source.poll_once()
    later.join()

    # Then the three arrive in one invocation
    assert processed == 3
    assert [sorted(b) for b in batches] == [["first", "second", "third"]]
