"""The receiver handler's CPU per request, in one thread, as deployed.

`functions.receiver.handler.lambda_handler` is called with API Gateway REST events carrying
Stripe-signed ~2 KB payloads (`bench/receiver.py`'s inputs), as deployed: no server-side
prepared statements (as behind RDS Proxy), logs at INFO, EMF metrics on, fan-out at receipt
to one endpoint, whose deliveries go to a queue stand-in that costs nothing. The handler is
called as Lambda calls it, one invocation at a time: without the lock `bench/receiver.py`'s
threads put around Powertools' shared metric set (`serialize_metrics`). After a warm-up,
`--requests` calls are timed with the process's CPU clock (all its threads), which moves far
less with the machine's load than a rate does. `--profile` runs them again under cProfile
(on the CPU clock) and prints where the time goes.

    .venv/bin/python bench/receiver_cpu.py [--requests 3000] [--profile]

A benchmark: prints, never fails. Logs and metric lines are counted and thrown away.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import receiver as rb
from common import bench_database

WARMUP = 300


class StandInSqs:
    """`send_message_batch` that accepts everything: SQS without its cost."""

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def deployed_environment() -> None:
    """As the stack configures the receiver, with a throwaway everything."""
    rb.prepare_environment(1)
    os.environ.update(
        {
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "POWERTOOLS_METRICS_DISABLED": "false",
            "HOOKLINE_DATABASE_PROXIED": "true",
            "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
            "HOOKLINE_ALLOW_HTTP_TARGETS": "1",
        }
    )


def add_endpoint(url: str, tenant_id: str) -> None:
    """One endpoint of the tenant, so each event gets a delivery at receipt."""
    from hookline.db import Database
    from hookline.management import endpoint_service
    from hookline.management.access import Caller
    from hookline.settings import get_settings

    setup = Database(url, max_size=1)
    try:
        body = {"tenant_id": tenant_id, "url": "http://127.0.0.1:9/hook", "max_concurrency": 1000}
        endpoint_service.create_endpoint(setup, get_settings(), Caller("bench", "*"), body)
    finally:
        setup.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Warm up, time the requests, optionally profile them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top entries")
    args = parser.parse_args(argv)
    deployed_environment()
    # Logs and EMF lines go where the handler's logger found stdout when it was made: nowhere.
    out, sys.stdout = sys.stdout, open(os.devnull, "w")  # noqa: SIM115 - until the end
    from hookline.db import reset_database

    with (
        tempfile.TemporaryDirectory(prefix="hookline-bench-key-") as keys,
        bench_database("receiver_cpu") as (url, where),
    ):
        os.environ["HOOKLINE_LOCAL_KEY_FILE"] = str(Path(keys) / "master.key")
        os.environ["DATABASE_URL"] = url
        reset_database()
        target = rb.create_target(url, 2048)
        add_endpoint(url, target.tenant_id)
        import functions.receiver.handler as receiver
        from hookline.queues import DeliveryQueues
        from hookline.settings import get_settings

        stand_in = DeliveryQueues(StandInSqs(), get_settings().config, url_prefix="x/")
        receiver.receipt_queues = lambda _settings: stand_in  # type: ignore[assignment]
        path, ids = rb.HandlerPath(target), rb.EventIds()
        caller = rb.HandlerCaller(receiver.lambda_handler)
        load = os.getloadavg()[0]
        for item in path.inputs(ids.take(1, WARMUP)[0]):
            caller.call(item)
        items = path.inputs(ids.take(1, args.requests)[0])
        started = time.process_time()
        ok = sum(caller.call(item) for item in items)
        cpu = time.process_time() - started
        profile = cProfile.Profile(time.process_time)
        if args.profile:
            items = path.inputs(ids.take(1, args.requests)[0])
            profile.runcall(lambda: [caller.call(item) for item in items])
        reset_database()
    sys.stdout.close()
    sys.stdout = out
    print(f"postgres: {where}; load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print(
        f"receiver handler, one thread, as deployed: {cpu / args.requests * 1e6:.0f} µs CPU "
        f"per request ({args.requests} requests, {ok} accepted)"
    )
    if args.profile:
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(40)
        print(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
