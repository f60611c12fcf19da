"""The dev stack's SQS emulator (moto) when threads share a queue, as its server's do: every
valid delete is honoured and every message sent is received."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest
from moto.sqs.models import sqs_backends

from hookline_dev.local.emulator import make_sqs_thread_safe

pytestmark = pytest.mark.unit

MESSAGES = 300


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Threads switch every few microseconds, so interleavings that are rare under load happen
    within a few hundred messages."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_concurrent_sends_receives_and_deletes_lose_and_refuse_nothing(busy_switching):
    # Given the emulator's SQS model as the dev stack runs it, and one queue
    make_sqs_thread_safe()
    backend = sqs_backends["123456789012"]["us-east-1"]
    backend.create_queue("shared")
    received: set[str] = set()
    errors: list[str] = []
    sent_all = threading.Event()

    def send() -> None:
        for i in range(MESSAGES):
            backend.send_message("shared", f"m{i}")
        sent_all.set()

    def consume() -> None:
        idle = 0
        while idle < 2:
            messages = backend.receive_message("shared", 10, 0, 30)
            idle = idle + 1 if not messages and sent_all.is_set() else 0
            for m in messages:
                received.add(m.body)
                try:
                    backend.delete_message("shared", m.receipt_handle)
                except Exception as err:  # moto refusing a valid receipt handle
                    errors.append(repr(err))

    # When one thread sends while three receive and delete
    threads = [threading.Thread(target=send)] + [threading.Thread(target=consume) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # Then every message arrived, every delete was honoured, and the queue is empty
    assert errors == []
    assert received == {f"m{i}" for i in range(MESSAGES)}
    assert backend.get_queue("shared")._messages == []
