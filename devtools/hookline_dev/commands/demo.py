"""`hookline demo`: show a newcomer the whole job on the dev stack (`hookline_dev.local.demo`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline demo` to the command tree."""
    p = sub.add_parser(
        "demo",
        parents=[common],
        help="send Stripe webhooks through the dev stack and show what happens",
        description=(
            "Uses the running `hookline dev` (or starts one for the demo): creates a tenant, a "
            "Stripe source and an endpoint served by a local subscriber that fails once, sends "
            "signed events (one duplicate, one forged) and prints every step."
        ),
    )
    p.add_argument(
        "--state-dir",
        type=Path,
        default=Path(os.environ.get("HOOKLINE_STATE_DIR", ".hookline")),
        help="the dev stack's state folder (default .hookline)",
    )
    p.add_argument("--timeout", type=float, help="seconds to wait for the deliveries")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace, rt: Any) -> Any:
    """Run the demo; exit 1 if something did not happen as shown."""
    from hookline_dev.local.demo import run_demo

    code = run_demo(args.state_dir, sys.stdout, timeout=args.timeout)
    if code:
        raise SystemExit(code)
    return "Demo done."
