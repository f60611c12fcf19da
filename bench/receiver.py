"""Receiver throughput: the in-process handler against bare inserts of the same payloads.

For each caller count, measured in the same run against the same Postgres:

* **handler** — threads call `functions.receiver.handler.lambda_handler` with real API
  Gateway REST (v1) proxy events carrying Stripe-signed ~2 KB payloads, each a distinct
  event id: verify, store the event and its outbox row in one statement, answer.
* **bare insert** — the same payloads inserted one row per autocommit statement through
  raw psycopg (one connection per thread) into a plain table of a similar shape
  (`id text` primary key, `payload bytea`, a unique text key).

With `--breakdown`, two rows in between show where the difference goes:

* **ledger SQL** — the receiver's own statement as deployed, `accept_event` (fan-out at
  receipt, decision 0076: dedupe key, event, outbox row and the deliveries of the tenant's
  endpoints, none here), sent through raw psycopg exactly as the bare insert is: the
  database's share.
* **service** — `hookline.ingest.receive_inbound` called directly on the pool with the
  process's source cache (the source as kept, verification, the statement): the handler minus
  reading the proxy event, logging and metrics.

Postgres is `DATABASE_URL` if set (a fresh database is created on that server and dropped
at the end), else a durable local server (default fsync) started in a temp dir and stopped
at the end. Each row is warmed up, its inputs are built before the clock starts, and the
paths of one caller count take turns in `--rounds` slices, so a change in the machine's
load mid-run hits both sides alike. The load average is printed: read figures taken on a
busy machine with care.

    .venv/bin/python bench/receiver.py [--seconds 10] [--callers 1,8] [--breakdown]

This is a benchmark, not a test: it prints a table and never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

from closedloop import Caller, Item, Measurement, measure
from common import bench_database, server_facts

REPO = Path(__file__).resolve().parent.parent
STRIPE_SECRET = "whsec_bench_stripe_secret_0123456789abcdef"  # a throwaway local secret
TARGET_RATIO = 0.6
WARMUP_SECONDS = 1.0
WARMUP_ITEMS_PER_CALLER = 400
HEADROOM = 1.6  # inputs built per slice, relative to the warm-up rate x seconds

BARE_TABLE_DDL = """
CREATE TABLE IF NOT EXISTS bench_bare_events (
    id          text PRIMARY KEY,
    dedupe_key  text NOT NULL UNIQUE,
    payload     bytea NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
)
"""
BARE_INSERT = "INSERT INTO bench_bare_events (id, dedupe_key, payload) VALUES (%s, %s, %s)"

# What API Gateway and Stripe send along with a real delivery, besides the signature.
REQUEST_HEADERS = {
    "Accept": "*/*; q=0.5, application/xml",
    "Cache-Control": "no-cache",
    "Host": "abc123.execute-api.us-east-1.amazonaws.com",
    "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
    "X-Amzn-Trace-Id": "Root=1-65f0a1b2-0123456789abcdef01234567",
    "X-Forwarded-For": "54.187.174.169",
    "X-Forwarded-Port": "443",
    "X-Forwarded-Proto": "https",
}

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def prepare_environment(callers: int) -> None:
    """What the handler reads at import or first use: no log flood, no X-Ray, no fan-out
    nudge, a pool as large as the number of callers; and the repository root importable
    (`functions` and `tests` live there)."""
    os.environ["POWERTOOLS_LOG_LEVEL"] = "WARNING"
    os.environ["POWERTOOLS_TRACE_DISABLED"] = "true"
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Hookline")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ.pop("HOOKLINE_FANOUT_FUNCTION", None)
    os.environ["HOOKLINE_FANOUT_AT_RECEIPT"] = "true"  # as deployed (decision 0076)
    os.environ["HOOKLINE_DB_POOL_SIZE"] = str(callers)
    # Callers share the module-level Metrics, so one invocation's flush can find the set
    # another already flushed; Powertools warns, nothing is lost.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


# --- the paths ------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What every path needs to know about the database under test."""

    url: str
    tenant_id: str
    source_id: str
    size: int


class Contender(Generic[Item]):
    """One way of storing an event: builds its inputs and its callers."""

    name: str = ""

    def __init__(self, target: Target) -> None:
        self.target = target

    def inputs(self, ids: Sequence[str]) -> list[Item]:
        """The prepared inputs of one caller, one per event id."""
        raise NotImplementedError

    def caller(self) -> Caller[Item]:
        """A new caller (one per thread)."""
        raise NotImplementedError


