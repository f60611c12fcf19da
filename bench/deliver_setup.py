"""bench/deliver.py's setting up: a moto server for the handler's retries and deferrals, the
environment the handler reads, the tenant group queues, a tenant with its endpoints on the
sink, queued deliveries made by the real fan-out and `claim_due`, and their Lambda SQS
events."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from common import insert_events
from sink import Sink

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import MessageTypeDef

ENDPOINTS = 5
PAYLOAD = b'{"id": "ord_0000", "amount": 4200, "items": [' + b"1, " * 150 + b"1]}"  # ~500 B
EVENT_TYPES = ("order.created", "order.updated")


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """A moto server on a free loopback port, for the handler's retries and deferrals."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def configure(url: str, moto: str, pool_size: int) -> None:
    """The environment the handler reads at first use."""
    os.environ.update(
        {
            "DATABASE_URL": url,
            "AWS_ENDPOINT_URL": moto,
            "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
            "HOOKLINE_ALLOW_HTTP_TARGETS": "1",
            "HOOKLINE_DB_POOL_SIZE": str(pool_size),
        }
    )
    os.environ.pop("HOOKLINE_CONFIG", None)  # the default tenant groups


def create_queues(moto: str) -> str:
    """Every tenant group's queue and DLQ in moto; the standard queue's ARN."""
    import boto3

    from hookline.config import HooklineConfig
    from hookline_dev.local.queues import ensure_queues

    sqs = boto3.client("sqs", endpoint_url=moto, region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")  # fmt: skip
    return ensure_queues(sqs, HooklineConfig())["standard"].arn


def create_endpoints(url: str, sink: Sink) -> tuple[str, list[str]]:
    """A tenant and its endpoints on the sink (cap high enough never to defer)."""
    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import endpoint_service, tenant_service
    from hookline.management.access import Caller
    from hookline.settings import get_settings

    setup = Database(url, max_size=1)
    try:
        operator = Caller("bench", "*")
        tenant = tenant_service.create_tenant(
            setup, HooklineConfig(), operator, name="bench", group=None
        )
        urls = [sink.url(f"/hook/{i}") for i in range(ENDPOINTS)]
        for endpoint_url in urls:
            body = {"tenant_id": tenant["id"], "url": endpoint_url, "event_types": ["order.*"],
                    "max_concurrency": 1000}  # fmt: skip
            endpoint_service.create_endpoint(setup, get_settings(), operator, body)
    finally:
        setup.close()
    return tenant["id"], urls


def queued_deliveries(url: str, tenant_id: str, deliveries: int) -> list[Any]:
    """Events fanned out by the real statement and claimed by the real claim_due: queued
    deliveries with their generation, in claim order."""
    import psycopg
    from psycopg.rows import dict_row

    from hookline.repositories.deliveries import claim_due, fan_out_batch

    insert_events(url, tenant_id, -(-deliveries // ENDPOINTS), EVENT_TYPES, PAYLOAD)
    claimed = []
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        while fan_out_batch(conn, limit=2000, deadline=timedelta(hours=72))[0]:
            claimed += claim_due(conn, limit=20_000, lease=timedelta(hours=1))
        while batch := claim_due(conn, limit=20_000, lease=timedelta(hours=1)):
            claimed += batch
        conn.execute("VACUUM ANALYZE deliveries")
    return claimed


def sqs_events(claimed: Sequence[Any], queue_arn: str, batch: int) -> list[dict[str, Any]]:
    """The Lambda SQS events of the claimed deliveries, `batch` records each, as
    `hookline_dev.local.poller.build_sqs_event` makes them from received messages."""
    from hookline.queues import DeliveryMessage
    from hookline_dev.local.poller import build_sqs_event

    now = str(int(time.time() * 1000))
    events = []
    for start in range(0, len(claimed), batch):
        messages: list[MessageTypeDef] = []
        for d in claimed[start : start + batch]:
            body = DeliveryMessage(d.id, d.seq, d.endpoint_id, d.tenant_group).body()
            messages.append(
                {
                    "MessageId": str(uuid.uuid4()),
                    "ReceiptHandle": uuid.uuid4().hex,
                    "MD5OfBody": hashlib.md5(body.encode()).hexdigest(),  # noqa: S324 (SQS's)
                    "Body": body,
                    "Attributes": {
                        "ApproximateReceiveCount": "1",
                        "SentTimestamp": now,
                        "SenderId": "AIDAEXAMPLE",
                        "ApproximateFirstReceiveTimestamp": now,
                        "MessageGroupId": d.endpoint_id,
                    },
                }
            )
        events.append(build_sqs_event(messages, event_source_arn=queue_arn, region="us-east-1"))
    return events


def delivery_states(url: str) -> dict[str, int]:
    """Deliveries per state."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT state, count(*) FROM deliveries GROUP BY state").fetchall()
    return {str(state): int(n) for state, n in rows}
