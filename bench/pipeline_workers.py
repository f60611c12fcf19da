"""The pipeline bench's worker processes (bench/pipeline.py): each is one Lambda-shaped
container of a stage, Hookline's handler, the bare relay's least or the floor's (the bare
relay that verifies before it stores and claims before it sends), run in its own spawned
interpreter, working one request or one batch at a time until told to stop.

What each does and what it counts is in bench/pipeline.py's docstring; the parent there
starts them, measures the database around them and reports.
"""

from __future__ import annotations

import collections
import os
import queue
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from common import quiet_environment
from pgcost import count_round_trips

STRIPE_SECRET = "whsec_bench_pipeline_0123456789abcdef"
PAYLOAD_BYTES = 1000
BATCH = 10
T = TypeVar("T")
BARE_INSERT = (
    "WITH e AS (INSERT INTO bare_events (id, tenant_id, type, payload) "
    "VALUES (%s, 'bench', 'charge.succeeded', %s) RETURNING id) "
    "INSERT INTO bare_deliveries (event_id, endpoint) "
    "SELECT e.id, n FROM e, generate_series(1, %s) AS n RETURNING id"
)
BARE_MARK = "UPDATE bare_deliveries SET state = 'delivered', updated_at = now() WHERE id = ANY(%s)"
# The floor's claim (decision 0086): one statement marking the batch's rows as being sent and
# returning what to send; its connection commits without waiting for the disk, as Hookline's
# claims do (decision 0081).
FLOOR_CLAIM = (
    "UPDATE bare_deliveries d SET state = 'sending', updated_at = now() FROM bare_events e "
    "WHERE d.id = ANY(%s) AND d.state = 'pending' AND e.id = d.event_id "
    "RETURNING d.id, d.endpoint, e.payload"
)


class CountingSink:
    """Stands in for stdout (where Lambda's log lines go): counts the bytes written."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, text: str) -> int:
        self.bytes += len(text.encode())
        return len(text)

    def flush(self) -> None:
        """Nothing buffered."""

    def isatty(self) -> bool:
        """Not a terminal."""
        return False


class QueueStandIn:
    """`send_message_batch` onto a multiprocessing queue: SQS without its cost."""

    def __init__(self, q: Any) -> None:
        self.q = q

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.q.put([e["MessageBody"] for e in Entries])
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def take_batch(q: Any, stop: Any) -> list[Any] | None:
    """Up to BATCH messages, as Lambda's SQS poller hands them; None once stopped."""
    while True:
        try:
            items: list[Any] = list(q.get(timeout=0.05))
            break
        except queue.Empty:
            if stop.is_set():
                return None
    while len(items) < BATCH:
        try:
            items += q.get_nowait()
        except queue.Empty:
            break
    return items


def prepared(make: Callable[[], T], ahead: int) -> Callable[[], T]:
    """`make`'s results, the first `ahead` of them made now and the rest when asked (said
    once on stderr: past `ahead`, the sender's work is counted again)."""
    ready = collections.deque(make() for _ in range(ahead))
    warned = False

    def next_one() -> T:
        nonlocal warned
        if ready:
            return ready.popleft()
        if ahead and not warned:
            warned = True
            print(f"  (pid {os.getpid()}: the {ahead} requests made ahead ran out)",
                  file=sys.stderr)  # fmt: skip
        return make()

    return next_one


