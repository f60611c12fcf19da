"""Stopping and killing the dev stack: nothing accepted is ever lost."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import httpx
import pytest

from hookline_dev.local.devstate import read_state
from tests.e2e.conftest import Stack, wait_until
from tests.support.signers import standard_headers, verify_standard
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_ctrl_c_finishes_the_batch_in_flight_before_stopping(stack: Stack, sink: Sink) -> None:
    # Given a delivery in flight to a slow subscriber
    behaviour = sink.behave("/slow", delay=1.5)
    tenant = stack.tenant()
    stack.endpoint(tenant, sink.url("/slow"))
    answer = httpx.post(
        stack.url + "/v1/events",
        json={"tenant_id": tenant, "type": "order.created", "payload": {"n": 1}},
        headers=stack.auth,
    )
    wait_until(lambda: behaviour.in_flight == 1, what="the request in flight")
    # When the operator presses Ctrl-C
    code = stack.dev.signal(signal.SIGINT)
    # Then the stack waited for the answer and recorded it, and left no state file behind
    assert code == 0, stack.dev.log.read_text()
    [delivery] = stack.deliveries(event_id=answer.json()["id"])
    assert delivery["state"] == "delivered" and delivery["attempt_count"] == 1
    assert read_state(stack.dev.state_dir) is None
    assert "Hookline stopped." in stack.dev.log.read_text()
    stack.dev.restart()


class Provider:
    """A provider sending signed webhooks at a steady pace, retrying each one until it is
    answered 2xx (as Stripe or any Standard Webhooks sender does), whatever happens to the
    receiving side meanwhile."""

    def __init__(self, url: str, count: int, pace: float = 0.03) -> None:
        self.url = url
        self.count = count
        self.pace = pace
        self.accepted: dict[str, bytes] = {}  # event id -> body
        self.refused = 0  # attempts that found nobody listening, or got a 5xx
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Provider:
        self._thread.start()
        return self

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the provider could not deliver everything"

    def _run(self) -> None:
        with httpx.Client(timeout=5) as http:
            for n in range(self.count):
                body = f'{{"type": "order.created", "n": {n}}}'.encode()
                msg_id = f"msg_{uuid.uuid4().hex}"
                while True:
                    try:
                        answer = http.post(
                            self.url, content=body, headers=standard_headers(SECRET, body, msg_id)
                        )
                    except httpx.TransportError:
                        answer = None
                    if answer is not None and answer.status_code == 200:
                        self.accepted[answer.json()["id"]] = body
                        break
                    assert answer is None or answer.status_code >= 500, answer.text
                    self.refused += 1
                    time.sleep(0.1)
                time.sleep(self.pace)


def test_killing_the_stack_mid_run_loses_no_accepted_event(stack: Stack, sink: Sink) -> None:
    # Given a provider sending a steady stream to a subscriber that is slow and fails at first,
    # so that deliveries are queued, in flight and waiting for a retry at any moment
    behaviour = sink.behave("/crash", statuses=[500, 500, 500, 200], delay=0.2)
    tenant = stack.tenant()
    path = stack.source(tenant, "standard", SECRET)
    endpoint = stack.endpoint(tenant, sink.url("/crash"), max_concurrency=4)
    provider = Provider(stack.url + path, count=80).start()
    wait_until(lambda: len(provider.accepted) >= 40, what="40 accepted events")
    # When the stack is killed with SIGKILL mid-run (no chance to finish anything)
    code = stack.dev.signal(signal.SIGKILL)
    assert code == -signal.SIGKILL
    unfinished = stack.query(
        "SELECT state, count(*) AS n FROM deliveries d JOIN events e ON e.id = d.event_id"
        " WHERE e.tenant_id = %s AND state NOT IN ('delivered', 'failed', 'dead')"
        " GROUP BY state",
        tenant,
    )
    outbox = stack.query(
        "SELECT count(*) AS n FROM outbox WHERE tenant_id = %s AND fanned_out_at IS NULL", tenant
    )
    time.sleep(1)  # the provider finds nobody listening for a while
    # ... and started again
    stack.dev.restart()
    provider.join(timeout=60)
    # Then every event the provider saw accepted reaches the subscriber
    accepted = set(provider.accepted)

    def all_delivered() -> bool:
        rows = stack.query(
            "SELECT event_id FROM deliveries WHERE endpoint_id = %s AND state = 'delivered'",
            endpoint["id"],
        )
        return {r["event_id"] for r in rows} >= accepted

    wait_until(all_delivered, timeout=60, what="every accepted event delivered")
    requests = sink.requests("/crash")
    answered_ok = {r.body for r in requests[len(behaviour.statuses) - 1 :]}  # after the 500s
    assert set(provider.accepted.values()) <= answered_ok
    assert all(verify_standard([endpoint["secret"]], r.headers, r.body) for r in requests)
    # And the kill really interrupted work in progress, which the restart recovered
    in_progress = sum(r["n"] for r in unfinished) + outbox[0]["n"]
    assert in_progress > 0, "the kill found nothing in flight: the test proved nothing"
    assert provider.refused > 0
    assert len(accepted) == 80
    assert os.path.exists(stack.dev.state_dir / "dev.json")
