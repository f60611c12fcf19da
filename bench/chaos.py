"""The chaos run: Hookline as separate `hookline dev --role` processes, with faults.

10,000 signed webhooks (by default) go through the front to 50 endpoints of tenants in three
tenant groups (half of them with a cap no batch can reach, sent to without a claim: decision
0108), while endpoints answer 5xx, time out, throttle with 429 + Retry-After, one
answers 410 and one is slow behind a concurrency cap; meanwhile random roles (front, fan-out,
reconcile, each group's poller) are SIGKILLed and restarted, Postgres is crash-restarted once,
and about 1 % of the queue messages are deleted unprocessed. Then it waits until every
delivery is finished, runs a final reconcile and checks: 0 events lost, 0 deliveries created
twice, every delivered delivery answered 2xx, every failed/dead one has a reason, one
webhook-id per delivery, the cap never exceeded, the final reconcile repaired nothing. It
prints what was injected and what came out, and exits 1 on any violation.

    .venv/bin/python bench/chaos.py                       # 10,000 events, 50 endpoints
    .venv/bin/python bench/chaos.py --events 1000 --rate 40 --seed 7

The harness lives in bench/chaos_harness.py (the e2e test runs it with 1,000 events).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.chaos_harness import ChaosOptions, ChaosRun  # noqa: E402
from bench.common import machine_facts, quiet_environment  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--endpoints", type=int, default=50, help="even; two per tenant")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=60.0, help="events offered per second")
    parser.add_argument("--senders", type=int, default=6)
    parser.add_argument(
        "--kill-every", type=float, nargs=2, default=(3.0, 8.0), metavar=("MIN", "MAX"),
        help="seconds between two kills",
    )  # fmt: skip
    parser.add_argument("--delete-fraction", type=float, default=0.01)
    parser.add_argument("--drain-timeout", type=float, default=900.0, help="seconds")
    parser.add_argument("--deadline", type=int, default=600, help="delivery deadline, seconds")
    parser.add_argument(
        "--queued-lease", type=int, default=45,
        help="seconds a queued delivery waits for its message before reconcile re-enqueues it",
    )  # fmt: skip
    parser.add_argument("--workdir", type=Path, help="default: a temporary folder")
    args = parser.parse_args()
    quiet_environment()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="hookline-chaos-"))
    options = ChaosOptions(
        workdir=workdir,
        events=args.events,
        endpoints=args.endpoints,
        seed=args.seed,
        rate=args.rate,
        senders=args.senders,
        kill_every=tuple(args.kill_every),
        delete_fraction=args.delete_fraction,
        drain_timeout=args.drain_timeout,
        deadline_seconds=args.deadline,
        queued_lease_seconds=args.queued_lease,
    )
    print(f"chaos run: {args.events} events, {args.endpoints} endpoints, seed {args.seed}")
    print(machine_facts())
    print(f"work folder (logs of every role): {workdir}")
    outcome = ChaosRun(replace(options, log=lambda text: print(text, flush=True))).run()
    print(outcome.table())
    return 1 if outcome.violations else 0


if __name__ == "__main__":
    sys.exit(main())
