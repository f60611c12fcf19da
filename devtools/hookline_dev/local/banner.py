"""What `hookline dev` prints when it is up: where each part of the stack is (or, for a
process of some roles, what it runs), with no database password in it."""

from __future__ import annotations

import psycopg

from hookline.config import HooklineConfig
from hookline_dev.local.devstate import DevState


def banner(
    s: DevState,
    config: HooklineConfig,
    *,
    fanout_every: float,
    reconcile_every: float | None,
    requeued: int,
    pg_kind: str,
    emulator: str,
) -> str:
    """The whole stack's banner."""
    groups = ", ".join(f"{g.name} (cap {g.max_concurrency})" for g in config.tenant_groups)
    reconcile = (
        f"every {period(reconcile_every)}"
        if reconcile_every is not None
        else "not scheduled (functions/reconcile/handler.py does not exist yet)"
    )
    aws = "moto server (child process)" if emulator == "moto" else "AWS_ENDPOINT_URL"
    lines = [
        "Hookline is running on this machine — the Lambda handlers, invoked as AWS would.",
        f"  API (API Gateway REST)  {s.url}   POST /in/{{source_id}} → receiver · "
        "ANY /v1/{proxy+} → api (with $HOOKLINE_API_KEY from --print-env, not SigV4)",
        f"  Console, portal         {s.url}/console (sign in with $HOOKLINE_API_KEY), "
        "/portal (hookline portal link --tenant ID)",
        f"  Postgres                {redact(s.database_url)}  ({pg_kind})",
        f"  AWS (SQS + DLQs, S3)    {s.aws_endpoint_url}  ({aws}); ledger archive bucket "
        f"{s.shared_env.get('HOOKLINE_ARCHIVE_BUCKET', '(none)')}",
        f"  Deliver per group       {groups}",
        f"  Fan-out                 every {period(fanout_every)} "
        "and right after each accepted event (from any process)",
        f"  Reconcile               {reconcile}",
        f"  Logs (JSON, as in CloudWatch)  {s.log_file}",
        '  Other terminals:        eval "$(.venv/bin/hookline dev --print-env)"   '
        "then e.g. hookline events list",
        "  See it work:            make demo",
    ]
    if requeued:
        lines.append(
            f"  Recovered               {requeued} deliveries left on the queues by the "
            "previous run were enqueued again"
        )
    lines.append("Ctrl-C stops (in-flight deliveries finish first).")
    return "\n".join(lines)


def role_banner(
    s: DevState,
    *,
    front: bool,
    fanout_every: float | None,
    reconcile_every: float | None,
    deliver_groups: list[str],
) -> str:
    """The line of a process that runs only some roles."""
    running = []
    if front:
        running.append(f"front {s.url}")
    if fanout_every is not None:
        running.append(f"fanout every {period(fanout_every)}")
    if reconcile_every is not None:
        running.append(f"reconcile every {period(reconcile_every)}")
    running += [f"deliver:{group}" for group in deliver_groups]
    return (
        f"hookline dev (pid {s.pid}) running roles: {', '.join(running) or 'none'}"
        f" on {redact(s.database_url)} and {s.aws_endpoint_url}"
    )


def redact(url: str) -> str:
    """A connection URL without its password."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparseable database URL>"
    if params.get("password"):
        params["password"] = "***"  # noqa: S105 - a mask, not a secret
        return psycopg.conninfo.make_conninfo("", **params)
    return url


def period(seconds: float) -> str:
    """A schedule's period, in minutes when it is whole minutes."""
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} min"
    return f"{seconds:g} s"
