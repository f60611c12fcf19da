"""`hookline dev`: run the whole system on this machine (see `hookline_dev.local.devstack`)."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from hookline.errors import BadRequest


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline dev` to the command tree."""
    p = sub.add_parser(
        "dev",
        parents=[common],
        help="run all of Hookline locally (HTTP front, fan-out, delivery, emulated AWS)",
        description=(
            "Runs the Lambda handlers as AWS would: an API Gateway-like HTTP front, the "
            "fan-out schedule and nudges, one SQS poller per tenant group, Postgres "
            "(DATABASE_URL or an embedded server) and SQS (a moto server, or AWS_ENDPOINT_URL)."
        ),
    )
    p.add_argument("--port", type=int, default=8080, help="HTTP port on 127.0.0.1 (0: any free)")
    p.add_argument(
        "--state-dir",
        type=Path,
        default=Path(os.environ.get("HOOKLINE_STATE_DIR", ".hookline")),
        help="where dev.json, logs and the embedded Postgres live (default .hookline)",
    )
    p.add_argument(
        "--fanout-every", type=float, metavar="SECONDS", help="fan-out schedule period override"
    )
    p.add_argument(
        "--reconcile-every", type=float, metavar="SECONDS", help="reconcile schedule override"
    )
    p.add_argument(
        "--visibility-timeout",
        type=int,
        metavar="SECONDS",
        help="SQS visibility timeout of the group queues (default as on AWS: 6 x the deliver "
        "function timeout); short values make crashed batches come back sooner",
    )
    p.add_argument(
        "--log-file", help="JSON log destination (default <state-dir>/dev.log; - = stderr)"
    )
    p.add_argument(
        "--status",
        choices=["auto", "plain", "off"],
        default="auto",
        help="status line: in place on a terminal (auto), plain periodic lines, or none",
    )
    p.add_argument(
        "--status-every", type=float, default=10.0, metavar="SECONDS", help="plain line period"
    )
    p.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="ROLE",
        help="run only these components (repeat, or a comma list): front, fanout, reconcile, "
        "deliver (every tenant group) or deliver:GROUP. Needs DATABASE_URL and "
        "AWS_ENDPOINT_URL shared with the processes running the other roles; takes no "
        "per-database lock and leaves lost work to the reconciler (default: everything)",
    )
    p.add_argument(
        "--parent-pid",
        type=int,
        metavar="PID",
        help="stop cleanly when this process (the tool that started the stack) is gone",
    )
    p.add_argument(
        "--print-env",
        action="store_true",
        help="print shell exports that point the CLI at the running dev stack, and exit",
    )
    p.set_defaults(func=cmd_dev)


def cmd_dev(args: argparse.Namespace, rt: Any) -> Any:
    """Run until Ctrl-C or SIGTERM, or print the running stack's environment."""
    if args.print_env:
        return print_env(args.state_dir, as_json=args.json)
    from hookline_dev.local.devoptions import DevOptions, parse_roles
    from hookline_dev.local.devstack import DevStack

    if args.port < 0 or args.port > 65535:
        raise BadRequest("--port must be 0..65535")
    try:
        roles = parse_roles(args.role)
    except ValueError as err:
        raise BadRequest(str(err)) from err
    options = DevOptions(
        port=args.port,
        state_dir=args.state_dir,
        fanout_every=args.fanout_every,
        reconcile_every=args.reconcile_every,
        visibility_timeout=args.visibility_timeout,
        log_file=args.log_file,
        status=args.status,
        status_every=args.status_every,
        roles=roles,
    )
    stop = threading.Event()
    signals = _install_signal_handlers(stop)
    if args.parent_pid:
        _watch_parent(args.parent_pid, stop)
    stack = DevStack(options)
    try:
        stack.start()
        stack.run(stop)
    finally:
        stack.stop()
        for sig, previous in signals.items():
            signal.signal(sig, previous)
    return "Hookline stopped."


def print_env(state_dir: Path, *, as_json: bool) -> Any:
    """The running stack's environment, as shell exports (or a JSON object)."""
    from hookline_dev.local.devstate import find_running

    state = find_running(state_dir)
    if state is None:
        raise BadRequest(f"no hookline dev is running from {state_dir} (start it: make run)")
    env = state.env()
    if as_json:
        return env
    return "\n".join(f"export {k}={shlex.quote(v)}" for k, v in env.items())


def _watch_parent(parent: int, stop: threading.Event) -> None:
    """Set `stop` once `parent` is no longer this process's parent (it died): a test harness
    or benchmark killed mid-run must not leave a dev stack behind."""

    def watch() -> None:
        while not stop.wait(0.5):
            if os.getppid() != parent:
                stop.set()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _install_signal_handlers(stop: threading.Event) -> dict[int, Any]:
    """First Ctrl-C or SIGTERM: stop cleanly. A second Ctrl-C: leave at once."""
    previous: dict[int, Any] = {}

    def handle(signum: int, frame: object) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            sys.stderr.write("\nforced exit: in-flight deliveries are left to the next start\n")
            os._exit(130)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handle)
    return previous
