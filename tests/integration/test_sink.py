"""The tests' HTTP subscriber (tests/support/sinks.py) counts what a real server would: a
request its sender abandoned halfway (a deliverer killed between its headers and its body)
is not a received webhook, so the tests that check every received request's signature
(tests/e2e/test_restart.py kills the stack mid-run) are not failed by a body cut short."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.sinks import Sink

pytestmark = pytest.mark.integration


def test_a_request_cut_off_mid_body_is_not_received(sink: Sink) -> None:
    # Given a sender that sends its headers and part of its body, then dies
    url = urlsplit(sink.url("/cut"))
    assert url.hostname is not None and url.port is not None
    with socket.create_connection((url.hostname, url.port)) as conn:
        conn.sendall(
            b"POST /cut HTTP/1.1\r\nHost: sink\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n" + b'{"id": "evt_'
        )
    # When a whole request follows it
    whole = httpx.post(sink.url("/cut"), content=b'{"id": "evt_2"}', timeout=5)
    assert whole.status_code == 200
    # Then only the whole one was received
    assert [r.body for r in sink.requests("/cut")] == [b'{"id": "evt_2"}']