def stripe_body(event_id: str, size: int) -> bytes:
    """A realistic Stripe event of about `size` bytes (independent test signer)."""
    from tests.support.signers import stripe_event

    body: bytes = stripe_event(event_id, size=size)
    return body


class BareInsert(Contender[tuple[str, bytes]]):
    """Single-row autocommit inserts into a plain table, one connection per thread."""

    name = "bare insert"

    def inputs(self, ids: Sequence[str]) -> list[tuple[str, bytes]]:
        """(dedupe key, payload) pairs."""
        return [(event_id, stripe_body(event_id, self.target.size)) for event_id in ids]

    def caller(self) -> Caller[tuple[str, bytes]]:
        """A caller with its own connection."""
        return SqlCaller(self.target.url, BARE_INSERT, bare_params)


def bare_params(item: tuple[str, bytes]) -> tuple[str, str, bytes]:
    """The bare insert's parameters: a fresh ULID id, the dedupe key, the payload."""
    from hookline.ids import new_id

    return (new_id("evt"), item[0], item[1])


class LedgerSql(Contender[dict[str, Any]]):
    """The receiver's own `accept_event` statement, through raw psycopg."""

    name = "ledger SQL"

    def inputs(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The statement's parameters as the repository builds them (minus the id)."""
        from psycopg.types.json import Jsonb

        from hookline.runtime import fanout_options
        from hookline.settings import get_settings

        options = fanout_options(get_settings())
        t = self.target
        return [
            {
                "tenant_id": t.tenant_id,
                "source_id": t.source_id,
                "origin": t.source_id,
                "type": "payment_intent.succeeded",
                "dedupe_key": event_id,
                "payload": stripe_body(event_id, t.size),
                "content_type": "application/json",
                "headers": Jsonb({}),
                "traceparent": None,  # tracing off, as benchmarked
                "deadline": options.deadline,
                "lease": options.queued_lease,
            }
            for event_id in ids
        ]

    def caller(self) -> Caller[dict[str, Any]]:
        """A caller with its own connection."""
        from hookline.sqlfiles import query

        return SqlCaller(self.target.url, query("accept_event"), ledger_params)


def ledger_params(item: dict[str, Any]) -> dict[str, Any]:
    """The accept_event parameters with a fresh event id."""
    from hookline.ids import new_id

    return {**item, "id": new_id("evt")}


class SqlCaller(Caller[Any]):
    """Runs one statement per call in autocommit on its own connection."""

    def __init__(self, url: str, statement: str, params: Callable[[Any], Any]) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.statement = statement
        self.params = params

    def call(self, item: Any) -> bool:
        """One statement, committed."""
        self.conn.execute(self.statement, self.params(item))
        return True

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


class SignedRequests(Contender[tuple[dict[str, str], bytes]]):
    """Stripe-signed requests: headers and body."""

    def inputs(self, ids: Sequence[str]) -> list[tuple[dict[str, str], bytes]]:
        """Headers (signed now) and body per event id."""
        from tests.support.signers import stripe_headers

        out = []
        for event_id in ids:
            body = stripe_body(event_id, self.target.size)
            out.append(({**REQUEST_HEADERS, **stripe_headers(STRIPE_SECRET, body)}, body))
        return out


class Service(SignedRequests):
    """`receive_inbound` on the process pool: the handler without the event, logs, metrics."""

    name = "service"

    def caller(self) -> Caller[tuple[dict[str, str], bytes]]:
        """A caller sharing the process-wide pool, as the handler does."""
        return ServiceCaller(self.target.source_id)


class ServiceCaller(Caller[tuple[dict[str, str], bytes]]):
    """Calls the ingest service directly."""

    def __init__(self, source_id: str) -> None:
        from hookline.db import get_database
        from hookline.runtime import fanout_options, source_cache
        from hookline.settings import get_settings

        settings = get_settings()
        self.fanout = fanout_options(settings)  # as the handler, at receipt (decision 0076)
        self.source_id = source_id
        self.db = get_database()
        self.max_body_bytes = settings.max_body_bytes
        self.sources = source_cache(settings)  # the handler's own (decision 0074)

    def call(self, item: tuple[dict[str, str], bytes]) -> bool:
        """Verify and store one request."""
        from hookline.ingest import Accepted, receive_inbound

        accepted = receive_inbound(
            self.db,
            self.source_id,
            item[0],
            item[1],
            max_body_bytes=self.max_body_bytes,
            fanout=self.fanout,
            sources=self.sources,
        )
        assert isinstance(accepted, Accepted)  # a Stripe source has no handshake
        return not accepted.duplicate


class HandlerPath(Contender[tuple[dict[str, Any], Any]]):
    """The Lambda entry point with API Gateway REST events."""

    name = "handler"

    def inputs(self, ids: Sequence[str]) -> list[tuple[dict[str, Any], Any]]:
        """API Gateway REST proxy events (base64 bodies) and their Lambda contexts."""
        from hookline_dev.local.apigw import LocalContext, build_rest_event

        path = f"/in/{self.target.source_id}"
        return [
            (build_rest_event("POST", path, headers, body), LocalContext(function_name="receiver"))
            for headers, body in SignedRequests(self.target).inputs(ids)
        ]

    def caller(self) -> Caller[tuple[dict[str, Any], Any]]:
        """A caller of the in-process handler."""
        from hookline_dev.local.powertools import serialize_metrics

        # Several threads invoke the handler at once, as in the dev stack: they share the
        # process's metric set, whose flushes must not interleave (decision 0011). The
        # receiver has no resolver state to isolate (decision 0074).
        serialize_metrics()
        from functions.receiver.handler import lambda_handler

        return HandlerCaller(lambda_handler)


class HandlerCaller(Caller[tuple[dict[str, Any], Any]]):
    """Calls the receiver's Lambda entry point in-process."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    def call(self, item: tuple[dict[str, Any], Any]) -> bool:
        """One invocation; the expected outcome is 200 and not a duplicate."""
        response = self.handler(item[0], item[1])
        return response["statusCode"] == 200 and '"duplicate": false' in response["body"]


# --- the database ---------------------------------------------------------------------


def create_target(url: str, size: int) -> Target:
    """A tenant with one Stripe source (created through the admin service), and the bare
    table."""
    import psycopg

    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import source_service, tenant_service
    from hookline.management.access import Caller

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(BARE_TABLE_DDL)
    setup = Database(url, max_size=1)
    try:
        operator = Caller("bench", "*")
        tenant = tenant_service.create_tenant(
            setup, HooklineConfig(), operator, name="bench", group=None
        )
        source = source_service.create_source(
            setup,
            operator,
            {"tenant_id": tenant["id"], "scheme": "stripe", "secret": STRIPE_SECRET},
        )
    finally:
        setup.close()
    return Target(url, tenant["id"], source["id"], size)


def stored_counts(url: str) -> dict[str, int]:
    """Rows in the ledger, the outbox and the bare table."""
    import psycopg

    counts = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("events", "outbox", "bench_bare_events"):
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            counts[table] = int(row[0]) if row else -1
    return counts


# --- the run --------------------------------------------------------------------------


class EventIds:
    """Distinct Stripe-style event ids for every slice of every path."""

    def __init__(self) -> None:
        self.batch = 0

    def take(self, callers: int, per_caller: int) -> list[list[str]]:
        """`per_caller` fresh ids for each caller."""
        self.batch += 1
        return [
            [f"evt_bench{self.batch:03d}c{c}n{i:07d}" for i in range(per_caller)]
            for c in range(callers)
        ]


def run_callers(
    paths: Sequence[Contender[Any]], callers: int, seconds: float, rounds: int, ids: EventIds
) -> list[Measurement]:
    """Every path at one caller count: a warm-up each (which estimates its rate), then
    `rounds` slices of `seconds / rounds` taking turns."""

    def run(path: Contender[Any], duration: float, per_caller: int) -> Measurement:
        batches = [path.inputs(chunk) for chunk in ids.take(callers, per_caller)]
        return measure(path.name, duration, path.caller, batches)

    slice_seconds = seconds / rounds
    sizes = []
    for path in paths:
        warm = run(path, WARMUP_SECONDS, WARMUP_ITEMS_PER_CALLER)
        sizes.append(math.ceil(max(warm.rate, 50.0) * slice_seconds * HEADROOM / callers) + 50)
    totals: list[Measurement | None] = [None] * len(paths)
    for _ in range(rounds):
        for i, path in enumerate(paths):
            got = run(path, slice_seconds, sizes[i])
            previous = totals[i]
            totals[i] = got if previous is None else previous + got
    return [m for m in totals if m is not None]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Receiver throughput against bare inserts of the same payloads."
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per row")
    parser.add_argument("--callers", default="1,8", help="comma-separated caller counts")
    parser.add_argument("--rounds", type=int, default=2, help="turns the paths take per row")
    parser.add_argument("--size", type=int, default=2048, help="payload size in bytes (about)")
    parser.add_argument(
        "--breakdown", action="store_true", help="add the ledger SQL and service rows"
    )
    args = parser.parse_args(argv)
    try:
        args.callers = [int(c) for c in str(args.callers).split(",") if c.strip()]
    except ValueError:
        parser.error("--callers takes comma-separated integers")
    if not args.callers or min(args.callers) < 1 or args.rounds < 1 or args.seconds <= 0:
        parser.error("--callers, --rounds and --seconds must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every row and print the table."""
    args = parse_args(argv)
    prepare_environment(max(args.callers))
    from hookline.db import reset_database

    load_before = os.getloadavg()[0]
    results: list[list[Measurement]] = []
    # The throwaway database gets its own throwaway master key (sealed source secrets), so
    # the benchmark never creates or reads the developer's `.hookline/master.key`.
    with (
        tempfile.TemporaryDirectory(prefix="hookline-bench-key-") as keys,
        bench_database("receiver") as (url, where),
    ):
        os.environ["HOOKLINE_LOCAL_KEY_FILE"] = str(Path(keys) / "master.key")
        os.environ["DATABASE_URL"] = url
        reset_database()  # settings are read again, with this URL and key file
        target = create_target(url, args.size)
        paths: list[Contender[Any]] = [BareInsert(target)]
        if args.breakdown:
            paths += [LedgerSql(target), Service(target)]
        paths.append(HandlerPath(target))
        ids = EventIds()
        for callers in args.callers:
            os.environ["HOOKLINE_DB_POOL_SIZE"] = str(callers)
            reset_database()  # the next use builds a pool of `callers` connections
            print(f"measuring {callers} caller(s) ...", file=sys.stderr, flush=True)
            # Metrics are EMF lines on stdout: keep what they cost, drop their text.
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                results.append(run_callers(paths, callers, args.seconds, args.rounds, ids))
        reset_database()
        counts = stored_counts(url)
        facts = server_facts(url)
    print_table(results, args, where, facts, (load_before, os.getloadavg()[0]), counts)
    return 0


def print_table(
    results: list[list[Measurement]],
    args: argparse.Namespace,
    where: str,
    facts: str,
    load: tuple[float, float],
    counts: dict[str, int],
) -> None:
    """One line per path and caller count; the handler's line carries its ratio to bare."""
    print(
        f"receiver benchmark: {args.seconds:g} s per row in {args.rounds} slices, "
        f"~{args.size} B Stripe payloads, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {load[0]:.1f} -> {load[1]:.1f}"
    )
    print(f"postgres: {where}; {facts}")
    print()
    header = (
        f"{'callers':>7}  {'path':<12}{'events/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'errors':>8}  {'x bare':>6}"
    )
    print(header)
    print("-" * len(header))
    for rows in results:
        bare = rows[0]
        for m in rows:
            ratio = f"{m.rate / bare.rate:>6.2f}" if bare.rate else f"{'-':>6}"
            print(
                f"{m.callers:>7}  {m.path:<12}{m.rate:>9.0f}{m.percentile_ms(50):>9.2f}"
                f"{m.percentile_ms(99):>9.2f}{m.errors:>8}  {ratio}"
            )
    print()
    last = results[-1]
    handler_ratio = last[-1].rate / last[0].rate if last[0].rate else math.nan
    verdict = "met" if handler_ratio >= TARGET_RATIO else "missed"
    print(
        f"target: handler >= {TARGET_RATIO}x bare at {last[0].callers} callers: "
        f"{handler_ratio:.2f}x, {verdict}"
    )
    print(
        "stored, warm-up included: " + ", ".join(f"{n} {table} rows" for table, n in counts.items())
    )


if __name__ == "__main__":
    raise SystemExit(main())