def worker(
    kind: str, url: str, q: Any, nudges: Any, go: Any, stop: Any, release: Any, ready: Any,
    out: Any, handled_messages: Any,
) -> None:  # fmt: skip
    """One Lambda-shaped container: warm up, wait for `go`, work until `stop`, report. A
    deliverer adds the messages of each batch it handled to `handled_messages` (a shared
    counter), which tells the parent when the drain may be over without asking Postgres."""
    from psycopg.conninfo import make_conninfo

    quiet_environment()
    os.environ.update(
        {"DATABASE_URL": make_conninfo(url, application_name=kind), "HOOKLINE_DB_POOL_SIZE": "2",
         "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1", "HOOKLINE_ALLOW_HTTP_TARGETS": "1",
         # as deployed (infra/components/functions.py): INFO, EMF metrics on
         "POWERTOOLS_LOG_LEVEL": "INFO", "POWERTOOLS_METRICS_DISABLED": "false"}
    )  # fmt: skip
    logs = CountingSink()
    sys.stdout = logs  # type: ignore[assignment] - before the handler's logger is created
    step = build_step(kind, q, nudges, stop)
    pace = paced(kind)
    trips = count_round_trips()
    if not kind.endswith("deliver"):
        step()  # warm: import, connect, first statements (deliver warms in build_step)
    ready.put(kind)
    go.wait()
    trips[0], cpu, done, calls, logs.bytes = 0, time.process_time(), 0, 0, 0
    counted = kind.endswith("deliver")
    while not stop.is_set():
        pace()
        handled = step()
        done, calls = done + handled, calls + (handled > 0)
        if counted and handled:
            with handled_messages.get_lock():
                handled_messages.value += handled
    out.put((kind, time.process_time() - cpu, trips[0], done, calls, logs.bytes))
    release.wait()  # keep the connections (and their backends' CPU figures) until read


def paced(kind: str) -> Callable[[], None]:
    """What a receiver waits before each request with an offered rate (`BENCH_RATE`, requests
    per second for this process: an open loop, as senders on the internet are): until the
    request's time on a fixed schedule from its first, or not at all once behind it (it then
    runs flat out, and the phase's events/s says the rate was not kept). Without one, or for
    the other stages, nothing: a closed loop."""
    rate = float(os.environ.get("BENCH_RATE") or 0)
    if rate <= 0 or not kind.endswith("receiver"):
        return lambda: None
    interval = 1 / rate
    due: list[float] = []

    def wait() -> None:
        now = time.perf_counter()
        if not due:
            due.append(now)
        elif due[0] > now:
            time.sleep(due[0] - now)
        due[0] += interval

    return wait


def build_step(kind: str, q: Any, nudges: Any, stop: Any) -> Callable[[], int]:
    """What one invocation of this kind of worker does; returns the items it handled."""
    if kind.endswith("receiver"):
        return receiver_step(kind, q, nudges, int(os.environ["BENCH_AHEAD"]))
    if kind == "fanout":
        return fanout_step(q, nudges)
    return deliver_step(kind, q, stop)


def receiver_step(kind: str, q: Any, nudges: Any, ahead: int = 0) -> Callable[[], int]:
    """One signed request through the receiver handler, or one bare insert. The first
    `ahead` requests (bodies for the bare relay) are made before the first call: what the
    sender does (the payload, its signature, API Gateway's event) is not the receiver's cost,
    in its CPU or in its time."""
    import itertools
    import uuid

    from steady import random_event_id

    from tests.support.signers import stripe_event, stripe_headers

    prefix = uuid.uuid4().hex[:12]
    numbers = itertools.count()
    steady = os.environ.get("BENCH_STEADY") == "1"
    url = os.environ["DATABASE_URL"]
    if kind in ("bare_receiver", "floor_receiver"):
        import psycopg

        conn = psycopg.connect(url, autocommit=True, prepare_threshold=bare_prepare_threshold())
        endpoints = int(os.environ["BENCH_ENDPOINTS"])
        verified = kind == "floor_receiver"

        def made() -> tuple[str, bytes, str]:
            event_id = random_event_id() if steady else f"evt_{prefix}{next(numbers)}"
            body = stripe_event(event_id, size=PAYLOAD_BYTES)
            return event_id, body, stripe_headers(STRIPE_SECRET, body)["Stripe-Signature"]

        sent = prepared(made, ahead)

        def bare() -> int:
            event_id, body, signature = sent()
            if verified and not stripe_signed(signature, body):
                return 0
            rows = conn.execute(BARE_INSERT, (event_id, body, endpoints)).fetchall()
            # the payload rides on the message: the least a relay needs to deliver it
            q.put([(row[0], body) for row in rows])
            return 1

        return bare
    import functions.receiver.handler as receiver
    from hookline.nudge import set_local_nudger
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext, build_rest_event

    source_id = os.environ["BENCH_SOURCE_ID"]
    # As deployed, the receiver sends an event's deliveries itself (decision 0076): to the
    # same queue stand-in the fan-out sends to.
    stand_in = DeliveryQueues(QueueStandIn(q), get_settings().config, url_prefix="x/")
    receiver.receipt_queues = lambda _settings: stand_in  # type: ignore[assignment]
    lambda_handler = receiver.lambda_handler
    # The receiver's nudge after each accepted event, as its asynchronous Lambda invoke: one
    # fan-out invocation per nudge (Lambda queues those it cannot run at once).
    set_local_nudger(lambda: nudges.put(1))

    def made() -> dict[str, Any]:
        event_id = random_event_id() if steady else f"evt_{prefix}{next(numbers)}"
        body = stripe_event(event_id, size=PAYLOAD_BYTES)
        headers = {"Content-Type": "application/json", **stripe_headers(STRIPE_SECRET, body)}
        return build_rest_event("POST", f"/in/{source_id}", headers, body)

    sent = prepared(made, ahead)

    def receive() -> int:
        answer = lambda_handler(sent(), LocalContext(function_name="receiver"))
        return 1 if answer["statusCode"] == 200 else 0

    return receive


