"""What the benchmarks share: a quiet environment, a throwaway database, the facts that
decide how to read a figure, and a plain table printer.

Nothing here measures anything; each benchmark keeps its own contenders and clock.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# This tree's code, whichever checkout the virtualenv was installed from. The editable
# install's finder answers only for what sys.path does not, so a bench run in an exported
# tree (`git archive`, to time older code in turn) would otherwise import the checkout's
# `hookline` beside the tree's own handlers and benches, and time a mix of the two.
for _path in (REPO / "devtools", REPO / "layers" / "core"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def quiet_environment() -> None:
    """Before any handler is imported: no log flood, no EMF lines, no X-Ray, dummy AWS
    credentials (nothing is ever sent to AWS), and the repository root importable
    (`functions` and `tests` live there)."""
    os.environ["POWERTOOLS_LOG_LEVEL"] = "WARNING"
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    os.environ["POWERTOOLS_TRACE_DISABLED"] = "true"
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Hookline")
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "hookline-bench")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.pop("HOOKLINE_FANOUT_FUNCTION", None)  # no fan-out nudges
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


@contextlib.contextmanager
def bench_database(
    label: str, server_settings: dict[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """(URL of a fresh migrated database, where its server comes from); dropped after.

    The server is `DATABASE_URL` if set (a database named after `label` and the pid is
    created on it), else a durable local server (default fsync) started in a temp dir and
    stopped at the end; `server_settings` are set on the local server (ALTER SYSTEM, then a
    restart) over the deployed parameter group's (`deployed_settings`), e.g. to preload
    pg_stat_statements, and ignored for `DATABASE_URL`.
    """
    import psycopg
    from psycopg import sql

    from hookline.migrate import migrate
    from hookline_dev.localpg import LocalPostgres

    given = os.environ.get("DATABASE_URL")
    server: LocalPostgres | None = None
    root: Path | None = None
    with _exit_on_sigterm():
        try:
            if given:
                admin_url, where = given, "DATABASE_URL"
            else:
                root = Path(tempfile.mkdtemp(prefix=f"hookline-bench-{label}-"))
                root.chmod(0o755)  # under root the server runs as a system user that must reach it
                server = LocalPostgres(root / "data", durable=True)
                print("starting a local durable Postgres ...", file=sys.stderr, flush=True)
                admin_url, where = server.start(), "a local LocalPostgres (durable=True)"
                _apply_settings(
                    server, admin_url, {**deployed_settings(), **(server_settings or {})}
                )
                admin_url = server.url
            dbname = f"hookline_bench_{label}_{os.getpid()}"
            name = sql.Identifier(dbname)
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
                conn.execute(sql.SQL("CREATE DATABASE {}").format(name))
            url = psycopg.conninfo.make_conninfo(admin_url, dbname=dbname)
            try:
                migrate(url)
                yield url, where
            finally:
                with psycopg.connect(admin_url, autocommit=True) as conn:
                    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        finally:
            if server is not None:
                server.stop()
            if root is not None:
                shutil.rmtree(root, ignore_errors=True)


def deployed_settings() -> dict[str, str]:
    """The settings the stack's RDS parameter group changes (infra/components/database.py),
    so a local server writes the WAL and compiles (not) as the deployed one does."""
    from hookline.config import HooklineConfig

    return HooklineConfig().infrastructure.db_parameters()


def _apply_settings(server: Any, admin_url: str, settings: dict[str, str]) -> None:
    """ALTER SYSTEM each setting, restarting the server so it takes effect. An extension's
    settings (dotted names) exist once its library is loaded: two rounds."""
    import psycopg
    from psycopg import sql

    for dotted in (False, True):
        chosen = {k: v for k, v in settings.items() if ("." in k) == dotted}
        if not chosen:
            continue
        with psycopg.connect(admin_url, autocommit=True) as conn:
            for name, value in chosen.items():
                conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(
                    sql.Identifier(*name.split(".")), sql.Literal(value)))  # fmt: skip
        server.stop()
        admin_url = server.start()


@contextlib.contextmanager
def _exit_on_sigterm() -> Iterator[None]:
    """A SIGTERM (`kill`, `pkill`, a runner's timeout) exits through the `finally` blocks, so
    a killed benchmark stops its local server and drops its database instead of leaving them
    running beside the next run (whose server CPU they would share)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def exit_now(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, exit_now)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def server_facts(url: str) -> str:
    """The Postgres version and the settings that decide what a commit costs."""
    import psycopg

    facts = []
    with psycopg.connect(url, autocommit=True) as conn:
        for setting in (
            "server_version",
            "fsync",
            "synchronous_commit",
            "shared_buffers",
            "full_page_writes",
            "wal_compression",
            "jit",
        ):
            row = conn.execute(f"SHOW {setting}").fetchone()
            facts.append(f"{setting}={row[0] if row else '?'}")
    return " ".join(facts)


def backend_cpu_seconds(conn: Any) -> float | None:
    """CPU seconds the connection's server process has used (user + system), when the
    server runs on this machine; None otherwise. Less disturbed by a busy machine than
    wall time, though not immune (caches, frequency)."""
    try:
        fields = Path(f"/proc/{conn.info.backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_us(conn: Any) -> float:
    """Microseconds the connection's server process has run (its scheduler's clock, finer
    than `backend_cpu_seconds`' ticks; the server on this machine)."""
    return int(Path(f"/proc/{conn.info.backend_pid}/schedstat").read_text().split()[0]) / 1e3


def run_statement(url: str, statement: str, params: Sequence[object] = ()) -> None:
    """Run one statement on its own connection, committed."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement, params)


def make_past_partitions(url: str, days: int) -> None:
    """The day partitions of the `days` days before today, as a long retention keeps them."""
    run_statement(
        url,
        "SELECT hookline_create_day_partitions(current_date - d) FROM generate_series(1, %s) AS d",
        (days,),
    )


def machine_facts() -> str:
    """CPUs, Python version and the current load average (read busy-machine figures with
    care)."""
    return (
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A fixed-width table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        first = row[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    print(line(cells[0]))
    print("-" * len(line(cells[0])))
    for row in cells[1:]:
        print(line(row))


def insert_events(
    url: str, tenant_id: str, count: int, types: Sequence[str], payload: bytes
) -> list[str]:
    """`count` published events of the tenant (types taking turns) with their pending outbox
    rows, as the ledger's insert_event writes them but in one COPY; their ids, sorted."""
    import psycopg

    from hookline.ids import new_id

    ids = sorted(new_id("evt") for _ in range(count))
    copy_sql = "COPY events (id, tenant_id, origin, type, dedupe_key, payload) FROM STDIN"
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            with conn.cursor().copy(copy_sql) as copy:
                for n, event_id in enumerate(ids):
                    copy.write_row(
                        (event_id, tenant_id, "publish", types[n % len(types)],
                         f"bench:{event_id}", payload)
                    )  # fmt: skip
            conn.execute(
                "INSERT INTO outbox (event_id, tenant_id, created_at) "
                "SELECT id, tenant_id, received_at FROM events WHERE id = ANY(%s)",
                (ids,),
            )
        conn.execute("VACUUM ANALYZE events, outbox")
    return ids
