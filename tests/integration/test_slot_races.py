"""An endpoint's concurrency cap holds when claimers race (decision 0071): slots are counted from
the endpoint's live claims holding one (decision 0085), and claimers of one endpoint queue
behind a transaction advisory lock before they count. Many threads claim at the same instant,
each on its own connection, in batches (as the deliver function does) and one message at a time
(its fallback), over endpoints that batches share in different orders."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import deliveries as repo
from hookline.repositories.delivery_batches import claim_batch_to_send
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration

CLAIMERS = 6


def queued_deliveries(
    pipeline,
    db: Database,
    url: str,
    caps: list[int],
    events: int,
    rates: list[str | None] | None = None,
) -> list[dict]:
    """`events` events fanned out to one endpoint per cap (with the rate limit at the same
    place in `rates`): their queued deliveries."""
    tenant = operator.add_tenant(db, HooklineConfig(), name="race", group="standard")["id"]
    for cap, rate in zip(caps, rates or [None] * len(caps), strict=True):
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=url,
            max_concurrency=cap, rate_limit=rate,
        )  # fmt: skip
    with db.connection() as conn, conn.transaction():
        for n in range(events):
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})
    pipeline.fanout()
    with db.connection() as conn:
        return conn.execute(
            "SELECT d.id, d.enqueue_seq, d.endpoint_id, p.max_concurrency FROM deliveries d"
            " JOIN endpoints p ON p.id = d.endpoint_id ORDER BY d.id"
        ).fetchall()


def race(db: Database, batches: list[list[dict]]) -> list[repo.Claim]:
    """Every batch claimed by its own thread, all released at once; a batch of one claims as
    a single message does. The claims granted a slot."""
    start = threading.Barrier(len(batches))
    lease = timedelta(minutes=5)

    def claim(batch: list[dict]) -> list[repo.Claim]:
        with db.connection() as conn:
            start.wait()
            if len(batch) == 1:
                one = repo.claim_to_send(
                    conn, batch[0]["id"], batch[0]["enqueue_seq"], lease, datetime.now(UTC)
                )
                claims = [] if one is None else [one]
            else:
                claims = list(claim_batch_to_send(
                    conn, [(d["id"], d["enqueue_seq"]) for d in batch], lease, datetime.now(UTC),
                ).values())  # fmt: skip
        return [c for c in claims if c.wait_seconds == 0]

    with ThreadPoolExecutor(len(batches)) as threads:
        return [c for granted in threads.map(claim, batches) for c in granted]


def delivering(db: Database) -> dict[str, int]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT endpoint_id, count(*) AS n FROM deliveries_in_flight"
            " WHERE slot AND lease_expires_at >= now() GROUP BY endpoint_id"
        ).fetchall()
    return {r["endpoint_id"]: r["n"] for r in rows}


def test_racing_claimers_never_take_more_slots_than_the_cap(pipeline, db, sink):
    # Given 30 events fanned out to two endpoints capped at 2 and 3: 60 queued deliveries
    found = queued_deliveries(pipeline, db, sink.url("/race"), caps=[2, 3], events=30)
    caps = {d["endpoint_id"]: d["max_concurrency"] for d in found}
    # And six claimers with a batch each, mixing both endpoints in a shuffled order, and one
    # claiming a single message
    random.seed(24)
    random.shuffle(found)
    batches = [found[i * 10 : (i + 1) * 10] for i in range(CLAIMERS - 1)] + [found[-1:]]
    # When they all claim at the same instant
    granted = race(db, batches)
    # Then each endpoint has exactly its cap of deliveries in flight: never more, and its
    # free slots were all handed out; the others wait, queued, and none was lost
    per_endpoint = {e: sum(1 for c in granted if c.job.endpoint_id == e) for e in caps}
    assert per_endpoint == caps
    assert delivering(db) == caps
    assert pipeline.states() == {"delivering": 5, "queued": 55}


def test_racing_claimers_spend_a_rate_limited_endpoints_burst_and_no_more(pipeline, db, sink):
    # Given 30 events fanned out to an endpoint limited to 1 request a second (a burst of 1)
    # with room for 10 at once, and to one without a rate capped at 4
    found = queued_deliveries(
        pipeline, db, sink.url("/race"), caps=[10, 4], events=30, rates=["1/s", None]
    )
    paced = next(d["endpoint_id"] for d in found if d["max_concurrency"] == 10)
    free = next(d["endpoint_id"] for d in found if d["max_concurrency"] == 4)
    # And six claimers with a batch each, mixing both endpoints in a shuffled order (a batch
    # without the paced endpoint's deliveries among them), and one claiming a single message
    random.seed(7)
    random.shuffle(found)
    batches = [found[i * 10 : (i + 1) * 10] for i in range(CLAIMERS - 1)] + [found[-1:]]
    batches.append([d for d in found if d["endpoint_id"] == free][:3])
    # When they all claim at the same instant
    granted = race(db, batches)
    # Then the paced endpoint sent its one token's worth, though it had slots free, and the
    # other its cap: the rate is kept whichever batch its deliveries came in
    sent = {e: sum(1 for c in granted if c.job.endpoint_id == e) for e in (paced, free)}
    assert sent == {paced: 1, free: 4}
    assert delivering(db) == sent


def test_slots_freed_by_a_record_go_to_the_next_claimers_and_no_further(pipeline, db, sink):
    # Given an endpoint capped at 3 with every slot taken by a first round of claimers
    found = queued_deliveries(pipeline, db, sink.url("/race"), caps=[3], events=24)
    first = race(db, [found[i : i + 4] for i in range(0, 12, 4)])
    assert len(first) == 3
    # When two deliveries are recorded delivered and the next claimers race for the rest
    for claim in first[:2]:
        with db.connection() as conn:
            attempt = repo.AttemptRecord(datetime.now(UTC), 5, 200, "", None)
            assert repo.record_delivered(conn, claim.job, attempt) == claim.job.seq
    claimed = {c.job.id for c in first}
    rest = [d for d in found if d["id"] not in claimed]
    second = race(db, [rest[i : i + 3] for i in range(0, 18, 3)])
    # Then exactly the two freed slots were handed out again
    assert len(second) == 2
    assert delivering(db) == {found[0]["endpoint_id"]: 3}