def stripe_signed(header: str, body: bytes, tolerance: int = 300) -> bool:
    """The floor receiver's check, the least a relay does before it stores a webhook: the
    Stripe header's timestamp within the tolerance and its v1 HMAC-SHA256 over "{t}.{body}".
    Not Hookline's `StripeVerifier`: the floor must pay only the check itself, not the
    scheme layer Hookline's receiver is measured with."""
    import hashlib
    import hmac

    fields = dict(part.partition("=")[::2] for part in header.split(","))
    t = fields.get("t", "")
    if not t.isdigit() or abs(time.time() - int(t)) > tolerance:
        return False
    expected = hmac.new(STRIPE_SECRET.encode(), f"{t}.".encode() + body, hashlib.sha256)
    return hmac.compare_digest(expected.hexdigest(), fields.get("v1", ""))


def fanout_step(q: Any, nudges: Any) -> Callable[[], int]:
    """One fan-out invocation per nudge, sending to the queue stand-in."""
    import functions.fanout.handler as fanout
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext

    settings = get_settings()
    stand_in = DeliveryQueues(QueueStandIn(q), settings.config, url_prefix="x/")
    fanout.delivery_queues = lambda _settings: stand_in

    fanout.lambda_handler({}, LocalContext(function_name="fanout"))  # warm

    def invoke() -> int:
        try:
            nudges.get(timeout=0.2)
        except queue.Empty:
            return 0
        report = fanout.lambda_handler({}, LocalContext(function_name="fanout"))
        return int(report["events"])

    return invoke


def deliver_step(kind: str, q: Any, stop: Any) -> Callable[[], int]:
    """One SQS-shaped batch through the deliver handler, or a bare POST-and-mark batch."""
    import itertools

    sink_url = os.environ["BENCH_SINK_URL"]
    numbers = itertools.count()
    if kind == "bare_deliver":
        import httpx
        import psycopg

        conn = psycopg.connect(
            os.environ["DATABASE_URL"], autocommit=True, prepare_threshold=bare_prepare_threshold()
        )
        http = httpx.Client(timeout=10)
        conn.execute("SELECT 1")

        def bare() -> int:
            batch = take_batch(q, stop)
            if not batch:
                return 0
            for _, body in batch:
                http.post(sink_url, content=body, headers={"content-type": "application/json"})
            conn.execute(BARE_MARK, ([delivery_id for delivery_id, _ in batch],))
            return len(batch)

        return bare
    if kind == "floor_deliver":
        return floor_deliver_step(q, stop, sink_url)
    import hookline.runtime as runtime
    from functions.deliver.handler import lambda_handler
    from hookline.db import get_database
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext

    settings = get_settings()
    stand_in = DeliveryQueues(QueueStandIn(q), settings.config, url_prefix="x/")
    runtime.delivery_queues = lambda _settings: stand_in  # type: ignore[assignment]
    runtime.get_deliverer()
    with get_database().connection() as conn:
        conn.execute("SELECT 1")
    if os.environ.get("BENCH_UNCOUNTED_CLAIM") == "1":
        uncount_claims(settings.database_proxied)

    def invoke() -> int:
        bodies = take_batch(q, stop)
        if not bodies:
            return 0
        records = [sqs_record(body, next(numbers)) for body in bodies]
        lambda_handler({"Records": records}, LocalContext(function_name="deliver"))
        return len(records)

    return invoke


