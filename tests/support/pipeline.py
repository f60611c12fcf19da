"""The delivery pipeline wired as on AWS, in-process: the fan-out handler, and per tenant
group an SQS event source invoking the deliver handler, against moto and real Postgres."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline_dev.local.apigw import LocalContext
from hookline_dev.local.poller import SqsEventSource
from hookline_dev.local.queues import GroupQueues, ensure_queues

# Fast schedules so retries happen within a test: 0, 1 s, 1 s, ...
TEST_CONFIG: dict[str, Any] = {
    "tenant_groups": [
        {"name": "standard", "max_concurrency": 4, "max_receive_count": 2},
        {"name": "priority", "max_concurrency": 2, "max_receive_count": 2},
        {"name": "bulk", "max_concurrency": 2, "max_receive_count": 2},
    ],
    "retry_schedule_seconds": [0, 1, 1, 1],
    "retry_jitter": 0.0,
    "deliver_timeout_seconds": 2,
    "deliver_connect_timeout_seconds": 1,
}


def write_config(path: Path, **overrides: Any) -> Path:
    """A hookline.json with the test schedule (and any overrides)."""
    path.write_text(json.dumps({**TEST_CONFIG, **overrides}))
    return path


class Pipeline:
    """Drives fan-out and delivery; each step is explicit so tests stay deterministic."""

    def __init__(
        self, db: Database, sqs: Any, config: HooklineConfig, visibility_timeout: int = 1
    ) -> None:
        from functions.deliver.handler import lambda_handler as deliver
        from functions.fanout.handler import lambda_handler as fanout

        self.db = db
        self.sqs = sqs
        self.config = config
        self._fanout = fanout
        self.queues: dict[str, GroupQueues] = ensure_queues(
            sqs, config, visibility_timeout_seconds=visibility_timeout
        )
        self.sources = {
            g.name: SqsEventSource.for_group(sqs, g, self.queues[g.name], deliver, wait_seconds=0)
            for g in config.tenant_groups
        }

    def fanout(self, nudged: bool = False) -> dict[str, Any]:
        """One fan-out invocation: as the schedule's, or as an accept's nudge's."""
        event = {"source": "hookline.nudge" if nudged else "test"}
        return self._fanout(event, LocalContext(function_name="fanout"))

    def deliver_once(self, group: str = "standard") -> int:
        """Receive and deliver one batch of a group's queue; the number of messages."""
        return self.sources[group].poll_once(wait_seconds=0)

    def run_until(self, done: Callable[[], bool], timeout: float = 20.0) -> None:
        """Fan out and deliver every group until `done()` or the timeout (then fail)."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"pipeline did not settle within {timeout}s: {self.states()}")
            self.fanout()
            if not sum(self.deliver_once(g) for g in self.sources):
                time.sleep(0.1)

    @contextmanager
    def running(self, *groups: str) -> Iterator[None]:
        """Run the groups' event sources in the background, as the Lambda service would."""
        started = [self.sources[g] for g in groups or tuple(self.sources)]
        for source in started:
            source.start()
        try:
            yield
        finally:
            for source in started:
                source.stop(timeout=30)

    def hold_slot(self, endpoint: dict[str, Any], seconds: float) -> str:
        """Another delivery holds one of `endpoint`'s slots for `seconds` (a worker sending it,
        or one that died): a queued delivery of an event that is not in the ledger, and its
        claim with a slot under that lease in the in-flight table (slots are counted from
        those rows, decision 0085). Its id."""
        held = f"dlv_held{time.monotonic_ns()}"
        with self.db.connection() as conn:
            conn.execute(
                "INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group,"
                " state, lease_expires_at, deadline_at)"
                " SELECT %s, 'evt_held', p.id, p.tenant_id, t.tenant_group, 'queued',"
                " now() + make_interval(secs => %s), now() + interval '1 day'"
                " FROM endpoints p JOIN tenants t ON t.id = p.tenant_id WHERE p.id = %s",
                (held, seconds, endpoint["id"]),
            )
            conn.execute(
                "INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq,"
                " lease_expires_at, slot)"
                " VALUES (%s, %s, 0, now() + make_interval(secs => %s), true)",
                (held, endpoint["id"], seconds),
            )
        return held

    def slots(self, endpoint_id: str | None = None) -> list[str]:
        """The deliveries holding a slot (a live claim with one), by id."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id FROM deliveries_in_flight WHERE slot"
                " AND lease_expires_at >= now() AND endpoint_id = coalesce(%s, endpoint_id)"
                " ORDER BY id",
                (endpoint_id,),
            ).fetchall()
        return [r["id"] for r in rows]

    def states(self) -> dict[str, int]:
        """Deliveries per state, as the API shows them (`delivering` while a claim holds a
        slot for a queued one; a schema from before migration 0037 shows what it stores).
        Never prepared: `run_until` polls it, and a test that reads the server's statement
        log (test_proxy_pinning) must find only the functions' statements prepared or not."""
        with self.db.connection() as conn:
            shown = conn.execute(
                "SELECT to_regproc('hookline_shown_state') IS NOT NULL AS known", prepare=False
            ).fetchone()["known"]
            state = "hookline_shown_state(state, id)" if shown else "state"
            rows = conn.execute(
                f"SELECT {state} AS state, count(*) AS n FROM deliveries GROUP BY 1", prepare=False
            ).fetchall()
        return {r["state"]: r["n"] for r in rows}

    def delivery(self, **where: str) -> dict[str, Any]:
        """The one delivery matching `where` (column = value), its state as the API shows it."""
        clause = (
            " AND ".join(f"{'shown' if k == 'state' else k} = %({k})s" for k in where) or "true"
        )
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT * FROM (SELECT *, hookline_shown_state(state, id) AS shown"
                f" FROM deliveries) d WHERE {clause}",
                where,
            ).fetchall()
        assert len(rows) == 1, rows
        row = dict(rows[0])
        row["state"] = row.pop("shown")
        return row

    def attempts(self, delivery_id: str) -> list[dict[str, Any]]:
        """Attempts of a delivery, oldest first."""
        with self.db.connection() as conn:
            return conn.execute(
                "SELECT * FROM attempt_log WHERE delivery_id = %s ORDER BY id", (delivery_id,)
            ).fetchall()

    def queue_depth(self, url: str) -> int:
        """Visible + in-flight + delayed messages of a queue."""
        attrs = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        return sum(
            int(attrs[k])
            for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                      "ApproximateNumberOfMessagesDelayed")
        )  # fmt: skip