def uncount_claims(proxied: bool) -> None:
    """Deliver's claims, of a batch or of one message, made on a connection of their own
    whose backend the bench does not count (`--uncounted-claim`, a probe: decision 0107). Each
    claim still runs as built, so deliver does what it does; the figures are those of a
    deliver that sends without a claim statement."""
    from pgcost import UNCOUNTED
    from psycopg.conninfo import make_conninfo

    import hookline.delivery_batch as batches
    from hookline.db import Database, StaticCredentials
    from hookline.repositories import deliveries

    conninfo = make_conninfo(os.environ["DATABASE_URL"], application_name=UNCOUNTED)
    claims = Database(StaticCredentials(conninfo, proxied=proxied), max_size=2)
    claim_batch, claim_one = batches.claim_batch_to_send, deliveries.claim_to_send

    def batch_claimed(_conn: Any, *args: Any) -> Any:
        with claims.connection() as conn:
            return claim_batch(conn, *args)

    def one_claimed(_conn: Any, *args: Any) -> Any:
        with claims.connection() as conn:
            return claim_one(conn, *args)

    batches.claim_batch_to_send = batch_claimed  # type: ignore[assignment]
    deliveries.claim_to_send = one_claimed  # type: ignore[assignment]


def floor_deliver_step(q: Any, stop: Any, sink_url: str) -> Callable[[], int]:
    """The floor's batch: claim it (the rows marked as being sent, their payloads read back),
    POST each payload, mark the batch delivered. What a relay pays that claims in Postgres
    before it sends, and checks nothing in the claim: no cap, no lease, no attempt log."""
    import httpx
    import psycopg

    url, threshold = os.environ["DATABASE_URL"], bare_prepare_threshold()
    claimer = psycopg.connect(url, autocommit=True, prepare_threshold=threshold)
    claimer.execute("SET synchronous_commit = off")
    marker = psycopg.connect(url, autocommit=True, prepare_threshold=threshold)
    marker.execute("SELECT 1")
    http = httpx.Client(timeout=10)

    def floor() -> int:
        batch = take_batch(q, stop)
        if not batch:
            return 0
        claimed = claimer.execute(FLOOR_CLAIM, ([delivery_id for delivery_id, _ in batch],))
        sent = [delivery_id for delivery_id, _endpoint, payload in claimed.fetchall()
                if http.post(sink_url, content=payload,
                             headers={"content-type": "application/json"}).is_success]  # fmt: skip
        marker.execute(BARE_MARK, (sent,))
        return len(batch)

    return floor


def bare_prepare_threshold() -> int | None:
    """psycopg's default (prepare from the 5th run) only with --prepared, as Hookline."""
    return None if os.environ.get("HOOKLINE_DATABASE_PROXIED") == "true" else 5


def sqs_record(body: str, n: int) -> dict[str, Any]:
    """An SQS event record as Lambda's event source builds it."""
    return {
        "messageId": f"m{n}", "receiptHandle": f"r{n}", "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "0"},
        "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:0:deliver-standard", "awsRegion": "us-east-1",
    }  # fmt: skip
